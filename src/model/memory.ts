// GPU memory of a GRPO run, estimated from the engine's actual buffers (pure: no GPU import, so
// the UI can show it before anything is loaded). It follows every buffer the engine allocates —
// parameters, one sampling call (generate.ts, see memorySampling.ts: KV cache, prefill, chunks
// of decode steps) and the update (update.ts: per micro-batch of per_device_train_batch_size
// sequences one submission with forward, reference forward when beta > 0, log-probs, policy
// loss, backward temporaries, and the optimizer in the last one) — each rounded up as the
// buffer pool rounds, through a model of the pool itself: buffers of a submission are released
// only after it runs, and the pool keeps released buffers and hands them out again for the
// same size bucket (the next micro-batch, the next step). Nothing is ever freed, so the pool
// ends up holding the union of both phases (`total`); `totalIfTrimmed` is the floor when the
// pool is trimmed (BufferPool.trim) before and after sampling.
import type { ModelConfig } from './config';
import type { LoraConfig } from './loraConfig';
import { modelLayout, qkvStackBytes, sitesReading, type ModelLayout } from './memoryLayout';
import { prefillBuffers, samplingBuffers } from './memorySampling';
import { allocatedBytes, PoolSim, poolBucket, ScratchSim, Tally, type BufferEstimate } from './memorySim';
import { loraParameterSpecs, type SiteInput } from './loraSites';
import { parameterSpecs, type ParameterSpec } from './weights';

export { modelLayout, poolBucket, type BufferEstimate, type ModelLayout };

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
  /**
   * Sequences per update submission (TRL's per_device_train_batch_size); null or absent: the
   * whole generation batch (numGenerations × promptsPerStep) in one submission.
   */
  microBatch?: number | null;
  /** TRL's loss_type (default 'dapo'): with several micro-batches every other type scales each one's gradient. */
  lossType?: 'grpo' | 'bnpo' | 'dapo' | 'dr_grpo' | 'cispo' | 'sapo';
  /**
   * Extra guided rollouts of a step at most (src/rl/explore/guided.ts: herl_fraction,
   * guidance_on_demand): a second generate() call of `sequences` rows from prompts of up to
   * `promptTokens`, an inference pass re-scoring them under the original prompt, and `sequences`
   * more rows in the update. Absent or null: none.
   */
  guided?: { sequences: number; promptTokens: number } | null;
  /** Scaffolded rows re-scored under the original prompt by one inference pass (scaffold_fraction; mismatch.ts). Default 0. */
  rescoredSequences?: number;
  /** cort_credit: the rubric-conditioned prompt's length; CoRT's two inference passes run per micro-batch before the update. Absent or null: off. */
  cortPromptTokens?: number | null;
  /**
   * On-policy distillation (src/rl/distill/): the teacher's prompt length (the self_rubric
   * teacher's carries the rubric) and whether it is the frozen starting model (a second copy of
   * the weights under full fine-tuning, as beta's reference). Its inference pass and the distill
   * kernel's buffers run inside each update submission. Absent or null: off.
   */
  distillation?: {
    teacherPromptTokens: number;
    frozen: boolean;
    /** A separate teacher model's config (distillation.teacher "model"): its weights (no gradients, no moments) and its own inference pass. */
    teacher?: ModelConfig | null;
    /** The ema teacher (teacher_weights "ema"): one more copy of the policy's weights, loaded frozen (no gradients, no moments). */
    ema?: boolean;
    /**
     * GKD's lmbda < 1 (src/rl/distill/teacherSampling.ts): some steps' batch is the teacher's own
     * generate() call (its KV cache and sampling buffers, from its prompt of teacherPromptTokens)
     * instead of the student's. Default false.
     */
    samples?: boolean;
  } | null;
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
  /**
   * The buffers the update adds to the pool beyond those it reuses from sampling, except
   * logits: per-step inputs (targets, mask, old and reference log-probs, advantages) and one
   * micro-batch's activations, backward temporaries, loss and optimizer scratch (later
   * micro-batches reuse them).
   */
  activations: number;
  /** Sampling's KV cache (and the teacher's, beyond what it reuses, when the teacher samples). */
  kvCache: number;
  /** Sampling's other buffers: outputs, the prefill submission, a chunk of decode steps (the teacher's too when it samples). */
  sampling: number;
  /** The update's [rows, vocab] buffers of one micro-batch: logits, their gradient, and the reference's logits when beta > 0. */
  logits: number;
  /** What the inference passes between sampling and the update add (CoRT's two passes, re-scoring guided rows): 0 without them. */
  passes: number;
  /** Everything above: what the pool holds once a step has run. */
  total: number;
  /** Parameters plus the larger of the two phases, when the pool is trimmed before and after sampling. */
  totalIfTrimmed: number;
  /** The largest single buffer (checked against maxBufferSize and maxStorageBufferBindingSize). */
  largest: BufferEstimate;
}

const F32 = 4;
const NORM_PARTIAL_ROWS = 32;
/** src/ops/norm.ts ONE_PASS_ROWS: up to this many rows the norm backward needs no partials. */
const NORM_ONE_PASS_ROWS = 256;
/** Stats and scalar buffers below 256 bytes all take one 256-byte bucket. */
const SMALL = 64;

function positive(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
}

function siteForward(t: Tally, scratch: ScratchSim, L: ModelLayout, layer: number, input: SiteInput, rows: number, dropout: boolean): void {
  for (const s of sitesReading(L, layer, input)) {
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
    if (L.qkvStacked) t.add('q, k, v', qkvStackBytes(L, R));
    else {
      t.add('q', R * qDim * F32);
      t.add('k, v', R * kvDim * F32, 2);
    }
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
    // The o and down projections write the residual stream directly (residual epilogue).
    t.add('residual', R * D * F32);
    lora(layer, 'attention_output');
    t.add('norm2', R * D * F32);
    t.add('norm2 stats', R * 8);
    t.add('up', R * F * F32);
    if (L.llama) t.add('gate', R * F * F32);
    lora(layer, 'mlp_input');
    t.add('mlp hidden', R * F * F32);
    t.add('layer out', R * D * F32);
    lora(layer, 'mlp_hidden');
  }
  t.add('final norm', R * D * F32);
  t.add('final norm stats', R * 8);
  t.add(`logits [${R} × ${V}]`, R * V * F32);
}

function normBackward(scratch: ScratchSim, rows: number, dim: number, frozen: boolean, hasBias: boolean): number {
  const dx = scratch.alloc('norm dx', rows * dim * F32);
  if (rows > NORM_ONE_PASS_ROWS) scratch.alloc('norm partials', Math.ceil(rows / NORM_PARTIAL_ROWS) * 2 * dim * F32);
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
  // From attention's output gradient dAttn (done with) to dNorm1, as Transformer.layerBackward runs it.
  const stackedInputBackward = (layer: number, dAttn: number) => {
    // Attention writes dq, dk, dv into the stack's slots; dW of the three is one product.
    const dqkv = sim.take('d q, k, v', qkvStackBytes(L, R));
    sim.alloc('attention row stats', batch * c.numHeads * seqLen * 8);
    sim.done(dAttn);
    const dNorm1 = sim.take('d norm1', R * D * F32);
    lora(layer, 'attention_input');
    sim.done(dqkv);
    return dNorm1;
  };
  const separateInputBackward = (layer: number, dAttn: number) => {
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
    return dNorm1;
  };
  const dnf = sim.take('d final norm', R * D * F32);
  let dOut = normBackward(sim, R, D, frozen, gpt2);
  sim.done(dnf);
  for (let layer = c.numLayers - 1; layer >= 0; layer--) {
    let dNorm2: number;
    if (gpt2 && !L.sites.some((s) => s.layer === layer && s.input === 'mlp_hidden')) {
      // The down projection's dX carries the GELU backward (epilogue): dUp directly, no dHidden.
      const dUp = sim.take('d up', R * F * F32);
      dNorm2 = sim.take('d norm2', R * D * F32);
      lora(layer, 'mlp_input');
      sim.done(dUp);
    } else {
      const dHidden = sim.take('d mlp hidden', R * F * F32);
      lora(layer, 'mlp_hidden');
      dNorm2 = sim.take('d norm2', R * D * F32);
      const acts = L.llama ? [sim.alloc('d gate', R * F * F32), sim.alloc('d up', R * F * F32)] : [sim.alloc('d up', R * F * F32)];
      sim.done(dHidden);
      lora(layer, 'mlp_input');
      sim.done(...acts);
    }
    const dx1 = normBackward(sim, R, D, frozen, gpt2);
    sim.done(dNorm2, dOut);
    const dAttn = sim.take('d attention', R * qDim * F32);
    lora(layer, 'attention_output');
    const dNorm1 = L.qkvStacked ? stackedInputBackward(layer, dAttn) : separateInputBackward(layer, dAttn);
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

/** recordOptimizerStep: grad-norm scratch and stats, and the flat kernels' tables. */
function optimizerBuffers(t: Tally, counts: number[]): void {
  const partials = counts.reduce((s, n) => s + Math.min(256, Math.ceil(n / 2048)), 0);
  t.add('grad-norm partials', partials * 12);
  t.add('grad-norm offsets', (counts.length + 1) * 4);
  t.add('grad-norm tensor stats', counts.length * 8);
  t.add('step state', 16);
  // The flat kernels' tables (ParameterStore's arenas: one run of all the tensors).
  if (counts.length > 1) {
    t.add('grad-norm flat tensors', counts.length * 16);
    t.add('AdamW flat tensors', counts.length * 32);
  }
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
  // The tensors added together share one values buffer and (when trainable) one gradients
  // buffer, the AdamW moments of every trainable tensor one more, exactly sized (not pool
  // buckets): each tensor (exp_avg and exp_avg_sq each) at a 256-byte-aligned offset
  // (arenaLayout, sharedMomentsLayout), split into more buffers where one would pass the
  // device's limit. Tallied per tensor, the unit a split cannot cut, so the largest-buffer
  // check sees what no split can avoid.
  const aligned = (bytes: number) => Math.ceil(bytes / 256) * 256;
  let moments = 0;
  const tallyTensors = (specs: readonly ParameterSpec[], trainable: boolean) => {
    for (const spec of specs) {
      const bytes = spec.shape.reduce((a, b) => a * b, 1) * F32;
      weights.buffers.push({ label: spec.name, bytes, allocated: aligned(bytes) });
      if (!trainable) continue;
      gradients.buffers.push({ label: `${spec.name} grad`, bytes, allocated: aligned(bytes) });
      moments += 2 * aligned(bytes);
    }
  };
  tallyTensors(parameterSpecs(L.c), !frozen);
  tallyTensors(loraParameterSpecs(L.sites, L.r), true);
  if (moments > 0) optimizer.buffers.push({ label: 'AdamW moments (exp_avg, exp_avg_sq)', bytes: moments, allocated: moments });
  return { weights, gradients, optimizer };
}

/** What update.ts acquires for the whole update: per micro-batch its slice of the step's inputs. */
function stepInputs(microBatches: readonly number[], T: number): Tally {
  const t = new Tally();
  t.add('advantages', microBatches.reduce((s, n) => s + n, 0) * F32);
  for (const n of microBatches) {
    t.add('targets, mask', n * T * 4, 2);
    t.add('micro-batch advantages', n * F32);
    t.add('old log-probs', n * T * F32);
  }
  return t;
}

interface SubmissionOptions {
  beta: number;
  /** The distillation teacher's sequence length (prompt + completion) and whether its pass runs the adapters; null: off. */
  distill: { seqLen: number; adapters: boolean; layout: ModelLayout } | null;
  entropyCoef: number;
  /** The micro-batch's gradient is scaled (several micro-batches, loss_type other than dapo). */
  scaled: boolean;
  /** The last micro-batch: grad norm and AdamW. */
  optimizer: boolean;
}

/**
 * One update submission over n sequences (update.ts, first pass: the largest): forward,
 * log-probs, the reference forward when beta > 0, the policy loss, the gradient scaling, the
 * backward and, in the last micro-batch, the optimizer. Returns the buffers released after the
 * submission and the reference log-probs it keeps for the rest of the step.
 */
function updateSubmission(L: ModelLayout, n: number, T: number, o: SubmissionOptions): { released: BufferEstimate[]; kept: BufferEstimate[] } {
  const R = n * T;
  const t = new Tally();
  const kept = new Tally();
  forwardBuffers(t, L, n, T, L.sites.length > 0, L.dropout);
  t.add('log-probs, entropy', R * F32, 2);
  t.add('log-prob row stats', R * 8);
  if (o.beta !== 0) {
    t.buffers.push(...prefillBuffers(L, n, T, { logits: 'all', adapters: false }));
    t.add('reference log-probs, entropy', R * F32, 2);
    t.add('reference row stats', R * 8);
    kept.add('reference log-probs', R * F32);
  }
  const gradients = o.entropyCoef !== 0 ? 2 : 1;
  t.add('policy-loss records', (n + 1) * 8 * F32);
  t.add('policy-loss partials', Math.ceil(R / 1024) * 8 * F32);
  t.add('grad log-probs', R * F32, gradients);
  t.add('policy-loss scalars', SMALL);
  if (o.scaled) t.add('scaled grad log-probs', R * F32, gradients);
  t.add(`grad logits [${R} × ${L.V}]`, R * L.V * F32);
  if (o.distill) {
    // src/rl/distill/pass.ts: the teacher's inference pass, its rows aligned to the student's, the
    // distill kernel's outputs and gradient, and the argmax draws for the metrics.
    t.buffers.push(...prefillBuffers(o.distill.layout, n, o.distill.seqLen, { logits: 'all', adapters: o.distill.adapters }));
    t.add(`distill aligned teacher logits [${R} × ${L.V}]`, R * L.V * F32);
    t.add(`distill grad student logits [${R} × ${L.V}]`, R * L.V * F32);
    t.add('distill excluded ids', L.V * 4);
    t.add('distill token weights, grad loss, loss', R * F32, 3);
    t.add('distill row stats', R * 6 * F32);
    t.add('distill row select', R * 16);
    t.add('distill argmax ids and log-probs', R * 4, 4);
    t.add('distill seen ids', 16);
  }
  backwardBuffers(t, L, n, T, L.dropout);
  if (o.optimizer) optimizerBuffers(t, trainableCounts(L));
  return { released: t.buffers, kept: kept.buffers };
}

/** One inference (log-prob) pass over n × seqLen rows (mismatch.ts, cortPass.ts): prefill with every position's logits, then targets, log-probs, entropy, row stats. */
function scoringPassBuffers(L: ModelLayout, n: number, seqLen: number): BufferEstimate[] {
  const t = new Tally();
  t.buffers.push(...prefillBuffers(L, n, seqLen, { logits: 'all', adapters: L.sites.length > 0 }));
  const R = n * seqLen;
  t.add('pass targets', R * 4);
  t.add('pass log-probs, entropy', R * F32, 2);
  t.add('pass row stats', R * 8);
  return t.buffers;
}

/**
 * The inference passes between sampling and the update, through `pool`, one submission each:
 * the re-scoring of scaffolded and of guided rows under the original prompt, and CoRT's two
 * passes (rubric-conditioned and plain prompt) per micro-batch of the natural rows.
 */
function runPasses(pool: PoolSim, L: ModelLayout, shape: TrainingShape, naturalSizes: readonly number[]): void {
  const T = shape.promptTokens + shape.completionTokens;
  const rescored = shape.rescoredSequences ?? 0;
  if (rescored > 0) pool.submission(scoringPassBuffers(L, Math.min(rescored, shape.microBatch ?? rescored), T));
  const guided = shape.guided?.sequences ?? 0;
  if (guided > 0) pool.submission(scoringPassBuffers(L, Math.min(guided, shape.microBatch ?? guided), T));
  const cort = shape.cortPromptTokens;
  if (cort !== null && cort !== undefined) {
    for (const n of naturalSizes) pool.submission([...scoringPassBuffers(L, n, cort + shape.completionTokens), ...scoringPassBuffers(L, n, T)]);
  }
}

/** Sequences per update submission: ceil(N / microBatch) submissions, the last one possibly smaller. */
export function microBatchSizes(sequences: number, microBatch: number | null | undefined): number[] {
  positive('sequences', sequences);
  if (microBatch !== null && microBatch !== undefined) positive('microBatch', microBatch);
  const size = Math.min(microBatch ?? sequences, sequences);
  return Array.from({ length: Math.ceil(sequences / size) }, (_, k) => Math.min(size, sequences - k * size));
}

/** The update (update.ts) through `pool`: step inputs, then one submission per micro-batch. */
function runUpdate(pool: PoolSim, L: ModelLayout, shape: TrainingShape, sizes: readonly number[]): void {
  const T = shape.promptTokens + shape.completionTokens;
  const inputs = stepInputs(sizes, T).buffers;
  pool.acquire(inputs);
  const kept: BufferEstimate[] = [];
  // dapo and cispo divide by num_items_in_batch instead (update.ts microBatchScale).
  const scaled = sizes.length > 1 && !['dapo', 'cispo'].includes(shape.lossType ?? 'dapo');
  sizes.forEach((n, k) => {
    const d = shape.distillation;
    const distill = d
      ? d.teacher
        ? { seqLen: d.teacherPromptTokens + shape.completionTokens, adapters: false, layout: modelLayout(d.teacher, null) }
        : { seqLen: d.teacherPromptTokens + shape.completionTokens, adapters: !d.frozen && L.sites.length > 0, layout: L }
      : null;
    const sub = updateSubmission(L, n, T, { beta: shape.beta, distill, entropyCoef: shape.entropyCoef ?? 0, scaled, optimizer: k === sizes.length - 1 });
    pool.acquire([...sub.released, ...sub.kept]);
    pool.release(sub.released);
    kept.push(...sub.kept);
  });
  pool.release([...inputs, ...kept]);
}

/**
 * Every storage buffer the update (update.ts, with the step's [N] advantages) makes an empty
 * pool create: the update's side of `totalIfTrimmed`, and what a check against the engine
 * counts after BufferPool.trim().
 */
export function updateBuffers(shape: TrainingShape): BufferEstimate[] {
  const pool = new PoolSim();
  runUpdate(pool, modelLayout(shape.config, shape.lora), shape, microBatchSizes(trainedSequences(shape), shape.microBatch));
  return pool.created;
}

/** Rows the update trains: the natural rollouts and the extra guided ones. */
function trainedSequences(shape: TrainingShape): number {
  return shape.numGenerations * shape.promptsPerStep + (shape.guided?.sequences ?? 0);
}

const isLogits = (b: BufferEstimate) => b.label.startsWith('logits [') || b.label.startsWith('grad logits [');

/**
 * The teacher's generate() call when it samples a batch (distillation.samples): N rows from its
 * own prompt, with its own layout — a separate model's, the starting weights' (frozen or ema: no
 * adapters) or the live policy's (with them). None otherwise.
 */
function teacherSamplingBuffers(L: ModelLayout, shape: TrainingShape, N: number): { kvCache: BufferEstimate[]; other: BufferEstimate[] } {
  const d = shape.distillation;
  if (!d?.samples) return { kvCache: [], other: [] };
  const layout = d.teacher ? modelLayout(d.teacher, null) : d.frozen || d.ema ? modelLayout(shape.config, null) : L;
  return samplingBuffers(layout, { batch: N, promptTokens: d.teacherPromptTokens, completionTokens: shape.completionTokens });
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
  const N = shape.numGenerations * shape.promptsPerStep;
  const sizes = microBatchSizes(trainedSequences(shape), shape.microBatch);
  const guided = shape.guided && shape.guided.sequences > 0 ? shape.guided : null;
  if (guided) {
    positive('guided.sequences', guided.sequences);
    positive('guided.promptTokens', guided.promptTokens);
    if (guided.promptTokens + shape.completionTokens > c.maxPositions) {
      throw new RangeError(`guided prompts of ${guided.promptTokens} tokens + completionTokens ${shape.completionTokens} exceed the model's context of ${c.maxPositions}`);
    }
  }
  const cort = shape.cortPromptTokens ?? null;
  if (cort !== null) {
    positive('cortPromptTokens', cort);
    if (cort + shape.completionTokens > c.maxPositions) throw new RangeError(`cort prompts of ${cort} tokens + completionTokens ${shape.completionTokens} exceed the model's context of ${c.maxPositions}`);
  }
  const teacherTokens = shape.distillation?.teacherPromptTokens;
  if (teacherTokens !== undefined) {
    positive('distillation.teacherPromptTokens', teacherTokens);
    const context = shape.distillation?.teacher?.maxPositions ?? c.maxPositions;
    if (teacherTokens + shape.completionTokens > context) {
      throw new RangeError(`the distillation teacher's prompts of ${teacherTokens} tokens + completionTokens ${shape.completionTokens} exceed the teacher's context of ${context}`);
    }
  }
  const teacherConfig = shape.distillation?.teacher ?? null;
  if (teacherConfig && teacherConfig.vocabSize !== c.vocabSize) {
    throw new RangeError(`the distillation teacher's vocabulary has ${teacherConfig.vocabSize} entries, the student's ${c.vocabSize}: it must use the student's tokenizer`);
  }
  const L = modelLayout(c, shape.lora);
  const params = parameterBuffers(L);
  const model = new Tally();
  if (L.llama) model.add('RoPE table', c.maxPositions * c.headDim * F32);
  const reference = new Tally();
  if ((shape.beta !== 0 || shape.distillation?.frozen) && L.sites.length === 0) {
    // Parameter tensors keep their arena sizes (exact, not pool buckets).
    for (const b of [...params.weights.buffers, ...params.gradients.buffers]) reference.buffers.push({ ...b, label: `reference ${b.label}` });
    reference.buffers.push(...model.buffers);
  }
  // The ema teacher (src/rl/distill/ema.ts): the policy's weights once more, loaded frozen.
  if (shape.distillation?.ema) {
    const EL = modelLayout(c, null);
    for (const b of parameterBuffers(EL).weights.buffers) reference.buffers.push({ ...b, label: `ema teacher ${b.label}` });
    if (EL.llama) reference.add('ema teacher RoPE table', c.maxPositions * c.headDim * F32);
  }
  // A separate distillation teacher: its weights only (loaded frozen), counted with the reference.
  if (teacherConfig) {
    const TL = modelLayout(teacherConfig, null);
    for (const b of parameterBuffers(TL).weights.buffers) reference.buffers.push({ ...b, label: `distillation teacher ${b.label}` });
    if (TL.llama) reference.add('distillation teacher RoPE table', teacherConfig.maxPositions * teacherConfig.headDim * F32);
  }
  const sampling = samplingBuffers(L, { batch: N, promptTokens: shape.promptTokens, completionTokens: shape.completionTokens });
  // One pool through a whole step: the update reuses what sampling released, and the next
  // step finds everything it needs on the free lists.
  const pool = new PoolSim();
  pool.acquire([...sampling.kvCache, ...sampling.other]);
  pool.release([...sampling.kvCache, ...sampling.other]);
  // A teacher-sampled step's generate() call (lmbda < 1): the pool keeps what it adds beyond the
  // student's free buffers (a step samples one or the other; over a run, both).
  const teacher = teacherSamplingBuffers(L, shape, N);
  const beforeTeacher = pool.created.length;
  pool.submission([...teacher.kvCache, ...teacher.other]);
  const teacherAdded = pool.created.slice(beforeTeacher);
  // The guided rollouts' own generate() call: what it needs beyond the first call's free buffers.
  const second: { kvCache: BufferEstimate[]; other: BufferEstimate[] } = guided ? samplingBuffers(L, { batch: guided.sequences, promptTokens: guided.promptTokens, completionTokens: shape.completionTokens }) : { kvCache: [], other: [] };
  const beforeSecond = pool.created.length;
  pool.submission([...second.kvCache, ...second.other]);
  const secondAdded = pool.created.slice(beforeSecond);
  const beforePasses = pool.created.length;
  runPasses(pool, L, shape, microBatchSizes(N, shape.microBatch));
  const passesAdded = pool.created.slice(beforePasses);
  const before = pool.created.length;
  runUpdate(pool, L, shape, sizes);
  const added = pool.created.slice(before);
  // Trimmed before and after sampling, the update starts from an empty pool.
  const alone = updateBuffers(shape);
  const passesPool = new PoolSim();
  runPasses(passesPool, L, shape, microBatchSizes(N, shape.microBatch));
  const persistent = params.weights.total + params.gradients.total + params.optimizer.total + model.total + reference.total;
  const samplingBytes = Math.max(
    allocatedBytes(sampling.kvCache) + allocatedBytes(sampling.other),
    allocatedBytes(teacher.kvCache) + allocatedBytes(teacher.other),
    allocatedBytes(second.kvCache) + allocatedBytes(second.other),
  );
  const everything = [...params.weights.buffers, ...sampling.kvCache, ...sampling.other, ...teacher.kvCache, ...teacher.other, ...second.kvCache, ...second.other, ...passesPool.created, ...alone];
  const largest = everything.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return {
    weights: params.weights.total,
    gradients: params.gradients.total,
    optimizer: params.optimizer.total,
    modelBuffers: model.total,
    referenceModel: reference.total,
    activations: allocatedBytes(added.filter((b) => !isLogits(b))),
    kvCache:
      allocatedBytes(sampling.kvCache) +
      allocatedBytes(teacherAdded.filter((b) => teacher.kvCache.includes(b))) +
      allocatedBytes(secondAdded.filter((b) => second.kvCache.includes(b))),
    sampling:
      allocatedBytes(sampling.other) +
      allocatedBytes(teacherAdded.filter((b) => !teacher.kvCache.includes(b))) +
      allocatedBytes(secondAdded.filter((b) => !second.kvCache.includes(b))),
    logits: allocatedBytes(added.filter(isLogits)),
    passes: allocatedBytes(passesAdded),
    total: persistent + pool.bytes,
    totalIfTrimmed: persistent + Math.max(samplingBytes, allocatedBytes(passesPool.created), allocatedBytes(alone)),
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
