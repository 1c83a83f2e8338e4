// Launcher for shaders/rope.wgsl: rotary position embedding (Hugging Face Llama rotate_half)
// applied to q or k [N, H, Dh] (N = B * T tokens) at per-token positions, and its backward.
// The (cos, sin) table is built here in the f32 numbers Hugging Face computes:
//   inv_freq = f32(1 / f32(theta ** f32(2i / Dh))),  angle = f32(pos * inv_freq),
//   cos, sin = f32(cos(angle)), f32(sin(angle)).
import code from '../../shaders/rope.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const WORKGROUP = 256;
export const ROPE_DEFAULT_THETA = 10000;

const KERNEL: KernelSpec = {
  name: 'rope',
  code,
  entryPoint: 'rope',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'read-only-storage', 'storage'],
};

export type RopeDirection = 'forward' | 'backward';

export interface RopeShape {
  /** N = B * T rows of x. */
  tokens: number;
  numHeads: number;
  /** Even. */
  headDim: number;
}

export interface RopeTable {
  /** [maxPositions, headDim / 2, 2] f32 (cos, sin), pooled: release with rt.release(table.buffer). */
  buffer: GPUBuffer;
  headDim: number;
  maxPositions: number;
  theta: number;
}

function checkInt(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
}

function checkHeadDim(headDim: number): void {
  checkInt('headDim', headDim, 2);
  if (headDim % 2 !== 0) throw new RangeError(`headDim must be even for rotary embeddings, got ${headDim}`);
}

function checkTheta(theta: number): void {
  if (!Number.isFinite(theta) || theta <= 1) throw new RangeError(`theta must be a finite number > 1, got ${theta}`);
}

/** inv_freq_i = theta^(-2i / Dh), i < Dh / 2, rounded as Hugging Face's f32 computation. */
export function ropeInvFreq(headDim: number, theta = ROPE_DEFAULT_THETA): Float32Array {
  checkHeadDim(headDim);
  checkTheta(theta);
  const f = Math.fround;
  const inv = new Float32Array(headDim / 2);
  for (let i = 0; i < inv.length; i++) inv[i] = f(1 / f(Math.pow(f(theta), f((2 * i) / headDim))));
  return inv;
}

/** Host (cos, sin) table [maxPositions, headDim / 2, 2] for positions 0..maxPositions - 1. */
export function ropeTableData(headDim: number, maxPositions: number, theta = ROPE_DEFAULT_THETA): Float32Array {
  checkInt('maxPositions', maxPositions, 1);
  const inv = ropeInvFreq(headDim, theta);
  const half = headDim / 2;
  const table = new Float32Array(maxPositions * half * 2);
  for (let p = 0; p < maxPositions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(p * inv[i]);
      table[2 * (p * half + i)] = Math.cos(angle);
      table[2 * (p * half + i) + 1] = Math.sin(angle);
    }
  }
  return table;
}

/** Uploads the table once per model; kernels read it at every step. */
export function createRopeTable(
  rt: GpuRuntime,
  options: { headDim: number; maxPositions: number; theta?: number },
): RopeTable {
  const theta = options.theta ?? ROPE_DEFAULT_THETA;
  const data = ropeTableData(options.headDim, options.maxPositions, theta);
  return { buffer: rt.upload(data, 'rope.table'), headDim: options.headDim, maxPositions: options.maxPositions, theta };
}

/** Position ids [B * T] of left-padded sequences: t - pad[b] for t >= pad[b], else 0 (identity). */
export function ropePositions(pad: ArrayLike<number>, seqLen: number): Uint32Array {
  const positions = new Uint32Array(pad.length * seqLen);
  for (let b = 0; b < pad.length; b++) {
    for (let t = pad[b]; t < seqLen; t++) positions[b * seqLen + t] = t - pad[b];
  }
  return positions;
}

/** Position ids [B] of the token at cache position length - 1 (the decode step's new token). */
export function decodePositions(pad: ArrayLike<number>, length: number): Uint32Array {
  return Uint32Array.from(pad, (p) => Math.max(length - 1 - p, 0));
}

export function validateRopeShape(shape: RopeShape, table: { headDim: number }, maxBindingBytes: number): void {
  checkInt('tokens', shape.tokens, 1);
  checkInt('numHeads', shape.numHeads, 1);
  checkHeadDim(shape.headDim);
  if (table.headDim !== shape.headDim) {
    throw new RangeError(`the rope table was built for headDim ${table.headDim}, got headDim ${shape.headDim}`);
  }
  const bytes = shape.tokens * shape.numHeads * shape.headDim * 4;
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  if (bytes > limit) throw new RangeError(`x needs ${bytes} bytes in one binding, over this GPU's limit of ${limit} bytes`);
}

/**
 * Records y = rope(x) ('forward') or dx = rope^T(dy) ('backward') for x [N, H, Dh] and
 * positions [N] (u32). Returns y as a pooled buffer (release it when done).
 */
export function recordRope(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  positions: GPUBuffer,
  table: RopeTable,
  shape: RopeShape,
  direction: RopeDirection = 'forward',
): GPUBuffer {
  validateRopeShape(shape, table, rt.device.limits.maxStorageBufferBindingSize);
  const { tokens, numHeads, headDim } = shape;
  const pairs = (tokens * numHeads * headDim) / 2;
  const y = rt.storage(pairs * 8, direction === 'forward' ? 'rope.y' : 'rope.dx');
  const data = new ArrayBuffer(32);
  const u32 = new Uint32Array(data);
  u32[0] = pairs;
  u32[1] = numHeads;
  u32[2] = headDim / 2;
  u32[3] = table.maxPositions;
  new Float32Array(data)[4] = direction === 'forward' ? 1 : -1;
  const [gx, gy] = rt.grid(Math.ceil(pairs / WORKGROUP));
  rec.dispatch(rt.pipeline(KERNEL), [rec.uniform(u32), x, positions, table.buffer, y], gx, gy);
  return y;
}

/** The backward pass: dx = rotation of dy by -angle. */
export function recordRopeBackward(
  rt: GpuRuntime,
  rec: Recorder,
  dy: GPUBuffer,
  positions: GPUBuffer,
  table: RopeTable,
  shape: RopeShape,
): GPUBuffer {
  return recordRope(rt, rec, dy, positions, table, shape, 'backward');
}

export interface RopeHostInput extends RopeShape {
  x: Float32Array;
  positions: ArrayLike<number>;
  theta?: number;
  direction?: RopeDirection;
}

/** Host arrays in, host arrays out (builds a table just large enough). For tests and benchmarks. */
export async function runRope(rt: GpuRuntime, input: RopeHostInput): Promise<Float32Array> {
  const { tokens, numHeads, headDim } = input;
  checkInt('tokens', tokens, 1);
  checkInt('numHeads', numHeads, 1);
  checkHeadDim(headDim);
  if (input.x.length !== tokens * numHeads * headDim) {
    throw new RangeError(`x has ${input.x.length} values, expected tokens*numHeads*headDim = ${tokens * numHeads * headDim}`);
  }
  if (input.positions.length !== tokens) {
    throw new RangeError(`positions has ${input.positions.length} values, expected tokens = ${tokens}`);
  }
  let maxPosition = 0;
  for (let n = 0; n < tokens; n++) {
    const p = input.positions[n];
    if (!Number.isInteger(p) || p < 0 || p >= 2 ** 24) {
      throw new RangeError(`positions[${n}] = ${p} must be an integer in [0, 2^24)`);
    }
    maxPosition = Math.max(maxPosition, p);
  }
  const rec = rt.recorder('rope');
  const table = createRopeTable(rt, { headDim, maxPositions: maxPosition + 1, theta: input.theta });
  const x = rt.upload(input.x, 'x');
  const positions = rt.upload(Uint32Array.from(input.positions), 'positions');
  const owned = [table.buffer, x, positions];
  try {
    const y = recordRope(rt, rec, x, positions, table, input, input.direction);
    owned.push(y);
    const result = rec.readF32(y, tokens * numHeads * headDim);
    await rec.submit();
    return await result;
  } finally {
    rt.release(...owned);
  }
}
