// A Judge whose questions are answered in a judge worker: the caller (the GRPO step in the
// trainer worker) keeps its own cache and aggregation and delegates only the model's part.
// startWorkerModelJudge runs an engine model there on the worker's own GPU runtime, so a judge
// that is not the policy never shares the trainer's device memory or its thread.
import type { DownloadProgress } from '../model/hub';
import { DownloadCancelledError } from '../model/hub/errors';
import type { Judge } from '../rubric/judge';
import { modelJudgeName } from '../rl/judgeFactory';
import { startJudgeWorker, type JudgeWorkerClient } from './judgeClient';

/** The Judge interface over a judge worker's judgeQuestions(); an abort cancels the batch there. */
export function workerJudge(client: Pick<JudgeWorkerClient, 'judgeQuestions'>, name: string): Judge {
  return {
    name,
    judge: (requests, options = {}) => client.judgeQuestions(requests, { signal: options.signal }),
  };
}

export interface WorkerModelJudgeOptions {
  /** A Hub mirror for "hf:" model ids. */
  hubEndpoint?: string;
  onProgress?: (progress: DownloadProgress) => void;
  /** Aborting while the model loads terminates the judge worker (and its download): rejects with DownloadCancelledError. */
  signal?: AbortSignal;
}

export interface WorkerModelJudge {
  judge: Judge;
  /** Terminates the judge worker: its GPU runtime and the model's weights go with it. */
  release(): void;
}

/** Starts a judge worker, loads `modelId` there and returns a Judge on it. Rejects (and terminates the worker) when the model cannot be loaded. */
export async function startWorkerModelJudge(modelId: string, options: WorkerModelJudgeOptions = {}): Promise<WorkerModelJudge> {
  const { signal } = options;
  if (signal?.aborted) throw new DownloadCancelledError();
  const client = startJudgeWorker();
  const onAbort = () => client.terminate();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await client.configure({ model: { modelId, ...(options.hubEndpoint ? { hubEndpoint: options.hubEndpoint } : {}) } }, { onProgress: options.onProgress });
  } catch (err) {
    client.terminate();
    if (signal?.aborted) throw new DownloadCancelledError();
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return { judge: workerJudge(client, modelJudgeName(modelId)), release: () => client.terminate() };
}
