// UI-side handle on the trainer worker.
import * as Comlink from 'comlink';
import type { TrainerApi, UiEvent } from './trainer.worker';

export type { UiEvent, OpenRequest, OpenResult, CalibrationReply, CalibrationRequest } from './trainer.worker';

export interface TrainerClient {
  api: Comlink.Remote<TrainerApi>;
  onEvent(callback: (event: UiEvent) => void): Promise<void>;
  terminate(): void;
}

export function startTrainerWorker(): TrainerClient {
  const worker = new Worker(new URL('./trainer.worker.ts', import.meta.url), { type: 'module', name: 'trainer' });
  const api = Comlink.wrap<TrainerApi>(worker);
  return {
    api,
    onEvent: (callback) => api.subscribe(Comlink.proxy(callback)),
    terminate: () => worker.terminate(),
  };
}
