// The run view's judge-failure warning, from the steps' metrics: the latest step whose fraction of
// rollouts without a reward passed max_unscorable_fraction, in words, with how many steps did.
import type { StepMetrics } from '../../rl/grpoStep';
import { unscorableMessage } from '../../rl/judgeFailures';

export interface UnscorableWarning {
  /** The latest flagged step. */
  step: number;
  /** "12 of 16 rollouts had no reward at step 3 (…): criterion "polite": HTTP 500 …". */
  message: string;
  /** Steps flagged so far, and steps in all. */
  flagged: number;
  steps: number;
  /** Whether a later step than the flagged one was scored under the threshold. */
  recovered: boolean;
}

/** Null when no step passed the threshold (or the steps predate judge-failure metrics). */
export function unscorableWarning(metrics: readonly StepMetrics[]): UnscorableWarning | null {
  const flagged = metrics.filter((m) => m.judge_failures?.over_threshold);
  if (flagged.length === 0) return null;
  const last = flagged.reduce((a, b) => (b.step > a.step ? b : a));
  return {
    step: last.step,
    message: unscorableMessage(last.step, last.judge_failures!),
    flagged: flagged.length,
    steps: metrics.length,
    recovered: metrics.some((m) => m.step > last.step && m.judge_failures !== undefined && !m.judge_failures.over_threshold),
  };
}
