// Launcher for shaders/attention.wgsl: causal grouped-query attention over left-padded
// batches (FlashAttention-2 forward and backward) and the one-query decode step over a KV cache.
//
// Layouts (row-major f32): q, out, dout, dq [B, T, Hq, Dh]; k, v, dk, dv [B, T, Hkv, Dh];
// lse [B, Hq, T]; pad [B] u32, the number of padding tokens at the start of each sequence.
// Query head h uses kv head floor(h / (Hq / Hkv)) (Hugging Face repeat_kv). Key j is visible to
// query i iff pad[b] <= j <= i; padded query rows give out = 0, lse = 0 and zero gradients, and
// padded keys get dk = dv = 0. Decode caches: kcache, vcache [B, Hkv, Tmax, Dh].
import code from '../../shaders/attention.wgsl?raw';
import { unrollWgsl } from './wgslUnroll';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { BindingKind, KernelSpec } from '../gpu/pipelineCache';

export const ATTENTION_MAX_HEAD_DIM = 128;
/** Threads per workgroup of backward_prep (WG in the shader). */
const PREP_WORKGROUP = 256;
/** Threads per workgroup of the row kernels (ROW_WG in the shader). */
const ROW_WORKGROUP = 64;
const R: BindingKind = 'read-only-storage';
const W: BindingKind = 'storage';

export type AttentionTile = 8 | 16;
/**
 * 'rows': one thread per query row (forward, dq) or key row (dk, dv), no workgroup memory, no
 * barriers, rows read as vec4 and 4 keys (or queries) a step, 1 + 2 dispatches. 'tiles': FlashAttention-2 blocks of TILE x TILE in workgroup memory
 * with 4 barriers per key block, 1 + 3 dispatches. On a software adapter (SwiftShader) rows ran
 * 4.9-9x faster (8x128 tokens, 4 heads of 32); hardware GPUs keep tiles (not measured here).
 */
export type AttentionKernels = 'rows' | 'tiles';

export interface AttentionShape {
  batch: number;
  seqLen: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /** Softmax scale; default 1 / sqrt(headDim). */
  scale?: number;
  /** Queries and keys per block. Default: 16 where the GPU's workgroup memory allows, else 8. */
  tile?: AttentionTile;
  /**
   * Default: 'rows' on a software adapter when headDim is a multiple of 4, else 'tiles';
   * 'tiles' when only `tile` is given.
   */
  kernels?: AttentionKernels;
}

/** A shape with its defaults filled in. */
export type ResolvedAttentionShape = Required<AttentionShape>;

/** GPU buffers of one forward pass; the backward pass reads all of them. */
export interface AttentionForward extends ResolvedAttentionShape {
  /** The inputs as given: buffers, or ranges of one (a stack of q, k and v). */
  q: Binding;
  k: Binding;
  v: Binding;
  pad: GPUBuffer;
  /** [B, T, Hq, Dh] (pooled). */
  out: GPUBuffer;
  /** [B, Hq, T] log-sum-exp of the scaled scores of each row (pooled; 0 on padded rows). */
  lse: GPUBuffer;
}

export interface AttentionGradients<T extends Binding = GPUBuffer> {
  /** [B, T, Hq, Dh] (pooled, or the caller's). */
  dq: T;
  /** [B, T, Hkv, Dh] (pooled, or the caller's), summed over the query heads sharing each kv head. */
  dk: T;
  /** [B, T, Hkv, Dh] (pooled, or the caller's). */
  dv: T;
}

/** Floats of workgroup memory the backward kernels use: 3 row tiles and a score block (the forward uses 2 tiles). */
function workgroupFloats(tile: number, headDim: number): number {
  return 3 * tile * (headDim + 1) + tile * tile;
}

function checkInt(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
}

function checkHeads(numHeads: number, numKvHeads: number, headDim: number): void {
  checkInt('numHeads', numHeads, 1);
  checkInt('numKvHeads', numKvHeads, 1);
  if (numHeads % numKvHeads !== 0) {
    throw new RangeError(`numHeads (${numHeads}) must be a multiple of numKvHeads (${numKvHeads})`);
  }
  checkInt('headDim', headDim, 1);
  if (headDim > ATTENTION_MAX_HEAD_DIM) {
    throw new RangeError(`headDim must be at most ${ATTENTION_MAX_HEAD_DIM}, got ${headDim}`);
  }
}

function resolveScale(scale: number | undefined, headDim: number): number {
  const s = scale ?? 1 / Math.sqrt(headDim);
  if (!Number.isFinite(s) || s <= 0) throw new RangeError(`scale must be a finite number > 0, got ${scale}`);
  return s;
}

function checkBinding(name: string, floats: number, maxBindingBytes: number): void {
  // u32 indices in the shader stay below 2^32 bytes as well.
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  if (floats * 4 > limit) {
    throw new RangeError(`${name} needs ${floats * 4} bytes in one binding, over this GPU's limit of ${limit} bytes`);
  }
}

/** The tile the kernels run with: `requested` when it fits this GPU, else the largest that fits. */
export function attentionTile(limits: GPUSupportedLimits, headDim: number, requested?: AttentionTile): AttentionTile {
  const fits = (tile: number) =>
    workgroupFloats(tile, headDim) * 4 <= limits.maxComputeWorkgroupStorageSize &&
    tile * tile <= limits.maxComputeInvocationsPerWorkgroup &&
    tile * tile <= limits.maxComputeWorkgroupSizeX;
  if (requested !== undefined) {
    if (requested !== 8 && requested !== 16) throw new RangeError(`tile must be 8 or 16, got ${requested}`);
    if (!fits(requested)) {
      throw new RangeError(
        `tile ${requested} needs ${workgroupFloats(requested, headDim) * 4} bytes of workgroup memory at headDim ${headDim}, ` +
          `over this GPU's ${limits.maxComputeWorkgroupStorageSize}`,
      );
    }
    return requested;
  }
  // 8 always fits the WebGPU defaults (16 KiB, 256 invocations) for headDim <= 128.
  return fits(16) ? 16 : 8;
}

/**
 * The kernels to run: `requested`, else 'rows' on a software adapter when headDim is a multiple
 * of 4 (the row kernels read vec4s), else 'tiles'.
 */
export function attentionKernels(requested: AttentionKernels | undefined, headDim: number, softwareAdapter: boolean): AttentionKernels {
  const kernels = requested ?? (softwareAdapter && headDim % 4 === 0 ? 'rows' : 'tiles');
  if (kernels !== 'rows' && kernels !== 'tiles') throw new RangeError(`kernels must be 'rows' or 'tiles', got ${String(kernels)}`);
  if (kernels === 'rows' && headDim % 4 !== 0) {
    throw new RangeError(`kernels 'rows' read rows as vec4: headDim must be a multiple of 4, got ${headDim}`);
  }
  return kernels;
}

export function resolveAttentionShape(shape: AttentionShape, limits: GPUSupportedLimits, softwareAdapter = false): ResolvedAttentionShape {
  const { batch, seqLen, numHeads, numKvHeads, headDim } = shape;
  checkInt('batch', batch, 1);
  checkInt('seqLen', seqLen, 1);
  checkHeads(numHeads, numKvHeads, headDim);
  const scale = resolveScale(shape.scale, headDim);
  checkBinding('q', batch * seqLen * numHeads * headDim, limits.maxStorageBufferBindingSize);
  const tile = attentionTile(limits, headDim, shape.tile);
  const kernels = attentionKernels(shape.tile === undefined ? shape.kernels : (shape.kernels ?? 'tiles'), headDim, softwareAdapter);
  return { batch, seqLen, numHeads, numKvHeads, headDim, scale, tile, kernels };
}

const SPECS = new Map<string, KernelSpec>();
const ROW_CODES = new Map<number, string>();
/** Largest head size whose row kernels are unrolled (see rowKernelCode). */
const UNROLL_MAX_DH = 32;

/**
 * The shader for the row kernels at head size dh: for dh <= UNROLL_MAX_DH their loops over the
 * dh / 4 vec4s of a row written out, so the row's private arrays (q, the accumulators) are
 * indexed by literals and live in registers; SwiftShader keeps them in memory when the loop
 * stays. One page, 8 x 64 tokens, 4 heads, forward + backward (rows): dh 32: 72 -> 47 ms, the
 * three kernels compiling in 4.4 s instead of 1.2 s; dh 64: 97 -> 90 ms for 10.9 s instead of
 * 1.1 s (the registers run out), so larger heads keep the loops.
 */
function rowKernelCode(dh: number): string {
  let text = ROW_CODES.get(dh);
  if (text === undefined) {
    text = dh <= UNROLL_MAX_DH ? unrollWgsl(code, 'DH4', dh / 4) : code;
    ROW_CODES.set(dh, text);
  }
  return text;
}

/**
 * One spec object per entry point and constants, so the pipeline cache finds it by identity:
 * a new object would hash the whole shader source (~33 KB, ~0.15 ms) on every dispatch recorded,
 * once per layer and token in decode.
 */
function kernel(entryPoint: string, bindings: BindingKind[], constants: Record<string, number>, shader = code): KernelSpec {
  const key = `${entryPoint}|${JSON.stringify(constants)}`;
  let spec = SPECS.get(key);
  if (!spec) {
    spec = { name: 'attention', code: shader, entryPoint, bindings, constants };
    SPECS.set(key, spec);
  }
  return spec;
}

function params(
  s: { batch: number; numHeads: number; numKvHeads: number; scale: number },
  seqLen: number,
  blocks: number,
  maxSeqLen: number,
  rows: number,
): Uint32Array {
  const data = new ArrayBuffer(32);
  const u32 = new Uint32Array(data);
  u32[0] = s.batch;
  u32[1] = seqLen;
  u32[2] = s.numHeads;
  u32[3] = s.numKvHeads;
  new Float32Array(data)[4] = s.scale;
  u32[5] = blocks;
  u32[6] = maxSeqLen;
  u32[7] = rows;
  return u32;
}

/**
 * Records out = softmax(q k^T scale + mask) v and the row log-sum-exps. `pad` is a [B] u32
 * buffer. The outputs come from the pool: release them (rt.release) when done.
 */
export function recordAttentionForward(
  rt: GpuRuntime,
  rec: Recorder,
  q: Binding,
  k: Binding,
  v: Binding,
  pad: GPUBuffer,
  shape: AttentionShape,
): AttentionForward {
  const s = resolveAttentionShape(shape, rt.device.limits, rt.info.isFallback);
  const { batch, seqLen, numHeads, headDim, tile } = s;
  const rows = batch * numHeads * seqLen;
  const out = rt.storage(rows * headDim * 4, 'attention.out');
  const lse = rt.storage(rows * 4, 'attention.lse');
  if (s.kernels === 'rows') {
    const spec = kernel('forward_rows', ['uniform', R, R, R, R, W, W], { DH: headDim, ROW_WG: ROW_WORKGROUP }, rowKernelCode(headDim));
    const [x, y] = rt.grid(Math.ceil(rows / ROW_WORKGROUP));
    rec.dispatch(rt.pipeline(spec), [rec.uniform(params(s, seqLen, 0, 0, rows)), q, k, v, pad, out, lse], x, y);
  } else {
    const blocks = Math.ceil(seqLen / tile);
    const spec = kernel('forward', ['uniform', R, R, R, R, W, W], { DH: headDim, TILE: tile, TILES: 2 });
    const [x, y] = rt.grid(batch * numHeads * blocks);
    rec.dispatch(rt.pipeline(spec), [rec.uniform(params(s, seqLen, blocks, 0, 0)), q, k, v, pad, out, lse], x, y);
  }
  return { ...s, q, k, v, pad, out, lse };
}

/**
 * Records the gradients of sum(dout * out) with respect to q, k and v. 'rows': two dispatches,
 * dq by query rows (each also writing its D_i = dout_i . out_i), then dk and dv by key rows. 'tiles': three, a per-row prologue (lse_i, D_i), dq by query blocks, dk and
 * dv by key blocks. dk and dv are summed over each kv head's query heads by one thread per
 * element (deterministic, no atomics).
 * `fwd` must still hold the forward's q, k, v, pad, out and lse. The gradients are pooled, or
 * written into `into` (ranges of one buffer, say, for the stacked weight gradients of q, k, v).
 */
export function recordAttentionBackward(rt: GpuRuntime, rec: Recorder, fwd: AttentionForward, dout: GPUBuffer): AttentionGradients;
export function recordAttentionBackward(rt: GpuRuntime, rec: Recorder, fwd: AttentionForward, dout: GPUBuffer, into: AttentionGradients<Binding>): AttentionGradients<Binding>;
export function recordAttentionBackward(
  rt: GpuRuntime,
  rec: Recorder,
  fwd: AttentionForward,
  dout: GPUBuffer,
  into?: AttentionGradients<Binding>,
): AttentionGradients<Binding> {
  const { batch, seqLen, numHeads, numKvHeads, headDim, tile } = fwd;
  const rows = batch * numHeads * seqLen;
  const keyRows = batch * numKvHeads * seqLen;
  // Row statistics (lse_i, D_i = dout_i . out_i) for both gradient kernels.
  const stats = rec.scratch(rows * 8, 'attention.row_stats');
  const dq = into?.dq ?? rt.storage(rows * headDim * 4, 'attention.dq');
  const dk = into?.dk ?? rt.storage(keyRows * headDim * 4, 'attention.dk');
  const dv = into?.dv ?? rt.storage(keyRows * headDim * 4, 'attention.dv');
  if (fwd.kernels === 'rows') {
    const constants = { DH: headDim, ROW_WG: ROW_WORKGROUP };
    // stats = [lse (B Hq T) | D (B Hq T)]: lse copied in (no dispatch), D written by the dq
    // kernel, whose 8 storage bindings leave no room for lse and D in separate buffers.
    rec.copy(fwd.lse, stats, rows * 4);
    const dqSpec = kernel('backward_dq_rows', ['uniform', R, R, R, R, R, R, W, W], constants, rowKernelCode(headDim));
    const [qx, qy] = rt.grid(Math.ceil(rows / ROW_WORKGROUP));
    const uq = rec.uniform(params(fwd, seqLen, 0, 0, rows));
    rec.dispatch(rt.pipeline(dqSpec), [uq, fwd.q, fwd.k, fwd.v, fwd.pad, fwd.out, dout, dq, stats], qx, qy);
    const dkdvSpec = kernel('backward_dkdv_rows', ['uniform', R, R, R, R, R, R, W, W], constants, rowKernelCode(headDim));
    const [kx, ky] = rt.grid(Math.ceil(keyRows / ROW_WORKGROUP));
    const uk = rec.uniform(params(fwd, seqLen, 0, 0, keyRows));
    rec.dispatch(rt.pipeline(dkdvSpec), [uk, fwd.q, fwd.k, fwd.v, fwd.pad, stats, dout, dk, dv], kx, ky);
    return { dq, dk, dv };
  }
  const blocks = Math.ceil(seqLen / tile);
  const constants = { DH: headDim, TILE: tile, TILES: 3 };
  const u = rec.uniform(params(fwd, seqLen, blocks, 0, rows));

  // (lse_i, D_i = dout_i . out_i) per row, for both gradient kernels.
  const prep = kernel('backward_prep', ['uniform', R, R, R, R, W], { DH: headDim });
  const [px, py] = rt.grid(Math.ceil(rows / PREP_WORKGROUP));
  rec.dispatch(rt.pipeline(prep), [u, fwd.out, dout, fwd.lse, fwd.pad, stats], px, py);

  // dq and dk/dv read the statistics only: independent, so they may pair into one dispatch.
  const dqSpec = kernel('backward_dq', ['uniform', R, R, R, R, R, R, W], constants);
  const [qx, qy] = rt.grid(batch * numHeads * blocks);
  rec.dispatch(rt.pipeline(dqSpec), [u, fwd.q, fwd.k, fwd.v, fwd.pad, stats, dout, dq], qx, qy);

  const dkdvSpec = kernel('backward_dkdv', ['uniform', R, R, R, R, R, R, W, W], constants);
  const [kx, ky] = rt.grid(batch * numKvHeads * blocks);
  rec.dispatch(rt.pipeline(dkdvSpec), [u, fwd.q, fwd.k, fwd.v, fwd.pad, stats, dout, dk, dv], kx, ky);
  return { dq, dk, dv };
}

export interface AttentionDecodeShape {
  batch: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /** Tmax: positions each cache row block holds. */
  maxSeqLen: number;
  /** Filled cache positions; the new token's key and value are at position length - 1. */
  length: number;
  scale?: number;
  /**
   * 'rows': one thread per (b, h), no barriers (default on a software adapter when headDim is a
   * multiple of 4); 'tiles': one workgroup per (b, h) with barrier reductions over the keys.
   */
  kernels?: AttentionKernels;
}

export function validateAttentionDecodeShape(shape: AttentionDecodeShape, limits: GPUSupportedLimits): number {
  const { batch, numHeads, numKvHeads, headDim, maxSeqLen, length } = shape;
  checkInt('batch', batch, 1);
  checkHeads(numHeads, numKvHeads, headDim);
  checkInt('maxSeqLen', maxSeqLen, 1);
  checkInt('length', length, 1);
  if (length > maxSeqLen) throw new RangeError(`length (${length}) must not exceed maxSeqLen (${maxSeqLen})`);
  checkBinding('kcache', batch * numKvHeads * maxSeqLen * headDim, limits.maxStorageBufferBindingSize);
  return resolveScale(shape.scale, headDim);
}

/**
 * Records one decode step: q [B, Hq, Dh] (the new token of each sequence) attends to cache
 * positions [pad[b], length) of kcache, vcache [B, Hkv, Tmax, Dh]. Returns out [B, Hq, Dh]
 * (pooled); a sequence with pad[b] >= length gets 0. Forward only.
 */
export function recordAttentionDecode(
  rt: GpuRuntime,
  rec: Recorder,
  q: Binding,
  kcache: GPUBuffer,
  vcache: GPUBuffer,
  pad: GPUBuffer,
  shape: AttentionDecodeShape,
): GPUBuffer {
  const scale = validateAttentionDecodeShape(shape, rt.device.limits);
  const { batch, numHeads, headDim, maxSeqLen, length } = shape;
  const out = rt.storage(batch * numHeads * headDim * 4, 'attention.decode_out');
  const rows = attentionKernels(shape.kernels, headDim, rt.info.isFallback) === 'rows';
  const spec = rows
    ? kernel('decode_rows', ['uniform', R, R, R, R, W], { DH: headDim, ROW_WG: ROW_WORKGROUP }, rowKernelCode(headDim))
    : kernel('decode', ['uniform', R, R, R, R, W], { DH: headDim });
  const [x, y] = rt.grid(rows ? Math.ceil((batch * numHeads) / ROW_WORKGROUP) : batch * numHeads);
  const u = rec.uniform(params({ ...shape, scale }, length, 0, maxSeqLen, 0));
  rec.dispatch(rt.pipeline(spec), [u, q, kcache, vcache, pad, out], x, y);
  return out;
}

function checkLength(name: string, values: ArrayLike<number>, expected: number, layout: string): void {
  if (values.length !== expected) {
    throw new RangeError(`${name} has ${values.length} values, expected ${layout} = ${expected}`);
  }
}

function checkPad(pad: ArrayLike<number>, batch: number, max: number, maxName: string): Uint32Array {
  checkLength('pad', pad, batch, 'batch');
  for (let b = 0; b < batch; b++) {
    if (!Number.isInteger(pad[b]) || pad[b] < 0 || pad[b] > max) {
      throw new RangeError(`pad[${b}] = ${pad[b]} must be an integer in [0, ${maxName} = ${max}]`);
    }
  }
  return Uint32Array.from(pad);
}

export interface AttentionHostInput extends AttentionShape {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  pad: ArrayLike<number>;
  /** When given, the backward pass runs too (in the same submission). */
  dout?: Float32Array;
}

export interface AttentionHostOutput {
  out: Float32Array;
  lse: Float32Array;
  dq?: Float32Array;
  dk?: Float32Array;
  dv?: Float32Array;
  /** The tile the kernels ran with ('tiles'). */
  tile: AttentionTile;
  kernels: AttentionKernels;
}

/** Host arrays in, host arrays out: one submission for forward (and backward). For tests and benchmarks. */
export async function runAttention(rt: GpuRuntime, input: AttentionHostInput): Promise<AttentionHostOutput> {
  const s = resolveAttentionShape(input, rt.device.limits, rt.info.isFallback);
  const { batch, seqLen, numHeads, numKvHeads, headDim } = s;
  const qSize = batch * seqLen * numHeads * headDim;
  const kvSize = batch * seqLen * numKvHeads * headDim;
  checkLength('q', input.q, qSize, 'batch*seqLen*numHeads*headDim');
  checkLength('k', input.k, kvSize, 'batch*seqLen*numKvHeads*headDim');
  checkLength('v', input.v, kvSize, 'batch*seqLen*numKvHeads*headDim');
  if (input.dout) checkLength('dout', input.dout, qSize, 'batch*seqLen*numHeads*headDim');
  const padData = checkPad(input.pad, batch, seqLen, 'seqLen');

  const rec = rt.recorder('attention');
  const q = rt.upload(input.q, 'q');
  const k = rt.upload(input.k, 'k');
  const v = rt.upload(input.v, 'v');
  const pad = rt.upload(padData, 'pad');
  const fwd = recordAttentionForward(rt, rec, q, k, v, pad, s);
  const owned = [q, k, v, pad, fwd.out, fwd.lse];
  const out = rec.readF32(fwd.out, qSize);
  const lse = rec.readF32(fwd.lse, batch * numHeads * seqLen);
  let grads: [Promise<Float32Array>, Promise<Float32Array>, Promise<Float32Array>] | undefined;
  if (input.dout) {
    const dout = rt.upload(input.dout, 'dout');
    const g = recordAttentionBackward(rt, rec, fwd, dout);
    owned.push(dout, g.dq, g.dk, g.dv);
    grads = [rec.readF32(g.dq, qSize), rec.readF32(g.dk, kvSize), rec.readF32(g.dv, kvSize)];
  }
  try {
    await rec.submit();
    const result: AttentionHostOutput = { out: await out, lse: await lse, tile: s.tile, kernels: s.kernels };
    if (grads) [result.dq, result.dk, result.dv] = await Promise.all(grads);
    return result;
  } finally {
    rt.release(...owned);
  }
}

export interface AttentionDecodeHostInput extends AttentionDecodeShape {
  q: Float32Array;
  kcache: Float32Array;
  vcache: Float32Array;
  pad: ArrayLike<number>;
}

export async function runAttentionDecode(rt: GpuRuntime, input: AttentionDecodeHostInput): Promise<Float32Array> {
  validateAttentionDecodeShape(input, rt.device.limits);
  const { batch, numHeads, numKvHeads, headDim, maxSeqLen } = input;
  checkLength('q', input.q, batch * numHeads * headDim, 'batch*numHeads*headDim');
  const cacheSize = batch * numKvHeads * maxSeqLen * headDim;
  checkLength('kcache', input.kcache, cacheSize, 'batch*numKvHeads*maxSeqLen*headDim');
  checkLength('vcache', input.vcache, cacheSize, 'batch*numKvHeads*maxSeqLen*headDim');
  const padData = checkPad(input.pad, batch, input.length, 'length');

  const rec = rt.recorder('attention.decode');
  const q = rt.upload(input.q, 'q');
  const kcache = rt.upload(input.kcache, 'kcache');
  const vcache = rt.upload(input.vcache, 'vcache');
  const pad = rt.upload(padData, 'pad');
  const out = recordAttentionDecode(rt, rec, q, kcache, vcache, pad, input);
  const result = rec.readF32(out, batch * numHeads * headDim);
  try {
    await rec.submit();
    return await result;
  } finally {
    rt.release(q, kcache, vcache, pad, out);
  }
}
