// In-page side of the kernel harness: one GPU runtime, and `run(name, request)` taking the
// JSON requests documented for scripts/kernel.mjs.
import { GpuRuntime } from '../../src/gpu/runtime';
import { runKernelRequest, type KernelName } from '../../src/ops/kernelRequests';

declare global {
  interface Window {
    harness: { run(name: KernelName, request: unknown): Promise<unknown>; runtime: GpuRuntime };
    harnessReady: Promise<{ info?: GpuRuntime['info']; error?: string }>;
  }
}

window.harnessReady = GpuRuntime.create().then(
  (runtime) => {
    window.harness = { run: (name, request) => runKernelRequest(runtime, name, request), runtime };
    return { info: runtime.info };
  },
  (err: Error) => ({ error: err.message }),
);
