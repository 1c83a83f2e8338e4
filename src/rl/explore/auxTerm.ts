// The training rows of a step beyond the natural groups (explore/guided.ts): hindsight revisions
// join the main GRPO term, kept on-demand rollouts form RISE-RL's separate auxiliary term
//   L = L_main + c(t) · L_aux,
// each normalised by itself as the loss type normalises a batch. The loss kernel normalises the
// whole batch at once (by its active tokens for dapo/cispo/bnpo, by its sequences for
// grpo/sapo/dr_grpo), so each row's token weights get a constant factor that turns the joint
// normaliser into the term's own:
//   tokens:    main rows × M_all / M_main,  aux rows × c · M_all / M_aux   (M: active tokens)
//   sequences: main rows × N_all / N_main,  aux rows × c · N_all / N_aux   (N: sequences)
// Exact for the one submission these rows train in (config.ts refuses per_device_train_batch_size
// and steps_per_generation > 1 with them: bnpo would divide each micro-batch by its own tokens).
import type { GrpoConfig } from '../config';
import type { TokenWeightSource } from '../update';

export type Term = 'main' | 'aux';

/** Per row, the factor of its token weights (all 1 without aux rows). */
export function rowScales(lossType: GrpoConfig['loss_type'], mask: ArrayLike<number>, seqLen: number, terms: readonly Term[], coef: number): number[] {
  if (!terms.includes('aux')) return terms.map(() => 1);
  const byTokens = lossType === 'dapo' || lossType === 'cispo' || lossType === 'bnpo';
  const size = terms.map((_, b) => {
    if (!byTokens) return 1;
    let m = 0;
    for (let t = b * seqLen; t < (b + 1) * seqLen; t++) m += mask[t];
    return m;
  });
  const total = (term: Term) => size.reduce((s, x, b) => (terms[b] === term ? s + x : s), 0);
  const main = total('main');
  const aux = total('aux');
  const all = main + aux;
  return terms.map((term) => (term === 'main' ? (main > 0 ? all / main : 1) : aux > 0 ? (coef * all) / aux : 0));
}

/**
 * `source` (token credit of the first `sourceRows` rows, the natural rollouts) extended to the
 * extra rows (weight 1) and multiplied row by row by `scales`. Returns `source` itself when
 * nothing changes.
 */
export function withRowScales(source: TokenWeightSource | null, sourceRows: number, scales: readonly number[], layout: { tokens: { seqLen: number } }): TokenWeightSource | null {
  if (scales.length <= sourceRows && scales.every((s) => s === 1)) return source;
  if (!source && scales.every((s) => s === 1)) return null;
  const T = layout.tokens.seqLen;
  return {
    needsEntropy: source?.needsEntropy ?? false,
    weightsFor(start, count, entropy) {
      const out = new Float32Array(count * T).fill(1);
      const own = Math.max(0, Math.min(start + count, sourceRows) - start);
      if (source && own > 0) out.set(source.weightsFor(start, own, entropy ? entropy.subarray(0, own * T) : null));
      for (let b = 0; b < count; b++) {
        const s = scales[start + b] ?? 1;
        if (s !== 1) for (let t = b * T; t < (b + 1) * T; t++) out[t] *= s;
      }
      return out;
    },
  };
}
