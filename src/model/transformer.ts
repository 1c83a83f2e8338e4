// The decoder-only transformer on the GPU: a training forward pass that keeps what the
// backward pass needs, and the backward pass that adds every parameter's gradient into the
// ParameterStore. Both only record into a Recorder; the caller submits once per step.
// GPT-2 style: learned positions, LayerNorm, GELU, tied head. Llama style: RoPE, RMSNorm,
// SwiGLU, grouped-query attention, optional q/k/v bias and q/k norm (Qwen3), optional untied head.
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import { recordAttentionBackward, recordAttentionForward, type AttentionForward } from '../ops/attention';
import { recordEmbeddingBackward, recordEmbeddingForward } from '../ops/embedding';
import { recordAdd, recordAccumulate } from '../ops/elementwise';
import { recordGeluBackward, recordGeluForward, recordSwigluBackward, recordSwigluForward } from '../ops/activation';
import { recordMatmul } from '../ops/matmul';
import { recordNormBackward, recordNormForward, type NormForward } from '../ops/norm';
import { createRopeTable, recordRope, recordRopeBackward, ropePositions, type RopeTable } from '../ops/rope';
import type { ModelConfig } from './config';
import { linearBackwardInput, linearBackwardParams, linearForward, type LinearShape } from './linear';
import type { ParameterStore } from './parameters';
import { modelNames, type LayerNames, type ModelNames } from './weights';

/** Left-padded token ids: row b holds pads[b] padding positions, then its tokens. */
export interface TokenBatch {
  batch: number;
  seqLen: number;
  /** [batch * seqLen]; padding positions may hold any valid id. */
  ids: Uint32Array;
  pads: ArrayLike<number>;
}

interface LayerActivations {
  norm1: NormForward;
  qNorm: NormForward | null;
  kNorm: NormForward | null;
  attention: AttentionForward;
  norm2: NormForward;
  /** GPT-2: c_fc output before GELU; Llama: up_proj output. */
  up: GPUBuffer;
  gate: GPUBuffer | null;
  /** The MLP's hidden activation (input of the down projection). */
  hidden: GPUBuffer;
}

/** What a training forward pass leaves for backward; release with Transformer.release(). */
export interface ForwardState {
  tokens: TokenBatch;
  positionIds: Uint32Array;
  /** positionIds on the GPU (RoPE's backward needs them too). */
  positions: GPUBuffer;
  layers: LayerActivations[];
  finalNorm: NormForward;
  /** [batch * seqLen, vocab]. */
  logits: GPUBuffer;
  /** Every pooled buffer the pass made (released together). */
  owned: GPUBuffer[];
}

export class Transformer {
  readonly names: ModelNames;
  /** RoPE's (cos, sin) table, Llama style only. */
  readonly rope: RopeTable | null;

  constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    readonly params: ParameterStore,
  ) {
    this.names = modelNames(config);
    this.rope =
      config.architecture === 'llama'
        ? createRopeTable(rt, { headDim: config.headDim, maxPositions: config.maxPositions, theta: config.ropeTheta })
        : null;
  }

  /** The GPU buffer of a parameter's value. */
  p(name: string): GPUBuffer {
    return this.params.get(name).value;
  }

  private g(name: string): GPUBuffer {
    return this.params.get(name).grad;
  }

  opt(name: string | null, which: 'value' | 'grad'): GPUBuffer | null {
    return name ? (which === 'value' ? this.p(name) : this.g(name)) : null;
  }

  private validate(tokens: TokenBatch): void {
    const { batch, seqLen, ids, pads } = tokens;
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
    if (!Number.isInteger(seqLen) || seqLen < 1) throw new RangeError(`seqLen must be a positive integer, got ${seqLen}`);
    if (seqLen > this.config.maxPositions) {
      throw new RangeError(`seqLen ${seqLen} exceeds the model's context of ${this.config.maxPositions} positions`);
    }
    if (ids.length !== batch * seqLen) throw new RangeError(`ids has ${ids.length} values, expected batch*seqLen = ${batch * seqLen}`);
    if (pads.length !== batch) throw new RangeError(`pads has ${pads.length} values, expected batch = ${batch}`);
    for (let b = 0; b < batch; b++) {
      if (!Number.isInteger(pads[b]) || pads[b] < 0 || pads[b] >= seqLen) {
        throw new RangeError(`pads[${b}] = ${pads[b]} must leave at least one token in a row of ${seqLen}`);
      }
    }
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] >= this.config.vocabSize) throw new RangeError(`ids[${i}] = ${ids[i]} is outside the vocabulary of ${this.config.vocabSize}`);
    }
  }

  /** Records the forward pass of a batch and keeps the activations backward needs. */
  forward(rec: Recorder, tokens: TokenBatch): ForwardState {
    this.validate(tokens);
    const { rt, config: c, names } = this;
    const rows = tokens.batch * tokens.seqLen;
    const D = c.hiddenSize;
    const owned: GPUBuffer[] = [];
    const keep = <T extends GPUBuffer>(b: T): T => (owned.push(b), b);
    const positionIds = ropePositions(tokens.pads, tokens.seqLen);
    const idsBuf = keep(rt.upload(tokens.ids, 'ids'));
    const posBuf = keep(rt.upload(positionIds, 'position_ids'));
    const padBuf = keep(rt.upload(Uint32Array.from(tokens.pads), 'pads'));

    let x = keep(
      recordEmbeddingForward(
        rt,
        rec,
        { tokens: rows, dim: D, vocab: c.vocabSize, positions: names.positions ? c.maxPositions : 0 },
        idsBuf,
        this.p(names.tokens),
        names.positions ? { ids: posBuf, table: this.p(names.positions) } : undefined,
      ),
    );
    const layers: LayerActivations[] = [];
    for (const l of names.layers) {
      const { activations, out } = this.layerForward(rec, l, x, tokens, posBuf, padBuf, keep);
      layers.push(activations);
      x = out;
    }
    const finalNorm = this.norm(rec, rows, x, names.finalNorm, names.finalNormBias);
    keep(finalNorm.y);
    keep(finalNorm.stats);
    const logits = keep(rt.storage(rows * c.vocabSize * 4, 'logits'));
    recordMatmul(rt, rec, { a: finalNorm.y, b: this.p(names.head), c: logits }, { m: rows, n: c.vocabSize, k: D, transB: true });
    return { tokens, positionIds, positions: posBuf, layers, finalNorm, logits, owned };
  }

  norm(rec: Recorder, rows: number, x: GPUBuffer, weight: string, bias: string | null, dim = this.config.hiddenSize): NormForward {
    const kind = this.config.architecture === 'gpt2' ? 'layernorm' : 'rmsnorm';
    return recordNormForward(this.rt, rec, { kind, rows, dim, eps: this.config.normEps }, x, this.p(weight), this.opt(bias, 'value'));
  }

  /** Linear-layer shapes of one layer for `rows` token rows. */
  shapes(rows: number) {
    const c = this.config;
    const layout = this.names.layout;
    const qDim = c.numHeads * c.headDim;
    const kvDim = c.numKvHeads * c.headDim;
    const lin = (inDim: number, outDim: number): LinearShape => ({ rows, inDim, outDim, layout });
    return { q: lin(c.hiddenSize, qDim), kv: lin(c.hiddenSize, kvDim), o: lin(qDim, c.hiddenSize), up: lin(c.hiddenSize, c.intermediateSize), down: lin(c.intermediateSize, c.hiddenSize) };
  }

  private layerForward(
    rec: Recorder,
    l: LayerNames,
    x: GPUBuffer,
    tokens: TokenBatch,
    posBuf: GPUBuffer,
    padBuf: GPUBuffer,
    keep: <T extends GPUBuffer>(b: T) => T,
  ): { activations: LayerActivations; out: GPUBuffer } {
    const { rt, config: c } = this;
    const rows = tokens.batch * tokens.seqLen;
    const s = this.shapes(rows);
    const norm1 = this.norm(rec, rows, x, l.norm1, l.norm1Bias);
    keep(norm1.y);
    keep(norm1.stats);
    let q = keep(linearForward(rt, rec, norm1.y, this.p(l.q), this.opt(l.qBias, 'value'), s.q));
    let k = keep(linearForward(rt, rec, norm1.y, this.p(l.k), this.opt(l.kBias, 'value'), s.kv));
    const v = keep(linearForward(rt, rec, norm1.y, this.p(l.v), this.opt(l.vBias, 'value'), s.kv));
    let qNorm: NormForward | null = null;
    let kNorm: NormForward | null = null;
    if (l.qNorm && l.kNorm) {
      qNorm = this.norm(rec, rows * c.numHeads, q, l.qNorm, null, c.headDim);
      kNorm = this.norm(rec, rows * c.numKvHeads, k, l.kNorm, null, c.headDim);
      q = keep(qNorm.y);
      k = keep(kNorm.y);
      keep(qNorm.stats);
      keep(kNorm.stats);
    }
    if (this.rope) {
      q = keep(recordRope(rt, rec, q, posBuf, this.rope, { tokens: rows, numHeads: c.numHeads, headDim: c.headDim }));
      k = keep(recordRope(rt, rec, k, posBuf, this.rope, { tokens: rows, numHeads: c.numKvHeads, headDim: c.headDim }));
    }
    const attention = recordAttentionForward(rt, rec, q, k, v, padBuf, {
      batch: tokens.batch,
      seqLen: tokens.seqLen,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
    });
    keep(attention.out);
    keep(attention.lse);
    const o = keep(linearForward(rt, rec, attention.out, this.p(l.o), this.opt(l.oBias, 'value'), s.o));
    const x1 = keep(recordAdd(rt, rec, x, o, rows * c.hiddenSize));
    const norm2 = this.norm(rec, rows, x1, l.norm2, l.norm2Bias);
    keep(norm2.y);
    keep(norm2.stats);
    const up = keep(linearForward(rt, rec, norm2.y, this.p(l.up), this.opt(l.upBias, 'value'), s.up));
    let gate: GPUBuffer | null = null;
    let hidden: GPUBuffer;
    const count = rows * c.intermediateSize;
    if (l.gate) {
      gate = keep(linearForward(rt, rec, norm2.y, this.p(l.gate), null, s.up));
      hidden = keep(recordSwigluForward(rt, rec, gate, up, count));
    } else {
      hidden = keep(recordGeluForward(rt, rec, up, count));
    }
    const down = keep(linearForward(rt, rec, hidden, this.p(l.down), this.opt(l.downBias, 'value'), s.down));
    const out = keep(recordAdd(rt, rec, x1, down, rows * c.hiddenSize));
    return { activations: { norm1, qNorm, kNorm, attention, norm2, up, gate, hidden }, out };
  }

  /**
   * Records the backward pass from dLogits [rows, vocab], adding every parameter's gradient
   * into the store's grad buffers (zero them first with ParameterStore.recordZeroGrads).
   */
  backward(rec: Recorder, state: ForwardState, dLogits: GPUBuffer): void {
    const { rt, config: c, names } = this;
    const { tokens } = state;
    const rows = tokens.batch * tokens.seqLen;
    const D = c.hiddenSize;
    const temps: GPUBuffer[] = [];
    const tmp = (b: GPUBuffer) => (temps.push(b), b);

    // Head: logits = nf · headᵀ.
    const dnf = tmp(rt.storage(rows * D * 4, 'd_final_norm'));
    recordMatmul(rt, rec, { a: dLogits, b: this.p(names.head), c: dnf }, { m: rows, n: D, k: c.vocabSize });
    recordMatmul(rt, rec, { a: dLogits, b: state.finalNorm.y, c: this.g(names.head) }, { m: c.vocabSize, n: D, k: rows, transA: true, beta: 1 });
    let dx = tmp(this.normBackward(rec, state.finalNorm, dnf, names.finalNorm, names.finalNormBias));

    for (let i = names.layers.length - 1; i >= 0; i--) {
      dx = this.layerBackward(rec, names.layers[i], state.layers[i], dx, tokens, state, tmp);
    }
    recordEmbeddingBackward(rt, rec, dx, tokens.ids, { dim: D, rows: c.vocabSize }, this.g(names.tokens));
    if (names.positions) recordEmbeddingBackward(rt, rec, dx, state.positionIds, { dim: D, rows: c.maxPositions }, this.g(names.positions));
    rec.releaseAfterSubmit(...temps);
  }

  private normBackward(rec: Recorder, fwd: NormForward, dy: GPUBuffer, weight: string, bias: string | null): GPUBuffer {
    const grads = recordNormBackward(this.rt, rec, fwd, dy, { dGamma: this.g(weight), ...(bias ? { dBeta: this.g(bias) } : {}) });
    return grads.dx;
  }

  private layerBackward(
    rec: Recorder,
    l: LayerNames,
    a: LayerActivations,
    dOut: GPUBuffer,
    tokens: TokenBatch,
    state: ForwardState,
    tmp: (b: GPUBuffer) => GPUBuffer,
  ): GPUBuffer {
    const { rt, config: c } = this;
    const rows = tokens.batch * tokens.seqLen;
    const s = this.shapes(rows);
    const count = rows * c.intermediateSize;
    // MLP: out = x1 + down(act(up, gate)).
    const dHidden = tmp(linearBackwardInput(rt, rec, dOut, this.p(l.down), s.down));
    linearBackwardParams(rt, rec, a.hidden, dOut, this.g(l.down), this.opt(l.downBias, 'grad'), s.down);
    let dNorm2: GPUBuffer;
    if (l.gate && a.gate) {
      const { dGate, dUp } = recordSwigluBackward(rt, rec, a.gate, a.up, dHidden, count);
      tmp(dGate);
      tmp(dUp);
      dNorm2 = tmp(linearBackwardInput(rt, rec, dUp, this.p(l.up), s.up));
      linearBackwardInput(rt, rec, dGate, this.p(l.gate), s.up, dNorm2);
      linearBackwardParams(rt, rec, a.norm2.y, dUp, this.g(l.up), null, s.up);
      linearBackwardParams(rt, rec, a.norm2.y, dGate, this.g(l.gate), null, s.up);
    } else {
      const dUp = tmp(recordGeluBackward(rt, rec, a.up, dHidden, count));
      dNorm2 = tmp(linearBackwardInput(rt, rec, dUp, this.p(l.up), s.up));
      linearBackwardParams(rt, rec, a.norm2.y, dUp, this.g(l.up), this.opt(l.upBias, 'grad'), s.up);
    }
    const dx1 = tmp(this.normBackward(rec, a.norm2, dNorm2, l.norm2, l.norm2Bias));
    recordAccumulate(rt, rec, dx1, dOut, rows * c.hiddenSize);

    // Attention: x1 = x + o(attention(q, k, v)).
    const dAttn = tmp(linearBackwardInput(rt, rec, dx1, this.p(l.o), s.o));
    linearBackwardParams(rt, rec, a.attention.out, dx1, this.g(l.o), this.opt(l.oBias, 'grad'), s.o);
    const grads = recordAttentionBackward(rt, rec, a.attention, dAttn);
    let dq = tmp(grads.dq);
    let dk = tmp(grads.dk);
    const dv = tmp(grads.dv);
    if (this.rope) {
      dq = tmp(recordRopeBackward(rt, rec, dq, state.positions, this.rope, { tokens: rows, numHeads: c.numHeads, headDim: c.headDim }));
      dk = tmp(recordRopeBackward(rt, rec, dk, state.positions, this.rope, { tokens: rows, numHeads: c.numKvHeads, headDim: c.headDim }));
    }
    if (a.qNorm && a.kNorm && l.qNorm && l.kNorm) {
      dq = tmp(this.normBackward(rec, a.qNorm, dq, l.qNorm, null));
      dk = tmp(this.normBackward(rec, a.kNorm, dk, l.kNorm, null));
    }
    const dNorm1 = tmp(linearBackwardInput(rt, rec, dq, this.p(l.q), s.q));
    linearBackwardInput(rt, rec, dk, this.p(l.k), s.kv, dNorm1);
    linearBackwardInput(rt, rec, dv, this.p(l.v), s.kv, dNorm1);
    linearBackwardParams(rt, rec, a.norm1.y, dq, this.g(l.q), this.opt(l.qBias, 'grad'), s.q);
    linearBackwardParams(rt, rec, a.norm1.y, dk, this.g(l.k), this.opt(l.kBias, 'grad'), s.kv);
    linearBackwardParams(rt, rec, a.norm1.y, dv, this.g(l.v), this.opt(l.vBias, 'grad'), s.kv);
    const dx = tmp(this.normBackward(rec, a.norm1, dNorm1, l.norm1, l.norm1Bias));
    recordAccumulate(rt, rec, dx, dx1, rows * c.hiddenSize);
    return dx;
  }

  release(state: ForwardState): void {
    this.rt.release(...state.owned);
  }
}
