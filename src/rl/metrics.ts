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
    const all = aggregateAll(rubric, scores.slice(g, g + numGenerations), { pass_threshold: passThreshold });
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
