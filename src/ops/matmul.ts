// Launcher for shaders/matmul.wgsl: C = alpha * op(A) . op(B) + beta * C (+ bias), batched,
// and the column sum used for bias gradients. Row-major f32 throughout.
//
// A linear layer with PyTorch weight layout W[out, in] uses three products and a sum:
//   Y  = X . W^T + b     recordMatmul({a: X, b: W, c: Y, bias: b}, {m: T, n: out, k: in, transB: true})
//   dX = dY . W          recordMatmul({a: dY, b: W, c: dX}, {m: T, n: in, k: out})
//   dW += dY^T . X       recordMatmul({a: dY, b: X, c: dW}, {m: out, n: in, k: T, transA: true, beta: 1})
//   db += sum_rows dY    recordColumnSum({x: dY, out: db}, {rows: T, cols: out, beta: 1})
// or, fused into the dW product (one dispatch): the k-sum of op(A) = dYᵀ, i.e. the rows of dYᵀ:
//   dW += dYᵀ . X, db += sum_rows dY   recordMatmul({a: dY, b: X, c: dW, extra: db}, {..., transA: true, beta: 1, sumK: 'a'})
// Epilogues fold the elementwise op that follows a product into it (shape.epilogue, ops.extra):
//   residual: C = product + R; gelu: C = product and extra = gelu(C); gelu_backward: C = product * gelu'(X).
import shaderText from '../../shaders/matmul.wgsl?raw';
import paramsText from '../../shaders/matmul_params.wgsl?raw';
import epilogueText from '../../shaders/matmul_epilogue.wgsl?raw';
import { includeWgsl } from './wgslInclude';
import { skinnyGroups, skinnyKernel, skinnySpec, type SkinnyKernel } from './matmulSkinny';
import { outerApplies, outerGrid, outerRaggedApplies, outerRaggedSpec, outerSpec } from './matmulOuter';
import { blockedApplies, blockedGrid, blockedRaggedApplies, blockedRaggedSpec, blockedSpec } from './matmulBlocked';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { BindingKind, KernelSpec } from '../gpu/pipelineCache';
import { quad } from './vec4Layout';

/** The shader with the matmul kernels' shared uniform block and epilogues pasted in. */
const code = includeWgsl(shaderText, { 'matmul_params.wgsl': paramsText, 'matmul_epilogue.wgsl': epilogueText });

/** Output tile edge of the tiled kernels; the small-M kernel serves M up to SMALL_M_MAX. */
const TILE = 64;
export const SMALL_M_MAX = 8;
/** Columns per workgroup of small_m (B stored [N,K] / [K,N]) and of column_sum. */
const SMALL_COLS_TRANS_B = 8;
const SMALL_COLS = 16;
const SUM_COLS = 32;

export type MatmulKernel = 'tiled' | 'tiled_vec4' | 'small_m' | 'outer_tn' | 'outer_tn_ragged' | 'blocked' | 'blocked_ragged' | SkinnyKernel;

/** What a product does with its result before storing it (see shaders/matmul.wgsl). */
export type MatmulEpilogue = 'none' | 'residual' | 'gelu' | 'gelu_backward';
const EPILOGUE_CODES: Record<MatmulEpilogue, number> = { none: 0, residual: 1, gelu: 2, gelu_backward: 3 };

const GEMM_BINDINGS: readonly BindingKind[] = ['uniform', 'read-only-storage', 'read-only-storage', 'read-only-storage', 'storage'];

/**
 * One spec per (entry point, transA, transB), built once so dispatching allocates nothing new;
 * the tiled kernels' SUM_BATCHES variants under the key with ':sum'.
 */
const GEMM_SPECS = new Map<string, KernelSpec>();
for (const entryPoint of ['tiled', 'tiled_vec4', 'small_m'] as const) {
  for (const transA of [false, true]) {
    for (const transB of [false, true]) {
      const constants = { TRANS_A: transA ? 1 : 0, TRANS_B: transB ? 1 : 0 };
      const key = specKey(entryPoint, transA, transB);
      GEMM_SPECS.set(key, { name: 'matmul', code, entryPoint, bindings: GEMM_BINDINGS, constants });
      if (entryPoint !== 'small_m') {
        GEMM_SPECS.set(`${key}:sum`, { name: 'matmul', code, entryPoint, bindings: GEMM_BINDINGS, constants: { ...constants, SUM_BATCHES: 1 } });
      }
    }
  }
}
/**
 * Fused variants (one more binding, `extra`): made on first use, one spec per (entry point,
 * transA, transB, epilogue, k-sum), so a run compiles only the few it dispatches.
 */
const FUSED_BINDINGS: readonly BindingKind[] = [...GEMM_BINDINGS, 'storage'];
const FUSED_SPECS = new Map<string, KernelSpec>();
function fusedSpec(kernel: MatmulKernel, transA: boolean, transB: boolean, epilogue: MatmulEpilogue, sumK: 'a' | 'b' | null): KernelSpec {
  const key = `${specKey(kernel, transA, transB)}:${epilogue}:${sumK ?? '-'}`;
  let spec = FUSED_SPECS.get(key);
  if (!spec) {
    spec = {
      name: 'matmul',
      code,
      entryPoint: `${kernel}_fused`,
      bindings: FUSED_BINDINGS,
      constants: { TRANS_A: transA ? 1 : 0, TRANS_B: transB ? 1 : 0, EPILOGUE: EPILOGUE_CODES[epilogue], SUM_K: sumK === 'b' ? 1 : sumK === 'a' ? 2 : 0 },
    };
    FUSED_SPECS.set(key, spec);
  }
  return spec;
}

/** The kernels with a SUM_BATCHES variant; the others sum a stack's batches a dispatch each. */
const SUMS_BATCHES: ReadonlySet<MatmulKernel> = new Set<MatmulKernel>(['blocked', 'tiled', 'tiled_vec4', 'skinny_nn', 'skinny_nt']);

const COLUMN_SUM: KernelSpec = {
  name: 'matmul',
  code,
  entryPoint: 'column_sum',
  bindings: ['uniform', 'read-only-storage', 'storage'],
};

function specKey(entryPoint: string, transA: boolean, transB: boolean): string {
  return `${entryPoint}:${transA ? 1 : 0}${transB ? 1 : 0}`;
}

export interface MatmulShape {
  /** Rows of op(A) and C. */
  m: number;
  /** Columns of op(B) and C. */
  n: number;
  /** Columns of op(A), rows of op(B). */
  k: number;
  /** op(A) = A^T: A is stored [K, M]. */
  transA?: boolean;
  /** op(B) = B^T: B is stored [N, K] (PyTorch's Linear weight [out, in]). */
  transB?: boolean;
  /** Default 1. */
  alpha?: number;
  /** Default 0: C is then written without being read (its old contents may be anything). */
  beta?: number;
  /** Independent products, one per dispatch z; default 1. */
  batch?: number;
  /** Elements between consecutive batches of A, B, C; 0 broadcasts one matrix. Default: tightly packed. */
  strideA?: number;
  strideB?: number;
  strideC?: number;
  /**
   * Elements between consecutive batches' bias and, with sumK, between their k-sums in extra.
   * Default 0: one bias for every batch (a k-sum over several batches needs its own slots).
   * A stack of projections, e.g. q, k and v of one input in one dispatch.
   */
  strideBias?: number;
  /**
   * C = alpha * (sum over the batches of op(A[b]) . op(B[b])) + beta * C + bias: one output
   * matrix (strideC unused), no epilogue or k-sum. The input gradient of a stack of projections.
   * One dispatch, except on the small-M kernel (m <= 8 on a layout the skinny kernels refuse):
   * one per batch there (each batch's A and B must then start at a binding offset the device
   * accepts).
   */
  sumBatches?: boolean;
  /** Elements between consecutive stored rows; default: the stored row length (tightly packed). */
  lda?: number;
  ldb?: number;
  ldc?: number;
  /** 'auto' (default) lets matmulKernel choose; 'tiled' and 'small' force one (tests, benchmarks). */
  path?: 'auto' | 'tiled' | 'small';
  /**
   * Choose the kernel as for a product of this many rows (>= m; default m): some rows of a
   * larger product then come out bit for bit as that product computes them (each kernel's sum
   * order does not depend on m, but the kernel choice does). Prefill's head on each row's last
   * position, against the training forward's head on every position.
   */
  kernelRows?: number;
  /**
   * Default 'none'. 'residual': C = product + extra (a residual stream laid out like C);
   * 'gelu': C = product (the pre-activation) and extra = gelu(C); 'gelu_backward':
   * C = product * gelu'(extra), extra the pre-activation. "product" includes alpha, beta and bias.
   */
  epilogue?: MatmulEpilogue;
  /**
   * Also sum over k into extra, with the product's alpha and beta: 'b' the columns of op(B)
   * (n values), 'a' the rows of op(A) (m values). A linear layer's bias gradient fused into its
   * weight gradient; batch b's sums at b * strideBias. Tiled or outer-product kernels only
   * (m <= 8 takes the tiled kernel), no epilogue.
   */
  sumK?: 'a' | 'b' | null;
}

/** MatmulShape with every default filled in and checked. */
export interface ResolvedMatmulShape {
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  batch: number;
  strideA: number;
  strideB: number;
  strideC: number;
  strideBias: number;
  sumBatches: boolean;
  lda: number;
  ldb: number;
  ldc: number;
  path: 'auto' | 'tiled' | 'small';
  kernelRows: number;
  epilogue: MatmulEpilogue;
  sumK: 'a' | 'b' | null;
  /** Elements each operand must hold: (batch-1)*stride + (stored rows-1)*ld + stored row length. */
  extentA: number;
  extentB: number;
  extentC: number;
}

export interface MatmulOperands {
  a: Binding;
  b: Binding;
  /** Output, read too when beta != 0. Must not share a buffer with a, b or bias. */
  c: Binding;
  /** bias[n], added to every row of every batch. */
  bias?: Binding | null;
  /** The epilogue's or k-sum's operand (shape.epilogue, shape.sumK); must share no buffer with the others. */
  extra?: Binding | null;
}

function positiveInt(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
}

function nonNegativeInt(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
}

/** Fills defaults and throws a RangeError naming the first bad field. */
export function resolveMatmulShape(shape: MatmulShape): ResolvedMatmulShape {
  const { m, n, k } = shape;
  positiveInt('m', m);
  positiveInt('n', n);
  positiveInt('k', k);
  const transA = shape.transA ?? false;
  const transB = shape.transB ?? false;
  const alpha = shape.alpha ?? 1;
  const beta = shape.beta ?? 0;
  if (!Number.isFinite(alpha)) throw new RangeError(`alpha must be a finite number, got ${alpha}`);
  if (!Number.isFinite(beta)) throw new RangeError(`beta must be a finite number, got ${beta}`);
  const batch = shape.batch ?? 1;
  positiveInt('batch', batch);
  const path = shape.path ?? 'auto';
  if (path !== 'auto' && path !== 'tiled' && path !== 'small') {
    throw new RangeError(`path must be 'auto', 'tiled' or 'small', got ${String(path)}`);
  }
  if (path === 'small' && m > SMALL_M_MAX) throw new RangeError(`path 'small' needs m <= ${SMALL_M_MAX}, got m = ${m}`);
  const kernelRows = shape.kernelRows ?? m;
  if (!Number.isInteger(kernelRows) || kernelRows < m) throw new RangeError(`kernelRows must be an integer >= m = ${m}, got ${kernelRows}`);
  const epilogue = shape.epilogue ?? 'none';
  if (!(epilogue in EPILOGUE_CODES)) throw new RangeError(`epilogue must be 'none', 'residual', 'gelu' or 'gelu_backward', got ${String(epilogue)}`);
  const sumK = shape.sumK ?? null;
  if (sumK !== null && sumK !== 'a' && sumK !== 'b') throw new RangeError(`sumK must be 'a', 'b' or null, got ${String(sumK)}`);
  if (sumK && epilogue !== 'none') throw new RangeError(`a product takes an epilogue or a k-sum (sumK), not both (epilogue '${epilogue}', sumK '${sumK}')`);
  if (sumK && path === 'small') throw new RangeError(`sumK runs on the tiled kernels: path 'small' cannot take it`);

  // Stored layouts: A is [m, k] or [k, m]; B is [k, n] or [n, k]; C is [m, n].
  const [rowsA, colsA] = transA ? [k, m] : [m, k];
  const [rowsB, colsB] = transB ? [n, k] : [k, n];
  const lda = shape.lda ?? colsA;
  const ldb = shape.ldb ?? colsB;
  const ldc = shape.ldc ?? n;
  for (const [name, ld, min] of [['lda', lda, colsA], ['ldb', ldb, colsB], ['ldc', ldc, n]] as const) {
    if (!Number.isInteger(ld) || ld < min) throw new RangeError(`${name} must be an integer >= ${min} (the stored row length), got ${ld}`);
  }
  const strideA = shape.strideA ?? rowsA * lda;
  const strideB = shape.strideB ?? rowsB * ldb;
  const strideC = shape.strideC ?? m * ldc;
  nonNegativeInt('strideA', strideA);
  nonNegativeInt('strideB', strideB);
  nonNegativeInt('strideC', strideC);
  const strideBias = shape.strideBias ?? 0;
  nonNegativeInt('strideBias', strideBias);
  // One batch sums nothing: the plain product.
  const sumBatches = (shape.sumBatches ?? false) && batch > 1;
  if (sumBatches && (sumK || epilogue !== 'none')) throw new RangeError(`sumBatches takes no epilogue and no k-sum (epilogue '${epilogue}', sumK ${sumK === null ? 'null' : `'${sumK}'`})`);
  const sums = sumK === 'a' ? m : sumK === 'b' ? n : 0;
  if (sumK && batch > 1 && strideBias < sums) {
    throw new RangeError(`strideBias = ${strideBias} would make the ${batch} batches' k-sums overlap; it must be >= ${sums} with sumK '${sumK}'`);
  }
  // Batches of C must not overlap: either one after another, or interleaved within a row
  // (heads of a [T, H*D] output: strideC >= n and all batches fit in ldc).
  const matrixC = (m - 1) * ldc + n;
  const stacked = strideC >= matrixC;
  const interleaved = strideC >= n && (batch - 1) * strideC + n <= ldc;
  if (batch > 1 && !sumBatches && !stacked && !interleaved) {
    throw new RangeError(
      `strideC = ${strideC} would make the ${batch} output matrices overlap; it must be >= ${matrixC} ` +
        `(stacked) or >= n = ${n} with (batch-1)*strideC + n <= ldc = ${ldc} (interleaved)`,
    );
  }
  const extent = (stride: number, rows: number, ld: number, cols: number) => (batch - 1) * stride + (rows - 1) * ld + cols;
  return {
    m, n, k, transA, transB, alpha, beta, batch, strideA, strideB, strideC, strideBias, sumBatches, lda, ldb, ldc, path, kernelRows, epilogue, sumK,
    extentA: extent(strideA, rowsA, lda, colsA),
    extentB: extent(strideB, rowsB, ldb, colsB),
    extentC: sumBatches ? matrixC : extent(strideC, m, ldc, n),
  };
}

/**
 * The kernel recordMatmul uses for this shape: for m <= 8, a skinny kernel when the layout
 * allows its vector loads and no k-sum is asked for (src/ops/matmulSkinny.ts; an epilogue is
 * stored by its _fused variant), else small_m (unless path says otherwise, or a k-sum is asked
 * for: tiled). On a software adapter, Aᵀ.B may take the outer-product kernel
 * (src/ops/matmulOuter.ts; its ragged variant for m > 8 not a multiple of 4) and A.op(B) with
 * m > 8 the register-blocked one
 * (src/ops/matmulBlocked.ts). Otherwise tiled_vec4 when every stored row length, leading
 * dimension and batch stride is a multiple of 4, tiled otherwise.
 */
export function matmulKernel(shape: ResolvedMatmulShape, software = false): MatmulKernel {
  // Chosen as for kernelRows rows: every kernel below serves any m up to that count.
  const s = shape.kernelRows > shape.m ? { ...shape, m: shape.kernelRows } : shape;
  const skinny = s.path === 'auto' && !s.sumK ? skinnyKernel(s, SMALL_M_MAX) : null;
  if (skinny) return skinny;
  if (s.path === 'auto' && outerApplies(s, software)) return 'outer_tn';
  if (s.path === 'auto' && s.m > SMALL_M_MAX && outerRaggedApplies(s, software)) return 'outer_tn_ragged';
  if (s.path === 'auto' && s.m > SMALL_M_MAX && blockedApplies(s, software)) return 'blocked';
  if (s.path === 'auto' && s.m > SMALL_M_MAX && blockedRaggedApplies(s, software)) return 'blocked_ragged';
  if (s.path === 'small' || (s.path === 'auto' && s.m <= SMALL_M_MAX && !s.sumK)) return 'small_m';
  const stridesQuad = s.batch === 1 || quad(s.strideA, s.strideB, s.strideC, s.strideBias);
  return quad(s.transA ? s.m : s.k, s.transB ? s.k : s.n, s.n, s.lda, s.ldb, s.ldc) && stridesQuad ? 'tiled_vec4' : 'tiled';
}

function bufferOf(b: Binding): GPUBuffer {
  return 'buffer' in b ? b.buffer : b;
}

function rangesOverlap(x: Binding, y: Binding): boolean {
  const a = extentOf(x);
  const b = extentOf(y);
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

/** Offset and byte size a binding covers (the whole rest of the buffer when size is omitted). */
function extentOf(b: Binding): { offset: number; size: number } {
  if (!('buffer' in b)) return { offset: 0, size: b.size };
  const offset = b.offset ?? 0;
  return { offset, size: b.size ?? b.buffer.size - offset };
}

function checkBinding(name: string, b: Binding, elements: number, maxBindingBytes: number): void {
  const { size } = extentOf(b);
  if (elements * 4 > maxBindingBytes) {
    throw new RangeError(`${name} needs ${elements} floats, beyond this GPU's storage binding limit of ${maxBindingBytes} bytes`);
  }
  if (size < elements * 4) throw new RangeError(`${name} holds ${Math.floor(size / 4)} floats; this product needs ${elements}`);
}

/**
 * A bare buffer larger than one storage binding (a pooled bucket can round past the limit)
 * is bound only as far as the limit; checkBinding has made sure the operand lies within it.
 */
function fit(b: Binding, maxBindingBytes: number): Binding {
  const { offset, size } = extentOf(b);
  if (size <= maxBindingBytes) return b;
  return { buffer: bufferOf(b), offset, size: Math.floor(maxBindingBytes / 16) * 16 };
}

/** vec4 views need 16-byte aligned offsets and sizes, else the last vec4 would be cut off. */
function vec4Aligned(b: Binding): boolean {
  const { offset, size } = extentOf(b);
  return offset % 16 === 0 && size % 16 === 0;
}

function gemmParams(s: ResolvedMatmulShape, hasBias: boolean): Uint32Array {
  const data = new ArrayBuffer(64);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  u32.set([s.m, s.n, s.k, hasBias ? 1 : 0, s.lda, s.ldb, s.ldc, s.beta !== 0 ? 1 : 0, s.strideA, s.strideB, s.strideC, s.batch]);
  f32[12] = s.alpha;
  f32[13] = s.beta;
  u32[14] = s.strideBias;
  return u32;
}

/**
 * Records C = alpha * op(A) . op(B) + beta * C (+ bias) for `batch` matrices into `rec`,
 * writing the caller's C, through shape.epilogue and with shape.sumK. Returns the kernel it chose.
 */
export function recordMatmul(rt: GpuRuntime, rec: Recorder, ops: MatmulOperands, shape: MatmulShape): MatmulKernel {
  const s = resolveMatmulShape(shape);
  const limits = rt.device.limits;
  const maxBinding = limits.maxStorageBufferBindingSize;
  checkBinding('a', ops.a, s.extentA, maxBinding);
  checkBinding('b', ops.b, s.extentB, maxBinding);
  checkBinding('c', ops.c, s.extentC, maxBinding);
  const biasBatches = (s.batch - 1) * s.strideBias;
  if (ops.bias) checkBinding('bias', ops.bias, biasBatches + s.n, maxBinding);
  const fused = s.epilogue !== 'none' || s.sumK !== null;
  if (fused && !ops.extra) throw new RangeError(`extra is required by ${s.sumK ? `sumK '${s.sumK}'` : `the '${s.epilogue}' epilogue`}`);
  if (!fused && ops.extra) throw new RangeError(`extra is given but the product has no epilogue and no sumK`);
  if (ops.extra) checkBinding('extra', ops.extra, s.sumK === 'a' ? biasBatches + s.m : s.sumK === 'b' ? biasBatches + s.n : s.extentC, maxBinding);
  const out = bufferOf(ops.c);
  for (const [name, input] of [['a', ops.a], ['b', ops.b], ['bias', ops.bias]] as const) {
    if (input && bufferOf(input) === out) {
      throw new RangeError(`c must not share a GPU buffer with ${name}: a dispatch cannot read and write one buffer`);
    }
  }
  // extra is bound writable like c, so the two may be ranges of one buffer (a weight's and its
  // bias's gradients in ParameterStore's gradient arena), as long as they do not overlap.
  if (ops.extra && bufferOf(ops.extra) === out && rangesOverlap(ops.c, ops.extra)) {
    throw new RangeError('c and extra overlap in one GPU buffer');
  }
  if (ops.extra) {
    const extraBuffer = bufferOf(ops.extra);
    for (const [name, input] of [['a', ops.a], ['b', ops.b], ['bias', ops.bias]] as const) {
      if (input && bufferOf(input) === extraBuffer) throw new RangeError(`extra must not share a GPU buffer with ${name}`);
    }
  }
  const maxGroups = limits.maxComputeWorkgroupsPerDimension;
  if (s.batch > maxGroups) throw new RangeError(`batch = ${s.batch} exceeds ${maxGroups} (workgroups per dispatch dimension)`);

  const [a, b, c] = [fit(ops.a, maxBinding), fit(ops.b, maxBinding), fit(ops.c, maxBinding)];
  const bias = ops.bias ? fit(ops.bias, maxBinding) : null;
  let kernel = matmulKernel(s, rt.info.isFallback);
  // The outer-product kernel's vector views: A, B and C; else what a GPU would take.
  if ((kernel === 'outer_tn' || kernel === 'blocked') && ![a, b, c].every(vec4Aligned)) kernel = matmulKernel(s);
  if (kernel === 'blocked_ragged' && ![a, b].every(vec4Aligned)) kernel = matmulKernel(s);
  if (kernel === 'outer_tn_ragged' && ![b, c].every(vec4Aligned)) kernel = matmulKernel(s);
  if (kernel === 'tiled_vec4' && ![a, b, c, ...(bias ? [bias] : [])].every(vec4Aligned)) kernel = 'tiled';
  // The skinny kernels' vector views: B and C (nn), A and B (nt).
  if (kernel === 'skinny_nn' && ![b, c].every(vec4Aligned)) kernel = 'small_m';
  if (kernel === 'skinny_nt' && ![a, b].every(vec4Aligned)) kernel = 'small_m';
  let x: number;
  let y = 1;
  if (kernel === 'skinny_nn' || kernel === 'skinny_nt') {
    x = skinnyGroups(s.n);
  } else if (kernel === 'outer_tn' || kernel === 'outer_tn_ragged' || kernel === 'blocked' || kernel === 'blocked_ragged') {
    [x, y] = kernel === 'outer_tn' || kernel === 'outer_tn_ragged' ? outerGrid(s.m, s.n) : blockedGrid(s.m, s.n);
    if (y > maxGroups) throw new RangeError(`m = ${s.m} needs ${y} row blocks, more than ${maxGroups} per dispatch`);
  } else if (kernel === 'small_m') {
    x = Math.ceil(s.n / (s.transB ? SMALL_COLS_TRANS_B : SMALL_COLS));
  } else {
    x = Math.ceil(s.n / TILE);
    y = Math.ceil(s.m / TILE);
    if (y > maxGroups) throw new RangeError(`m = ${s.m} needs ${y} row tiles, more than ${maxGroups} per dispatch`);
  }
  if (x > maxGroups) throw new RangeError(`n = ${s.n} needs ${x} column workgroups, more than ${maxGroups} per dispatch`);

  if (s.sumBatches && !SUMS_BATCHES.has(kernel)) {
    recordBatchSumOneByOne(rt, rec, ops, shape, s);
    return kernel;
  }
  const params = rec.uniform(gemmParams(s, !!ops.bias));
  // Without a bias, binding 3 still needs a buffer: A is read-only already, so reuse it.
  if (kernel === 'outer_tn') {
    const extra = s.sumK ? [fit(ops.extra!, maxBinding)] : [];
    rec.dispatch(rt.pipeline(outerSpec(s.sumK, GEMM_BINDINGS)), [params, a, b, bias ?? a, c, ...extra], x, y, s.batch);
  } else if (kernel === 'outer_tn_ragged') {
    rec.dispatch(rt.pipeline(outerRaggedSpec(GEMM_BINDINGS)), [params, a, b, bias ?? a, c], x, y);
  } else if (kernel === 'blocked') {
    const spec = blockedSpec(s.transB, s.epilogue, EPILOGUE_CODES[s.epilogue], GEMM_BINDINGS, s.sumBatches);
    rec.dispatch(rt.pipeline(spec), [params, a, b, bias ?? a, c, ...(fused ? [fit(ops.extra!, maxBinding)] : [])], x, y, s.sumBatches ? 1 : s.batch);
  } else if (kernel === 'blocked_ragged') {
    rec.dispatch(rt.pipeline(blockedRaggedSpec(GEMM_BINDINGS)), [params, a, b, bias ?? a, c], x, y, s.batch);
  } else if (fused && (kernel === 'skinny_nn' || kernel === 'skinny_nt')) {
    // m <= 8 (never a k-sum here): the skinny kernel storing through the epilogue.
    const spec = skinnySpec(kernel, s.transA, s.m, FUSED_BINDINGS, EPILOGUE_CODES[s.epilogue]);
    rec.dispatch(rt.pipeline(spec), [params, a, b, bias ?? a, c, fit(ops.extra!, maxBinding)], x, y, s.batch);
  } else if (fused) {
    const spec = fusedSpec(kernel, s.transA, s.transB, s.epilogue, s.sumK);
    rec.dispatch(rt.pipeline(spec), [params, a, b, bias ?? a, c, fit(ops.extra!, maxBinding)], x, y, s.batch);
  } else {
    const key = `${specKey(kernel, s.transA, s.transB)}${s.sumBatches ? ':sum' : ''}`;
    const spec = kernel === 'skinny_nn' || kernel === 'skinny_nt' ? skinnySpec(kernel, s.transA, s.m, GEMM_BINDINGS, 0, s.sumBatches) : GEMM_SPECS.get(key)!;
    rec.dispatch(rt.pipeline(spec), [params, a, b, bias ?? a, c], x, y, s.sumBatches ? 1 : s.batch);
  }
  return kernel;
}

/**
 * sumBatches on a kernel that does not sum batches: a product per batch into the one C, the
 * first with the shape's beta and the bias, the others adding (beta 1). Batch b's A and B are
 * bound from its first element, which must sit at a binding offset the device accepts.
 */
function recordBatchSumOneByOne(rt: GpuRuntime, rec: Recorder, ops: MatmulOperands, shape: MatmulShape, s: ResolvedMatmulShape): void {
  const align = rt.device.limits.minStorageBufferOffsetAlignment;
  const from = (name: string, x: Binding, floats: number, batch: number): Binding => {
    const { offset, size } = extentOf(x);
    const at = offset + floats * 4;
    if (at % align !== 0) {
      throw new RangeError(`sumBatches: batch ${batch} of ${name} starts at byte ${at}, not a multiple of this GPU's ${align}-byte binding alignment (this kernel sums the batches one dispatch each)`);
    }
    return { buffer: bufferOf(x), offset: at, size: size - floats * 4 };
  };
  for (let b = 0; b < s.batch; b++) {
    const operands = { a: from('a', ops.a, b * s.strideA, b), b: from('b', ops.b, b * s.strideB, b), c: ops.c, bias: b === 0 ? ops.bias : null };
    recordMatmul(rt, rec, operands, { ...shape, batch: 1, sumBatches: false, beta: b === 0 ? s.beta : 1 });
  }
}

export interface ColumnSumShape {
  rows: number;
  cols: number;
  /** Elements between consecutive rows of X; default cols. */
  ld?: number;
  /** Default 1. */
  alpha?: number;
  /** Default 0: out is written without being read. */
  beta?: number;
}

/** ColumnSumShape with defaults filled in and checked; extent: the floats X must hold. */
export function resolveColumnSumShape(shape: ColumnSumShape): Required<ColumnSumShape> & { extent: number } {
  const { rows, cols } = shape;
  positiveInt('rows', rows);
  positiveInt('cols', cols);
  const ld = shape.ld ?? cols;
  if (!Number.isInteger(ld) || ld < cols) throw new RangeError(`ld must be an integer >= cols = ${cols}, got ${ld}`);
  const alpha = shape.alpha ?? 1;
  const beta = shape.beta ?? 0;
  if (!Number.isFinite(alpha)) throw new RangeError(`alpha must be a finite number, got ${alpha}`);
  if (!Number.isFinite(beta)) throw new RangeError(`beta must be a finite number, got ${beta}`);
  return { rows, cols, ld, alpha, beta, extent: (rows - 1) * ld + cols };
}

/** Records out[j] = alpha * sum_i X[i, j] + beta * out[j] for j < cols. */
export function recordColumnSum(
  rt: GpuRuntime,
  rec: Recorder,
  ops: { x: Binding; out: Binding },
  shape: ColumnSumShape,
): void {
  const s = resolveColumnSumShape(shape);
  const maxBinding = rt.device.limits.maxStorageBufferBindingSize;
  checkBinding('x', ops.x, s.extent, maxBinding);
  checkBinding('out', ops.out, s.cols, maxBinding);
  if (bufferOf(ops.x) === bufferOf(ops.out)) throw new RangeError('out must not share a GPU buffer with x');
  const groups = Math.ceil(s.cols / SUM_COLS);
  const maxGroups = rt.device.limits.maxComputeWorkgroupsPerDimension;
  if (groups > maxGroups) throw new RangeError(`cols = ${s.cols} needs ${groups} workgroups, more than ${maxGroups}`);
  // The GEMM Params layout: m = rows, n = cols, lda = ld, read_c, alpha, beta.
  const data = new ArrayBuffer(64);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  u32[0] = s.rows;
  u32[1] = s.cols;
  u32[4] = s.ld;
  u32[7] = s.beta !== 0 ? 1 : 0;
  f32[12] = s.alpha;
  f32[13] = s.beta;
  rec.dispatch(rt.pipeline(COLUMN_SUM), [rec.uniform(u32), fit(ops.x, maxBinding), fit(ops.out, maxBinding)], groups);
}

export interface MatmulHostInput extends MatmulShape {
  a: Float32Array;
  b: Float32Array;
  /** Initial C; required when beta != 0. Its length sets the output's length. */
  c?: Float32Array;
  bias?: Float32Array;
  /**
   * The epilogue's or k-sum's operand: required for 'residual' and 'gelu_backward', and for
   * sumK when beta != 0; 'gelu' and sumK start from zeros without it.
   */
  extra?: Float32Array;
}

function checkHost(name: string, data: Float32Array, elements: number): void {
  if (data.length < elements) throw new RangeError(`${name} has ${data.length} values; this product needs ${elements}`);
}

/**
 * Host arrays in, C out: uploads, records one product, submits once, reads back, releases.
 * For tests, the kernel runner and benchmarks.
 */
export async function runMatmul(rt: GpuRuntime, input: MatmulHostInput): Promise<Float32Array> {
  return (await runMatmulFused(rt, input)).c;
}

/** runMatmul that also reads back `extra` (empty without an epilogue or k-sum). */
export async function runMatmulFused(rt: GpuRuntime, input: MatmulHostInput): Promise<{ c: Float32Array; extra: Float32Array }> {
  const s = resolveMatmulShape(input);
  checkHost('a', input.a, s.extentA);
  checkHost('b', input.b, s.extentB);
  const biasBatches = (s.batch - 1) * s.strideBias;
  if (input.bias) checkHost('bias', input.bias, biasBatches + s.n);
  if (input.c) checkHost('c', input.c, s.extentC);
  else if (s.beta !== 0) throw new RangeError(`c is required when beta != 0 (beta = ${s.beta})`);
  const length = input.c ? input.c.length : s.extentC;
  const fused = s.epilogue !== 'none' || s.sumK !== null;
  const extraLength = s.sumK === 'a' ? biasBatches + s.m : s.sumK === 'b' ? biasBatches + s.n : length;
  if (input.extra) checkHost('extra', input.extra, extraLength);
  else if (s.epilogue === 'residual' || s.epilogue === 'gelu_backward') throw new RangeError(`extra is required by the '${s.epilogue}' epilogue`);
  else if (s.sumK && s.beta !== 0) throw new RangeError(`extra is required when sumK accumulates (beta = ${s.beta})`);
  if (input.extra && !fused) throw new RangeError('extra is given but the product has no epilogue and no sumK');
  const rec = rt.recorder('matmul');
  const a = rt.upload(input.a, 'matmul.a');
  const b = rt.upload(input.b, 'matmul.b');
  // Without c, start from zeros so gaps between rows (ldc > n) read back as 0, not stale data.
  const c = rt.upload(input.c ?? new Float32Array(length), 'matmul.c');
  const bias = input.bias ? rt.upload(input.bias, 'matmul.bias') : null;
  const extra = fused ? rt.upload(input.extra ?? new Float32Array(extraLength), 'matmul.extra') : null;
  const owned = [a, b, c, ...(bias ? [bias] : []), ...(extra ? [extra] : [])];
  try {
    recordMatmul(rt, rec, { a, b, c, bias, extra }, s);
    const result = rec.readF32(c, length);
    const extraResult = extra ? rec.readF32(extra, input.extra?.length ?? extraLength) : null;
    await rec.submit();
    return { c: await result, extra: extraResult ? await extraResult : new Float32Array(0) };
  } finally {
    rt.release(...owned);
  }
}

export interface ColumnSumHostInput extends ColumnSumShape {
  x: Float32Array;
  /** Initial out; required when beta != 0. */
  out?: Float32Array;
}

/** Host helper for recordColumnSum: one submission, one readback of `cols` values. */
export async function runColumnSum(rt: GpuRuntime, input: ColumnSumHostInput): Promise<Float32Array> {
  const s = resolveColumnSumShape(input);
  const { cols } = s;
  checkHost('x', input.x, s.extent);
  if (input.out) checkHost('out', input.out, cols);
  else if (s.beta !== 0) throw new RangeError(`out is required when beta != 0 (beta = ${s.beta})`);
  const rec = rt.recorder('column_sum');
  const x = rt.upload(input.x, 'column_sum.x');
  const out = input.out ? rt.upload(input.out, 'column_sum.out') : rt.storage(cols * 4, 'column_sum.out');
  try {
    recordColumnSum(rt, rec, { x, out }, s);
    const result = rec.readF32(out, cols);
    await rec.submit();
    return await result;
  } finally {
    rt.release(x, out);
  }
}
