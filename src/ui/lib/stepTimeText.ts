// The charts header's line about the newest step: how long it took and, where the step recorded
// its split (runs from before it did not), how much of it went to sampling, judging and the update.
import type { StepMetrics } from '../../rl/grpoStep';

type StepTimes = Pick<StepMetrics, 'step_seconds' | 'judge_seconds' | 'sampling_seconds' | 'update_seconds'>;

export function stepTimeText(steps: number, last: StepTimes | undefined): string {
  if (steps === 0 || !last) return 'No steps yet: press Train.';
  const head = `${steps} step${steps > 1 ? 's' : ''}; last step ${last.step_seconds.toFixed(1)} s`;
  if (last.sampling_seconds === undefined || last.update_seconds === undefined) return head;
  return `${head} (sampling ${last.sampling_seconds.toFixed(1)} s, judging ${last.judge_seconds.toFixed(1)} s, update ${last.update_seconds.toFixed(1)} s)`;
}
