// Per-criterion rewards in the shape the group-advantage kernel takes (its request fields
// `rewards_per_criterion` [N][K] and `reward_weights` [K]; see src/ops/groupAdvantage.request.ts),
// for per-criterion normalisation before summing (GDPO, multi_objective_aggregation
// "normalize_then_sum") or a weighted sum on the GPU ("sum_then_normalize").
//
//   reward_weights[k] = w_k / Σ_{w > 0} w                  (full rubric)
//   cell [i][k]       = s_ik * Σ_{w>0} w / Σ_{kept, w>0} w  (kept k; the factor is 1 without dropout)
//                     = null for a criterion dropped from i's group
//   row i             = all null when any active criterion of i is missing (unscorable rollout:
//                       the kernel gives it advantage 0 and counts it), never partial
// So "sum_then_normalize" computes Σ_k reward_weights[k] * cell[i][k] = weightedMean (with the
// group's dropout mask) exactly. "normalize_then_sum" z-scores each criterion within the group,
// which the per-group factor does not change (up to the kernel's eps). Columns follow
// rubric.criteria; weight-0 columns carry scores with weight 0 (no effect, kept for alignment).
import { activeCriteria, positiveWeight, type Scores } from './aggregate';
import type { Rubric } from './schema';

export interface KernelRewardInputs {
  rewards_per_criterion: (number | null)[][];
  reward_weights: number[];
}

export interface KernelInputOptions {
  /** Rollouts per group (TRL's num_generations); needed with keep. */
  numGenerations?: number;
  /** One mask per group (true = kept), e.g. from dropoutMask. */
  keep?: readonly (readonly boolean[])[];
}

export function kernelRewardInputs(rubric: Rubric, scores: readonly Scores[], options: KernelInputOptions = {}): KernelRewardInputs {
  const { numGenerations: G, keep } = options;
  const N = scores.length;
  if (keep) {
    if (G === undefined || !Number.isInteger(G) || G < 1 || N % G !== 0) {
      throw new RangeError(`numGenerations = ${G} must be a positive integer dividing the ${N} rollouts when keep is given`);
    }
    if (keep.length !== N / G) throw new RangeError(`keep has ${keep.length} masks for ${N / G} groups`);
  }
  const full = rubric.criteria.flatMap((c, k) => (c.weight > 0 ? [k] : []));
  const total = positiveWeight(rubric, full);
  const reward_weights = rubric.criteria.map((c) => c.weight / total);
  const rewards_per_criterion = scores.map((row, i) => {
    const mask = keep?.[Math.floor(i / G!)];
    const active = activeCriteria(rubric, row, mask);
    if (active.some((k) => row[k] === null)) return row.map(() => null);
    const scale = total / positiveWeight(rubric, active);
    return row.map((s, k) => (mask?.[k] === false || s === null ? null : s * scale));
  });
  return { rewards_per_criterion, reward_weights };
}
