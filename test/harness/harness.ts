// In-page side of the kernel harness: one GPU runtime, and `run(name, request)` taking the
// JSON requests documented for scripts/kernel.mjs.
import { GpuRuntime } from '../../src/gpu/runtime';
import { runKernelRequest, type KernelName } from '../../src/ops/kernelRequests';
import * as runtimeChecks from './runtimeChecks';

declare global {
  interface Window {
    harness: {
      run(name: KernelName, request: unknown): Promise<unknown>;
      runtime: GpuRuntime;
      checks: typeof runtimeChecks;
    };
    harnessReady: Promise<{ info?: GpuRuntime['info']; error?: string }>;
  }
}

window.harnessReady = GpuRuntime.create().then(
  (runtime) => {
    window.harness = { run: (name, request) => runKernelRequest(runtime, name, request), runtime, checks: runtimeChecks };
    return { info: runtime.info };
  },
  (err: Error) => ({ error: err.message }),
);
