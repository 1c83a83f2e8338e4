// Turns prompt → completion pairs into one left-padded batch for supervised fine-tuning:
// position t predicts token t + 1, and only predictions of completion tokens count.
import type { TokenBatch } from './transformer';

export interface SftExample {
  prompt: readonly number[];
  completion: readonly number[];
}

export interface SftBatch {
  tokens: TokenBatch;
  /** [B * T] the next token at each position (0 where nothing is predicted). */
  targets: Uint32Array;
  /** [B * T] 1 where the prediction is of a completion token, else 0. */
  mask: Float32Array;
  /** Number of completion tokens predicted (the loss's denominator). */
  predicted: number;
}

export function buildSftBatch(examples: readonly SftExample[], padTokenId: number): SftBatch {
  if (examples.length === 0) throw new RangeError('an SFT batch needs at least one example');
  const seqs = examples.map((e, i) => {
    if (e.prompt.length < 1) throw new RangeError(`example ${i}: the prompt is empty (start it with BOS)`);
    if (e.completion.length < 1) throw new RangeError(`example ${i}: the completion is empty`);
    return [...e.prompt, ...e.completion];
  });
  const B = examples.length;
  const T = Math.max(...seqs.map((s) => s.length));
  const ids = new Uint32Array(B * T).fill(padTokenId);
  const targets = new Uint32Array(B * T);
  const mask = new Float32Array(B * T);
  const pads: number[] = [];
  let predicted = 0;
  seqs.forEach((seq, b) => {
    const pad = T - seq.length;
    pads.push(pad);
    ids.set(seq, b * T + pad);
    const firstCompletion = examples[b].prompt.length;
    for (let j = 0; j + 1 < seq.length; j++) {
      const row = b * T + pad + j;
      targets[row] = seq[j + 1];
      if (j + 1 >= firstCompletion) {
        mask[row] = 1;
        predicted++;
      }
    }
  });
  return { tokens: { batch: B, seqLen: T, ids, pads }, targets, mask, predicted };
}
