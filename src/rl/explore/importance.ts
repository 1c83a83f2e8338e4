// Importance correction of scaffolded rollouts (scaffold_is_cap). A scaffolded completion y was
// drawn from q = π_old(·|x + scaffold) but its gradient is taken as if from π_old(·|x), so each of
// its tokens gets the truncated importance weight w_t = min(π_old(y_t|x, y<t) / q(y_t|·), cap)
// (token-level truncated IS, as verl's rollout_is "token" with rollout_is_threshold), computed
// before the update from the mismatch pass. The weights ride on the loss kernel's token_weights,
// multiplied into whatever token credit (src/rl/credit) already put there.
import type { TokenWeightSource } from '../update';

/** w_t = min(exp(original_t − sampling_t), cap), in float64. */
export function importanceWeights(sampling: readonly number[], original: readonly number[], cap: number): number[] {
  if (sampling.length !== original.length) throw new RangeError(`${sampling.length} sampling and ${original.length} original log-probs`);
  if (!(cap > 0)) throw new RangeError(`the importance-weight cap must be > 0, got ${cap}`);
  return sampling.map((s, t) => Math.min(Math.exp(original[t] - s), cap));
}

/**
 * `source`'s per-token weights times each rollout's importance weights at its completion
 * positions (rows laid out [N, T], completion token j at completionStart + j). Rollouts without
 * weights (null: sampled from the plain prompt) keep `source`'s weights; with no weights at all,
 * `source` itself is returned.
 */
export function withImportanceWeights(
  source: TokenWeightSource | null,
  weights: readonly (readonly number[] | null)[],
  layout: { tokens: { seqLen: number }; completionStart: number },
): TokenWeightSource | null {
  if (weights.every((w) => w === null)) return source;
  const T = layout.tokens.seqLen;
  const at = layout.completionStart;
  return {
    needsEntropy: source?.needsEntropy ?? false,
    weightsFor(start, count, entropy) {
      const out = source ? source.weightsFor(start, count, entropy) : new Float32Array(count * T).fill(1);
      for (let b = start; b < start + count; b++) {
        const w = weights[b];
        if (!w) continue;
        const row = (b - start) * T + at;
        for (let j = 0; j < w.length; j++) out[row + j] *= w[j];
      }
      return out;
    },
  };
}
