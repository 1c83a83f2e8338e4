// Worker that judges batches of rollouts off the main thread: rules, plus one judge for
// judge_question criteria — a remote (OpenAI-compatible) endpoint, or a model on our engine run
// on this worker's own GPU runtime — with an LRU cache kept across batches. judgeQuestions()
// answers question criteria alone, for callers that keep their own cache (the trainer worker).
// The remote judge's API key arrives in configure() (a structured clone, in memory) and lives
// only in the judge object; it is never written anywhere and never sent back.
import * as Comlink from 'comlink';
import type { DownloadProgress } from '../model/hub';
import { JudgeCache, type JudgeCacheStats } from '../rubric/cache';
import { judgeRollouts, type CriterionResult, type Judge, type JudgeRequest, type ResultStatus, type Rollout } from '../rubric/judge';
import { parseRubric } from '../rubric/schema';
import { rubricVersion } from '../rubric/version';
import { remoteJudge, type RemoteJudge, type RemoteJudgeConfig, type RemoteJudgeDescription } from '../rubric/judges/remote';
import { checkModelConfig, EngineJudgeSlot, type JudgeModelConfig, type JudgeModelDescription } from './engineJudgeSlot';
import type { CompletionMessages, EngineCompleteOptions, EngineCompletion } from '../rl/engineComplete';

export type { JudgeModelConfig, JudgeModelDescription } from './engineJudgeSlot';

export interface JudgeWorkerConfig {
  /** The remote judge for judge_question criteria; null or absent: none. */
  remote?: RemoteJudgeConfig | null;
  /**
   * A model on our engine for judge_question criteria, loaded in this worker (the same model is
   * kept, not reloaded); null or absent: none, and a loaded one is freed. Not with `remote`.
   * With neither, judge_question criteria stay 'needs_model'.
   */
  model?: JudgeModelConfig | null;
  /** Results kept by the cache (default 4096). */
  cacheEntries?: number;
}

export interface JudgeBatchInput {
  /** Names the batch for cancel(). */
  id: string;
  /** A rubric as JSON data (validated here: a bad one rejects with the RubricError's message). */
  rubric: unknown;
  rollouts: Rollout[];
  /** Per rollout, the criteria to judge (Rubric Dropout); absent = all. */
  keep?: (boolean[] | undefined)[];
}

export interface JudgeBatchOutput {
  rubricVersion: string;
  /** Per rollout, the results of its kept criteria in rubric order. */
  results: CriterionResult[][];
  counts: Record<ResultStatus, number>;
  cache: JudgeCacheStats;
  seconds: number;
}

export interface JudgeWorkerState {
  /** The remote judge's settings, without the key. */
  remote: RemoteJudgeDescription | null;
  /** The engine model loaded for judge questions; absent when none. */
  model?: JudgeModelDescription;
  cache: JudgeCacheStats;
}

let remote: RemoteJudge | null = null;
const engine = new EngineJudgeSlot();
let cache = new JudgeCache();
const running = new Map<string, AbortController>();
/** configure() calls run one at a time; batches wait for the one in progress. */
let configuring: Promise<unknown> = Promise.resolve();
const configured = () => configuring.catch(() => {});

function state(): JudgeWorkerState {
  const model = engine.describe();
  return { remote: remote?.toJSON() ?? null, ...(model ? { model } : {}), cache: cache.stats() };
}

/** The question judge a batch uses: the remote one or the engine model (at most one is set). */
const questionJudge = (model: Judge | null): Judge | undefined => remote ?? model ?? undefined;

async function applyConfig(config: JudgeWorkerConfig, onProgress?: (progress: DownloadProgress) => void): Promise<JudgeWorkerState> {
  if (typeof config !== 'object' || config === null) throw new TypeError('configure: the config must be an object');
  if (config.remote && config.model) throw new RangeError('configure: give either a remote judge or a model, not both: one judge answers the questions');
  // Everything that can fail comes first, so a rejected configure() leaves the worker as it was.
  const nextRemote = config.remote ? remoteJudge(config.remote) : null;
  const model = config.model === undefined || config.model === null ? null : checkModelConfig(config.model);
  if (!engine.holds(model)) engine.commit(model ? await engine.prepare(model, onProgress) : null);
  remote = nextRemote;
  cache = new JudgeCache(config.cacheEntries ?? 4096);
  return state();
}

/** Requests as they crossed postMessage, checked enough to name a malformed one. */
function checkRequests(requests: unknown): JudgeRequest[] {
  if (!Array.isArray(requests)) throw new TypeError('judgeQuestions: requests must be an array of {prompt, completion, criterion}');
  requests.forEach((r: unknown, i) => {
    const { prompt, completion, criterion } = (r ?? {}) as Record<string, unknown>;
    if (typeof prompt !== 'string') throw new TypeError(`judgeQuestions: requests[${i}].prompt must be a string`);
    if (typeof completion !== 'string') throw new TypeError(`judgeQuestions: requests[${i}].completion must be a string`);
    if (typeof criterion !== 'object' || criterion === null || typeof (criterion as { id?: unknown }).id !== 'string') {
      throw new TypeError(`judgeQuestions: requests[${i}].criterion must be a rubric criterion with an id`);
    }
  });
  return requests as JudgeRequest[];
}

/** Runs `work` under `id`, so cancel(id) can stop it. */
async function track<T>(id: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (running.has(id)) throw new RangeError(`a batch with id "${id}" is already running`);
  const controller = new AbortController();
  running.set(id, controller);
  try {
    return await work(controller.signal);
  } finally {
    running.delete(id);
  }
}

const api = {
  /**
   * Sets (or clears) the question judge: a remote endpoint, or an engine model loaded here (its
   * download reports to `onProgress`). The cache is emptied: its results came from the old judge.
   * Rejects, changing nothing, when the config is bad or the model cannot be loaded.
   */
  configure(config: JudgeWorkerConfig, onProgress?: (progress: DownloadProgress) => void): Promise<JudgeWorkerState> {
    // onProgress is the caller's function behind a Comlink proxy: a failed report must not fail the load.
    let listening = true;
    const report = onProgress
      ? (progress: DownloadProgress) => {
          if (listening) void Promise.resolve(onProgress(progress)).catch(() => {});
        }
      : undefined;
    const next = configured().then(() => applyConfig(config, report));
    configuring = next;
    return next.finally(() => {
      listening = false;
      (onProgress as Partial<Comlink.ProxyMethods> | undefined)?.[Comlink.releaseProxy]?.();
    });
  },

  async judge(input: JudgeBatchInput): Promise<JudgeBatchOutput> {
    const t0 = performance.now();
    return track(input.id, async (signal) => {
      await configured();
      const rubric = parseRubric(input.rubric);
      const version = await rubricVersion(rubric);
      const batchCache = cache;
      const results = await engine.with((model) =>
        judgeRollouts(rubric, version, input.rollouts, { modelJudge: questionJudge(model), cache: batchCache, keep: input.keep, signal }),
      );
      const counts: Record<ResultStatus, number> = { ok: 0, unscorable: 0, needs_model: 0 };
      for (const r of results.flat()) counts[r.status]++;
      return { rubricVersion: version, results, counts, cache: batchCache.stats(), seconds: (performance.now() - t0) / 1000 };
    });
  },

  /**
   * The question judge's results for these requests, one per request in order, without this
   * worker's cache (the caller keeps its own). Rejects when no question judge is configured, a
   * request is malformed, or the whole batch failed; with an AbortError after cancel(id).
   */
  async judgeQuestions(requests: JudgeRequest[], id: string): Promise<CriterionResult[]> {
    const checked = checkRequests(requests);
    return track(id, async (signal) => {
      await configured();
      return engine.with((model) => {
        const judge = questionJudge(model);
        if (!judge) throw new Error('the judge worker has no question judge: configure it with a model (or a remote judge) first');
        return judge.judge(checked, { signal });
      });
    });
  },

  /**
   * Free text from the engine model (drafting a rubric with it): the reply to one system + user
   * exchange and what the model could see of it. Rejects when no engine model is loaded (a remote
   * judge has its own complete(), called from the page).
   */
  async complete(messages: CompletionMessages, options: EngineCompleteOptions = {}): Promise<EngineCompletion> {
    await configured();
    return engine.withModel((held) => {
      if (!held) throw new Error('the judge worker has no model on the engine: configure it with a model first');
      return held.complete(messages, options);
    });
  },

  /** Stops a running batch (its judge() or judgeQuestions() rejects with an AbortError); false if none has that id. */
  cancel(id: string): boolean {
    const controller = running.get(id);
    controller?.abort(new DOMException('the judge batch was cancelled', 'AbortError'));
    return controller !== undefined;
  },

  state,
};

export type JudgeWorkerApi = typeof api;
Comlink.expose(api);
