// Judging: per-criterion results for a (prompt, completion). Rules are judged here, at once and
// deterministically; judge_question criteria need a model (or remote) judge, which implements
// the `Judge` interface below. A failed judgement is 'unscorable' (the rollout then gets no
// reward and no advantage), never a silent 0.
import type { JudgeCache } from './cache';
import type { JudgeDesign } from './judgeDesign';
import { normaliseSpans, ruleSpans, spansInOriginal, type Span } from './evidence';
import { checkRule, type RuleContext } from './rules';
import { isRuleCriterion, type Criterion, type QuestionCriterion, type Rubric, type RuleCriterion } from './schema';

export type ResultStatus = 'ok' | 'unscorable' | 'needs_model';

export type CriterionResult =
  | {
      criterion_id: string;
      status: 'ok';
      /** in [0, 1] */ score: number;
      reason: string;
      /** Evidence: the characters that made it pass or fail (UTF-16 offsets into the completion; evidence.ts). */
      spans?: Span[];
    }
  | { criterion_id: string; status: 'unscorable' | 'needs_model'; score: null; reason: string };

export interface JudgeRequest {
  rubricVersion: string;
  prompt: string;
  completion: string;
  criterion: Criterion;
  /** Evidence-required credit (src/rubric/evidenceCredit.ts): ask the judge to quote the response's words that meet the criterion. */
  requireQuote?: boolean;
  /**
   * The judge design (src/rubric/judgeDesign.ts: judge_verdict, judge_scope) when not the default
   * P(yes) margin per criterion: how a model judge answers, and whether one call sees the checklist.
   */
  design?: JudgeDesign;
}

/**
 * A judge scores a batch of requests. Model judges (a small instruct model scoring P("yes"),
 * an NLI pipeline) and remote judges (an OpenAI-compatible endpoint) implement this.
 * Contract: resolve with exactly one result per request, in order, criterion_id equal to the
 * request's; report a failure of one item (timeout, malformed answer) as status 'unscorable'
 * with the reason; reject only when the whole batch failed (network down), which callers turn
 * into 'unscorable' for every item; stop early when `signal` aborts.
 */
export interface Judge {
  readonly name: string;
  judge(requests: readonly JudgeRequest[], options?: JudgeOptions): Promise<CriterionResult[]>;
}

export interface JudgeOptions {
  signal?: AbortSignal;
  /** Optional progress: how many of this call's requests have their result so far (a judge may call it as it goes). */
  onAnswered?: (done: number) => void;
}

export const unscorable = (criterionId: string, reason: string): CriterionResult => ({
  criterion_id: criterionId,
  status: 'unscorable',
  score: null,
  reason,
});

const needsModel = (c: QuestionCriterion): CriterionResult => ({
  criterion_id: c.id,
  status: 'needs_model',
  score: null,
  reason: 'needs a model judge',
});

/** Score of an ordinal answer: index / (n - 1) over the choices (worst → best); null if not a choice. Case and surrounding space are ignored. */
export function choiceScore(choices: readonly string[], answer: string): number | null {
  const a = answer.trim().toLowerCase();
  const i = choices.findIndex((c) => c.trim().toLowerCase() === a);
  return i < 0 ? null : i / (choices.length - 1);
}

/** The one rule criterion result, with the rule's outcome. */
function judgeRuleCriterion(c: RuleCriterion, completion: string, ctx: RuleContext): CriterionResult {
  const out = checkRule(c.rule, completion, ctx);
  if (out.status !== 'ok') return unscorable(c.id, out.reason);
  const spans = spansInOriginal(completion, ruleSpans(c.rule, completion.normalize('NFC')));
  return { criterion_id: c.id, status: 'ok', score: out.score, reason: out.reason, ...(spans?.length ? { spans } : {}) };
}

export interface RuleJudgeOptions extends RuleContext {
  /** With rubricVersion: results are looked up and stored by (version, criterion, prompt, completion). */
  cache?: JudgeCache;
  rubricVersion?: string;
}

/**
 * Judges every criterion of the rubric with the rules, in rubric order. judge_question
 * criteria come back 'needs_model'. Synchronous and deterministic.
 */
export function judgeWithRules(rubric: Rubric, prompt: string, completion: string, options: RuleJudgeOptions = {}): CriterionResult[] {
  const { cache, rubricVersion } = options;
  if (cache && rubricVersion === undefined) throw new RangeError('judgeWithRules: a cache needs options.rubricVersion');
  return rubric.criteria.map((c) => {
    if (!isRuleCriterion(c)) return needsModel(c);
    const key = cache && { rubricVersion: rubricVersion!, criterionId: c.id, prompt, completion };
    const hit = key && cache.get(key);
    if (hit) return hit;
    const result = judgeRuleCriterion(c, completion, options);
    if (key) cache.set(key, result);
    return result;
  });
}

/** The rule judge behind the `Judge` interface (for code that treats all judges alike). */
export function ruleJudge(ctx: RuleContext = {}): Judge {
  return {
    name: 'rules',
    judge: async (requests) =>
      requests.map((r) => (isRuleCriterion(r.criterion) ? judgeRuleCriterion(r.criterion, r.completion, ctx) : needsModel(r.criterion))),
  };
}

/** Spans a judge returned, kept only where they lie inside the completion (a bad span is dropped, never credited). */
function withCheckedSpans(result: CriterionResult & { status: 'ok' }, completion: string): CriterionResult {
  if (result.spans === undefined) return result;
  const { spans, ...rest } = result;
  const valid = Array.isArray(spans)
    ? spans.filter((x) => x && Number.isInteger(x.start) && Number.isInteger(x.end) && x.start >= 0 && x.start < x.end && x.end <= completion.length)
    : [];
  const kept = normaliseSpans(valid);
  return kept.length ? { ...rest, spans: kept } : rest;
}

/** A judge's answer for one request, checked against the contract; anything else is unscorable. */
function checked(judge: Judge, request: JudgeRequest, result: CriterionResult | undefined): CriterionResult {
  const id = request.criterion.id;
  if (result === undefined || result === null || typeof result !== 'object') return unscorable(id, `judge "${judge.name}" returned no result`);
  if (result.criterion_id !== id) return unscorable(id, `judge "${judge.name}" answered for "${String(result.criterion_id)}"`);
  if (result.status === 'ok') {
    if (typeof result.score !== 'number' || !(result.score >= 0 && result.score <= 1)) {
      return unscorable(id, `judge "${judge.name}" returned score ${String(result.score)}, outside [0, 1]`);
    }
    return withCheckedSpans(result, request.completion);
  }
  if (result.status === 'unscorable' || result.status === 'needs_model') return { ...result, score: null };
  return unscorable(id, `judge "${judge.name}" returned status ${JSON.stringify(result.status)}`);
}

export interface Rollout {
  prompt: string;
  completion: string;
}

export interface JudgeRolloutsOptions extends RuleContext {
  /** Scores judge_question criteria; without one they are 'needs_model'. */
  modelJudge?: Judge;
  cache?: JudgeCache;
  /** Per rollout, which criteria to judge (false = dropped, e.g. by Rubric Dropout); absent = all. Dropped criteria are left out of the results. */
  keep?: readonly (readonly boolean[] | undefined)[];
  signal?: AbortSignal;
  /** Rollouts judged so far, of all: once the rules and the cache have answered, and when the model judge has. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Judges a batch of rollouts: rules here, judge_question criteria in one batch call to the
 * model judge, cache first. Returns, per rollout, the results of its kept criteria in rubric
 * order. A judge that rejects makes its items unscorable; an abort rejects.
 */
export async function judgeRollouts(
  rubric: Rubric,
  rubricVersion: string,
  rollouts: readonly Rollout[],
  options: JudgeRolloutsOptions = {},
): Promise<CriterionResult[][]> {
  const { modelJudge, cache, keep, signal, onProgress } = options;
  const K = rubric.criteria.length;
  keep?.forEach((mask, i) => {
    if (mask !== undefined && mask.length !== K) throw new RangeError(`keep[${i}] has ${mask.length} entries for ${K} criteria`);
  });
  if (keep && keep.length !== rollouts.length) throw new RangeError(`keep has ${keep.length} masks for ${rollouts.length} rollouts`);

  const results: (CriterionResult | undefined)[][] = rollouts.map(() => new Array<CriterionResult | undefined>(K));
  const queued: { rollout: number; k: number; request: JudgeRequest }[] = [];
  rollouts.forEach(({ prompt, completion }, i) => {
    rubric.criteria.forEach((c, k) => {
      if (keep?.[i]?.[k] === false) return;
      const key = { rubricVersion, criterionId: c.id, prompt, completion };
      const hit = cache?.get(key);
      if (hit) results[i][k] = hit;
      else if (isRuleCriterion(c)) {
        results[i][k] = judgeRuleCriterion(c, completion, options);
        cache?.set(key, results[i][k]!);
      } else if (modelJudge) queued.push({ rollout: i, k, request: { rubricVersion, prompt, completion, criterion: c } });
      else results[i][k] = needsModel(c);
    });
  });

  const waiting = new Set(queued.map((q) => q.rollout));
  const ready = rollouts.length - waiting.size;
  onProgress?.(ready, rollouts.length);
  // The judge answers requests, not rollouts: the rollouts waiting on it count in proportion, and all at the end.
  const onAnswered = onProgress && ((done: number) => onProgress(ready + Math.min(waiting.size - 1, Math.floor((done / queued.length) * waiting.size)), rollouts.length));
  if (modelJudge && queued.length > 0) {
    let answers: CriterionResult[] | undefined;
    let failure: string | undefined;
    try {
      answers = await modelJudge.judge(
        queued.map((q) => q.request),
        { signal, ...(onAnswered ? { onAnswered } : {}) },
      );
      if (!Array.isArray(answers) || answers.length !== queued.length) {
        failure = `judge "${modelJudge.name}" returned ${Array.isArray(answers) ? answers.length : 'no'} results for ${queued.length} requests`;
      }
    } catch (e) {
      if (signal?.aborted) throw e;
      failure = `judge "${modelJudge.name}" failed: ${(e as Error)?.message ?? String(e)}`;
    }
    queued.forEach((q, j) => {
      const result = failure !== undefined ? unscorable(q.request.criterion.id, failure) : checked(modelJudge, q.request, answers![j]);
      results[q.rollout][q.k] = result;
      cache?.set({ rubricVersion, criterionId: q.request.criterion.id, prompt: q.request.prompt, completion: q.request.completion }, result);
    });
    onProgress?.(rollouts.length, rollouts.length);
  }
  return results.map((row) => row.filter((r): r is CriterionResult => r !== undefined));
}

/** Wraps a judge with the cache: only misses reach it, and its 'ok' results are stored. */
export function cachedJudge(judge: Judge, cache: JudgeCache): Judge {
  return {
    name: judge.name,
    async judge(requests, options) {
      const keyOf = (r: JudgeRequest) => ({ rubricVersion: r.rubricVersion, criterionId: r.criterion.id, prompt: r.prompt, completion: r.completion });
      const out = requests.map((r) => cache.get(keyOf(r)));
      const missing = requests.filter((_, i) => out[i] === undefined);
      if (missing.length > 0) {
        const hits = requests.length - missing.length;
        const onAnswered = options?.onAnswered;
        const fresh = await judge.judge(missing, { ...options, ...(onAnswered ? { onAnswered: (done: number) => onAnswered(hits + done) } : {}) });
        if (!Array.isArray(fresh) || fresh.length !== missing.length) {
          throw new Error(`judge "${judge.name}" returned ${Array.isArray(fresh) ? fresh.length : 'no'} results for ${missing.length} requests`);
        }
        let j = 0;
        requests.forEach((r, i) => {
          if (out[i] !== undefined) return;
          out[i] = checked(judge, r, fresh[j++]);
          cache.set(keyOf(r), out[i]!);
        });
      }
      return out as CriterionResult[];
    },
  };
}
