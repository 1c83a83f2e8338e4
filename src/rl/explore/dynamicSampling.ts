// Dynamic sampling / learnability filter (DAPO; seed 000 #11 QUBRIC, #12): a group whose rewards
// are all equal has zero advantage everywhere and teaches nothing, so its slot is sampled again
// with another prompt, up to max_num_gen_batches generation rounds per step (verl's
// algorithm.filter_groups). What is left zero-variance after the last round is trained as is.
// The test matches the advantage kernel's (src/ops/groupAdvantage.reference.ts): one valid
// member, or all valid members equal; with normalize_then_sum, every criterion so.
import type { Scores } from '../../rubric';

/** Valid (non-null, finite) values all equal, with at least one: no signal. */
function constant(values: readonly (number | null)[]): boolean {
  const valid = values.filter((x): x is number => x !== null);
  if (valid.length === 0) return false;
  if (valid.some((x) => !Number.isFinite(x))) return false; // poisoned: the kernel's business
  return valid.every((x) => x === valid[0]);
}

/**
 * True when the group carries a learning signal: its rewards vary (sum_then_normalize), or
 * some kept criterion's scores vary (normalize_then_sum, GDPO). A group with no valid reward
 * at all is not "zero variance" either (it is unscorable; resampling would not tell us more).
 */
export function isLearnable(
  rewards: readonly (number | null)[],
  scores: readonly Scores[],
  options: { gdpo: boolean; keep?: readonly boolean[] },
): boolean {
  if (!options.gdpo) return !constant(rewards);
  const K = scores[0]?.length ?? 0;
  let any = false;
  for (let k = 0; k < K; k++) {
    if (options.keep && options.keep[k] === false) continue;
    const column = scores.map((s) => s[k]);
    if (column.every((x) => x === null)) continue;
    any = true;
    if (!constant(column)) return true;
  }
  return !any;
}

export interface SlotState<T> {
  /** The group trained on in this slot: the first learnable draw, else the latest. */
  group: T | null;
  learnable: boolean;
}

/**
 * One round's bookkeeping: each open slot takes its new draw (a learnable draw closes the slot).
 * Returns the slots still open afterwards.
 */
export function fillSlots<T>(slots: SlotState<T>[], open: readonly number[], draws: readonly { group: T; learnable: boolean }[]): number[] {
  if (draws.length !== open.length) throw new RangeError(`${draws.length} draws for ${open.length} open slots`);
  open.forEach((slot, i) => (slots[slot] = { group: draws[i].group, learnable: draws[i].learnable }));
  return open.filter((slot) => !slots[slot].learnable);
}
