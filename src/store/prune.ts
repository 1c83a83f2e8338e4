// What pruning a run would free, computed from what the store records (each rollout's stored
// size, the run's checkpoint manifest) without deleting anything: the prune controls show it
// before the user confirms, and RunStore.pruneEstimate answers with the same arithmetic.
import type { PruneResult } from './runStore';
import type { RunRecord } from './schema';

/** The run's stored rollouts of one step and their approximate bytes. */
export interface RolloutStepUsage {
  step: number;
  count: number;
  bytes: number;
}

export interface PrunePlan {
  /** Keep only the newest N checkpoints (0 deletes them all); absent: checkpoints untouched. */
  keepCheckpoints?: number;
  /** Delete the rollouts of every step before this one; absent: rollouts untouched. */
  rolloutsBeforeStep?: number;
}

export interface PruneEstimate {
  rollouts: PruneResult;
  checkpoints: PruneResult;
  /** rollouts.bytes + checkpoints.bytes. */
  bytes: number;
}

function checkPlan(plan: PrunePlan): void {
  const { keepCheckpoints: keep, rolloutsBeforeStep: before } = plan;
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) throw new RangeError(`keepCheckpoints must be an integer >= 0, got ${String(keep)}`);
  if (before !== undefined && !(Number.isInteger(before) && before >= 0)) throw new RangeError(`rolloutsBeforeStep must be an integer >= 0, got ${String(before)}`);
}

/** What `plan` would delete and free, from the run's checkpoint manifest and its rollouts' sizes per step. */
export function estimatePrune(run: Pick<RunRecord, 'checkpoints'>, rolloutSteps: readonly RolloutStepUsage[], plan: PrunePlan): PruneEstimate {
  checkPlan(plan);
  const rollouts: PruneResult = { deleted: 0, bytes: 0 };
  if (plan.rolloutsBeforeStep !== undefined) {
    for (const s of rolloutSteps) {
      if (s.step >= plan.rolloutsBeforeStep) continue;
      rollouts.deleted += s.count;
      rollouts.bytes += s.bytes;
    }
  }
  const checkpoints: PruneResult = { deleted: 0, bytes: 0 };
  if (plan.keepCheckpoints !== undefined) {
    // The manifest is oldest first, as pruneCheckpoints reads it.
    const drop = run.checkpoints.slice(0, Math.max(0, run.checkpoints.length - plan.keepCheckpoints));
    checkpoints.deleted = drop.length;
    checkpoints.bytes = drop.reduce((sum, k) => sum + k.bytes, 0);
  }
  return { rollouts, checkpoints, bytes: rollouts.bytes + checkpoints.bytes };
}
