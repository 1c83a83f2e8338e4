// GPU memory of a GRPO run, estimated from the engine's actual buffers (pure: no GPU import, so
// the UI can show it before anything is loaded). It lists every buffer the engine allocates —
// parameters, one sampling call (generate.ts: KV cache, prefill, a chunk of decode steps) and
// one update submission (grpoStep.ts: forward, reference forward when beta > 0, log-probs,
// policy loss, backward temporaries, optimizer) — each rounded up as the buffer pool rounds.
// Buffers of a submission are released only after it runs, so a phase's buffers add up, and
// the pool keeps released buffers for reuse: sampling's and the update's buffers both stay
// allocated from one step to the next (`total`); `totalIfTrimmed` is the floor when the pool is
// trimmed between the two phases.
import type { ModelConfig } from './config';
import { resolveLoraConfig, type LoraConfig } from './loraConfig';
import { loraParameterSpecs, loraSites, type LoraSite, type SiteInput } from './loraSites';
import { parameterSpecs } from './weights';

export interface TrainingShape {
  config: ModelConfig;
  /** null: full fine-tuning. */
  lora: Partial<LoraConfig> | null;
  numGenerations: number;
  promptsPerStep: number;
  /** Longest prompt, in tokens. */
  promptTokens: number;
  /** max_completion_length. */
  completionTokens: number;
  beta: number;
  /** entropy_coef != 0 adds a gradient buffer. Default 0. */
  entropyCoef?: number;
}

export interface BufferEstimate {
  label: string;
  /** Bytes requested. */
  bytes: number;
  /** Bytes the pool allocates for it (its size bucket). */
  allocated: number;
}

export interface MemoryEstimate {
  /** Parameter values: frozen base (under LoRA) and trainable tensors. */
  weights: number;
  gradients: number;
  /** AdamW exp_avg and exp_avg_sq. */
  optimizer: number;
  /** Other per-model buffers (the RoPE table). */
  modelBuffers: number;
  /**
   * Full fine-tuning with beta > 0: the KL reference is a second loaded model (values, and the
   * gradient buffers ParameterStore.create gives every model). 0 under LoRA, whose reference is
   * the same buffers without the adapters.
   */
  referenceModel: number;
  /** The update's buffers except logits: activations, backward temporaries, loss and optimizer scratch. */
  activations: number;
  /** Sampling's KV cache. */
  kvCache: number;
  /** Sampling's other buffers: prefill activations, a chunk of decode steps, outputs. */
  sampling: number;
  /** The update's [rows, vocab] buffers: logits, their gradient, and the reference's logits when beta > 0. */
  logits: number;
  /** Everything above: what the pool holds once a step has run. */
  total: number;
  /** Parameters plus the larger of the two phases (if the pool were trimmed between them). */
  totalIfTrimmed: number;
  /** The largest single buffer (checked against maxBufferSize and maxStorageBufferBindingSize). */
  largest: BufferEstimate;
}

/** The buffer pool's size buckets (bufferPool.ts bucketSize): 8 per power of two, 256 B minimum. */
export function poolBucket(bytes: number): number {
  const aligned = Math.ceil(Math.max(bytes, 16) / 16) * 16;
  if (aligned <= 256) return 256;
  const pow = 2 ** Math.floor(Math.log2(aligned));
  const step = pow / 8;
  return Math.ceil(aligned / step) * step;
}

class Tally {
  readonly buffers: BufferEstimate[] = [];
  add(label: string, bytes: number, copies = 1): void {
    for (let i = 0; i < copies; i++) this.buffers.push({ label, bytes, allocated: poolBucket(bytes) });
  }
  get total(): number {
    return this.buffers.reduce((s, b) => s + b.allocated, 0);
  }
}

/**
 * Mirrors scratch.ts RecordingScratch: take() reuses a dead buffer of the same size bucket
 * before allocating; ops' own outputs (alloc) are always fresh. Every fresh buffer is tallied.
 */
class ScratchSim {
  private readonly free = new Map<number, number>();
  constructor(readonly tally: Tally) {}
  alloc(label: string, bytes: number): number {
    this.tally.add(label, bytes);
    return poolBucket(bytes);
  }
  take(label: string, bytes: number): number {
    const bucket = poolBucket(bytes);
    const n = this.free.get(bucket) ?? 0;
    if (n > 0) {
      this.free.set(bucket, n - 1);
      return bucket;
    }
    return this.alloc(label, bytes);
  }
  done(...buckets: number[]): void {
    for (const b of buckets) this.free.set(b, (this.free.get(b) ?? 0) + 1);
  }
}

const F32 = 4;
const NORM_PARTIAL_ROWS = 32;
/** Stats and scalar buffers below 256 bytes all take one 256-byte bucket. */
const SMALL = 64;

function positive(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
}

/** What the estimate needs to know about a model and its adapters. */
export interface ModelLayout {
  c: ModelConfig;
  D: number;
  F: number;
  V: number;
  qDim: number;
  kvDim: number;
  llama: boolean;
  sites: LoraSite[];
  r: number;
  /** lora_dropout > 0: training passes draw dropout masks (when given a dropout seed). */
  dropout: boolean;
}

export function modelLayout(config: ModelConfig, lora: Partial<LoraConfig> | null): ModelLayout {
  const resolved = lora ? resolveLoraConfig(lora, config) : null;
  return {
    c: config,
    D: config.hiddenSize,
    F: config.intermediateSize,
    V: config.vocabSize,
    qDim: config.numHeads * config.headDim,
    kvDim: config.numKvHeads * config.headDim,
    llama: config.architecture === 'llama',
    sites: resolved ? loraSites(config, resolved.target_modules) : [],
    r: resolved?.r ?? 0,
    dropout: (resolved?.lora_dropout ?? 0) > 0,
  };
}

function siteForward(t: Tally, scratch: ScratchSim, L: ModelLayout, layer: number, input: SiteInput, rows: number, dropout: boolean): void {
  for (const s of L.sites) {
    if (s.layer !== layer || s.input !== input) continue;
    if (dropout) {
      const masked = scratch.take('lora dropout(x)', rows * s.inDim * F32);
      t.add('lora H', rows * L.r * F32);
      scratch.done(masked);
    } else {
      t.add('lora H', rows * L.r * F32);
    }
  }
}

/**
 * Transformer.forward over batch × seqLen rows: what ForwardState owns, plus the dropout
 * temporaries when `dropout` (a training pass with a dropout seed under lora_dropout > 0).
 */
export function forwardBuffers(t: Tally, L: ModelLayout, batch: number, seqLen: number, adapters: boolean, dropout: boolean): void {
  const { c, D, F, V, qDim, kvDim } = L;
  const R = batch * seqLen;
  const scratch = new ScratchSim(t);
  const lora = (layer: number, input: SiteInput) => adapters && siteForward(t, scratch, L, layer, input, R, dropout);
  t.add('token ids', R * 4);
  t.add('position ids', R * 4);
  t.add('pads', batch * 4);
  t.add('embeddings', R * D * F32);
  for (let layer = 0; layer < c.numLayers; layer++) {
    t.add('norm1', R * D * F32);
    t.add('norm1 stats', R * 8);
    t.add('q', R * qDim * F32);
    t.add('k, v', R * kvDim * F32, 2);
    lora(layer, 'attention_input');
    if (c.qkNorm) {
      t.add('q norm', R * qDim * F32);
      t.add('q norm stats', R * c.numHeads * 8);
      t.add('k norm', R * kvDim * F32);
      t.add('k norm stats', R * c.numKvHeads * 8);
    }
    if (L.llama) {
      t.add('rope q', R * qDim * F32);
      t.add('rope k', R * kvDim * F32);
    }
    t.add('attention out', R * qDim * F32);
    t.add('attention lse', batch * c.numHeads * seqLen * F32);
    t.add('o', R * D * F32);
    lora(layer, 'attention_output');
    t.add('residual', R * D * F32);
    t.add('norm2', R * D * F32);
    t.add('norm2 stats', R * 8);
    t.add('up', R * F * F32);
    if (L.llama) t.add('gate', R * F * F32);
    lora(layer, 'mlp_input');
    t.add('mlp hidden', R * F * F32);
    t.add('down', R * D * F32);
    lora(layer, 'mlp_hidden');
    t.add('layer out', R * D * F32);
  }
  t.add('final norm', R * D * F32);
  t.add('final norm stats', R * 8);
  t.add(`logits [${R} × ${V}]`, R * V * F32);
}

function normBackward(scratch: ScratchSim, rows: number, dim: number, frozen: boolean, hasBias: boolean): number {
  const dx = scratch.alloc('norm dx', rows * dim * F32);
  scratch.alloc('norm partials', Math.ceil(rows / NORM_PARTIAL_ROWS) * 2 * dim * F32);
  if (frozen) {
    const grads = [scratch.alloc('frozen norm grads', dim * F32)];
    if (hasBias) grads.push(scratch.alloc('frozen norm grads', dim * F32));
    scratch.done(...grads);
  }
  return dx;
}

function siteBackward(scratch: ScratchSim, L: ModelLayout, layer: number, input: SiteInput, rows: number, dropout: boolean): void {
  for (const s of L.sites) {
    if (s.layer !== layer || s.input !== input) continue;
    const dh = scratch.take('lora dH', rows * L.r * F32);
    if (dropout) {
      scratch.done(scratch.take('lora dropout(x)', rows * s.inDim * F32));
      scratch.done(scratch.take('lora d input', rows * s.inDim * F32));
    }
    scratch.done(dh);
  }
}

/** Transformer.backward, step by step, with its scratch reuse. */
export function backwardBuffers(t: Tally, L: ModelLayout, batch: number, seqLen: number, dropout: boolean): void {
  const { c, D, F, qDim, kvDim } = L;
  const R = batch * seqLen;
  const frozen = L.sites.length > 0;
  const gpt2 = !L.llama;
  const sim = new ScratchSim(t);
  const lora = (layer: number, input: SiteInput) => siteBackward(sim, L, layer, input, R, dropout);
  const dnf = sim.take('d final norm', R * D * F32);
  let dOut = normBackward(sim, R, D, frozen, gpt2);
  sim.done(dnf);
  for (let layer = c.numLayers - 1; layer >= 0; layer--) {
    const dHidden = sim.take('d mlp hidden', R * F * F32);
    lora(layer, 'mlp_hidden');
    const dNorm2 = sim.take('d norm2', R * D * F32);
    const acts = L.llama ? [sim.alloc('d gate', R * F * F32), sim.alloc('d up', R * F * F32)] : [sim.alloc('d up', R * F * F32)];
    sim.done(dHidden);
    lora(layer, 'mlp_input');
    sim.done(...acts);
    const dx1 = normBackward(sim, R, D, frozen, gpt2);
    sim.done(dNorm2, dOut);
    const dAttn = sim.take('d attention', R * qDim * F32);
    lora(layer, 'attention_output');
    sim.alloc('attention row stats', batch * c.numHeads * seqLen * 8);
    let dq = sim.alloc('dq', R * qDim * F32);
    let dk = sim.alloc('dk', R * kvDim * F32);
    const dv = sim.alloc('dv', R * kvDim * F32);
    sim.done(dAttn);
    if (L.llama) {
      const rq = sim.alloc('rope dq', R * qDim * F32);
      const rk = sim.alloc('rope dk', R * kvDim * F32);
      sim.done(dq, dk);
      [dq, dk] = [rq, rk];
    }
    if (c.qkNorm) {
      const nq = normBackward(sim, R * c.numHeads, c.headDim, frozen, false);
      const nk = normBackward(sim, R * c.numKvHeads, c.headDim, frozen, false);
      sim.done(dq, dk);
      [dq, dk] = [nq, nk];
    }
    const dNorm1 = sim.take('d norm1', R * D * F32);
    lora(layer, 'attention_input');
    sim.done(dq, dk, dv);
    const dx = normBackward(sim, R, D, frozen, gpt2);
    sim.done(dNorm1, dx1);
    dOut = dx;
  }
  if (!frozen) {
    // Embedding scatter index: unique ids, offsets, order (at most min(rows, table) unique ids).
    t.add('embedding index', (2 * Math.min(R, c.vocabSize) + 1 + R) * 4);
    if (gpt2) t.add('position index', (2 * Math.min(seqLen, c.maxPositions) + 1 + R) * 4);
  }
}

/** Element counts of the tensors the optimizer updates, in ParameterStore order. */
function trainableCounts(L: ModelLayout): number[] {
  const specs = L.sites.length > 0 ? loraParameterSpecs(L.sites, L.r) : parameterSpecs(L.c);
  return specs.map((s) => s.shape.reduce((a, b) => a * b, 1));
}

/** recordOptimizerStep: grad-norm scratch and stats (AdamW itself allocates nothing). */
function optimizerBuffers(t: Tally, counts: number[]): void {
  const partials = counts.reduce((s, n) => s + Math.min(256, Math.ceil(n / 2048)), 0);
  t.add('grad-norm partials', partials * 12);
  t.add('grad-norm offsets', (counts.length + 1) * 4);
  t.add('grad-norm tensor stats', counts.length * 8);
  t.add('step state', 16);
}

/**
 * One training submission's own buffers over batch × seqLen rows: forward, log-probs and
 * their backward, the model's backward and the optimizer step (what SftTrainer and grpoStep
 * record in common; the caller's inputs and loss buffers are not included).
 */
export function trainingStepBuffers(layout: ModelLayout, batch: number, seqLen: number, options: { dropout?: boolean } = {}): BufferEstimate[] {
  const t = new Tally();
  const dropout = (options.dropout ?? false) && layout.dropout;
  const R = batch * seqLen;
  forwardBuffers(t, layout, batch, seqLen, layout.sites.length > 0, dropout);
  t.add('log-probs, entropy', R * F32, 2);
  t.add('log-prob row stats', R * 8);
  t.add(`grad logits [${R} × ${layout.V}]`, R * layout.V * F32);
  backwardBuffers(t, layout, batch, seqLen, dropout);
  optimizerBuffers(t, trainableCounts(layout));
  return t.buffers;
}

/** Parameter tensors: values, gradients, moments, as ParameterStore allocates them. */
function parameterBuffers(L: ModelLayout): { weights: Tally; gradients: Tally; optimizer: Tally } {
  const weights = new Tally();
  const gradients = new Tally();
  const optimizer = new Tally();
  const frozen = L.sites.length > 0;
  for (const spec of parameterSpecs(L.c)) {
    const bytes = spec.shape.reduce((a, b) => a * b, 1) * F32;
    weights.add(spec.name, bytes);
    if (!frozen) {
      gradients.add(`${spec.name} grad`, bytes);
      optimizer.add(`${spec.name} moments`, bytes, 2);
    }
  }
  for (const spec of loraParameterSpecs(L.sites, L.r)) {
    const bytes = spec.shape.reduce((a, b) => a * b, 1) * F32;
    weights.add(spec.name, bytes);
    gradients.add(`${spec.name} grad`, bytes);
    optimizer.add(`${spec.name} moments`, bytes, 2);
  }
  return { weights, gradients, optimizer };
}

/** generate.ts: KV cache, outputs, and the larger of the prefill and one chunk of 16 decode steps. */
function samplingBuffers(L: ModelLayout, batch: number, promptTokens: number, maxNew: number): { kv: Tally; other: number; buffers: BufferEstimate[] } {
  const { c, D, F, V, qDim, kvDim } = L;
  const kv = new Tally();
  kv.add('KV cache', batch * c.numKvHeads * (promptTokens + maxNew) * c.headDim * F32, 2 * c.numLayers);
  const fixed = new Tally();
  fixed.add('sampling pads', batch * 4);
  fixed.add('sampled tokens', batch * maxNew * 4);
  fixed.add('sampled log-probs', batch * maxNew * 4);
  const prefill = new Tally();
  forwardBuffers(prefill, L, batch, promptTokens, L.sites.length > 0, false);
  prefill.add('last logits', batch * V * F32);
  prefill.add('sample', batch * 4, 2);
  const decode = new Tally();
  const steps = Math.min(16, Math.max(maxNew - 1, 0));
  const adaptedProjections = (layer: number) => L.sites.filter((s) => s.layer === layer).reduce((n, s) => n + s.outputs.length, 0);
  for (let s = 0; s < steps; s++) {
    decode.add('decode positions', batch * 4);
    decode.add('decode embeddings', batch * D * F32);
    for (let layer = 0; layer < c.numLayers; layer++) {
      decode.add('decode norms', batch * D * F32, 2);
      decode.add('decode norm stats', batch * 8, 2);
      decode.add('decode q', batch * qDim * F32, c.qkNorm ? 2 : 1);
      decode.add('decode k, v', batch * kvDim * F32, c.qkNorm ? 3 : 2);
      if (c.qkNorm) {
        decode.add('decode q norm stats', batch * c.numHeads * 8);
        decode.add('decode k norm stats', batch * c.numKvHeads * 8);
      }
      if (L.llama) {
        decode.add('decode rope q', batch * qDim * F32);
        decode.add('decode rope k', batch * kvDim * F32);
      }
      decode.add('decode attention', batch * qDim * F32);
      decode.add('decode o, residual, down, out', batch * D * F32, 4);
      decode.add('decode mlp', batch * F * F32, L.llama ? 3 : 2);
      decode.add('decode lora H', batch * L.r * F32, adaptedProjections(layer));
    }
    decode.add('decode final norm', batch * D * F32);
    decode.add('decode final norm stats', batch * 8);
    decode.add('decode logits', batch * V * F32);
    decode.add('decode sample', batch * 4, 2);
  }
  const phase = prefill.total >= decode.total ? prefill : decode;
  return { kv, other: fixed.total + phase.total, buffers: [...kv.buffers, ...fixed.buffers, ...phase.buffers] };
}

/** One update submission of grpoStep.ts (iteration 0, the largest). */
function updateBuffers(L: ModelLayout, shape: TrainingShape): { logits: Tally; other: Tally } {
  const N = shape.numGenerations * shape.promptsPerStep;
  const T = shape.promptTokens + shape.completionTokens;
  const R = N * T;
  const all = new Tally();
  all.add('targets, mask, old log-probs', R * 4, 3);
  all.buffers.push(...trainingStepBuffers(L, N, T, { dropout: true }));
  if (shape.beta !== 0) {
    all.add('reference log-probs', R * F32);
    forwardBuffers(all, L, N, T, false, false);
    all.add('reference log-probs, entropy', R * F32, 2);
    all.add('reference row stats', R * 8);
  }
  all.add('policy-loss records', (N + 1) * 8 * F32);
  all.add('policy-loss partials', Math.ceil(R / 1024) * 8 * F32);
  all.add('grad log-probs', R * F32, (shape.entropyCoef ?? 0) !== 0 ? 2 : 1);
  all.add('policy-loss scalars', SMALL);
  const logits = new Tally();
  const other = new Tally();
  for (const b of all.buffers) (b.label.startsWith('logits [') || b.label.startsWith('grad logits [') ? logits : other).buffers.push(b);
  return { logits, other };
}

export function estimateTrainingBytes(shape: TrainingShape): MemoryEstimate {
  positive('numGenerations', shape.numGenerations);
  positive('promptsPerStep', shape.promptsPerStep);
  positive('promptTokens', shape.promptTokens);
  positive('completionTokens', shape.completionTokens);
  if (!Number.isFinite(shape.beta) || shape.beta < 0) throw new RangeError(`beta must be a number >= 0, got ${shape.beta}`);
  const c = shape.config;
  if (shape.promptTokens + shape.completionTokens > c.maxPositions) {
    throw new RangeError(`promptTokens + completionTokens = ${shape.promptTokens + shape.completionTokens} exceeds the model's context of ${c.maxPositions}`);
  }
  const L = modelLayout(c, shape.lora);
  const params = parameterBuffers(L);
  const model = new Tally();
  if (L.llama) model.add('RoPE table', c.maxPositions * c.headDim * F32);
  const reference = new Tally();
  if (shape.beta !== 0 && L.sites.length === 0) {
    for (const b of [...params.weights.buffers, ...params.gradients.buffers]) reference.add(`reference ${b.label}`, b.bytes);
    reference.buffers.push(...model.buffers);
  }
  const sampling = samplingBuffers(L, shape.numGenerations * shape.promptsPerStep, shape.promptTokens, shape.completionTokens);
  const update = updateBuffers(L, shape);
  const persistent = params.weights.total + params.gradients.total + params.optimizer.total + model.total + reference.total;
  const samplingBytes = sampling.kv.total + sampling.other;
  const updateBytes = update.logits.total + update.other.total;
  const everything = [...params.weights.buffers, ...sampling.buffers, ...update.logits.buffers, ...update.other.buffers];
  const largest = everything.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return {
    weights: params.weights.total,
    gradients: params.gradients.total,
    optimizer: params.optimizer.total,
    modelBuffers: model.total,
    referenceModel: reference.total,
    activations: update.other.total,
    kvCache: sampling.kv.total,
    sampling: sampling.other,
    logits: update.logits.total,
    total: persistent + samplingBytes + updateBytes,
    totalIfTrimmed: persistent + Math.max(samplingBytes, updateBytes),
    largest,
  };
}

export interface DeviceLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
}

export interface FitResult {
  fits: boolean;
  /** Why not, in words a user can act on; null when it fits. */
  message: string | null;
}

/** Human-readable bytes (binary units). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

const ADVICE = 'use fewer generations per step, shorter prompts or completions, LoRA, or a smaller model';

/** Checks an estimate against the adapter's per-buffer limits and a total budget (bytes). */
export function checkFitsDevice(estimate: MemoryEstimate, limits: DeviceLimits, budgetBytes: number): FitResult {
  const big = estimate.largest;
  if (big.allocated > limits.maxBufferSize) {
    return {
      fits: false,
      message: `The largest buffer (${big.label}, ${formatBytes(big.allocated)}) exceeds this GPU's maxBufferSize of ${formatBytes(limits.maxBufferSize)}: ${ADVICE}.`,
    };
  }
  if (big.bytes > limits.maxStorageBufferBindingSize) {
    return {
      fits: false,
      message: `The largest buffer (${big.label}, ${formatBytes(big.bytes)}) exceeds this GPU's maxStorageBufferBindingSize of ${formatBytes(limits.maxStorageBufferBindingSize)}: ${ADVICE}.`,
    };
  }
  if (estimate.total > budgetBytes) {
    const parts = [
      `weights ${formatBytes(estimate.weights + estimate.referenceModel)}`,
      `gradients + optimizer ${formatBytes(estimate.gradients + estimate.optimizer)}`,
      `activations ${formatBytes(estimate.activations)}`,
      `logits ${formatBytes(estimate.logits)}`,
      `sampling ${formatBytes(estimate.kvCache + estimate.sampling)}`,
    ];
    return {
      fits: false,
      message: `Training needs about ${formatBytes(estimate.total)} of GPU memory (${parts.join(', ')}), more than the ${formatBytes(budgetBytes)} available: ${ADVICE}. The largest buffer is ${big.label} (${formatBytes(big.allocated)}).`,
    };
  }
  return { fits: true, message: null };
}
