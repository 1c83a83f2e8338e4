// One autoregressive decode step with a KV cache: each sequence's newest token goes through
// every layer, its key and value are appended to the cache, and attention reads the cache.
// Everything stays on the GPU: the token ids come from the previous step's sampler buffer.
// The step's temporaries come from a recording scratch, so a chunk of steps recorded together
// reuses one step's worth of buffers.
import type { Binding, Recorder } from '../gpu/recorder';
import { recordAttentionDecode } from '../ops/attention';
import { recordEmbeddingForward } from '../ops/embedding';
import { recordGeluForward, recordSwigluForward } from '../ops/activation';
import { recordKvCacheWrite, kvCacheFloats, type KvCacheShape } from '../ops/kvCache';
import { recordMatmul } from '../ops/matmul';
import { recordAddNormForward } from '../ops/norm';
import { recordRope } from '../ops/rope';
import { scratchRuntime, type Scratch } from './scratch';
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

/**
 * Records one step; returns the logits [B, V] of the next token. Every buffer the step makes,
 * the logits included, is a temporary of `scratch`: each goes back to it as soon as no later
 * command reads it, so the steps of one recording reuse the same few buffers. Mark the logits
 * done once their last reader (the sampler) is recorded.
 */
export function recordDecodeStep(model: Transformer, rec: Recorder, cache: KvCache, input: DecodeInputs, scratch: Scratch): GPUBuffer {
  const { config: c, names } = model;
  const rt = scratchRuntime(model.rt, scratch);
  const B = cache.shape.batch;
  const D = c.hiddenSize;
  const done = (...b: GPUBuffer[]) => scratch.done(...b);
  let x = recordEmbeddingForward(
    rt,
    rec,
    { tokens: B, dim: D, vocab: c.vocabSize, positions: names.positions ? c.maxPositions : 0 },
    input.tokens,
    model.p(names.tokens),
    names.positions ? { ids: input.positions, table: model.p(names.positions) } : undefined,
  );
  // Each residual add rides in the norm that follows it (norm.wgsl add_forward, bit-identical
  // to add then norm): one dispatch fewer per add, two per layer. `pending` is the MLP output
  // still to be added into x by the next layer's first norm (or the final norm).
  const kind = c.architecture === 'gpt2' ? 'layernorm' : 'rmsnorm';
  const addNorm = (a: GPUBuffer, b: GPUBuffer, weight: string, bias: string | null) => {
    const n = recordAddNormForward(rt, rec, { kind, rows: B, dim: D, eps: c.normEps }, a, b, model.p(weight), model.opt(bias, 'value'));
    done(a, b);
    return n;
  };
  // q, k and v of layer i from its norm's output: one stacked product where the layer has a
  // stack, else a product each, then the q/k norms and RoPE; the norm's output is done after the
  // products, the buffers behind q, k, v once the cache write (`cached`) or attention (`read`)
  // has read them.
  type Inputs = { q: Binding; k: Binding; v: Binding; cached: GPUBuffer[]; read: GPUBuffer[] };
  const attentionInput = (i: number, normed: GPUBuffer): Inputs => {
    const stacked = model.projectAttentionInput(rec, i, normed, B, scratch);
    if (stacked) {
      done(normed);
      return { ...stacked, cached: [], read: [stacked.buffer] };
    }
    const l = names.layers[i];
    let q = model.project(rec, i, 'q', normed, B, scratch);
    let k = model.project(rec, i, 'k', normed, B, scratch);
    const v = model.project(rec, i, 'v', normed, B, scratch);
    done(normed);
    if (l.qNorm && l.kNorm) {
      const qn = model.norm(rec, B * c.numHeads, q, l.qNorm, null, c.headDim, rt);
      const kn = model.norm(rec, B * c.numKvHeads, k, l.kNorm, null, c.headDim, rt);
      done(q, k, qn.stats, kn.stats);
      q = qn.y;
      k = kn.y;
    }
    if (model.rope) {
      const rq = recordRope(rt, rec, q, input.positions, model.rope, { tokens: B, numHeads: c.numHeads, headDim: c.headDim });
      const rk = recordRope(rt, rec, k, input.positions, model.rope, { tokens: B, numHeads: c.numKvHeads, headDim: c.headDim });
      done(q, k);
      [q, k] = [rq, rk];
    }
    return { q, k, v, cached: [k, v], read: [q] };
  };
  // The MLP's activation: GELU as the up projection's epilogue where it can be (one dispatch),
  // else up (and gate), their adapters, then the activation.
  const mlpHidden = (i: number, normed: GPUBuffer): GPUBuffer => {
    const fused = model.projectGelu(rec, i, normed, B, scratch);
    if (fused) {
      done(normed, fused.pre);
      return fused.act;
    }
    const up = model.project(rec, i, 'up', normed, B, scratch);
    const gate = names.layers[i].gate ? model.project(rec, i, 'gate', normed, B, scratch) : null;
    done(normed);
    const count = B * c.intermediateSize;
    const hidden = gate ? recordSwigluForward(rt, rec, gate, up, count) : recordGeluForward(rt, rec, up, count);
    done(...(gate ? [gate, up] : [up]));
    return hidden;
  };
  let pending: GPUBuffer | null = null;
  names.layers.forEach((l, i) => {
    const n1 = pending ? addNorm(x, pending, l.norm1, l.norm1Bias) : model.norm(rec, B, x, l.norm1, l.norm1Bias, D, rt);
    x = n1.x;
    done(n1.stats);
    const { q, k, v, cached, read } = attentionInput(i, n1.y);
    recordKvCacheWrite(model.rt, rec, { k, v }, { keys: cache.keys[i], values: cache.values[i] }, cache.shape, input.length - 1, 1);
    done(...cached);
    const att = recordAttentionDecode(rt, rec, q, cache.keys[i], cache.values[i], input.pads, {
      batch: B,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      maxSeqLen: cache.shape.maxSeqLen,
      length: input.length,
    });
    done(...read);
    const o = model.project(rec, i, 'o', att, B, scratch);
    done(att);
    const n2 = addNorm(x, o, l.norm2, l.norm2Bias);
    const x1 = n2.x;
    done(n2.stats);
    const hidden = mlpHidden(i, n2.y);
    const down = model.project(rec, i, 'down', hidden, B, scratch);
    done(hidden);
    x = x1;
    pending = down;
  });
  const nf = pending ? addNorm(x, pending, names.finalNorm, names.finalNormBias) : model.norm(rec, B, x, names.finalNorm, names.finalNormBias, D, rt);
  done(nf.x, nf.stats);
  const logits = scratch.take(B * c.vocabSize * 4, 'decode.logits');
  recordMatmul(model.rt, rec, { a: nf.y, b: model.p(names.head), c: logits }, { m: B, n: c.vocabSize, k: D, transB: true });
  done(nf.y);
  return logits;
}
