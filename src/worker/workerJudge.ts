// A Judge whose questions are answered in a judge worker: the caller (the GRPO step in the
// trainer worker) keeps its own cache and aggregation and delegates only the model's part.
// startWorkerModelJudge runs an engine model there on the worker's own GPU runtime, so a judge
// that is not the policy never shares the trainer's device memory or its thread.
import type { DownloadProgress } from '../model/hub';
import { DownloadCancelledError } from '../model/hub/errors';
import type { Judge } from '../rubric/judge';
import type { Complete } from '../rubric/generate';
import { modelJudgeName } from '../rl/judgeFactory';
import { startJudgeWorker, type JudgeWorkerClient } from './judgeClient';

/**
 * How long a judge worker may take to answer a batch before it is taken for hung: a minute, plus
 * 5 s a question (a model judge answers a question in one forward pass: milliseconds on a GPU,
 * well under a second even on a software adapter).
 */
export const judgeAnswerBoundMs = (questions: number): number => 60_000 + 5_000 * questions;

/**
 * The Judge interface over a judge worker's judgeQuestions(); an abort cancels the batch there.
 * A worker that does not answer within `answerBoundMs` is stopped: the batch's questions (and
 * every later one's) become unscorable with that reason, never a 0, and the step goes on.
 */
export function workerJudge(
  client: Pick<JudgeWorkerClient, 'judgeQuestions'> & Partial<Pick<JudgeWorkerClient, 'complete'>>,
  name: string,
  options: { answerBoundMs?: (questions: number) => number } = {},
): Judge {
  const bound = options.answerBoundMs ?? judgeAnswerBoundMs;
  const judge: Judge & { complete?: Complete } = {
    name,
    judge: (requests, opts = {}) => client.judgeQuestions(requests, { signal: opts.signal, timeoutMs: bound(requests.length) }),
  };
  // The worker's model writes text too: rubric_evolution and the black-box teacher ask it for criteria (judgeGenerator).
  if (client.complete) {
    const complete = client.complete;
    judge.complete = async (messages) => (await complete(messages)).text;
  }
  return judge;
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
