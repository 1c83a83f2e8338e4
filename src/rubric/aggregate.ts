// Per-rollout reward aggregation: per-criterion scores in, one reward (or null) out.
//
// Notation: criterion k has weight w_k (w < 0: a pitfall, phrased as the bad behaviour; w = 0:
// tracked only) and score s_k in [0, 1]. Active criteria A: w_k != 0 and not dropped (keep[k]
// !== false). P = {k in A : w_k > 0}. "Met": s_k >= threshold (default 0.5). A criterion
// "passes" when it is met (w > 0) or not met (pitfalls).
//
// Missing scores: a rollout with a missing score (unscorable, needs_model, absent) for any
// active criterion gets reward null — it is left out of group statistics and gets advantage 0 —
// never 0. Missing scores of inactive criteria do not matter.
import type { CriterionResult } from './judge';
import type { Rubric } from './schema';

/** Scores aligned with rubric.criteria; null = missing. */
export type Scores = readonly (number | null)[];

export const DEFAULT_PASS_THRESHOLD = 0.5;
export const DEFAULT_GATE_CAP = 0;

export type BaseAggregation = 'weighted_mean' | 'healthbench_points';

export interface MaskOptions {
  /** false drops a criterion (Rubric Dropout); absent = the full rubric. */
  keep?: readonly boolean[];
}
export interface ThresholdOptions extends MaskOptions {
  /** Met means score >= threshold; in [0, 1]. */
  threshold?: number;
}
export interface GateOptions extends ThresholdOptions {
  /** The reward of a rollout failing an essential criterion is min(base, cap). */
  cap?: number;
  base?: BaseAggregation;
}

/** Per-rollout scores from judge results: 'ok' gives the score, anything else (or no result) null. */
export function scoresOf(rubric: Rubric, results: readonly CriterionResult[]): (number | null)[] {
  const index = new Map(rubric.criteria.map((c, k) => [c.id, k]));
  const out: (number | null)[] = new Array<number | null>(rubric.criteria.length).fill(null);
  const seen = new Set<string>();
  results.forEach((r, i) => {
    const k = index.get(r.criterion_id);
    if (k === undefined) throw new RangeError(`results[${i}].criterion_id "${r.criterion_id}" is not in the rubric`);
    if (seen.has(r.criterion_id)) throw new RangeError(`results[${i}]: a second result for "${r.criterion_id}"`);
    seen.add(r.criterion_id);
    if (r.status === 'ok') out[k] = r.score;
  });
  return out;
}

/** Checks the scores and mask against the rubric; returns the active criteria. */
export function activeCriteria(rubric: Rubric, scores: Scores, keep?: readonly boolean[]): number[] {
  const K = rubric.criteria.length;
  if (scores.length !== K) throw new RangeError(`scores has ${scores.length} entries for ${K} criteria`);
  if (keep && keep.length !== K) throw new RangeError(`keep has ${keep.length} entries for ${K} criteria`);
  scores.forEach((s, k) => {
    if (s !== null && !(s >= 0 && s <= 1)) throw new RangeError(`scores[${k}] = ${s} is outside [0, 1]`);
  });
  const active = rubric.criteria.flatMap((c, k) => (c.weight !== 0 && keep?.[k] !== false ? [k] : []));
  if (!active.some((k) => rubric.criteria[k].weight > 0)) throw new RangeError('keep drops every positive-weight criterion');
  return active;
}

export function checkThreshold(threshold: number): number {
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`threshold must be in [0, 1], got ${threshold}`);
  return threshold;
}

/** Σ_{k in P} w_k over the active criteria. */
export function positiveWeight(rubric: Rubric, active: readonly number[]): number {
  return active.reduce((s, k) => s + Math.max(rubric.criteria[k].weight, 0), 0);
}

function anyMissing(scores: Scores, active: readonly number[]): boolean {
  return active.some((k) => scores[k] === null);
}

/**
 * Weighted mean (RaR explicit aggregation, Eq. 1, with HealthBench-style pitfalls):
 *   r = Σ_{k in A} w_k s_k / Σ_{k in P} w_k.
 * Pitfalls (w < 0) subtract |w_k| s_k; the denominator counts positive weights only, so r = 1
 * exactly when every positive criterion scores 1 and no pitfall is met. Range
 * [-Σ|w_pitfall| / Σ w_P, 1]; not clipped, so outputs that hit pitfalls stay distinguishable.
 * Soft scores (ordinal choices, P(yes)) count as they are.
 */
export function weightedMean(rubric: Rubric, scores: Scores, options: MaskOptions = {}): number | null {
  const active = activeCriteria(rubric, scores, options.keep);
  if (anyMissing(scores, active)) return null;
  const sum = active.reduce((s, k) => s + rubric.criteria[k].weight * scores[k]!, 0);
  return sum / positiveWeight(rubric, active);
}

/**
 * HealthBench points: r = clip(Σ_{k in A, met} w_k / Σ_{k in P} w_k, 0, 1).
 * Binary: a criterion earns its points (or, for a pitfall, loses them) when met. HealthBench
 * clips the mean over examples; clipping each rollout, as here, keeps rewards in [0, 1].
 */
export function healthbenchPoints(rubric: Rubric, scores: Scores, options: ThresholdOptions = {}): number | null {
  const threshold = checkThreshold(options.threshold ?? DEFAULT_PASS_THRESHOLD);
  const active = activeCriteria(rubric, scores, options.keep);
  if (anyMissing(scores, active)) return null;
  const points = active.reduce((s, k) => s + (scores[k]! >= threshold ? rubric.criteria[k].weight : 0), 0);
  return Math.min(1, Math.max(0, points / positiveWeight(rubric, active)));
}

/** Whether active criterion k passes: met for w > 0, not met for a pitfall. */
export function passes(rubric: Rubric, scores: Scores, k: number, threshold: number): boolean {
  const met = scores[k]! >= threshold;
  return rubric.criteria[k].weight > 0 ? met : !met;
}

/**
 * Essential gating (the "veto" of Rubicon, OpenRubrics' hard-rule gate): the base reward
 * (weighted mean by default), capped at `cap` (default 0) when any active essential criterion
 * fails — an essential criterion not met, or an essential pitfall met: r = min(base, cap).
 */
export function essentialGated(rubric: Rubric, scores: Scores, options: GateOptions = {}): number | null {
  const threshold = checkThreshold(options.threshold ?? DEFAULT_PASS_THRESHOLD);
  const cap = options.cap ?? DEFAULT_GATE_CAP;
  if (!Number.isFinite(cap)) throw new RangeError(`cap must be finite, got ${cap}`);
  const base = options.base === 'healthbench_points' ? healthbenchPoints(rubric, scores, options) : weightedMean(rubric, scores, options);
  if (base === null) return null;
  const active = activeCriteria(rubric, scores, options.keep);
  const failed = active.some((k) => rubric.criteria[k].tier === 'essential' && !passes(rubric, scores, k, threshold));
  return failed ? Math.min(base, cap) : base;
}

/**
 * Strict all-required (POW3R's "strict completion", AdvancedIF all-or-nothing): 1 when every
 * active positive essential or important criterion is met and no active pitfall (any tier) is
 * met, else 0. Optional criteria do not count.
 */
export function strictAllRequired(rubric: Rubric, scores: Scores, options: ThresholdOptions = {}): number | null {
  const threshold = checkThreshold(options.threshold ?? DEFAULT_PASS_THRESHOLD);
  const active = activeCriteria(rubric, scores, options.keep);
  if (anyMissing(scores, active)) return null;
  const required = active.filter((k) => {
    const c = rubric.criteria[k];
    return c.weight < 0 || c.tier !== 'optional';
  });
  return required.every((k) => passes(rubric, scores, k, threshold)) ? 1 : 0;
}

/** The per-rollout aggregations by name (the bases Rubric Dropout can use). */
export const ROLLOUT_AGGREGATIONS = {
  weighted_mean: weightedMean,
  healthbench_points: healthbenchPoints,
  essential_gated: essentialGated,
  strict_all_required: strictAllRequired,
} as const satisfies Record<string, (rubric: Rubric, scores: Scores, options: GateOptions) => number | null>;

export type RolloutAggregation = keyof typeof ROLLOUT_AGGREGATIONS;
