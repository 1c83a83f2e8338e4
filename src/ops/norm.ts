// Launcher for shaders/norm.wgsl: LayerNorm (GPT-2) and RMSNorm (Llama) over the last
// dimension. x, y, dy, dx are row-major [rows, dim]; gamma, beta, dGamma, dBeta are [dim];
// stats is [rows, 2] = (mean, rstd) per row (mean = 0 for RMSNorm).
import code from '../../shaders/norm.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import { checkBinding } from './elementwise';

/** Rows summed by one partial of dgamma/dbeta (the first of the two reduction dispatches). */
const PARTIAL_ROWS = 32;
/**
 * Up to this many rows, dgamma/dbeta are summed in one pass straight into their buffers
 * (param_grads_*), one dispatch instead of partials + reduce. On SwiftShader (interleaved, D =
 * 128 and 576) one pass took the same CPU time as two up to 1024 rows and less wall time up to
 * 256 rows, but 1.6x the wall time at 1024 x 576 (too few columns to share the cores).
 */
const ONE_PASS_ROWS = 256;
const READ = 'read-only-storage';

/** GPT-2's layer_norm_epsilon. */
export const GPT2_LAYERNORM_EPS = 1e-5;

/**
 * Threads per row of the row kernels (forward, add_forward, backward_input[_add]) for rows of
 * `dim` values. Each row is one workgroup with barrier trees. On a software adapter
 * (SwiftShader) the cost grows steeply with the workgroup size: interleaved there (fwd + bwd,
 * D = 128 and 576, rows 64 and 1024) 4 threads, one SIMD group of its 4 lanes, ran 3-8x
 * faster than 64, and 64 about ten times faster than 256; 2 or 1 were slower. On other
 * adapters: the smallest power of two >= dim / 4, in [32, 256] (about 4 values a thread; not
 * measured, there was no hardware adapter).
 */
export function normRowThreads(dim: number, software: boolean): number {
  if (software) return 4;
  let threads = 32;
  while (threads < 256 && threads * 4 < dim) threads *= 2;
  return threads;
}

interface NormKernels {
  /** Threads a workgroup (WG and COLS). */
  threads: number;
  forward: KernelSpec;
  addForward: KernelSpec;
  backward: KernelSpec;
  backwardAdd: KernelSpec;
  /** The column kernels (dγ, dβ), a thread a column, as many threads a workgroup as the rows'. */
  paramPartials: KernelSpec;
  reduceGamma: KernelSpec;
  reduceGammaBeta: KernelSpec;
  paramGradsGamma: KernelSpec;
  paramGradsGammaBeta: KernelSpec;
}
const NORM_SPECS = new Map<string, NormKernels>();

/**
 * workgroup_sum2 when a row's workgroup is exactly one subgroup: the sums with no workgroup
 * memory and no barriers. Interleaved on SwiftShader (4 threads, fwd + bwd): 1.1-1.8x less CPU
 * and 1.35-1.65x less wall than the 4-thread tree at 64 and 1024 rows, D 128 and 576.
 */
const SUBGROUP_SUM2 = 'fn workgroup_sum2(tid: u32, a: f32, b: f32) -> vec2<f32> {\n  return subgroupAdd(vec2<f32>(a, b));\n}\n\n';

/**
 * norm.wgsl with WG and COLS = `threads`, and with `subgroups` its tree sums replaced by
 * subgroupAdd. The column kernels take the row kernels' workgroup size so that dispatch pairing
 * (src/gpu/dispatchPair.ts) can run a norm's dx and its dγ/dβ as one dispatch; on a software
 * adapter their 4-thread workgroups also spread the columns over the cores.
 */
function sizedCode(threads: number, subgroups: boolean): string {
  let sized = code;
  for (const name of ['WG', 'COLS']) {
    const constant = `const ${name}: u32 = 256u;`;
    if (!sized.includes(constant)) throw new Error(`norm.wgsl: the workgroup size constant ${name} was not found`);
    sized = sized.replace(constant, `const ${name}: u32 = ${threads}u;`);
  }
  if (!subgroups) return sized;
  const start = sized.indexOf('fn workgroup_sum2(');
  const end = sized.indexOf('@compute', start);
  if (start < 0 || end < 0) throw new Error('norm.wgsl: workgroup_sum2 was not found');
  return `enable subgroups;\n${sized.slice(0, start)}${SUBGROUP_SUM2}${sized.slice(end)}`;
}

/**
 * The norm's kernels (rows and columns) compiled with `threads` a workgroup, the row sums by
 * subgroupAdd when `subgroups` (one spec object per variant, so the pipeline cache hits by identity).
 */
function normKernels(threads: number, subgroups: boolean): NormKernels {
  const key = `${threads}${subgroups ? ' subgroup' : ''}`;
  let specs = NORM_SPECS.get(key);
  if (!specs) {
    const sized = sizedCode(threads, subgroups);
    specs = {
      threads,
      forward: { name: 'norm', code: sized, entryPoint: 'forward', bindings: ['uniform', READ, READ, READ, 'storage', 'storage'] },
      addForward: { name: 'norm', code: sized, entryPoint: 'add_forward', bindings: ['uniform', READ, READ, READ, 'storage', 'storage', READ, 'storage'] },
      backward: { name: 'norm', code: sized, entryPoint: 'backward_input', bindings: ['uniform', READ, READ, READ, READ, 'storage'] },
      backwardAdd: { name: 'norm', code: sized, entryPoint: 'backward_input_add', bindings: ['uniform', READ, READ, READ, READ, 'storage', READ] },
      paramPartials: { name: 'norm', code: sized, entryPoint: 'param_partials', bindings: ['uniform', READ, READ, READ, 'storage'] },
      reduceGamma: { name: 'norm', code: sized, entryPoint: 'reduce_gamma', bindings: ['uniform', READ, 'storage'] },
      reduceGammaBeta: { name: 'norm', code: sized, entryPoint: 'reduce_gamma_beta', bindings: ['uniform', READ, 'storage', 'storage'] },
      paramGradsGamma: { name: 'norm', code: sized, entryPoint: 'param_grads_gamma', bindings: ['uniform', READ, READ, READ, 'storage'] },
      paramGradsGammaBeta: { name: 'norm', code: sized, entryPoint: 'param_grads_gamma_beta', bindings: ['uniform', READ, READ, READ, 'storage', 'storage'] },
    };
    NORM_SPECS.set(key, specs);
  }
  return specs;
}

/**
 * The norm's kernels for this shape on this adapter (shape.threads when given): subgroup sums
 * where the device has subgroups of exactly that many invocations (a workgroup is then one
 * subgroup), else the workgroup-memory trees.
 */
function normKernelsFor(rt: GpuRuntime, shape: NormShape): NormKernels {
  const threads = shape.threads ?? normRowThreads(shape.dim, rt.info.isFallback);
  return normKernels(threads, rt.info.subgroupSize === threads && rt.device.features.has('subgroups'));
}

export type NormKind = 'layernorm' | 'rmsnorm';

export interface NormShape {
  kind: NormKind;
  rows: number;
  dim: number;
  /** Added to the variance (LayerNorm) or the mean square (RMSNorm) under the square root. */
  eps: number;
  /**
   * Threads per row of the row kernels, a power of two up to 256; default normRowThreads for
   * this adapter. Tests set it to run the other adapters' sizes here.
   */
  threads?: number;
}

/** Buffers of a recorded forward pass; the backward pass reads x, gamma and stats. */
export interface NormForward extends NormShape {
  x: GPUBuffer;
  gamma: Binding;
  /** LayerNorm only. */
  beta: Binding | null;
  /** Pooled [rows, dim]. */
  y: GPUBuffer;
  /** Pooled [rows, 2]: (mean, rstd) per row. */
  stats: GPUBuffer;
}

export interface NormGrads {
  /** Pooled [rows, dim]. */
  dx: GPUBuffer;
  /** [dim]: the caller's binding when accumulating, else a pooled buffer. */
  dGamma: Binding;
  /** [dim], LayerNorm only: the caller's binding when accumulating, else a pooled buffer. */
  dBeta: Binding | null;
}

/** Existing parameter-gradient buffers that the backward pass adds into. */
export interface NormGradAccumulators {
  dGamma: Binding;
  /** Required for LayerNorm, absent for RMSNorm. */
  dBeta?: Binding;
}

export function validateNormShape(shape: NormShape, maxBindingBytes: number): void {
  const { kind, rows, dim, eps } = shape;
  if (kind !== 'layernorm' && kind !== 'rmsnorm') throw new RangeError(`kind must be "layernorm" or "rmsnorm", got ${String(kind)}`);
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`dim must be a positive integer, got ${dim}`);
  if (!(eps >= 0) || !Number.isFinite(eps)) throw new RangeError(`eps must be a finite number >= 0, got ${eps}`);
  const { threads } = shape;
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1 && threads <= 256 && (threads & (threads - 1)) === 0)) {
    throw new RangeError(`threads must be a power of two from 1 to 256, got ${threads}`);
  }
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  if (rows * dim * 4 > limit) {
    throw new RangeError(
      `x of ${rows} x ${dim} floats exceeds this GPU's storage binding limit of ${limit} bytes; ` +
        `normalize at most ${Math.floor(limit / (dim * 4))} rows at a time`,
    );
  }
  if (Math.ceil(rows / PARTIAL_ROWS) > 65535) {
    throw new RangeError(`rows = ${rows} exceeds ${65535 * PARTIAL_ROWS}, the most one backward pass reduces`);
  }
}

function paramsFor(shape: NormShape, chunks: number, accumulate: boolean): Uint32Array {
  const data = new ArrayBuffer(32);
  const u32 = new Uint32Array(data);
  u32[0] = shape.rows;
  u32[1] = shape.dim;
  new Float32Array(data)[2] = shape.eps;
  u32[3] = shape.kind === 'layernorm' ? 1 : 0;
  u32[4] = PARTIAL_ROWS;
  u32[5] = chunks;
  u32[6] = accumulate ? 1 : 0;
  return u32;
}

/**
 * Records y = norm(x) * gamma (+ beta). `beta` is required for LayerNorm and must be null for
 * RMSNorm. Returns pooled y and stats (release them when done; keep stats for the backward).
 */
export function recordNormForward(
  rt: GpuRuntime,
  rec: Recorder,
  shape: NormShape,
  x: GPUBuffer,
  gamma: Binding,
  beta: Binding | null,
): NormForward {
  validateNormShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const { kind, rows, dim } = shape;
  if (kind === 'layernorm' && !beta) throw new RangeError('beta is required for layernorm');
  if (kind === 'rmsnorm' && beta) throw new RangeError('beta must be null for rmsnorm (it has no bias)');
  checkBinding(kind, 'x', x, rows * dim);
  checkBinding(kind, 'gamma', gamma, dim);
  if (beta) checkBinding(kind, 'beta', beta, dim);
  const y = rt.storage(rows * dim * 4, `${kind}.y`);
  const stats = rt.storage(rows * 8, `${kind}.stats`);
  const [gx, gy] = rt.grid(rows);
  // RMSNorm binds gamma in beta's slot; the kernel never reads it there.
  rec.dispatch(rt.pipeline(normKernelsFor(rt, shape).forward), [rec.uniform(paramsFor(shape, 0, false)), x, gamma, beta ?? gamma, y, stats], gx, gy);
  return { kind, rows, dim, eps: shape.eps, threads: shape.threads, x, gamma, beta, y, stats };
}

/**
 * Records sum = a + b and y = norm(sum) * gamma (+ beta) in one dispatch: a residual add and
 * the norm after it (bit-identical to recordAdd then recordNormForward). Returns pooled y,
 * stats and sum; the forward's `x` is the sum.
 */
export function recordAddNormForward(
  rt: GpuRuntime,
  rec: Recorder,
  shape: NormShape,
  a: GPUBuffer,
  b: GPUBuffer,
  gamma: Binding,
  beta: Binding | null,
): NormForward {
  validateNormShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const { kind, rows, dim } = shape;
  if (kind === 'layernorm' && !beta) throw new RangeError('beta is required for layernorm');
  if (kind === 'rmsnorm' && beta) throw new RangeError('beta must be null for rmsnorm (it has no bias)');
  checkBinding(kind, 'a', a, rows * dim);
  checkBinding(kind, 'b', b, rows * dim);
  checkBinding(kind, 'gamma', gamma, dim);
  if (beta) checkBinding(kind, 'beta', beta, dim);
  const sum = rt.storage(rows * dim * 4, `${kind}.sum`);
  const y = rt.storage(rows * dim * 4, `${kind}.y`);
  const stats = rt.storage(rows * 8, `${kind}.stats`);
  const [gx, gy] = rt.grid(rows);
  const params = rec.uniform(paramsFor(shape, 0, false));
  rec.dispatch(rt.pipeline(normKernelsFor(rt, shape).addForward), [params, a, gamma, beta ?? gamma, y, stats, b, sum], gx, gy);
  return { kind, rows, dim, eps: shape.eps, threads: shape.threads, x: sum, gamma, beta, y, stats };
}

/**
 * Records the backward pass: dx (pooled), and dGamma/dBeta summed over rows in a fixed order
 * (bit-for-bit reproducible). With `accumulateInto` the parameter gradients are added into
 * the given buffers (which are returned); otherwise fresh pooled buffers hold them. With
 * `residual` ([rows, dim], the gradient reaching x around the norm) dx = residual + the norm's
 * dx, in the same dispatch: no separate accumulate over dx.
 */
export function recordNormBackward(
  rt: GpuRuntime,
  rec: Recorder,
  fwd: NormForward,
  dy: GPUBuffer,
  accumulateInto?: NormGradAccumulators,
  residual?: GPUBuffer,
): NormGrads {
  const { kind, rows, dim } = fwd;
  checkBinding(kind, 'dy', dy, rows * dim);
  if (residual) checkBinding(kind, 'residual', residual, rows * dim);
  const layer = kind === 'layernorm';
  if (accumulateInto) {
    checkBinding(kind, 'dGamma', accumulateInto.dGamma, dim);
    if (layer && !accumulateInto.dBeta) throw new RangeError('accumulating layernorm gradients needs dBeta as well as dGamma');
    if (!layer && accumulateInto.dBeta) throw new RangeError('rmsnorm has no beta: pass no dBeta');
    if (accumulateInto.dBeta) checkBinding(kind, 'dBeta', accumulateInto.dBeta, dim);
  }
  const chunks = Math.ceil(rows / PARTIAL_ROWS);
  const params = rec.uniform(paramsFor(fwd, chunks, accumulateInto !== undefined));

  const dx = rt.storage(rows * dim * 4, `${kind}.dx`);
  const [gx, gy] = rt.grid(rows);
  const kernels = normKernelsFor(rt, fwd);
  if (residual) rec.dispatch(rt.pipeline(kernels.backwardAdd), [params, fwd.x, fwd.gamma, fwd.stats, dy, dx, residual], gx, gy);
  else rec.dispatch(rt.pipeline(kernels.backward), [params, fwd.x, fwd.gamma, fwd.stats, dy, dx], gx, gy);

  const columns = Math.ceil(dim / kernels.threads);
  const dGamma = accumulateInto?.dGamma ?? rt.storage(dim * 4, `${kind}.dgamma`);
  const dBeta = layer ? (accumulateInto?.dBeta ?? rt.storage(dim * 4, `${kind}.dbeta`)) : null;
  if (rows <= ONE_PASS_ROWS) {
    if (dBeta) rec.dispatch(rt.pipeline(kernels.paramGradsGammaBeta), [params, fwd.x, fwd.stats, dy, dGamma, dBeta], columns);
    else rec.dispatch(rt.pipeline(kernels.paramGradsGamma), [params, fwd.x, fwd.stats, dy, dGamma], columns);
    return { dx, dGamma, dBeta };
  }
  const partials = rec.scratch(chunks * 2 * dim * 4, `${kind}.partials`);
  rec.dispatch(rt.pipeline(kernels.paramPartials), [params, fwd.x, fwd.stats, dy, partials], columns, chunks);
  if (dBeta) rec.dispatch(rt.pipeline(kernels.reduceGammaBeta), [params, partials, dGamma, dBeta], columns);
  else rec.dispatch(rt.pipeline(kernels.reduceGamma), [params, partials, dGamma], columns);
  return { dx, dGamma, dBeta };
}

export interface NormHostInput extends NormShape {
  x: Float32Array;
  gamma: Float32Array;
  /** LayerNorm only. */
  beta?: Float32Array;
  /** Upstream gradient; when given, the backward pass runs too. */
  dy?: Float32Array;
  /** Initial dGamma (and dBeta for LayerNorm) to accumulate into. */
  dGammaInit?: Float32Array;
  dBetaInit?: Float32Array;
  /** Added to dx (recordNormBackward's residual); needs dy. */
  residual?: Float32Array;
}

export interface NormHostOutput {
  y: Float32Array;
  mean: Float32Array;
  rstd: Float32Array;
  dx?: Float32Array;
  dGamma?: Float32Array;
  dBeta?: Float32Array;
}

/** Host arrays in, host arrays out: forward (and backward when dy is given) in one submission. */
export async function runNorm(rt: GpuRuntime, input: NormHostInput): Promise<NormHostOutput> {
  validateNormShape(input, rt.device.limits.maxStorageBufferBindingSize);
  const { kind, rows, dim } = input;
  const layer = kind === 'layernorm';
  const expect = (name: string, v: Float32Array | undefined, n: number) => {
    if (v && v.length !== n) throw new RangeError(`${kind}: ${name} has ${v.length} values, expected ${n}`);
  };
  expect('x', input.x, rows * dim);
  expect('gamma', input.gamma, dim);
  expect('beta', input.beta, dim);
  expect('dy', input.dy, rows * dim);
  expect('dGammaInit', input.dGammaInit, dim);
  expect('dBetaInit', input.dBetaInit, dim);
  expect('residual', input.residual, rows * dim);
  if (layer && !input.beta) throw new RangeError('beta is required for layernorm');
  if (!layer && (input.beta || input.dBetaInit)) throw new RangeError('rmsnorm has no beta');
  if (layer && (input.dGammaInit === undefined) !== (input.dBetaInit === undefined)) {
    throw new RangeError('layernorm accumulation needs both dGammaInit and dBetaInit');
  }
  if ((input.dGammaInit || input.dBetaInit) && !input.dy) throw new RangeError(`${kind}: dGammaInit needs dy`);
  if (input.residual && !input.dy) throw new RangeError(`${kind}: residual needs dy`);

  const rec = rt.recorder(kind);
  const x = rt.upload(input.x, 'x');
  const gamma = rt.upload(input.gamma, 'gamma');
  const owned = [x, gamma];
  try {
    const beta = input.beta ? rt.upload(input.beta, 'beta') : null;
    if (beta) owned.push(beta);
    const fwd = recordNormForward(rt, rec, input, x, gamma, beta);
    owned.push(fwd.y, fwd.stats);
    const y = rec.readF32(fwd.y, rows * dim);
    const stats = rec.readF32(fwd.stats, rows * 2);
    let grads: Promise<Float32Array | undefined>[] = [];
    if (input.dy) {
      const dy = rt.upload(input.dy, 'dy');
      owned.push(dy);
      let into: { dGamma: GPUBuffer; dBeta?: GPUBuffer } | undefined;
      if (input.dGammaInit) {
        into = { dGamma: rt.upload(input.dGammaInit, 'dgamma') };
        owned.push(into.dGamma);
        if (input.dBetaInit) {
          into.dBeta = rt.upload(input.dBetaInit, 'dbeta');
          owned.push(into.dBeta);
        }
      }
      const residual = input.residual ? rt.upload(input.residual, 'residual') : undefined;
      if (residual) owned.push(residual);
      const g = recordNormBackward(rt, rec, fwd, dy, into, residual);
      // Whole buffers here: the uploaded accumulators, or pooled ones.
      const dGamma = g.dGamma as GPUBuffer;
      const dBeta = g.dBeta as GPUBuffer | null;
      owned.push(g.dx);
      if (!into) owned.push(dGamma, ...(dBeta ? [dBeta] : []));
      grads = [rec.readF32(g.dx, rows * dim), rec.readF32(dGamma, dim), dBeta ? rec.readF32(dBeta, dim) : Promise.resolve(undefined)];
    }
    await rec.submit();
    const s = await stats;
    const [dx, dGamma, dBeta] = await Promise.all(grads);
    return {
      y: await y,
      mean: s.filter((_, i) => i % 2 === 0),
      rstd: s.filter((_, i) => i % 2 === 1),
      dx,
      dGamma,
      dBeta,
    };
  } finally {
    rt.release(...owned);
  }
}
