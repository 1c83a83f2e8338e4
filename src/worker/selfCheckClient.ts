// UI-side handle on the self-check worker (the UI never imports src/gpu).
import * as Comlink from 'comlink';
import type { SelfCheckApi } from './selfCheck.worker';

export type { AdapterReport, GpuProbe } from './selfCheck.worker';
export type { KernelCheck } from '../ops/selfCheck';

export function startSelfCheckWorker(): { api: Comlink.Remote<SelfCheckApi>; terminate(): void } {
  const worker = new Worker(new URL('./selfCheck.worker.ts', import.meta.url), { type: 'module', name: 'self-check' });
  return { api: Comlink.wrap<SelfCheckApi>(worker), terminate: () => worker.terminate() };
}
