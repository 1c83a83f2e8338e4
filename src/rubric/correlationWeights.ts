// correlation_weights: the weighted mean with weights that discount criteria correlated with
// others (RRD, seed 000 #97: "a correlation-aware weighting scheme prevents over-representing
// highly correlated criteria"; the paper gives no formula, this one is ours and the same as the
// rubric report's, src/rubric/measure.ts):
//   H      = the verdicts seen so far: the history rows (the trainer passes every rollout of the
//            step's batch, as TRL hands the exported reward one batch per call), else the group
//   r_jk   = Pearson correlation of s_j and s_k over the rows of H scoring both (population
//            moments); null (counts 0) with fewer than 2 such rows or either constant on them
//   c_k    = 1 + Σ_{j in A, j ≠ k} max(0, sign(w_j) sign(w_k) r_jk)       (a soft cluster size)
//   u_k    = w_k / c_k
//   r_i    = Σ_{k in A} u_k s_ik / Σ_{k in P} u_k   (the weighted mean with u for w; null when a
//            score of an active criterion is missing)
// m criteria that always agree share one criterion's weight; independent or opposed ones keep
// theirs, so with uncorrelated verdicts this is the plain weighted mean. Deterministic: the
// same verdicts give the same weights.
import { activeCriteria, type MaskOptions, type Scores } from './aggregate';
import { correlationAwareWeights, criterionCorrelation } from './measure';
import type { Rubric } from './schema';

export interface CorrelationWeightsOptions extends MaskOptions {
  /** The verdicts the correlations are estimated from; absent = the group itself. */
  history?: readonly Scores[];
}

export interface CorrelationWeightsResult {
  rewards: (number | null)[];
  /** [K] the weights u_k used (0 for inactive criteria). */
  weights: number[];
}

export function correlationWeights(rubric: Rubric, groupScores: readonly Scores[], options: CorrelationWeightsOptions = {}): CorrelationWeightsResult {
  const K = rubric.criteria.length;
  if (groupScores.length === 0) return { rewards: [], weights: new Array<number>(K).fill(0) };
  // Checks every row (lengths, ranges); the active set depends only on the rubric and the mask.
  const active = groupScores.map((s) => activeCriteria(rubric, s, options.keep))[0];
  const history = options.history ?? groupScores;
  history.forEach((s) => activeCriteria(rubric, s, options.keep));
  const isActive = new Set(active);
  const human = rubric.criteria.map((c, k) => (isActive.has(k) ? c.weight : 0));
  const weights = correlationAwareWeights(human, criterionCorrelation(history, K));
  const denominator = active.reduce((a, k) => a + Math.max(weights[k], 0), 0);
  const rewards = groupScores.map((s) => (active.some((k) => s[k] === null) ? null : active.reduce((a, k) => a + weights[k] * s[k]!, 0) / denominator));
  return { rewards, weights };
}
