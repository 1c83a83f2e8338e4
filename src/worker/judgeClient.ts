// Page-side handle on the judge worker: judge a batch of rollouts off the main thread, with an
// AbortSignal that cancels the batch in the worker.
import * as Comlink from 'comlink';
import type { Rollout } from '../rubric/judge';
import type { JudgeBatchOutput, JudgeWorkerApi, JudgeWorkerConfig, JudgeWorkerState } from './judge.worker';

export type { JudgeBatchOutput, JudgeWorkerConfig, JudgeWorkerState } from './judge.worker';
export type { RemoteJudgeConfig, RemoteJudgeDescription } from '../rubric/judges/remote';

export interface JudgeWorkerClient {
  /**
   * Sets the remote judge (or none) and empties the worker's cache. The API key travels to the
   * worker as an in-memory message and stays there; keep it out of anything you persist.
   */
  configure(config: JudgeWorkerConfig): Promise<JudgeWorkerState>;
  /** Judges a batch; `rubric` is rubric JSON (validated in the worker). Rejects with an AbortError when `signal` aborts. */
  judge(rubric: unknown, rollouts: Rollout[], options?: { keep?: (boolean[] | undefined)[]; signal?: AbortSignal }): Promise<JudgeBatchOutput>;
  state(): Promise<JudgeWorkerState>;
  terminate(): void;
}

let batches = 0;

export function startJudgeWorker(): JudgeWorkerClient {
  const worker = new Worker(new URL('./judge.worker.ts', import.meta.url), { type: 'module', name: 'judge' });
  const api = Comlink.wrap<JudgeWorkerApi>(worker);
  return {
    configure: (config) => api.configure(config),
    async judge(rubric, rollouts, options = {}) {
      const { signal, keep } = options;
      const stopped = () => (signal?.reason instanceof Error ? signal.reason : new DOMException('the judge batch was cancelled', 'AbortError'));
      if (signal?.aborted) throw stopped();
      const id = `batch-${++batches}`;
      const onAbort = () => void api.cancel(id);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await api.judge({ id, rubric, rollouts, keep });
      } catch (e) {
        if (signal?.aborted) throw stopped();
        throw e;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
    state: () => api.state(),
    terminate: () => {
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}
