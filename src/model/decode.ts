// One autoregressive decode step with a KV cache: each sequence's newest token goes through
// every layer, its key and value are appended to the cache, and attention reads the cache.
// Everything stays on the GPU: the token ids come from the previous step's sampler buffer.
import type { Recorder } from '../gpu/recorder';
import { recordAttentionDecode } from '../ops/attention';
import { recordEmbeddingForward } from '../ops/embedding';
import { recordAdd } from '../ops/elementwise';
import { recordGeluForward, recordSwigluForward } from '../ops/activation';
import { recordKvCacheWrite, kvCacheFloats, type KvCacheShape } from '../ops/kvCache';
import { recordMatmul } from '../ops/matmul';
import { recordRope } from '../ops/rope';
import type { Transformer } from './transformer';

export interface KvCache {
  shape: KvCacheShape;
  /** Per layer: keys and values [B, Hkv, Tmax, Dh]. */
  keys: GPUBuffer[];
  values: GPUBuffer[];
}

export function createKvCache(model: Transformer, batch: number, maxSeqLen: number): KvCache {
  const c = model.config;
  const shape = { batch, numKvHeads: c.numKvHeads, headDim: c.headDim, maxSeqLen };
  const bytes = kvCacheFloats(shape) * 4;
  return {
    shape,
    keys: Array.from({ length: c.numLayers }, (_, i) => model.rt.storage(bytes, `kv.keys.${i}`)),
    values: Array.from({ length: c.numLayers }, (_, i) => model.rt.storage(bytes, `kv.values.${i}`)),
  };
}

export function releaseKvCache(model: Transformer, cache: KvCache): void {
  model.rt.release(...cache.keys, ...cache.values);
}

export interface DecodeInputs {
  /** [B] u32 token ids of the newest position (e.g. the sampler's output buffer). */
  tokens: GPUBuffer;
  /** [B] u32 position ids of that token (cache position - pad). */
  positions: GPUBuffer;
  /** [B] u32 left padding of each sequence. */
  pads: GPUBuffer;
  /** Cache positions filled after this step (the new token sits at length - 1). */
  length: number;
}

/** Records one step; returns pooled logits [B, V] of the next token (release after use). */
export function recordDecodeStep(model: Transformer, rec: Recorder, cache: KvCache, input: DecodeInputs): GPUBuffer {
  const { rt, config: c, names } = model;
  const B = cache.shape.batch;
  const D = c.hiddenSize;
  const temps: GPUBuffer[] = [];
  const tmp = (b: GPUBuffer) => (temps.push(b), b);
  let x = tmp(
    recordEmbeddingForward(
      rt,
      rec,
      { tokens: B, dim: D, vocab: c.vocabSize, positions: names.positions ? c.maxPositions : 0 },
      input.tokens,
      model.p(names.tokens),
      names.positions ? { ids: input.positions, table: model.p(names.positions) } : undefined,
    ),
  );
  names.layers.forEach((l, i) => {
    const n1 = model.norm(rec, B, x, l.norm1, l.norm1Bias);
    tmp(n1.y);
    tmp(n1.stats);
    let q = tmp(model.project(rec, i, 'q', n1.y, B));
    let k = tmp(model.project(rec, i, 'k', n1.y, B));
    const v = tmp(model.project(rec, i, 'v', n1.y, B));
    if (l.qNorm && l.kNorm) {
      const qn = model.norm(rec, B * c.numHeads, q, l.qNorm, null, c.headDim);
      const kn = model.norm(rec, B * c.numKvHeads, k, l.kNorm, null, c.headDim);
      tmp(qn.stats);
      tmp(kn.stats);
      q = tmp(qn.y);
      k = tmp(kn.y);
    }
    if (model.rope) {
      q = tmp(recordRope(rt, rec, q, input.positions, model.rope, { tokens: B, numHeads: c.numHeads, headDim: c.headDim }));
      k = tmp(recordRope(rt, rec, k, input.positions, model.rope, { tokens: B, numHeads: c.numKvHeads, headDim: c.headDim }));
    }
    recordKvCacheWrite(rt, rec, k, cache.keys[i], cache.shape, input.length - 1, 1);
    recordKvCacheWrite(rt, rec, v, cache.values[i], cache.shape, input.length - 1, 1);
    const att = tmp(
      recordAttentionDecode(rt, rec, q, cache.keys[i], cache.values[i], input.pads, {
        batch: B,
        numHeads: c.numHeads,
        numKvHeads: c.numKvHeads,
        headDim: c.headDim,
        maxSeqLen: cache.shape.maxSeqLen,
        length: input.length,
      }),
    );
    const o = tmp(model.project(rec, i, 'o', att, B));
    const x1 = tmp(recordAdd(rt, rec, x, o, B * D));
    const n2 = model.norm(rec, B, x1, l.norm2, l.norm2Bias);
    tmp(n2.y);
    tmp(n2.stats);
    const up = tmp(model.project(rec, i, 'up', n2.y, B));
    const count = B * c.intermediateSize;
    const hidden = l.gate
      ? tmp(recordSwigluForward(rt, rec, tmp(model.project(rec, i, 'gate', n2.y, B)), up, count))
      : tmp(recordGeluForward(rt, rec, up, count));
    const down = tmp(model.project(rec, i, 'down', hidden, B));
    x = tmp(recordAdd(rt, rec, x1, down, B * D));
  });
  const nf = model.norm(rec, B, x, names.finalNorm, names.finalNormBias);
  tmp(nf.y);
  tmp(nf.stats);
  const logits = rt.storage(B * c.vocabSize * 4, 'decode.logits');
  recordMatmul(rt, rec, { a: nf.y, b: model.p(names.head), c: logits }, { m: B, n: c.vocabSize, k: D, transB: true });
  rec.releaseAfterSubmit(...temps);
  return logits;
}
