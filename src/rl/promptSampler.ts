// Which prompts a step trains on: every prompt once per epoch, in an order shuffled by the
// seed and the epoch (TRL's shuffle_dataset=True), so a run is reproducible from its seed.
import { mulberry32 } from '../rubric/dropout';

function epochOrder(count: number, seed: number, epoch: number): number[] {
  const rand = mulberry32((seed ^ Math.imul(epoch + 1, 0x9e3779b1)) >>> 0);
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The `perStep` prompts of step `step` (0-based), drawn without replacement epoch by epoch. */
export function promptsForStep(prompts: readonly string[], perStep: number, step: number, seed: number): string[] {
  if (prompts.length === 0) throw new RangeError('the experiment has no prompts');
  const out: string[] = [];
  for (let i = 0; i < perStep; i++) {
    const flat = step * perStep + i;
    const epoch = Math.floor(flat / prompts.length);
    out.push(prompts[epochOrder(prompts.length, seed, epoch)[flat % prompts.length]]);
  }
  return out;
}

/**
 * Dynamic sampling's replacements for `count` discarded groups in round `round` (≥ 1) of step
 * `step`: a shuffle of the prompt set by (seed, step, round), cycled when count exceeds it, so a
 * resumed run draws the same ones. It leaves the epoch order of promptsForStep untouched.
 */
export function replacementPrompts(prompts: readonly string[], count: number, step: number, round: number, seed: number): string[] {
  if (prompts.length === 0) throw new RangeError('the experiment has no prompts');
  const order = epochOrder(prompts.length, (seed ^ Math.imul(step + 1, 0x85ebca6b) ^ Math.imul(round, 0xc2b2ae35)) >>> 0, 0);
  return Array.from({ length: count }, (_, i) => prompts[order[i % prompts.length]]);
}
