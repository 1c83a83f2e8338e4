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
      /** Imports `path` (served by Vite, e.g. '/test/harness/matmulCases.ts') and calls `fn(runtime, input)`. */
      runModule(path: string, fn: string, input: unknown): Promise<unknown>;
    };
    harnessReady: Promise<{ info?: GpuRuntime['info']; error?: string }>;
  }
}

window.harnessReady = GpuRuntime.create().then(
  (runtime) => {
    window.harness = {
      run: (name, request) => runKernelRequest(runtime, name, request),
      runtime,
      checks: runtimeChecks,
      async runModule(path, fn, input) {
        const module = (await import(/* @vite-ignore */ path)) as Record<string, unknown>;
        const f = module[fn];
        if (typeof f !== 'function') throw new Error(`${path} exports no function ${fn}`);
        return (f as (rt: GpuRuntime, input: unknown) => Promise<unknown>)(runtime, input);
      },
    };
    return { info: runtime.info };
  },
  (err: Error) => ({ error: err.message }),
);
