// Worker that judges batches of rollouts off the main thread: rules, plus an optional remote
// (OpenAI-compatible) judge for judge_question criteria, with an LRU cache kept across batches.
// The remote judge's API key arrives in configure() (a structured clone, in memory) and lives
// only in the judge object; it is never written anywhere and never sent back.
import * as Comlink from 'comlink';
import { JudgeCache, type JudgeCacheStats } from '../rubric/cache';
import { judgeRollouts, type CriterionResult, type ResultStatus, type Rollout } from '../rubric/judge';
import { parseRubric } from '../rubric/schema';
import { rubricVersion } from '../rubric/version';
import { remoteJudge, type RemoteJudge, type RemoteJudgeConfig, type RemoteJudgeDescription } from '../rubric/judges/remote';

export interface JudgeWorkerConfig {
  /** The remote judge for judge_question criteria; null or absent: those stay 'needs_model'. */
  remote?: RemoteJudgeConfig | null;
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
  cache: JudgeCacheStats;
}

let remote: RemoteJudge | null = null;
let cache = new JudgeCache();
const running = new Map<string, AbortController>();

const state = (): JudgeWorkerState => ({ remote: remote?.toJSON() ?? null, cache: cache.stats() });

const api = {
  /** Sets (or clears) the remote judge. The cache is emptied: its results came from the old judge. */
  configure(config: JudgeWorkerConfig): JudgeWorkerState {
    const next = config.remote ? remoteJudge(config.remote) : null;
    const fresh = new JudgeCache(config.cacheEntries ?? 4096);
    remote = next;
    cache = fresh;
    return state();
  },

  async judge(input: JudgeBatchInput): Promise<JudgeBatchOutput> {
    if (running.has(input.id)) throw new RangeError(`a batch with id "${input.id}" is already running`);
    const t0 = performance.now();
    const controller = new AbortController();
    running.set(input.id, controller);
    try {
      const rubric = parseRubric(input.rubric);
      const version = await rubricVersion(rubric);
      const results = await judgeRollouts(rubric, version, input.rollouts, {
        modelJudge: remote ?? undefined,
        cache,
        keep: input.keep,
        signal: controller.signal,
      });
      const counts: Record<ResultStatus, number> = { ok: 0, unscorable: 0, needs_model: 0 };
      for (const r of results.flat()) counts[r.status]++;
      return { rubricVersion: version, results, counts, cache: cache.stats(), seconds: (performance.now() - t0) / 1000 };
    } finally {
      running.delete(input.id);
    }
  },

  /** Stops a running batch (its judge() rejects with an AbortError); false if none has that id. */
  cancel(id: string): boolean {
    const controller = running.get(id);
    controller?.abort(new DOMException('the judge batch was cancelled', 'AbortError'));
    return controller !== undefined;
  },

  state,
};

export type JudgeWorkerApi = typeof api;
Comlink.expose(api);
