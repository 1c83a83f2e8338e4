// Hindsight revision (HeRL, seed 000 #17): a failed rollout and the criteria it did not meet
// become in-context guidance for an extra, revised rollout ("a previous answer: …; it did not
// meet: …; write a better answer"). The revision is judged with the rubric, trained under the
// original prompt (importance-corrected, like a scaffold: see index.ts), and earns a bonus for
// improving on the answer it revises. The abstract gives no formulas; ours, in float64:
//   which rollouts: the group's failed ones (scored, with an unmet criterion), lowest reward first
//     (ties: lower index), at most ⌊herl_fraction · G⌋ per group;
//   bonus:          b = herl_bonus · max(0, r' − r)   (r' the revision's reward, r the failed one's);
//   advantage:      A' = (r' + b − μ) / (σ + ε) over the augmented group (its G natural rewards and
//                   its revisions' r' + b; σ the unbiased std, ε = 1e-4 as the advantage kernel;
//                   scale_rewards "none": r' + b − μ); 0 when the augmented group has no variance.
// The natural rollouts keep the advantage kernel's plain GRPO advantages: revisions only add rows.
import type { Criterion, Scores } from '../../rubric';

/** Revised rollouts per group at most: ⌊herl_fraction · G⌋. */
export function herlSlots(cfg: { herl_fraction: number; num_generations: number }): number {
  return Math.floor(cfg.herl_fraction * cfg.num_generations + 1e-9);
}

/**
 * The weighted criteria a rollout did not meet: a positive criterion scored below the pass
 * threshold, or a pitfall (negative weight) detected (scored at or above it). Unscored criteria
 * (null) are unknown, not unmet; tracked criteria (weight 0) are left out.
 */
export function unmetCriteria(criteria: readonly Criterion[], scores: Scores, threshold: number): Criterion[] {
  return criteria.filter((c, k) => {
    const s = scores[k];
    if (s === null || c.weight === 0) return false;
    return c.weight > 0 ? s < threshold : s >= threshold;
  });
}

/** The text added to the prompt for a revision: the failed answer, then what it missed. */
export function revisionGuidance(completion: string, unmet: readonly Criterion[]): string {
  const lines = unmet.map((c) => (c.weight < 0 ? `- Avoid: ${c.text}` : `- ${c.text}`));
  return `\n\nA previous answer: "${completion}"\nIt missed:\n${lines.join('\n')}\nWrite a better answer.`;
}

export interface Revision {
  /** Index within the group of the failed rollout it revises. */
  source: number;
  unmet: Criterion[];
  guidance: string;
}

/** The revisions of one judged group: its failed rollouts, lowest reward first, at most `slots`. */
export function planRevisions(
  criteria: readonly Criterion[],
  group: { rewards: readonly (number | null)[]; scores: readonly Scores[]; completions: readonly string[] },
  slots: number,
  threshold: number,
): Revision[] {
  const failed = group.rewards.flatMap((r, i) => {
    if (r === null) return [];
    const unmet = unmetCriteria(criteria, group.scores[i], threshold);
    return unmet.length ? [{ i, r, unmet }] : [];
  });
  failed.sort((a, b) => a.r - b.r || a.i - b.i);
  return failed.slice(0, slots).map(({ i, unmet }) => ({ source: i, unmet, guidance: revisionGuidance(group.completions[i], unmet) }));
}

/** b = coef · max(0, r' − r); 0 when either reward is missing. */
export function herlBonus(revised: number | null, original: number | null, coef: number): number {
  if (revised === null || original === null) return 0;
  return coef * Math.max(0, revised - original);
}

/**
 * Advantages of extra rollouts (rewards `extra`, null = unscorable → 0) against the augmented
 * group: the natural rewards plus the extra ones. σ is the unbiased std over the valid members.
 */
export function augmentedAdvantages(natural: readonly (number | null)[], extra: readonly (number | null)[], scaleRewards: 'group' | 'batch' | 'none', eps = 1e-4): number[] {
  const valid = [...natural, ...extra].filter((x): x is number => x !== null && Number.isFinite(x));
  if (valid.length < 2 || valid.every((x) => x === valid[0])) return extra.map(() => 0);
  const mean = valid.reduce((s, x) => s + x, 0) / valid.length;
  const std = Math.sqrt(valid.reduce((s, x) => s + (x - mean) ** 2, 0) / (valid.length - 1));
  return extra.map((r) => (r === null || !Number.isFinite(r) ? 0 : scaleRewards === 'none' ? r - mean : (r - mean) / (std + eps)));
}
