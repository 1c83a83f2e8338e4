// Guidance on demand with selective internalization (RISE-RL, seed 000 #9; GHPO #48, RGPO #83,
// AMPO #110): when a whole group fails (every scored rollout's reward at or below
// guidance_fail_threshold, which with the default 0 is a zero-variance group at 0), that group
// alone gets guidance_num_generations extra rollouts sampled from the prompt plus the criteria it
// missed (the rubric as guidance, like a scaffold). A guided rollout is kept only when its reward
// beats the group's natural mean (RISE-RL's filter); kept ones are trained under the original
// prompt (importance-corrected) in a separate auxiliary term whose coefficient decays, so the
// guidance is removed once training is past it (auxTerm.ts scales the term). In float64:
//   kept:        r_g > μ_nat (the mean of the group's scored natural rewards)
//   advantage:   A_aux = r_g − μ_nat  (> 0; no division by σ: a failed group's σ is 0 or tiny)
//   coefficient: c(t) = rise_aux_coef · max(0, 1 − t / rise_aux_decay_steps)  (null: max_steps)
import type { Criterion, Scores } from '../../rubric';

/** At least one scored rollout, and every scored reward ≤ threshold. */
export function groupFailed(rewards: readonly (number | null)[], threshold: number): boolean {
  const valid = rewards.filter((r): r is number => r !== null);
  return valid.length > 0 && valid.every((r) => r <= threshold);
}

/**
 * The criteria a failed group needs told: positive criteria no scored rollout meets and pitfalls
 * every scored rollout falls into; if that leaves none (the rollouts fail in different ways), every
 * weighted criterion. In rubric order.
 */
export function missedCriteria(criteria: readonly Criterion[], scores: readonly Scores[], threshold: number): Criterion[] {
  const scored = (k: number) => scores.map((s) => s[k]).filter((x): x is number => x !== null);
  const missed = criteria.filter((c, k) => {
    const s = scored(k);
    if (c.weight === 0 || s.length === 0) return false;
    return c.weight > 0 ? s.every((x) => x < threshold) : s.every((x) => x >= threshold);
  });
  return missed.length ? missed : criteria.filter((c) => c.weight !== 0);
}

/** Mean of the scored natural rewards (NaN when none). */
export function naturalMean(rewards: readonly (number | null)[]): number {
  const valid = rewards.filter((r): r is number => r !== null);
  return valid.length ? valid.reduce((s, r) => s + r, 0) / valid.length : NaN;
}

/** RISE-RL's filter: a guided rollout is kept only when its reward beats the natural mean. */
export function keepGuided(reward: number | null, mean: number): boolean {
  return reward !== null && Number.isFinite(mean) && reward > mean;
}

/** c(t) = rise_aux_coef · max(0, 1 − step / decay); 0 with guidance_on_demand off. */
export function auxCoefficient(cfg: { guidance_on_demand: boolean; rise_aux_coef: number; rise_aux_decay_steps: number | null; max_steps: number }, step: number): number {
  if (!cfg.guidance_on_demand) return 0;
  const decay = cfg.rise_aux_decay_steps ?? cfg.max_steps;
  return cfg.rise_aux_coef * Math.max(0, 1 - step / decay);
}
