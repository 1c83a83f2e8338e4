// Page-side (or trainer-side) handle on the judge worker: judge a batch of rollouts, or only the
// question criteria of some requests, off the calling thread, with an AbortSignal that cancels
// the batch in the worker.
import * as Comlink from 'comlink';
import type { DownloadProgress } from '../model/hub';
import type { CriterionResult, JudgeRequest, Rollout } from '../rubric/judge';
import type { JudgeBatchOutput, JudgeWorkerApi, JudgeWorkerConfig, JudgeWorkerState } from './judge.worker';
import type { CompletionMessages, EngineCompleteOptions, EngineCompletion } from '../rl/engineComplete';

export type { JudgeBatchOutput, JudgeModelConfig, JudgeModelDescription, JudgeWorkerConfig, JudgeWorkerState } from './judge.worker';
export type { RemoteJudgeConfig, RemoteJudgeDescription } from '../rubric/judges/remote';

export interface JudgeWorkerClient {
  /**
   * Sets the question judge — a remote endpoint, or a model on our engine that the worker loads
   * on its own GPU runtime (download progress to `onProgress`) — or none, and empties the
   * worker's cache. Rejects, changing nothing, when the config is bad or the model cannot load.
   * The API key travels to the worker as an in-memory message and stays there; keep it out of
   * anything you persist.
   */
  configure(config: JudgeWorkerConfig, options?: { onProgress?: (progress: DownloadProgress) => void }): Promise<JudgeWorkerState>;
  /** Judges a batch; `rubric` is rubric JSON (validated in the worker). Rejects with an AbortError when `signal` aborts. */
  judge(rubric: unknown, rollouts: Rollout[], options?: { keep?: (boolean[] | undefined)[]; signal?: AbortSignal }): Promise<JudgeBatchOutput>;
  /**
   * The configured question judge's results, one per request in order (no worker cache). Rejects
   * when none is configured, and with an AbortError when `signal` aborts. With `timeoutMs`, a
   * worker that has not answered by then is taken for hung: it is terminated, this call and any
   * other pending one reject saying so, and later calls reject at once.
   */
  judgeQuestions(requests: readonly JudgeRequest[], options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<CriterionResult[]>;
  /** The engine model's reply to one exchange (rejects when the worker has no engine model). */
  complete(messages: CompletionMessages, options?: EngineCompleteOptions): Promise<EngineCompletion>;
  state(): Promise<JudgeWorkerState>;
  terminate(): void;
}

let batches = 0;

export function startJudgeWorker(): JudgeWorkerClient {
  const worker = new Worker(new URL('./judge.worker.ts', import.meta.url), { type: 'module', name: 'judge' });
  const api = Comlink.wrap<JudgeWorkerApi>(worker);
  // A terminated or crashed worker never answers: its pending calls are rejected instead.
  const pending = new Set<(reason: Error) => void>();
  let terminated = false;
  let gone = () => new Error('the judge worker was terminated');
  const settleOnTerminate = <T>(start: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      if (terminated) return reject(gone());
      const call = start(); // a synchronous throw rejects this promise
      pending.add(reject);
      call.then(resolve, reject).finally(() => pending.delete(reject));
    });

  /** Runs a worker call under a fresh id; an abort of `signal` cancels that id in the worker. */
  async function cancellable<T>(signal: AbortSignal | undefined, call: (id: string) => Promise<T>): Promise<T> {
    const stopped = () => (signal?.reason instanceof Error ? signal.reason : new DOMException('the judge batch was cancelled', 'AbortError'));
    if (signal?.aborted) throw stopped();
    const id = `batch-${++batches}`;
    const onAbort = () => {
      if (!terminated) void api.cancel(id).catch(() => {});
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await settleOnTerminate(() => call(id));
    } catch (e) {
      if (signal?.aborted) throw stopped();
      throw e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  const stop = () => {
    if (terminated) return;
    terminated = true;
    api[Comlink.releaseProxy]();
    worker.terminate();
    for (const reject of pending) reject(gone());
    pending.clear();
  };
  // An error that reaches the Worker object (the module failed to load, or an uncaught throw)
  // leaves the worker unusable: stop it rather than let calls wait forever.
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    const message = event.message || 'its script failed to load';
    gone = () => new Error(`the judge worker stopped: ${message}`);
    stop();
  });

  /** Runs `call`; a worker that has not settled it within `timeoutMs` is stopped as hung. */
  function bounded<T>(timeoutMs: number | undefined, call: () => Promise<T>): Promise<T> {
    if (timeoutMs === undefined) return call();
    if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) return Promise.reject(new RangeError(`the judge timeout must be a positive number of milliseconds, not ${timeoutMs}`));
    const timer = setTimeout(() => {
      if (terminated) return;
      // A worker stuck in a loop (or a GPU wait that never returns) answers nothing else either.
      gone = () => new Error(`the judge worker did not answer within ${+(timeoutMs / 1000).toFixed(1)} s, so it was stopped`);
      stop();
    }, timeoutMs);
    return call().finally(() => clearTimeout(timer));
  }

  return {
    configure: (config, options = {}) => settleOnTerminate(() => api.configure(config, options.onProgress ? Comlink.proxy(options.onProgress) : undefined)),
    judge: (rubric, rollouts, options = {}) => cancellable(options.signal, (id) => api.judge({ id, rubric, rollouts, keep: options.keep })),
    judgeQuestions: (requests, options = {}) => bounded(options.timeoutMs, () => cancellable(options.signal, (id) => api.judgeQuestions([...requests], id))),
    complete: (messages, options = {}) => settleOnTerminate(() => api.complete(messages, options)),
    state: () => settleOnTerminate(() => api.state()),
    terminate: stop,
  };
}
