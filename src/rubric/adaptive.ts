// Policy-aware adaptive weights (POW3R-style, "up-weight criteria that currently separate the
// rollouts in a group"). The paper gives no exact formula; this one, per group:
//   V      = rollouts of the group with every active score present (the others get null)
//   c_k    = population std of s_ik over i in V (0 when |V| < 2); c_k <= 0.5 for scores in [0, 1]
//   m_k    = floor + (1 - floor) * min(1, 2 c_k)          (saturated/unreachable k keep `floor`)
//   u_k    = w_k * m_k
//   tier balance (default on): within each category — each tier of positive criteria, and all
//          pitfalls together — u is rescaled so that Σ|u| equals the category's Σ|w| (the
//          human category balance stays the objective); a category whose Σ|u| is 0 keeps w
//   r_i    = Σ_{k in A} u_k s_ik / Σ_{k in P} u_k            (the weighted mean with u for w)
// With equal spreads r is the plain weighted mean. Without tier balance, when Σ_{k in P} u_k = 0
// (floor 0 and nothing separates) u falls back to w. Evaluation and reported metrics should
// keep the human weights (weightedMean); Rubric Dropout's authors found usefulness-reweighting
// worse than nothing in their setting, so this is an option to A/B, not a default.
import { activeCriteria, type MaskOptions, type Scores } from './aggregate';
import type { Rubric } from './schema';

export const DEFAULT_ADAPTIVE_FLOOR = 0.1;

export interface AdaptiveOptions extends MaskOptions {
  /** Multiplier of a criterion that does not separate the group, in [0, 1]. */
  floor?: number;
  tierBalance?: boolean;
}

export interface AdaptiveResult {
  rewards: (number | null)[];
  /** [K] the training weights u_k used (0 for inactive criteria). */
  weights: number[];
  /** [K] the within-group spread c_k (0 for inactive criteria): 0 = saturated or unreachable. */
  spread: number[];
}

export function adaptiveWeights(rubric: Rubric, groupScores: readonly Scores[], options: AdaptiveOptions = {}): AdaptiveResult {
  const floor = options.floor ?? DEFAULT_ADAPTIVE_FLOOR;
  if (!(floor >= 0 && floor <= 1)) throw new RangeError(`floor must be in [0, 1], got ${floor}`);
  const K = rubric.criteria.length;
  const weights = new Array<number>(K).fill(0);
  const spread = new Array<number>(K).fill(0);
  if (groupScores.length === 0) return { rewards: [], weights, spread };
  // Checks every row; the active set depends only on the rubric and the mask.
  const active = groupScores.map((s) => activeCriteria(rubric, s, options.keep))[0];
  const valid = groupScores.filter((s) => active.every((k) => s[k] !== null));

  const w = (k: number) => rubric.criteria[k].weight;
  for (const k of active) {
    if (valid.length >= 2) {
      const mean = valid.reduce((a, s) => a + s[k]!, 0) / valid.length;
      spread[k] = Math.sqrt(valid.reduce((a, s) => a + (s[k]! - mean) ** 2, 0) / valid.length);
    }
    weights[k] = w(k) * (floor + (1 - floor) * Math.min(1, 2 * spread[k]));
  }

  if (options.tierBalance ?? true) {
    const categories = new Map<string, number[]>();
    for (const k of active) {
      const name = w(k) < 0 ? 'pitfall' : rubric.criteria[k].tier;
      categories.set(name, [...(categories.get(name) ?? []), k]);
    }
    for (const members of categories.values()) {
      const human = members.reduce((a, k) => a + Math.abs(w(k)), 0);
      const adapted = members.reduce((a, k) => a + Math.abs(weights[k]), 0);
      for (const k of members) weights[k] = adapted > 0 ? (weights[k] * human) / adapted : w(k);
    }
  } else if (!active.some((k) => weights[k] > 0)) {
    for (const k of active) weights[k] = w(k);
  }

  const denominator = active.reduce((a, k) => a + Math.max(weights[k], 0), 0);
  const rewards = groupScores.map((s) =>
    active.some((k) => s[k] === null) ? null : active.reduce((a, k) => a + weights[k] * s[k]!, 0) / denominator,
  );
  return { rewards, weights, spread };
}
