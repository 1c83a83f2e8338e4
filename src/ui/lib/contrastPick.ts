// The contrast for contrastive rubric generation taken from training (OpenRubrics #22, issue 12):
// the group of the newest step whose rewards differ most, its best and worst rollouts. Pure, so
// a Node test can check the choice.
import type { RolloutRecord } from '../../rl/grpoStep';

export interface ContrastPick {
  prompt: string;
  good: string;
  bad: string;
  step: number;
  group: number;
  /** Rewards of the chosen rollouts. */
  best: number;
  worst: number;
}

/**
 * From one step's rollouts: the group with the largest reward spread (ties: the first group),
 * its highest- and lowest-reward rollouts (ties: the first). Rollouts without a reward are left
 * out; null when no group has two different rewards.
 */
export function bestAndWorst(rollouts: readonly RolloutRecord[]): ContrastPick | null {
  const groups = new Map<number, RolloutRecord[]>();
  for (const r of rollouts) if (r.reward !== null) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  let pick: ContrastPick | null = null;
  for (const [group, rs] of [...groups.entries()].sort((a, b) => a[0] - b[0])) {
    const best = rs.reduce((a, b) => (b.reward! > a.reward! ? b : a));
    const worst = rs.reduce((a, b) => (b.reward! < a.reward! ? b : a));
    const spread = best.reward! - worst.reward!;
    if (spread > 0 && (pick === null || spread > pick.best - pick.worst)) {
      pick = { prompt: best.prompt, good: best.completion, bad: worst.completion, step: best.step, group, best: best.reward!, worst: worst.reward! };
    }
  }
  return pick;
}
