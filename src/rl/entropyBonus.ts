// TRL's entropy bonus and top-entropy mask, computed on the host: the policy-loss kernel gets
// the mask as its token weights and the bonus's gradient as d loss / d entropy, so its WGSL does
// not change. TRL GRPOTrainer (entropy_coef added in huggingface/trl PR #6140; one normaliser for
// every loss_type since PR #6648, matching its docs: "the bonus is always the mean per-token
// entropy regardless of loss_type"):
//   effective_mask = completion_mask × entropy_mask        (entropy_mask = 1 at top_entropy_quantile 1)
//   H̄_b  = Σ_t H_t · effective_mask_t / max(Σ_t effective_mask_t, 1)    per micro-batch b
//   loss = Σ_b [policy_loss_b − entropy_coef · H̄_b / K]               K = gradient-accumulation steps
// so d loss / d H_t = −entropy_coef · effective_mask_t / (max(Σ effective_mask, 1) · K).
// The entropy mask is recomputed at every pass from that pass's entropies: TRL computes it inside
// compute_loss (get_high_entropy_mask(entropies, completion_mask, 1 − top_entropy_quantile)), which
// runs again on every pass of num_iterations.
import { maskedQuantile } from './rolloutBatch';

/** 1 where the token's entropy is at least the (1 − quantile) quantile of the masked entropies, else 0. */
export function topEntropyMask(entropy: ArrayLike<number>, mask: ArrayLike<number>, quantile: number): Float32Array {
  if (!(quantile > 0 && quantile <= 1)) throw new RangeError(`top_entropy_quantile must be in (0, 1], got ${quantile}`);
  if (entropy.length !== mask.length) throw new RangeError(`${entropy.length} entropies for ${mask.length} mask entries`);
  const threshold = maskedQuantile(entropy, mask, 1 - quantile);
  return Float32Array.from(entropy, (h, i) => (mask[i] > 0 && h >= threshold ? 1 : 0));
}

/** Σ m·e over the micro-batch (e = 1 without an entropy mask), the bonus's token count. */
function effectiveCount(mask: ArrayLike<number>, entropyMask: ArrayLike<number> | null): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i] * (entropyMask ? entropyMask[i] : 1);
  return n;
}

/** H̄_b: the mean entropy over the tokens the policy loss trains (completion mask × entropy mask). */
export function entropyBonusMean(entropy: ArrayLike<number>, mask: ArrayLike<number>, entropyMask: ArrayLike<number> | null): number {
  let sum = 0;
  for (let i = 0; i < mask.length; i++) {
    const w = mask[i] * (entropyMask ? entropyMask[i] : 1);
    if (w !== 0) sum += w * entropy[i];
  }
  return sum / Math.max(effectiveCount(mask, entropyMask), 1);
}

/** d loss / d H_t of −entropy_coef · H̄_b / K for one micro-batch of K. */
export function entropyBonusGradient(mask: ArrayLike<number>, entropyMask: ArrayLike<number> | null, entropyCoef: number, microBatches: number): Float32Array {
  if (!Number.isFinite(entropyCoef)) throw new RangeError(`entropy_coef must be finite, got ${entropyCoef}`);
  if (!(Number.isInteger(microBatches) && microBatches >= 1)) throw new RangeError(`micro-batches must be a positive integer, got ${microBatches}`);
  if (entropyMask && entropyMask.length !== mask.length) throw new RangeError(`${entropyMask.length} entropy-mask entries for ${mask.length} mask entries`);
  const c = -entropyCoef / (Math.max(effectiveCount(mask, entropyMask), 1) * microBatches);
  return Float32Array.from(mask, (m, i) => {
    const w = m * (entropyMask ? entropyMask[i] : 1);
    return w === 0 ? 0 : c * w; // a plain 0 (not -0) where nothing is trained
  });
}
