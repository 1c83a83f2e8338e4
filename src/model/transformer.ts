// The decoder-only transformer on the GPU: a training forward pass that keeps what the
// backward pass needs, and the backward pass that adds every parameter's gradient into the
// ParameterStore. Both only record into a Recorder; the caller submits once per step.
// GPT-2 style: learned positions, LayerNorm, GELU, tied head. Llama style: RoPE, RMSNorm,
// SwiGLU, grouped-query attention, optional q/k/v bias and q/k norm (Qwen3), optional untied head.
// With LoRA attached (attachLora) the base weights are frozen and stored once: forward adds
// scale·(drop(x)·Aᵀ)·Bᵀ to each targeted projection, backward fills only the adapters'
// gradients, and withoutAdapters() is a view of the same buffers without them (the KL reference).
// prefill() is the inference forward for sampling and scoring: it keeps nothing for backward
// (temporaries are reused from layer to layer), can fill a KV cache, and computes the final norm
// and head at each row's last position only.
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import { recordAttentionBackward, recordAttentionForward, type AttentionForward } from '../ops/attention';
import { recordEmbeddingBackward, recordEmbeddingForward } from '../ops/embedding';
import { recordGeluBackward, recordGeluForward, recordSwigluBackward, recordSwigluForward } from '../ops/activation';
import { dropoutSeed, type DropoutOptions } from '../ops/dropout';
import { recordKvCacheWrite } from '../ops/kvCache';
import { recordMatmul } from '../ops/matmul';
import { recordNormBackward, recordNormForward, type NormForward } from '../ops/norm';
import { createRopeTable, recordRope, recordRopeBackward, ropePositions, type RopeTable } from '../ops/rope';
import type { ModelConfig } from './config';
import type { KvCache } from './decode';
import {
  linearBackwardInput,
  linearBackwardInputGelu,
  linearBackwardInputInto,
  linearBackwardParams,
  linearForward,
  linearForwardGelu,
  linearForwardStack,
  type LinearShape,
  type LinearStack,
} from './linear';
import { LoraAdapters, projectionBias, projectionWeight, type LoraConfig, type LoraSite, type ProjectionRole, type SiteInput } from './lora';
import { initialLoraTensors } from './loraInit';
import { recordLoraBackward, recordLoraForward, type LoraBlock, type LoraShape } from './loraLinear';
import type { BufferRange, ParameterStack, ParameterStore } from './parameters';
import { RecordingScratch, scratchRuntime, type Scratch } from './scratch';
import { stackSlot, stacksAttentionInput } from './qkvStack';
import { modelNames, type LayerNames, type ModelNames } from './weights';

/** Left-padded token ids: row b holds pads[b] padding positions, then its tokens. */
export interface TokenBatch {
  batch: number;
  seqLen: number;
  /** [batch * seqLen]; padding positions may hold any valid id. */
  ids: Uint32Array;
  pads: ArrayLike<number>;
}

/**
 * A layer's q, k and v projections as one stack (one product computes the three, one computes
 * their weight gradients): the weights (and biases) at one stride in the parameter arena, the
 * outputs in slots of one buffer, each slot starting at a binding offset the device accepts.
 */
interface AttentionInputStack {
  weights: ParameterStack;
  biases: ParameterStack | null;
  linear: LinearStack;
}

/** What attention reads, as one layer's forward made it. */
interface AttentionInput {
  q: Binding;
  k: Binding;
  v: Binding;
  /** The buffers behind q, k and v, handed back once attention has read them. */
  held: GPUBuffer[];
  lora: LoraSiteForward[];
  qNorm: NormForward | null;
  kNorm: NormForward | null;
}

/** q, k and v as ranges of the stack's one buffer. */
export interface StackedQkv {
  buffer: GPUBuffer;
  q: BufferRange;
  k: BufferRange;
  v: BufferRange;
}

interface LayerActivations {
  norm1: NormForward;
  /** The q, k, v stack the forward used (its slots hold attention's q, k, v), or null. */
  qkvStack: AttentionInputStack | null;
  qNorm: NormForward | null;
  kNorm: NormForward | null;
  attention: AttentionForward;
  norm2: NormForward;
  /** GPT-2: c_fc output before GELU; Llama: up_proj output. */
  up: GPUBuffer;
  gate: GPUBuffer | null;
  /** The MLP's hidden activation (input of the down projection). */
  hidden: GPUBuffer;
  /** What each of this layer's LoRA sites kept (empty without adapters). */
  lora: LoraSiteForward[];
}

/** A LoRA site's forward record: its input, H = drop(x)·Aᵀ and the dropout it used. */
interface LoraSiteForward {
  site: LoraSite;
  x: GPUBuffer;
  h: GPUBuffer;
  dropout: DropoutOptions | null;
}

/**
 * Where a forward pass's buffers come from and where they go. Training: ops allocate from the
 * pool and every output is kept for backward. Inference: ops allocate from a recording scratch
 * and each buffer is handed back to it once no later command reads it.
 */
interface PassBuffers {
  /** The runtime ops allocate their outputs from. */
  rt: GpuRuntime;
  /** Training: the ForwardState owns the buffer. Inference: nothing. */
  keep<T extends GPUBuffer>(buffer: T): T;
  /** Inference: no later command reads these; later ops may reuse them. Training: nothing. */
  done(...buffers: GPUBuffer[]): void;
}

/** The adapters a forward pass runs with. */
interface AdapterRun {
  adapters: LoraAdapters;
  dropoutSeed: number | null;
  /** The dropout masks' temporaries, reused from site to site. */
  scratch: Scratch;
}

export interface ForwardOptions {
  /** Add the LoRA adapters (default true); false runs the frozen base model alone. */
  adapters?: boolean;
  /**
   * Training only: apply lora_dropout with masks drawn from this 32-bit seed (one mask per
   * site). Omit it when sampling or scoring, where dropout must not apply.
   */
  dropoutSeed?: number;
}

export interface PrefillOptions {
  /** Write every layer's keys and values into this cache at positions 0..seqLen-1. */
  cache?: KvCache;
  /**
   * Which positions get logits: 'last' (default) each row's last, [batch, vocab]; 'all' every
   * position, [batch * seqLen, vocab], as forward() gives them (scoring, e.g. KL reference log-probs).
   */
  logits?: 'last' | 'all';
  /** Add the LoRA adapters (default true), as in ForwardOptions. */
  adapters?: boolean;
  /**
   * Also copy the final hidden states (the final norm's output, the vectors the head reads) of
   * the rows that get logits into this buffer, [rows, hiddenSize] f32 (the probe judge's features).
   */
  hiddenOut?: GPUBuffer;
}

/** Internal: a view shares another model's buffers (see withoutAdapters). */
export interface TransformerShare {
  rope: RopeTable | null;
  lora: LoraAdapters | null;
  adapters: boolean;
}

/** What a training forward pass leaves for backward; release with Transformer.release(). */
export interface ForwardState {
  tokens: TokenBatch;
  positionIds: Uint32Array;
  /** positionIds on the GPU (RoPE's backward needs them too). */
  positions: GPUBuffer;
  layers: LayerActivations[];
  /** Whether the adapters took part (backward then fills their gradients). */
  adapters: boolean;
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
  private adapters: LoraAdapters | null;
  /** False for the base-model view made by withoutAdapters(). */
  readonly adaptersOn: boolean;
  private adapted = new Set<string>();

  constructor(
    readonly rt: GpuRuntime,
    readonly config: ModelConfig,
    readonly params: ParameterStore,
    share?: TransformerShare,
  ) {
    this.names = modelNames(config);
    this.rope = share
      ? share.rope
      : config.architecture === 'llama'
        ? createRopeTable(rt, { headDim: config.headDim, maxPositions: config.maxPositions, theta: config.ropeTheta })
        : null;
    this.adapters = share?.lora ?? null;
    this.adaptersOn = share?.adapters ?? true;
    if (this.adapters && this.adaptersOn) this.adapted = this.adapters.adaptedWeights(this.names);
  }

  /** The attached LoRA adapters, or null (full fine-tuning). */
  get lora(): LoraAdapters | null {
    return this.adapters;
  }

  /**
   * Attaches LoRA adapters (PEFT init: A kaiming-uniform from `seed`, B = 0, so the model's
   * output is unchanged) and freezes every base tensor: their gradients and AdamW moments
   * are freed, and the optimizer from now on sees only the adapters.
   */
  attachLora(options: Partial<LoraConfig>, seed: number): LoraAdapters {
    if (!this.adaptersOn) throw new Error('this is the base-model view of a LoRA model: attach adapters to the model itself');
    if (this.adapters) throw new Error(`the model already has LoRA adapters (r = ${this.adapters.config.r}); a model takes one set`);
    const adapters = new LoraAdapters(this.config, options);
    const tensors = initialLoraTensors(adapters.sites, adapters.config.r, seed);
    this.params.freeze();
    this.params.add(adapters.specs, tensors);
    this.adapters = adapters;
    this.adapted = adapters.adaptedWeights(this.names);
    return adapters;
  }

  /**
   * The same model without its adapters: it shares every buffer (nothing is copied) and its
   * forward runs the frozen base weights alone. GRPO's KL reference under LoRA.
   */
  withoutAdapters(): Transformer {
    return new Transformer(this.rt, this.config, this.params, { rope: this.rope, lora: this.adapters, adapters: false });
  }

  /**
   * The GPU buffer of a parameter's value. A base weight that has an adapter is refused, so
   * code that would multiply by it directly cannot silently skip the adapter: use project().
   */
  p(name: string): BufferRange {
    if (this.adapted.has(name)) {
      throw new Error(`${name} has a LoRA adapter: compute with model.project(...) so the adapter applies (or use model.withoutAdapters() for the base model)`);
    }
    return this.weight(name);
  }

  private weight(name: string): BufferRange {
    return this.params.get(name).value;
  }

  /** A parameter's gradient buffer, or null when it is frozen. */
  private g(name: string): BufferRange | null {
    return this.params.get(name).grad;
  }

  opt(name: string | null, which: 'value' | 'grad'): BufferRange | null {
    return name ? (which === 'value' ? this.weight(name) : this.g(name)) : null;
  }

  /** Throws a RangeError naming what is wrong with a token batch for this model. */
  validate(tokens: TokenBatch): void {
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

  /**
   * Records the forward pass of a batch and keeps the activations backward needs. With LoRA
   * attached the adapters take part unless options.adapters is false; dropout applies only
   * when options.dropoutSeed is given (training).
   */
  forward(rec: Recorder, tokens: TokenBatch, options: ForwardOptions = {}): ForwardState {
    this.validate(tokens);
    const seed = options.dropoutSeed;
    if (seed !== undefined && (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)) {
      throw new RangeError(`dropoutSeed must be a 32-bit unsigned integer, got ${seed}`);
    }
    const adapters = this.adaptersOn && (options.adapters ?? true) ? this.adapters : null;
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
        this.weight(names.tokens),
        names.positions ? { ids: posBuf, table: this.weight(names.positions) } : undefined,
      ),
    );
    const scratch = new RecordingScratch(rt, rec);
    const run = adapters ? { adapters, dropoutSeed: seed ?? null, scratch } : null;
    const buffers: PassBuffers = { rt, keep, done: () => {} };
    const layers: LayerActivations[] = [];
    names.layers.forEach((l, i) => {
      const { activations, out } = this.layerForward(rec, i, l, x, tokens, posBuf, padBuf, buffers, run, null);
      layers.push(activations);
      x = out;
    });
    scratch.finish();
    const finalNorm = this.norm(rec, rows, x, names.finalNorm, names.finalNormBias);
    keep(finalNorm.y);
    keep(finalNorm.stats);
    const logits = keep(rt.storage(rows * c.vocabSize * 4, 'logits'));
    recordMatmul(rt, rec, { a: finalNorm.y, b: this.weight(names.head), c: logits }, { m: rows, n: c.vocabSize, k: D, transB: true });
    return { tokens, positionIds, positions: posBuf, layers, adapters: adapters !== null, finalNorm, logits, owned };
  }

  /**
   * Records the forward pass for sampling and scoring: returns the next-token logits at each
   * row's last position, [batch, vocab] (or at every position with options.logits = 'all'),
   * pooled: release after the submission. With options.cache every layer's keys and values go
   * into the cache. Nothing is kept for backward: temporaries come from one recording scratch
   * and are reused from layer to layer, and the final norm and the head run on the rows asked
   * for only. The logits are bit-identical to forward()'s same rows (the head uses the matmul
   * kernel forward would).
   */
  prefill(rec: Recorder, tokens: TokenBatch, options: PrefillOptions = {}): GPUBuffer {
    this.validate(tokens);
    const { rt, config: c, names } = this;
    const { batch: B, seqLen: P } = tokens;
    const cache = options.cache ?? null;
    if (cache) {
      const s = cache.shape;
      if (s.batch !== B || s.maxSeqLen < P || cache.keys.length !== c.numLayers || s.numKvHeads !== c.numKvHeads || s.headDim !== c.headDim) {
        throw new RangeError(
          `the KV cache (batch ${s.batch}, ${s.maxSeqLen} positions, ${cache.keys.length} layers) does not fit a prefill of batch ${B} × ${P} tokens on this ${c.numLayers}-layer model`,
        );
      }
    }
    const adapters = this.adaptersOn && (options.adapters ?? true) ? this.adapters : null;
    const rows = B * P;
    const D = c.hiddenSize;
    const idsBuf = rt.upload(tokens.ids, 'ids');
    const posBuf = rt.upload(ropePositions(tokens.pads, P), 'position_ids');
    const padBuf = rt.upload(Uint32Array.from(tokens.pads), 'pads');
    rec.releaseAfterSubmit(idsBuf, posBuf, padBuf);
    const scratch = new RecordingScratch(rt, rec);
    const buffers: PassBuffers = { rt: scratchRuntime(rt, scratch), keep: (b) => b, done: (...b) => scratch.done(...b) };
    const run = adapters ? { adapters, dropoutSeed: null, scratch } : null;
    let x = recordEmbeddingForward(
      buffers.rt,
      rec,
      { tokens: rows, dim: D, vocab: c.vocabSize, positions: names.positions ? c.maxPositions : 0 },
      idsBuf,
      this.weight(names.tokens),
      names.positions ? { ids: posBuf, table: this.weight(names.positions) } : undefined,
    );
    names.layers.forEach((l, i) => {
      const writeKv = cache
        ? (k: Binding, v: Binding) => {
            recordKvCacheWrite(rt, rec, { k, v }, { keys: cache.keys[i], values: cache.values[i] }, cache.shape, 0, P);
          }
        : null;
      x = this.layerForward(rec, i, l, x, tokens, posBuf, padBuf, buffers, run, writeKv).out;
    });
    const all = options.logits === 'all';
    let hidden = x;
    if (!all) {
      // Left padding puts every row's last token at position P - 1.
      hidden = scratch.take(B * D * 4, 'last_hidden');
      for (let b = 0; b < B; b++) rec.copy(x, hidden, D * 4, (b * P + P - 1) * D * 4, b * D * 4);
      buffers.done(x);
    }
    const m = all ? rows : B;
    const finalNorm = this.norm(rec, m, hidden, names.finalNorm, names.finalNormBias, D, buffers.rt);
    if (options.hiddenOut) rec.copy(finalNorm.y, options.hiddenOut, m * D * 4);
    buffers.done(hidden, finalNorm.stats);
    const logits = rt.storage(m * c.vocabSize * 4, all ? 'logits' : 'last_logits');
    // The kernel forward's head takes on all `rows`, so these rows match it bit for bit.
    recordMatmul(rt, rec, { a: finalNorm.y, b: this.weight(names.head), c: logits }, { m, n: c.vocabSize, k: D, transB: true, kernelRows: rows });
    scratch.finish();
    return logits;
  }

  /** Records a norm over `rows` rows of x; its outputs come from `rt` (default: the pool). */
  norm(rec: Recorder, rows: number, x: GPUBuffer, weight: string, bias: string | null, dim = this.config.hiddenSize, rt = this.rt): NormForward {
    const kind = this.config.architecture === 'gpt2' ? 'layernorm' : 'rmsnorm';
    return recordNormForward(rt, rec, { kind, rows, dim, eps: this.config.normEps }, x, this.weight(weight), this.opt(bias, 'value'));
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

  /**
   * Layer `l`'s q, k and v as one stack for `rows` token rows, or null where they cannot form
   * one (stacksAttentionInput: GPT-2's layers do), or where the weights (biases) do not lie at
   * one stride in one arena (an arena split at the device's buffer limit).
   */
  private attentionStack(l: LayerNames, rows: number): AttentionInputStack | null {
    const c = this.config;
    if (!stacksAttentionInput(c)) return null;
    const weights = this.params.stack([l.q, l.k, l.v]);
    if (!weights) return null;
    const biasNames = [l.qBias, l.kBias, l.vBias];
    let biases: ParameterStack | null = null;
    if (biasNames.some((b) => b !== null)) {
      if (biasNames.some((b) => b === null)) return null;
      biases = this.params.stack(biasNames as string[]);
      if (!biases) return null;
    }
    const slot = stackSlot(rows, c.numHeads * c.headDim, this.rt.device.limits.minStorageBufferOffsetAlignment);
    return { weights, biases, linear: { count: 3, weightStride: weights.stride, biasStride: biases?.stride ?? 0, slot } };
  }

  /** Records the stack's three products of x into one buffer from `rt`. */
  private projectStack(rec: Recorder, rt: GpuRuntime, stack: AttentionInputStack, x: GPUBuffer, rows: number): StackedQkv {
    const buffer = rt.storage(3 * stack.linear.slot * 4, 'linear.qkv');
    linearForwardStack(rt, rec, x, stack.weights.value, stack.biases?.value ?? null, this.shapes(rows).q, stack.linear, buffer);
    return { buffer, ...this.stackSlots(buffer, stack, rows) };
  }

  /** q, k and v (or their gradients) as ranges of a stack's buffer. */
  private stackSlots(buffer: GPUBuffer, stack: AttentionInputStack, rows: number): { q: BufferRange; k: BufferRange; v: BufferRange } {
    const size = rows * this.config.numHeads * this.config.headDim * 4;
    const at = (i: number): BufferRange => ({ buffer, offset: i * stack.linear.slot * 4, size });
    return { q: at(0), k: at(1), v: at(2) };
  }

  /**
   * For code that runs the layers itself (the KV-cache decode step): q, k and v of `layer` for
   * x [rows, hidden] as one product into one temporary of `scratch`, with the adapters that read
   * x (never dropout); null where the layer has no stack (then project() each of them).
   */
  projectAttentionInput(rec: Recorder, layer: number, x: GPUBuffer, rows: number, scratch: Scratch): StackedQkv | null {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.config.numLayers) {
      throw new RangeError(`layer must be an integer in [0, ${this.config.numLayers}), got ${layer}`);
    }
    const stack = this.attentionStack(this.names.layers[layer], rows);
    if (!stack) return null;
    const rt = scratchRuntime(this.rt, scratch);
    const out = this.projectStack(rec, rt, stack, x, rows);
    const slots: Partial<Record<ProjectionRole, BufferRange>> = { q: out.q, k: out.k, v: out.v };
    const sites = this.adaptersOn && this.adapters ? this.adapters.sitesOf(layer, 'attention_input') : [];
    for (const site of sites) {
      const ys = site.outputs.map((o) => slots[o.role]!);
      scratch.done(recordLoraForward(rt, rec, x, this.weight(site.a), this.siteBlocks(site), ys, this.loraShape(site, rows), null, scratch));
    }
    return out;
  }

  private shapeOf(role: ProjectionRole, rows: number): LinearShape {
    const s = this.shapes(rows);
    return { q: s.q, k: s.kv, v: s.kv, o: s.o, gate: s.up, up: s.up, down: s.down }[role];
  }

  /**
   * Records y = projection `role` of `layer` applied to x [rows, in]: the base weight, its
   * bias, and the adapter when one targets it (never dropout). For code that runs the layers
   * itself, such as the KV-cache decode step. Returns a pooled buffer, or with `scratch` one
   * of its temporaries (the adapter's own temporaries go back to it at once).
   */
  project(rec: Recorder, layer: number, role: ProjectionRole, x: GPUBuffer, rows: number, scratch?: Scratch): GPUBuffer {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.config.numLayers) {
      throw new RangeError(`layer must be an integer in [0, ${this.config.numLayers}), got ${layer}`);
    }
    const { names } = this;
    const rt = scratch ? scratchRuntime(this.rt, scratch) : this.rt;
    const y = linearForward(rt, rec, x, this.weight(projectionWeight(names, layer, role)), this.opt(projectionBias(names, layer, role), 'value'), this.shapeOf(role, rows));
    const site = this.adaptersOn ? (this.adapters?.siteFor(layer, role) ?? null) : null;
    if (site) {
      const block = site.outputs.find((o) => o.role === role)!;
      const lora = (s: Scratch) => recordLoraForward(rt, rec, x, this.weight(site.a), [{ b: this.weight(block.b), outDim: block.outDim }], [y], this.loraShape(site, rows), null, s);
      if (scratch) scratch.done(lora(scratch));
      else {
        const own = new RecordingScratch(rt, rec);
        const h = lora(own);
        own.finish();
        rec.releaseAfterSubmit(h);
      }
    }
    return y;
  }

  /**
   * GPT-2's MLP up projection with GELU as its epilogue, one dispatch: { pre, act } as
   * linearForwardGelu gives them; or null where that is not project('up') then GELU (a gated
   * MLP, or an adapter adding into up before the activation).
   */
  projectGelu(rec: Recorder, layer: number, x: GPUBuffer, rows: number, scratch?: Scratch): { pre: GPUBuffer; act: GPUBuffer } | null {
    const l = this.names.layers[layer];
    if (l.gate || (this.adaptersOn && this.adapters?.siteFor(layer, 'up'))) return null;
    const rt = scratch ? scratchRuntime(this.rt, scratch) : this.rt;
    return linearForwardGelu(rt, rec, x, this.weight(l.up), this.opt(l.upBias, 'value'), this.shapeOf('up', rows));
  }

  private loraShape(site: LoraSite, rows: number): LoraShape {
    const { r, scale } = this.adapters!.config;
    return { rows, inDim: site.inDim, r, scale };
  }

  private siteBlocks(site: LoraSite): LoraBlock[] {
    return site.outputs.map((o) => ({ b: this.weight(o.b), outDim: o.outDim }));
  }

  /** Records the adapters of `layer` that read `input`, adding into `outputs`; returns what backward needs. */
  private adaptForward(
    rec: Recorder,
    run: AdapterRun | null,
    layer: number,
    input: SiteInput,
    x: GPUBuffer,
    outputs: Partial<Record<ProjectionRole, Binding>>,
    rows: number,
    buffers: PassBuffers,
  ): LoraSiteForward[] {
    if (!run) return [];
    const p = run.adapters.config.lora_dropout;
    return run.adapters.sitesOf(layer, input).map((site) => {
      const dropout = run.dropoutSeed !== null && p > 0 ? { p, seed: dropoutSeed(run.dropoutSeed, site.index) } : null;
      const ys = site.outputs.map((o) => outputs[o.role]!);
      const h = buffers.keep(recordLoraForward(buffers.rt, rec, x, this.weight(site.a), this.siteBlocks(site), ys, this.loraShape(site, rows), dropout, run.scratch));
      buffers.done(h);
      return { site, x, h, dropout };
    });
  }

  /** q, k and v from the layer's stack: one product into one buffer, then the adapters that read the same input (x is done after them). */
  private stackedAttentionInput(
    rec: Recorder,
    index: number,
    stack: AttentionInputStack,
    x: GPUBuffer,
    rows: number,
    buffers: PassBuffers,
    run: AdapterRun | null,
  ): AttentionInput {
    const out = this.projectStack(rec, buffers.rt, stack, x, rows);
    buffers.keep(out.buffer);
    const lora = this.adaptForward(rec, run, index, 'attention_input', x, { q: out.q, k: out.k, v: out.v }, rows, buffers);
    buffers.done(x);
    return { q: out.q, k: out.k, v: out.v, held: [out.buffer], lora, qNorm: null, kNorm: null };
  }

  /** q, k and v one product each, then the adapters (x is done after them), the q/k norms (Qwen3) and RoPE (Llama). */
  private separateAttentionInput(
    rec: Recorder,
    index: number,
    l: LayerNames,
    x: GPUBuffer,
    rows: number,
    posBuf: GPUBuffer,
    buffers: PassBuffers,
    run: AdapterRun | null,
  ): AttentionInput {
    const { config: c } = this;
    const { rt, keep, done } = buffers;
    const s = this.shapes(rows);
    let q = keep(linearForward(rt, rec, x, this.weight(l.q), this.opt(l.qBias, 'value'), s.q));
    let k = keep(linearForward(rt, rec, x, this.weight(l.k), this.opt(l.kBias, 'value'), s.kv));
    const v = keep(linearForward(rt, rec, x, this.weight(l.v), this.opt(l.vBias, 'value'), s.kv));
    const lora = this.adaptForward(rec, run, index, 'attention_input', x, { q, k, v }, rows, buffers);
    done(x);
    let qNorm: NormForward | null = null;
    let kNorm: NormForward | null = null;
    if (l.qNorm && l.kNorm) {
      qNorm = this.norm(rec, rows * c.numHeads, q, l.qNorm, null, c.headDim, rt);
      kNorm = this.norm(rec, rows * c.numKvHeads, k, l.kNorm, null, c.headDim, rt);
      done(q, k);
      q = keep(qNorm.y);
      k = keep(kNorm.y);
      keep(qNorm.stats);
      keep(kNorm.stats);
      done(qNorm.stats, kNorm.stats);
    }
    if (this.rope) {
      const rq = keep(recordRope(rt, rec, q, posBuf, this.rope, { tokens: rows, numHeads: c.numHeads, headDim: c.headDim }));
      const rk = keep(recordRope(rt, rec, k, posBuf, this.rope, { tokens: rows, numHeads: c.numKvHeads, headDim: c.headDim }));
      done(q, k);
      [q, k] = [rq, rk];
    }
    return { q, k, v, held: [q, k, v], lora, qNorm, kNorm };
  }

  /**
   * One layer's forward. `buffers` decides where outputs come from and whether they are kept
   * (training) or handed back once dead (inference); `writeKv` receives the keys (after q/k norm
   * and RoPE) and values that attention reads, while they are still alive.
   */
  private layerForward(
    rec: Recorder,
    index: number,
    l: LayerNames,
    x: GPUBuffer,
    tokens: TokenBatch,
    posBuf: GPUBuffer,
    padBuf: GPUBuffer,
    buffers: PassBuffers,
    run: AdapterRun | null,
    writeKv: ((k: Binding, v: Binding) => void) | null,
  ): { activations: LayerActivations; out: GPUBuffer } {
    const { config: c } = this;
    const { rt, keep, done } = buffers;
    const rows = tokens.batch * tokens.seqLen;
    const s = this.shapes(rows);
    const norm1 = this.norm(rec, rows, x, l.norm1, l.norm1Bias, c.hiddenSize, rt);
    keep(norm1.y);
    keep(norm1.stats);
    done(norm1.stats);
    const qkvStack = this.attentionStack(l, rows);
    const inputs = qkvStack
      ? this.stackedAttentionInput(rec, index, qkvStack, norm1.y, rows, buffers, run)
      : this.separateAttentionInput(rec, index, l, norm1.y, rows, posBuf, buffers, run);
    const { q, k, v, lora, qNorm, kNorm } = inputs;
    writeKv?.(k, v);
    const attention = recordAttentionForward(rt, rec, q, k, v, padBuf, {
      batch: tokens.batch,
      seqLen: tokens.seqLen,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
    });
    keep(attention.out);
    keep(attention.lse);
    done(...inputs.held, attention.lse);
    // x1 = x + o(attention): the residual add is the projection's epilogue (one dispatch); an
    // adapter on o adds its share into x1 afterwards, which is the same sum.
    const x1 = keep(linearForward(rt, rec, attention.out, this.weight(l.o), this.opt(l.oBias, 'value'), s.o, x));
    lora.push(...this.adaptForward(rec, run, index, 'attention_output', attention.out, { o: x1 }, rows, buffers));
    done(attention.out, x);
    const norm2 = this.norm(rec, rows, x1, l.norm2, l.norm2Bias, c.hiddenSize, rt);
    keep(norm2.y);
    keep(norm2.stats);
    done(norm2.stats);
    let up: GPUBuffer;
    let hidden: GPUBuffer;
    let gate: GPUBuffer | null = null;
    if (!l.gate && !run?.adapters.sitesOf(index, 'mlp_input').length) {
      // GPT-2 with no adapter adding into `up`: GELU is the up projection's epilogue (one dispatch).
      const fused = linearForwardGelu(rt, rec, norm2.y, this.weight(l.up), this.opt(l.upBias, 'value'), s.up);
      up = keep(fused.pre);
      hidden = keep(fused.act);
      done(norm2.y, up);
    } else {
      up = keep(linearForward(rt, rec, norm2.y, this.weight(l.up), this.opt(l.upBias, 'value'), s.up));
      gate = l.gate ? keep(linearForward(rt, rec, norm2.y, this.weight(l.gate), null, s.up)) : null;
      lora.push(...this.adaptForward(rec, run, index, 'mlp_input', norm2.y, gate ? { up, gate } : { up }, rows, buffers));
      done(norm2.y);
      const count = rows * c.intermediateSize;
      hidden = gate ? keep(recordSwigluForward(rt, rec, gate, up, count)) : keep(recordGeluForward(rt, rec, up, count));
      done(...(gate ? [gate, up] : [up]));
    }
    // out = x1 + down(hidden), the residual add fused as above.
    const out = keep(linearForward(rt, rec, hidden, this.weight(l.down), this.opt(l.downBias, 'value'), s.down, x1));
    lora.push(...this.adaptForward(rec, run, index, 'mlp_hidden', hidden, { down: out }, rows, buffers));
    done(hidden, x1);
    return { activations: { norm1, qkvStack, qNorm, kNorm, attention, norm2, up, gate, hidden, lora }, out };
  }

  /**
   * Records the backward pass from dLogits [rows, vocab], adding the gradient of every
   * trainable parameter into the store's grad buffers (zero them first with
   * ParameterStore.recordZeroGrads). Frozen tensors get none; input gradients still flow
   * through them to the adapters. A temporary is reused by later layers once it is dead.
   */
  backward(rec: Recorder, state: ForwardState, dLogits: GPUBuffer): void {
    const { rt, config: c, names } = this;
    if (!state.adapters && this.g(names.tokens) === null) {
      throw new Error('nothing to differentiate: this forward ran without the adapters and the base weights are frozen');
    }
    const { tokens } = state;
    const rows = tokens.batch * tokens.seqLen;
    const D = c.hiddenSize;
    const scratch = new RecordingScratch(rt, rec);

    // Head: logits = nf · headᵀ.
    const dnf = scratch.take(rows * D * 4, 'd_final_norm');
    recordMatmul(rt, rec, { a: dLogits, b: this.weight(names.head), c: dnf }, { m: rows, n: D, k: c.vocabSize });
    const dHead = this.g(names.head);
    if (dHead) recordMatmul(rt, rec, { a: dLogits, b: state.finalNorm.y, c: dHead }, { m: c.vocabSize, n: D, k: rows, transA: true, beta: 1 });
    let dx = this.normBackward(rec, state.finalNorm, dnf, names.finalNorm, names.finalNormBias, scratch);
    scratch.done(dnf);

    for (let i = names.layers.length - 1; i >= 0; i--) {
      dx = this.layerBackward(rec, names.layers[i], state.layers[i], dx, tokens, state, scratch);
    }
    const dTokens = this.g(names.tokens);
    if (dTokens) recordEmbeddingBackward(rt, rec, dx, tokens.ids, { dim: D, rows: c.vocabSize }, dTokens);
    const dPositions = names.positions ? this.g(names.positions) : null;
    if (dPositions) recordEmbeddingBackward(rt, rec, dx, state.positionIds, { dim: D, rows: c.maxPositions }, dPositions);
    scratch.finish();
  }

  /**
   * Norm backward; returns dx (owned by `scratch`), plus `residual` (the gradient reaching the
   * norm's input around it) when given, in the same dispatch. A frozen norm's parameter
   * gradients land in temporaries.
   */
  private normBackward(rec: Recorder, fwd: NormForward, dy: GPUBuffer, weight: string, bias: string | null, scratch: Scratch, residual?: GPUBuffer): GPUBuffer {
    const dGamma = this.g(weight);
    if (dGamma) {
      const dBeta = bias ? this.g(bias) : null;
      return scratch.adopt(recordNormBackward(this.rt, rec, fwd, dy, { dGamma, ...(dBeta ? { dBeta } : {}) }, residual).dx);
    }
    const grads = recordNormBackward(this.rt, rec, fwd, dy, undefined, residual);
    // Pooled buffers (no accumulators were given).
    const dropped = (grads.dBeta ? [grads.dGamma, grads.dBeta] : [grads.dGamma]) as GPUBuffer[];
    for (const b of dropped) scratch.adopt(b);
    scratch.done(...dropped);
    return scratch.adopt(grads.dx);
  }

  /** dW (+ dBias) of a linear layer, unless it is frozen. */
  private weightGrads(rec: Recorder, x: GPUBuffer, dy: GPUBuffer, weight: string, bias: string | null, s: LinearShape): void {
    const dW = this.g(weight);
    if (dW) linearBackwardParams(this.rt, rec, x, dy, dW, this.opt(bias, 'grad'), s);
  }

  /** Backward of the adapters that read `input`: their dA, dB, and their share of dx. */
  private adaptBackward(
    rec: Recorder,
    records: readonly LoraSiteForward[],
    input: SiteInput,
    dys: Partial<Record<ProjectionRole, Binding>>,
    dx: GPUBuffer,
    rows: number,
    scratch: Scratch,
  ): void {
    for (const f of records) {
      if (f.site.input !== input) continue;
      const { site } = f;
      const grads = { a: this.g(site.a)!, b: site.outputs.map((o) => this.g(o.b)!) };
      const outputs = site.outputs.map((o) => dys[o.role]!);
      recordLoraBackward(this.rt, rec, f.x, f.h, this.weight(site.a), this.siteBlocks(site), outputs, dx, grads, this.loraShape(site, rows), f.dropout, scratch);
    }
  }

  /** One layer's backward from dOut (owned by `scratch`, finished with here); returns dx. */
  private layerBackward(
    rec: Recorder,
    l: LayerNames,
    a: LayerActivations,
    dOut: GPUBuffer,
    tokens: TokenBatch,
    state: ForwardState,
    scratch: Scratch,
  ): GPUBuffer {
    const { rt, config: c } = this;
    const rows = tokens.batch * tokens.seqLen;
    const s = this.shapes(rows);
    const count = rows * c.intermediateSize;
    const D = c.hiddenSize;
    // MLP: out = x1 + down(act(up, gate)).
    let dHidden: GPUBuffer | null = null;
    let dUpFused: GPUBuffer | null = null;
    if (!l.gate && !a.lora.some((f) => f.site.input === 'mlp_hidden')) {
      // GPT-2 with no adapter adding into dHidden: dUp = (dOut · downᵀ) ⊙ gelu'(up), the GELU
      // backward as the product's epilogue (one dispatch, no dHidden buffer).
      dUpFused = scratch.take(count * 4, 'd_mlp_up');
      linearBackwardInputGelu(rt, rec, dOut, this.weight(l.down), s.down, dUpFused, a.up);
    } else {
      dHidden = scratch.take(count * 4, 'd_mlp_hidden');
      linearBackwardInputInto(rt, rec, dOut, this.weight(l.down), s.down, dHidden, 'write');
      this.adaptBackward(rec, a.lora, 'mlp_hidden', { down: dOut }, dHidden, rows, scratch);
    }
    this.weightGrads(rec, a.hidden, dOut, l.down, l.downBias, s.down);
    const dNorm2 = scratch.take(rows * D * 4, 'd_norm2');
    if (l.gate && a.gate && dHidden) {
      const { dGate, dUp } = recordSwigluBackward(rt, rec, a.gate, a.up, dHidden, count);
      scratch.adopt(dGate);
      scratch.adopt(dUp);
      scratch.done(dHidden);
      linearBackwardInputInto(rt, rec, dUp, this.weight(l.up), s.up, dNorm2, 'write');
      linearBackwardInput(rt, rec, dGate, this.weight(l.gate), s.up, dNorm2);
      this.adaptBackward(rec, a.lora, 'mlp_input', { up: dUp, gate: dGate }, dNorm2, rows, scratch);
      this.weightGrads(rec, a.norm2.y, dUp, l.up, null, s.up);
      this.weightGrads(rec, a.norm2.y, dGate, l.gate, null, s.up);
      scratch.done(dGate, dUp);
    } else {
      const dUp = dUpFused ?? scratch.adopt(recordGeluBackward(rt, rec, a.up, dHidden!, count));
      if (dHidden) scratch.done(dHidden);
      linearBackwardInputInto(rt, rec, dUp, this.weight(l.up), s.up, dNorm2, 'write');
      this.adaptBackward(rec, a.lora, 'mlp_input', { up: dUp }, dNorm2, rows, scratch);
      this.weightGrads(rec, a.norm2.y, dUp, l.up, l.upBias, s.up);
      scratch.done(dUp);
    }
    const dx1 = this.normBackward(rec, a.norm2, dNorm2, l.norm2, l.norm2Bias, scratch, dOut);
    scratch.done(dNorm2);
    scratch.done(dOut);

    // Attention: x1 = x + o(attention(q, k, v)).
    const dAttn = scratch.take(rows * c.numHeads * c.headDim * 4, 'd_attention');
    linearBackwardInputInto(rt, rec, dx1, this.weight(l.o), s.o, dAttn, 'write');
    this.adaptBackward(rec, a.lora, 'attention_output', { o: dx1 }, dAttn, rows, scratch);
    this.weightGrads(rec, a.attention.out, dx1, l.o, l.oBias, s.o);
    const dNorm1 = a.qkvStack
      ? this.stackedAttentionInputBackward(rec, a, a.qkvStack, dAttn, rows, scratch)
      : this.separateAttentionInputBackward(rec, l, a, dAttn, rows, state, scratch);
    const dx = this.normBackward(rec, a.norm1, dNorm1, l.norm1, l.norm1Bias, scratch, dx1);
    scratch.done(dNorm1);
    scratch.done(dx1);
    return dx;
  }

  /**
   * Attention's backward from dAttn (done with here) into the stack's slots, then dNorm1 = the sum
   * of dq, dk, dv times their weights (one dispatch where the matmul kernel sums batches), the
   * adapters' share, and the three weight gradients in one dispatch. Returns dNorm1 (owned by `scratch`).
   */
  private stackedAttentionInputBackward(
    rec: Recorder,
    a: LayerActivations,
    stack: AttentionInputStack,
    dAttn: GPUBuffer,
    rows: number,
    scratch: Scratch,
  ): GPUBuffer {
    const { rt } = this;
    const s = this.shapes(rows);
    const dqkv = scratch.take(3 * stack.linear.slot * 4, 'd_qkv');
    const slots = this.stackSlots(dqkv, stack, rows);
    const { dq, dk, dv } = recordAttentionBackward(rt, rec, a.attention, dAttn, { dq: slots.q, dk: slots.k, dv: slots.v });
    scratch.done(dAttn);
    const dNorm1 = scratch.take(rows * this.config.hiddenSize * 4, 'd_norm1');
    linearBackwardInputInto(rt, rec, dqkv, stack.weights.value, s.q, dNorm1, 'write', stack.linear);
    this.adaptBackward(rec, a.lora, 'attention_input', { q: dq, k: dk, v: dv }, dNorm1, rows, scratch);
    if (stack.weights.grad) linearBackwardParams(rt, rec, a.norm1.y, dqkv, stack.weights.grad, stack.biases?.grad ?? null, s.q, stack.linear);
    scratch.done(dqkv);
    return dNorm1;
  }

  /** The same for separate q, k and v: back through RoPE and the q/k norms, then a product each. */
  private separateAttentionInputBackward(
    rec: Recorder,
    l: LayerNames,
    a: LayerActivations,
    dAttn: GPUBuffer,
    rows: number,
    state: ForwardState,
    scratch: Scratch,
  ): GPUBuffer {
    const { rt, config: c } = this;
    const s = this.shapes(rows);
    const grads = recordAttentionBackward(rt, rec, a.attention, dAttn);
    let dq = scratch.adopt(grads.dq);
    let dk = scratch.adopt(grads.dk);
    const dv = scratch.adopt(grads.dv);
    scratch.done(dAttn);
    if (this.rope) {
      const rq = scratch.adopt(recordRopeBackward(rt, rec, dq, state.positions, this.rope, { tokens: rows, numHeads: c.numHeads, headDim: c.headDim }));
      const rk = scratch.adopt(recordRopeBackward(rt, rec, dk, state.positions, this.rope, { tokens: rows, numHeads: c.numKvHeads, headDim: c.headDim }));
      scratch.done(dq, dk);
      [dq, dk] = [rq, rk];
    }
    if (a.qNorm && a.kNorm && l.qNorm && l.kNorm) {
      const nq = this.normBackward(rec, a.qNorm, dq, l.qNorm, null, scratch);
      const nk = this.normBackward(rec, a.kNorm, dk, l.kNorm, null, scratch);
      scratch.done(dq, dk);
      [dq, dk] = [nq, nk];
    }
    const dNorm1 = scratch.take(rows * c.hiddenSize * 4, 'd_norm1');
    linearBackwardInputInto(rt, rec, dq, this.weight(l.q), s.q, dNorm1, 'write');
    linearBackwardInput(rt, rec, dk, this.weight(l.k), s.kv, dNorm1);
    linearBackwardInput(rt, rec, dv, this.weight(l.v), s.kv, dNorm1);
    this.adaptBackward(rec, a.lora, 'attention_input', { q: dq, k: dk, v: dv }, dNorm1, rows, scratch);
    this.weightGrads(rec, a.norm1.y, dq, l.q, l.qBias, s.q);
    this.weightGrads(rec, a.norm1.y, dk, l.k, l.kBias, s.kv);
    this.weightGrads(rec, a.norm1.y, dv, l.v, l.vBias, s.kv);
    scratch.done(dq, dk, dv);
    return dNorm1;
  }

  release(state: ForwardState): void {
    this.rt.release(...state.owned);
  }
}
