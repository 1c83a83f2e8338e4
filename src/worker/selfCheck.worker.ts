// Worker that owns a GPU runtime and runs the kernel self-check off the main thread.
import * as Comlink from 'comlink';
import { WebGpuUnavailableError } from '../gpu/device';
import { GpuRuntime } from '../gpu/runtime';
import { runSelfCheck, type KernelCheck } from '../ops/selfCheck';

/** Plain data about the adapter, safe to send to the UI. */
export interface AdapterReport {
  vendor: string;
  architecture: string;
  description: string;
  isFallback: boolean;
  features: string[];
  limits: Record<string, number>;
}

export type GpuProbe = { ok: true; adapter: AdapterReport } | { ok: false; error: string };

let runtime: Promise<GpuRuntime> | null = null;

function getRuntime(): Promise<GpuRuntime> {
  runtime ??= GpuRuntime.create();
  return runtime;
}

const api = {
  async probe(): Promise<GpuProbe> {
    try {
      const rt = await getRuntime();
      return { ok: true, adapter: rt.info };
    } catch (err) {
      runtime = null;
      // The UI lists the browsers that work; it needs only the reason here.
      return { ok: false, error: err instanceof WebGpuUnavailableError ? err.reason : (err as Error).message };
    }
  },
  async selfCheck(): Promise<KernelCheck[]> {
    return runSelfCheck(await getRuntime());
  },
};

export type SelfCheckApi = typeof api;
Comlink.expose(api);
