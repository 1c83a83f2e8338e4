// Per-step reward and completion metrics (TRL's names where they exist), from host data.
import { aggregateAll, DEFAULT_PASS_THRESHOLD, strictAllRequired, type Rubric, type Scores } from '../rubric';

export interface RewardMetrics {
  reward: number | null;
  reward_std: number | null;
  /** Per criterion id: fraction of scorable rollouts meeting it (score >= threshold). */
  criterion_pass_rate: Record<string, number | null>;
  criterion_mean_score: Record<string, number | null>;
  /** Fraction of rollouts meeting every essential and important criterion and no pitfall. */
  strict_completion_rate: number;
  unscorable: number;
  /** Mean reward of every aggregation over the same scores, for side-by-side comparison. */
  aggregations: Record<string, number | null>;
}

function mean(xs: number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

function std(xs: number[]): number | null {
  if (xs.length < 2) return null;
  const m = mean(xs)!;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

export function rewardMetrics(
  rubric: Rubric,
  scores: readonly Scores[],
  rewards: readonly (number | null)[],
  numGenerations: number,
  passThreshold = DEFAULT_PASS_THRESHOLD,
): RewardMetrics {
  const scored = rewards.filter((r): r is number => r !== null);
  const criterion_pass_rate: Record<string, number | null> = {};
  const criterion_mean_score: Record<string, number | null> = {};
  rubric.criteria.forEach((c, k) => {
    const ks = scores.map((s) => s[k]).filter((x): x is number => x !== null);
    criterion_mean_score[c.id] = mean(ks);
    criterion_pass_rate[c.id] = ks.length ? ks.filter((x) => x >= passThreshold).length / ks.length : null;
  });
  const strict = scores.filter((s) => strictAllRequired(rubric, s, { threshold: passThreshold }) === 1).length;
  const sums: Record<string, number[]> = {};
  for (let g = 0; g < scores.length; g += numGenerations) {
    const all = aggregateAll(rubric, scores.slice(g, g + numGenerations), { pass_threshold: passThreshold }, undefined, scores);
    for (const [method, values] of Object.entries(all)) {
      (sums[method] ??= []).push(...(values ?? []).filter((v): v is number => v !== null));
    }
  }
  const aggregations: Record<string, number | null> = {};
  for (const [method, values] of Object.entries(sums)) aggregations[method] = mean(values);
  return {
    reward: mean(scored),
    reward_std: std(scored),
    criterion_pass_rate,
    criterion_mean_score,
    strict_completion_rate: scores.length ? strict / scores.length : 0,
    unscorable: rewards.length - scored.length,
    aggregations,
  };
}

/**
 * TRL's frac_reward_zero_std: the fraction of groups whose rewards have (Bessel) standard
 * deviation torch.isclose to 0 (|σ| <= 1e-8). TRL (trl/trainer/grpo_trainer.py,
 * _generate_and_score_completions, as read at huggingface/trl d2b69d76):
 * std_grouped_rewards = rewards.view(-1, G).std(dim=1);
 * is_std_zero = torch.isclose(std_grouped_rewards, zeros); frac = is_std_zero.float().mean().
 * Here the rewards are the trained per-rollout rewards and an unscorable rollout (null) is left
 * out, as TRL leaves a row with no reward out of its group's statistics (research/anchors-grpo-
 * trainers.md §3.1, §3.2: nanmean / nanstd) and as the page's advantage kernel does. A group with fewer than two scored
 * rewards has no std (torch.std of one value is NaN, and NaN is not close to 0): it is not
 * counted. The count is per group whatever scale_rewards and multi_objective_aggregation say
 * (newer TRL tests the one batch std under scale_rewards "batch"; a group is what gives no
 * learning signal when its rewards tie, which is what this metric is read for).
 */
export function fracRewardZeroStd(rewards: readonly (number | null)[], numGenerations: number): number {
  if (!Number.isInteger(numGenerations) || numGenerations < 1 || rewards.length % numGenerations !== 0) {
    throw new RangeError(`${rewards.length} rewards do not split into groups of num_generations ${numGenerations}`);
  }
  const groups = rewards.length / numGenerations;
  if (groups === 0) return 0;
  let zero = 0;
  for (let g = 0; g < groups; g++) {
    const scored = rewards.slice(g * numGenerations, (g + 1) * numGenerations).filter((r): r is number => r !== null);
    const s = std(scored);
    if (s !== null && Math.abs(s) <= 1e-8) zero++;
  }
  return zero / groups;
}

export interface CompletionMetrics {
  mean_length: number;
  min_length: number;
  max_length: number;
  /** Fraction cut off by max_completion_length (TRL's completions/clipped_ratio). */
  clipped_ratio: number;
}

export function completionMetrics(lengths: readonly number[], truncated: readonly boolean[]): CompletionMetrics {
  return {
    mean_length: lengths.reduce((a, b) => a + b, 0) / Math.max(lengths.length, 1),
    min_length: Math.min(...lengths),
    max_length: Math.max(...lengths),
    clipped_ratio: truncated.filter(Boolean).length / Math.max(truncated.length, 1),
  };
}
