// Measuring a rubric on stored rollouts: how each criterion behaves on what the policy actually
// wrote. Input: rollouts with `scores` aligned with rubric.criteria (null = unscored), grouped
// by (step, group) — the GRPO groups whose rollouts answer one prompt.
//
// Per criterion k (only rollouts scoring k count):
//   met rate     = #{s_k >= threshold} / #{scored}
//   mean score   = mean s_k
//   within-group variance = mean over groups g (>= 2 scored rollouts) of the population variance
//                  of s_k in g: (1/n_g) Σ_i (s_ik − mean_g)². GRPO learns only from this part.
//   group classes: a group is saturated (every scored rollout met), unreachable (none met) or
//                  mixed (some met, some not). The criterion's flag is the class holding the most
//                  groups (a tie goes to discriminative, then saturated): 'discriminative' (mostly
//                  mixed: it separates rollouts), 'saturated', 'unreachable'; 'unscored' without
//                  any group of >= 2 scored rollouts.
// Between criteria: Pearson correlation of s_j and s_k over rollouts scoring both; null when
// fewer than 2 such rollouts or either is constant on them. |r| >= REDUNDANT_CORRELATION marks
// a redundant pair.
// Correlation-aware weights (RRD, seed 000 #97, which does not give its formula; this is ours):
//   w'_k = w_k / c_k,  c_k = 1 + Σ_{j ≠ k, w_j ≠ 0} max(0, sign(w_j) sign(w_k) r_jk)   (null r counts 0)
// c_k is a soft cluster size: m criteria that always agree (r = 1) each get w/m, so the cluster
// counts once in total; independent or opposed criteria keep their weights. The signs orient a
// pitfall (w < 0) as "avoided": a pitfall that is met exactly when a positive criterion is not
// counts the same thing twice and is discounted; one met together with it is not redundant.
// The aggregation option correlation_weights (correlationWeights.ts) uses the same formula.
import { DEFAULT_PASS_THRESHOLD, checkThreshold } from './aggregate';
import type { Rubric } from './schema';

export interface MeasuredRollout {
  step: number;
  group: number;
  scores: readonly (number | null)[];
}

export type CriterionFlag = 'discriminative' | 'saturated' | 'unreachable' | 'unscored';

export interface CriterionMeasure {
  /** Rollouts scoring this criterion. */
  scored: number;
  metRate: number | null;
  meanScore: number | null;
  /** Mean within-group population variance; null without a group of >= 2 scored rollouts. */
  withinGroupVariance: number | null;
  groups: { saturated: number; unreachable: number; mixed: number };
  flag: CriterionFlag;
}

export interface RubricMeasure {
  rollouts: number;
  groups: number;
  criteria: CriterionMeasure[];
  /** K × K Pearson correlations (diagonal 1 where defined). */
  correlation: (number | null)[][];
  /** Pairs (0-based j < k) with |r| >= REDUNDANT_CORRELATION. */
  redundant: { a: number; b: number; r: number }[];
  /** Correlation-aware weights (see the header). */
  correlationWeights: number[];
}

export const REDUNDANT_CORRELATION = 0.9;

/** Pearson correlation of paired samples; null when n < 2 or either side is constant. */
export function pearson(x: readonly number[], y: readonly number[]): number | null {
  const n = x.length;
  if (n !== y.length) throw new RangeError(`pearson: ${n} and ${y.length} samples`);
  if (n < 2) return null;
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  if (sxx === 0 || syy === 0) return null;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/** w'_k = w_k / (1 + Σ_{j ≠ k, w_j ≠ 0} max(0, sign(w_j) sign(w_k) r_jk)). */
export function correlationAwareWeights(weights: readonly number[], correlation: readonly (readonly (number | null)[])[]): number[] {
  return weights.map((w, k) => {
    let c = 1;
    weights.forEach((wj, j) => {
      if (j !== k && wj !== 0 && w !== 0) c += Math.max(0, Math.sign(wj) * Math.sign(w) * (correlation[k][j] ?? 0));
    });
    return w / c;
  });
}

/**
 * K × K Pearson correlations of the criteria's scores over the rows scoring both (diagonal 1
 * where the criterion varies, else null): the matrix measureRubric reports and
 * correlation_weights uses.
 */
export function criterionCorrelation(rows: readonly (readonly (number | null)[])[], K: number): (number | null)[][] {
  const correlation: (number | null)[][] = Array.from({ length: K }, () => new Array<number | null>(K).fill(null));
  for (let a = 0; a < K; a++) {
    for (let b = a; b < K; b++) {
      const x: number[] = [];
      const y: number[] = [];
      for (const row of rows) {
        const sa = row[a];
        const sb = row[b];
        if (sa !== null && sb !== null) {
          x.push(sa);
          y.push(sb);
        }
      }
      const r = a === b ? (pearson(x, x) === null ? null : 1) : pearson(x, y);
      correlation[a][b] = correlation[b][a] = r;
    }
  }
  return correlation;
}

/** Groups of the rollouts by (step, group), in first-seen order. */
function grouped(rollouts: readonly MeasuredRollout[]): MeasuredRollout[][] {
  const map = new Map<string, MeasuredRollout[]>();
  for (const r of rollouts) {
    const key = `${r.step}/${r.group}`;
    let g = map.get(key);
    if (!g) map.set(key, (g = []));
    g.push(r);
  }
  return [...map.values()];
}

export function measureRubric(rubric: Rubric, rollouts: readonly MeasuredRollout[], options: { threshold?: number } = {}): RubricMeasure {
  const threshold = checkThreshold(options.threshold ?? DEFAULT_PASS_THRESHOLD);
  const K = rubric.criteria.length;
  rollouts.forEach((r, i) => {
    if (r.scores.length !== K) throw new RangeError(`rollout ${i} has ${r.scores.length} scores for ${K} criteria`);
    r.scores.forEach((s, k) => {
      if (s !== null && !(s >= 0 && s <= 1)) throw new RangeError(`rollout ${i}: score ${k + 1} = ${s} is outside [0, 1]`);
    });
  });
  const groups = grouped(rollouts);

  const criteria = rubric.criteria.map((_, k): CriterionMeasure => {
    const all = rollouts.map((r) => r.scores[k]).filter((s): s is number => s !== null);
    const counts = { saturated: 0, unreachable: 0, mixed: 0 };
    let variance = 0;
    let informative = 0;
    for (const g of groups) {
      const s = g.map((r) => r.scores[k]).filter((v): v is number => v !== null);
      if (s.length < 2) continue;
      informative++;
      const mean = s.reduce((a, b) => a + b, 0) / s.length;
      variance += s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length;
      const met = s.filter((v) => v >= threshold).length;
      if (met === s.length) counts.saturated++;
      else if (met === 0) counts.unreachable++;
      else counts.mixed++;
    }
    const best = Math.max(counts.mixed, counts.saturated, counts.unreachable);
    const flag: CriterionFlag =
      informative === 0 ? 'unscored' : counts.mixed === best ? 'discriminative' : counts.saturated === best ? 'saturated' : 'unreachable';
    return {
      scored: all.length,
      metRate: all.length ? all.filter((s) => s >= threshold).length / all.length : null,
      meanScore: all.length ? all.reduce((a, b) => a + b, 0) / all.length : null,
      withinGroupVariance: informative ? variance / informative : null,
      groups: counts,
      flag,
    };
  });

  const correlation = criterionCorrelation(
    rollouts.map((r) => r.scores),
    K,
  );
  const redundant: RubricMeasure['redundant'] = [];
  for (let a = 0; a < K; a++) {
    for (let b = a + 1; b < K; b++) {
      const r = correlation[a][b];
      if (r !== null && Math.abs(r) >= REDUNDANT_CORRELATION) redundant.push({ a, b, r });
    }
  }
  return {
    rollouts: rollouts.length,
    groups: groups.length,
    criteria,
    correlation,
    redundant,
    correlationWeights: correlationAwareWeights(
      rubric.criteria.map((c) => c.weight),
      correlation,
    ),
  };
}
