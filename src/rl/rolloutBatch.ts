// Lays out a GRPO batch for the training forward pass: row b is [left padding | prompt |
// completion | right padding]. Right padding sits after every real token, so causal attention
// never lets a real token see it; it only has to be left out of the loss mask.
import type { TokenBatch } from '../model/transformer';

export interface RolloutBatch {
  tokens: TokenBatch;
  /** [N * T] next token at each position. */
  targets: Uint32Array;
  /** [N * T] 1 where the position predicts a completion token (TRL's completion_mask). */
  mask: Float32Array;
  /** Completion tokens in the loss. */
  completionTokens: number;
  /** Row position whose target is completion token 0 (completion token j: this + j). */
  completionStart: number;
}

export function buildRolloutBatch(
  prompts: readonly (readonly number[])[],
  completions: readonly (readonly number[])[],
  truncated: readonly boolean[],
  options: { padTokenId: number; maskTruncatedCompletions: boolean },
): RolloutBatch {
  const N = prompts.length;
  if (completions.length !== N || truncated.length !== N) throw new RangeError('prompts, completions and truncated must have one entry per rollout');
  const P = Math.max(...prompts.map((p) => p.length));
  const L = Math.max(1, ...completions.map((c) => c.length));
  const T = P + L;
  const ids = new Uint32Array(N * T).fill(options.padTokenId);
  const targets = new Uint32Array(N * T);
  const mask = new Float32Array(N * T);
  const pads: number[] = [];
  let completionTokens = 0;
  for (let b = 0; b < N; b++) {
    const pad = P - prompts[b].length;
    pads.push(pad);
    const row = b * T;
    ids.set(prompts[b], row + pad);
    ids.set(completions[b], row + P);
    for (let t = 0; t + 1 < T; t++) targets[row + t] = ids[row + t + 1];
    // mask_truncated_completions: a completion cut off by max_completion_length teaches nothing.
    if (options.maskTruncatedCompletions && truncated[b]) continue;
    for (let j = 0; j < completions[b].length; j++) mask[row + P - 1 + j] = 1;
    completionTokens += completions[b].length;
  }
  return { tokens: { batch: N, seqLen: T, ids, pads }, targets, mask, completionTokens, completionStart: P - 1 };
}

/** The q-quantile (linear interpolation, as torch.quantile) of the values where mask > 0. */
export function maskedQuantile(values: ArrayLike<number>, mask: ArrayLike<number>, q: number): number {
  const kept: number[] = [];
  for (let i = 0; i < values.length; i++) if (mask[i] > 0) kept.push(values[i]);
  if (kept.length === 0) return Infinity;
  kept.sort((a, b) => a - b);
  const pos = q * (kept.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return kept[lo] + (kept[hi] - kept[lo]) * (pos - lo);
}
