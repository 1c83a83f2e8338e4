// The sampling/training mismatch of scaffolded rollouts. A scaffolded completion y was drawn from
// π(·|x + scaffold) but is trained as if drawn from π(·|x): the update's first pass recomputes
// π_old under the original prompt x (update.ts), so the loss is the original prompt's. This file
// runs that re-scoring as an inference pass for the scaffolded rows only and reports how far the
// two prompts' log-probs are apart: per token Δ = log π(y_t|x, y<t) − log π(y_t|x + s, y<t),
// and the importance ratio exp(Δ) a full off-policy correction would weight each token by.
import type { GpuRuntime } from '../../gpu/runtime';
import { recordLogprobsForward } from '../../ops/logprobs';
import type { Transformer } from '../../model/transformer';
import { buildRolloutBatch } from '../rolloutBatch';

export interface RolloutMismatch {
  /** Mean |Δ| over the completion's tokens (nats). */
  logprob_gap: number;
  /** exp(mean Δ): the per-token geometric mean of π(y|x) / π(y|x + s) (GSPO's sequence ratio). */
  is_ratio: number;
}

export interface MismatchSummary {
  /** Token mean of |Δ| over every scaffolded completion token. */
  logprob_gap: number;
  /** Token mean of the importance ratio exp(Δ). */
  is_ratio_mean: number;
  per_rollout: RolloutMismatch[];
}

/** Float64 statistics from the two log-prob sequences of each rollout (sampling: under the scaffold). */
export function mismatchStats(sampling: readonly (readonly number[])[], original: readonly (readonly number[])[]): MismatchSummary {
  if (sampling.length !== original.length) throw new RangeError(`${sampling.length} sampling and ${original.length} original log-prob rows`);
  let tokens = 0;
  let gap = 0;
  let ratio = 0;
  const per_rollout = sampling.map((s, i) => {
    const o = original[i];
    if (o.length !== s.length) throw new RangeError(`rollout ${i}: ${s.length} sampling and ${o.length} original log-probs`);
    let g = 0;
    let d = 0;
    for (let t = 0; t < s.length; t++) {
      const delta = o[t] - s[t];
      g += Math.abs(delta);
      d += delta;
      ratio += Math.exp(delta);
    }
    tokens += s.length;
    gap += g;
    return s.length ? { logprob_gap: g / s.length, is_ratio: Math.exp(d / s.length) } : { logprob_gap: 0, is_ratio: 1 };
  });
  return { logprob_gap: tokens ? gap / tokens : 0, is_ratio_mean: tokens ? ratio / tokens : 1, per_rollout };
}

/**
 * log softmax(logits / temperature) of each completion token under its prompt: one inference
 * pass (no activations kept), in chunks that fit the GPU's binding limit and the micro-batch.
 */
export async function scoreCompletions(
  rt: GpuRuntime,
  model: Transformer,
  prompts: readonly (readonly number[])[],
  completions: readonly (readonly number[])[],
  options: { padTokenId: number; temperature: number; maxSequences: number },
): Promise<number[][]> {
  const V = model.config.vocabSize;
  const out: number[][] = [];
  const limit = rt.device.limits.maxStorageBufferBindingSize;
  for (let start = 0; start < prompts.length; ) {
    // As many sequences as the micro-batch allows whose [n · T, V] logits fit one binding.
    let n = 1;
    let P = prompts[start].length;
    let L = Math.max(1, completions[start].length);
    while (start + n < prompts.length && n < options.maxSequences) {
      const p = Math.max(P, prompts[start + n].length);
      const l = Math.max(L, completions[start + n].length);
      if ((n + 1) * (p + l) * V * 4 > limit) break;
      [P, L, n] = [p, l, n + 1];
    }
    const batch = buildRolloutBatch(prompts.slice(start, start + n), completions.slice(start, start + n), new Array<boolean>(n).fill(false), {
      padTokenId: options.padTokenId,
      maskTruncatedCompletions: false,
    });
    const T = batch.tokens.seqLen;
    const rec = rt.recorder('explore.score_completions');
    const targets = rt.upload(batch.targets, 'explore.targets');
    const logits = model.prefill(rec, batch.tokens, { logits: 'all' });
    const lp = recordLogprobsForward(rt, rec, logits, targets, { rows: n * T, vocab: V, temperature: options.temperature });
    const read = rec.readF32(lp.logprobs, n * T);
    rec.releaseAfterSubmit(targets, logits, lp.logprobs, lp.entropy, lp.rowStats);
    await rec.submit();
    const data = await read;
    for (let b = 0; b < n; b++) {
      const at = b * T + batch.completionStart;
      out.push(Array.from(data.subarray(at, at + completions[start + b].length)));
    }
    start += n;
  }
  return out;
}
