// Launcher for shaders/distill.wgsl: per-token teacher/student divergence (TRL's
// generalized_jsd_loss: forward KL, reverse KL, generalized JSD, optionally on the teacher's
// top K) and its gradient with respect to the student logits.
import code from '../../shaders/distill.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const WORKGROUP = 256;
/** The top-K selection walks token ids in three 8-bit digits. */
export const DISTILL_MAX_VOCAB = 1 << 24;

const FORWARD_BINDINGS = [
  'uniform',
  'read-only-storage',
  'read-only-storage',
  'read-only-storage',
  'read-only-storage',
  'storage',
  'storage',
  'storage',
] as const;
const FORWARD: KernelSpec = { name: 'distill', code, entryPoint: 'forward', bindings: FORWARD_BINDINGS };
const BACKWARD: KernelSpec = {
  name: 'distill',
  code,
  entryPoint: 'backward',
  bindings: [...FORWARD_BINDINGS, 'read-only-storage', 'storage'],
};

export interface DistillShape {
  rows: number;
  vocab: number;
  /** 0: KL(teacher || student); 1: KL(student || teacher); otherwise the generalized JSD (TRL GKDConfig.beta). */
  beta: number;
  temperature: number;
  /** null: the whole vocabulary; K: both distributions renormalised on the teacher's top K. */
  topK: number | null;
}

/** GPU buffers of the forward pass; the backward pass reads them. */
export interface DistillForward extends DistillShape {
  student: GPUBuffer;
  teacher: GPUBuffer;
  excluded: GPUBuffer;
  tokenWeight: GPUBuffer;
  loss: GPUBuffer;
  rowStats: GPUBuffer;
  rowSelect: GPUBuffer;
}

export function validateDistillShape(shape: DistillShape, maxBindingBytes: number): void {
  const { rows, vocab, beta, temperature, topK } = shape;
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (!Number.isInteger(vocab) || vocab < 2 || vocab >= DISTILL_MAX_VOCAB) {
    throw new RangeError(`vocab must be an integer from 2 to ${DISTILL_MAX_VOCAB - 1}, got ${vocab}`);
  }
  if (!(beta >= 0 && beta <= 1)) throw new RangeError(`beta must be between 0 and 1, got ${beta}`);
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new RangeError(`temperature must be a finite number > 0, got ${temperature}`);
  }
  if (topK !== null && (!Number.isInteger(topK) || topK < 1 || topK > vocab)) {
    throw new RangeError(`top_k must be an integer from 1 to the vocabulary size ${vocab}, got ${topK}`);
  }
  if (rows * vocab * 4 > maxBindingBytes) {
    throw new RangeError(
      `logits of ${rows} x ${vocab} floats exceed this GPU's storage binding limit of ${maxBindingBytes} bytes; ` +
        `process at most ${Math.floor(maxBindingBytes / (vocab * 4))} rows at a time`,
    );
  }
}

/**
 * Records the forward pass. `excluded` is a u32 per vocabulary entry (1 = never in the top-K
 * support); `tokenWeight` a f32 per row (0 = masked token). Outputs come from the pool.
 */
export function recordDistillForward(
  rt: GpuRuntime,
  rec: Recorder,
  inputs: { student: GPUBuffer; teacher: GPUBuffer; excluded: GPUBuffer; tokenWeight: GPUBuffer },
  shape: DistillShape,
): DistillForward {
  validateDistillShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const { rows } = shape;
  const loss = rt.storage(rows * 4, 'distill.loss');
  const rowStats = rt.storage(rows * 6 * 4, 'distill.row_stats');
  const rowSelect = rt.storage(rows * 4 * 4, 'distill.row_select');
  const params = rec.uniform(paramsFor(shape));
  const [x, y] = rt.grid(rows);
  const { student, teacher, excluded, tokenWeight } = inputs;
  rec.dispatch(rt.pipeline(FORWARD), [params, student, teacher, excluded, tokenWeight, loss, rowStats, rowSelect], x, y);
  return { ...shape, ...inputs, loss, rowStats, rowSelect };
}

/** Records d(sum_t gradLoss[t] * loss[t]) / d student logits; returns a pooled [rows*vocab] buffer. */
export function recordDistillBackward(rt: GpuRuntime, rec: Recorder, fwd: DistillForward, gradLoss: GPUBuffer): GPUBuffer {
  const grad = rt.storage(fwd.rows * fwd.vocab * 4, 'distill.grad_student_logits');
  const params = rec.uniform(paramsFor(fwd));
  const chunks = Math.ceil(fwd.vocab / WORKGROUP);
  const [y, z] = rt.grid(fwd.rows);
  rec.dispatch(
    rt.pipeline(BACKWARD),
    [params, fwd.student, fwd.teacher, fwd.excluded, fwd.tokenWeight, fwd.loss, fwd.rowStats, fwd.rowSelect, gradLoss, grad],
    chunks,
    y,
    z,
  );
  return grad;
}

function paramsFor(shape: DistillShape): Uint32Array {
  const data = new ArrayBuffer(32);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  u32[0] = shape.rows;
  u32[1] = shape.vocab;
  f32[2] = 1 / shape.temperature;
  u32[3] = shape.beta === 0 ? 0 : shape.beta === 1 ? 1 : 2;
  f32[4] = shape.beta;
  f32[5] = Math.log(shape.beta);
  f32[6] = Math.log(1 - shape.beta);
  u32[7] = shape.topK ?? 0;
  return u32;
}

export interface DistillHostInput extends DistillShape {
  student: Float32Array;
  teacher: Float32Array;
  /** Token ids never in the top-K support (special tokens); needs topK. */
  excludedIds?: ArrayLike<number>;
  /** Per row, 0 = masked token; default all 1. */
  mask?: ArrayLike<number>;
  /** Per row loss weight (>= 0); default all 1. */
  weights?: ArrayLike<number>;
  /** Per row; when given, the gradient of sum_t gradLoss[t] * loss[t] is returned. */
  gradLoss?: Float32Array;
}

export interface DistillHostOutput {
  loss: Float32Array;
  /** Mean of loss over unmasked tokens (0 when all are masked). */
  meanLoss: number;
  gradStudentLogits?: Float32Array;
}

/**
 * Host arrays in, host arrays out: uploads, runs forward (and backward when gradLoss is given)
 * in one submission, reads back. For tests, the kernel runner and benchmarks.
 */
export async function runDistill(rt: GpuRuntime, input: DistillHostInput): Promise<DistillHostOutput> {
  const { rows, vocab } = input;
  for (const [name, a] of [['student_logits', input.student], ['teacher_logits', input.teacher]] as const) {
    if (a.length !== rows * vocab) throw new RangeError(`${name} has ${a.length} values, expected rows*vocab = ${rows * vocab}`);
  }
  for (const [name, a] of [['mask', input.mask], ['weights', input.weights], ['grad_loss', input.gradLoss]] as const) {
    if (a && a.length !== rows) throw new RangeError(`${name} has ${a.length} values, expected ${rows}`);
  }
  if (input.excludedIds && input.excludedIds.length > 0 && input.topK === null) {
    throw new RangeError('special_token_ids only apply with top_k');
  }
  const excluded = new Uint32Array(vocab);
  Array.from(input.excludedIds ?? []).forEach((id, k) => {
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new RangeError(`special_token_ids[${k}] = ${id} is outside the vocabulary of ${vocab}`);
    }
    excluded[id] = 1;
  });
  const tokenWeight = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const w = input.weights ? input.weights[r] : 1;
    if (!(w >= 0) || !Number.isFinite(w)) throw new RangeError(`weights[${r}] must be a finite number >= 0, got ${w}`);
    tokenWeight[r] = input.mask && input.mask[r] === 0 ? 0 : w;
  }
  const rec = rt.recorder('distill');
  const bufs = {
    student: rt.upload(input.student, 'distill.student_logits'),
    teacher: rt.upload(input.teacher, 'distill.teacher_logits'),
    excluded: rt.upload(excluded, 'distill.excluded'),
    tokenWeight: rt.upload(tokenWeight, 'distill.token_weight'),
  };
  const owned: GPUBuffer[] = Object.values(bufs);
  try {
    const fwd = recordDistillForward(rt, rec, bufs, input);
    owned.push(fwd.loss, fwd.rowStats, fwd.rowSelect);
    const loss = rec.readF32(fwd.loss, rows);
    let grad: Promise<Float32Array> | undefined;
    if (input.gradLoss) {
      const g = rt.upload(input.gradLoss, 'distill.grad_loss');
      const out = recordDistillBackward(rt, rec, fwd, g);
      owned.push(g, out);
      grad = rec.readF32(out, rows * vocab);
    }
    await rec.submit();
    const lossHost = await loss;
    let sum = 0;
    let count = 0;
    for (let r = 0; r < rows; r++) {
      if (input.mask && input.mask[r] === 0) continue;
      sum += lossHost[r];
      count++;
    }
    return { loss: lossHost, meanLoss: count === 0 ? 0 : sum / count, gradStudentLogits: grad && (await grad) };
  } finally {
    rt.release(...owned);
  }
}
