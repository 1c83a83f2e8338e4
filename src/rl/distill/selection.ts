// Token selection for the distillation term (issue 11; seed 002 A082/A059): which tokens the
// divergence trains, and which vocabulary entries the teacher's top-K support may hold.
// - Entropy top-fraction: the student's highest-entropy completion tokens of each micro-batch,
//   TRL's top_entropy_quantile rule (entropyBonus.ts topEntropyMask) applied to the divergence
//   with its own fraction; without one, the policy loss's mask (as before this option existed).
// - Special tokens out of the top-K support: the distill kernel's `excluded` vector (a u32 per
//   vocabulary entry, 1 = never in the support), whose float64 twin is distillSupport in
//   src/ops/distill.reference.ts, with its browser parity case in test/browser/distill.test.ts.
import type { GrpoConfig } from '../config';
import { topEntropyMask } from '../entropyBonus';

type Distillation = Pick<GrpoConfig['distillation'], 'top_entropy_quantile'>;

/** Whether the divergence has an entropy selection of its own (then the update reads the entropies back for it). */
export function ownEntropySelection(d: Distillation): boolean {
  return d.top_entropy_quantile !== null && d.top_entropy_quantile < 1;
}

/**
 * 1/0 per row: the tokens whose divergence is trained. Its own quantile selects the top fraction
 * of the micro-batch's completion tokens by the student's entropy (ties at the threshold kept,
 * as TRL's get_high_entropy_mask); otherwise the policy loss's entropy mask (null: every token).
 */
export function distillEntropyMask(d: Distillation, entropy: ArrayLike<number> | null, mask: ArrayLike<number>, policyMask: Float32Array | null): Float32Array | null {
  if (!ownEntropySelection(d)) return policyMask;
  if (!entropy) throw new Error('the distillation entropy selection needs the pass\'s entropies');
  return topEntropyMask(entropy, mask, d.top_entropy_quantile!);
}

/** The tokenizer's special tokens (BOS, EOS, PAD) inside the vocabulary, each once, ascending. */
export function specialTokenIds(tokenizer: { bosTokenId: number | null; eosTokenId: number; padTokenId: number }, vocab: number): number[] {
  const ids = [tokenizer.bosTokenId, tokenizer.eosTokenId, tokenizer.padTokenId].filter((id): id is number => id !== null && Number.isInteger(id) && id >= 0 && id < vocab);
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** The kernel's `excluded` vector: 1 at each id of `ids`. */
export function excludedVector(ids: readonly number[], vocab: number): Uint32Array {
  const out = new Uint32Array(vocab);
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= vocab) throw new RangeError(`special token id ${id} is outside the vocabulary of ${vocab}`);
    out[id] = 1;
  }
  return out;
}

/** The retained share of the completion tokens (0..1), null without completion tokens. */
export function retainedShare(retained: number, completion: number): number | null {
  return completion > 0 ? retained / completion : null;
}

/** The step's teacher with mask_special_tokens applied: the tokenizer's special tokens out of its top-K support. */
export function withSpecialTokens<T extends { options: Pick<GrpoConfig['distillation'], 'mask_special_tokens'>; excludedIds?: readonly number[] }>(
  teacher: T | null,
  tokenizer: { bosTokenId: number | null; eosTokenId: number; padTokenId: number },
  vocab: number,
): T | null {
  return teacher && teacher.options.mask_special_tokens ? { ...teacher, excludedIds: specialTokenIds(tokenizer, vocab) } : teacher;
}
