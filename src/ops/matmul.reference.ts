// Float64 reference twin of shaders/matmul.wgsl: the textbook triple loop over the same
// strided, batched layout, written for clarity; tests compare the WGSL kernels against it.
import { geluBackwardRef, geluRef } from './activation.reference';

export interface MatmulRefShape {
  m: number;
  n: number;
  k: number;
  transA?: boolean;
  transB?: boolean;
  alpha?: number;
  beta?: number;
  batch?: number;
  strideA?: number;
  strideB?: number;
  strideC?: number;
  /** Elements between batches' bias (and k-sums in extra); default 0: one bias for all. */
  strideBias?: number;
  /** One C: alpha * the sum over the batches of op(A[b]) . op(B[b]) + beta * C + bias. */
  sumBatches?: boolean;
  lda?: number;
  ldb?: number;
  ldc?: number;
}

export interface MatmulRefOperands {
  /** Stored [m, k] (or [k, m] when transA), row-major, batch after batch. */
  a: ArrayLike<number>;
  /** Stored [k, n] (or [n, k] when transB). */
  b: ArrayLike<number>;
  /** Initial C, read only when beta != 0; its length sets the result's length. */
  c?: ArrayLike<number>;
  /** bias[n], added to every row; batch b's at b * strideBias. */
  bias?: ArrayLike<number>;
}

/**
 * C[b] = alpha * op(A[b]) . op(B[b]) + beta * C[b] + bias, with element (i, j) of a stored
 * matrix X at X[b * strideX + i * ldX + j]. Entries of C outside the written matrices keep
 * their initial values (0 without c). With beta = 0 the initial C is ignored, NaN included.
 */
export function matmulRef(ops: MatmulRefOperands, shape: MatmulRefShape): Float64Array {
  const { m, n, k } = shape;
  const transA = shape.transA ?? false;
  const transB = shape.transB ?? false;
  const alpha = shape.alpha ?? 1;
  const beta = shape.beta ?? 0;
  const batch = shape.batch ?? 1;
  const lda = shape.lda ?? (transA ? m : k);
  const ldb = shape.ldb ?? (transB ? k : n);
  const ldc = shape.ldc ?? n;
  const strideA = shape.strideA ?? (transA ? k : m) * lda;
  const strideB = shape.strideB ?? (transB ? n : k) * ldb;
  const strideC = shape.strideC ?? m * ldc;
  const sum = shape.sumBatches ?? false;
  const length = ops.c ? ops.c.length : (sum ? 0 : (batch - 1) * strideC) + (m - 1) * ldc + n;
  const out = new Float64Array(length);
  if (ops.c) out.set(Array.from(ops.c));

  const opA = (base: number, i: number, p: number) => ops.a[base + (transA ? p * lda + i : i * lda + p)];
  const opB = (base: number, p: number, j: number) => ops.b[base + (transB ? j * ldb + p : p * ldb + j)];
  if (sum) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let bt = 0; bt < batch; bt++) for (let p = 0; p < k; p++) dot += opA(bt * strideA, i, p) * opB(bt * strideB, p, j);
        const index = i * ldc + j;
        out[index] = alpha * dot + (beta !== 0 ? beta * out[index] : 0) + (ops.bias ? ops.bias[j] : 0);
      }
    }
    return out;
  }
  for (let bt = 0; bt < batch; bt++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let p = 0; p < k; p++) dot += opA(bt * strideA, i, p) * opB(bt * strideB, p, j);
        const index = bt * strideC + i * ldc + j;
        let v = alpha * dot;
        if (beta !== 0) v += beta * out[index];
        if (ops.bias) v += ops.bias[bt * (shape.strideBias ?? 0) + j];
        out[index] = v;
      }
    }
  }
  return out;
}

/** out[j] = alpha * sum_i X[i * ld + j] + beta * out[j]; out is ignored when beta = 0. */
export function columnSumRef(
  x: ArrayLike<number>,
  shape: { rows: number; cols: number; ld?: number; alpha?: number; beta?: number },
  out?: ArrayLike<number>,
): Float64Array {
  const { rows, cols } = shape;
  const ld = shape.ld ?? cols;
  const alpha = shape.alpha ?? 1;
  const beta = shape.beta ?? 0;
  const result = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    let s = 0;
    for (let i = 0; i < rows; i++) s += x[i * ld + j];
    result[j] = alpha * s + (beta !== 0 && out ? beta * out[j] : 0);
  }
  return result;
}

export interface MatmulFusedRefShape extends MatmulRefShape {
  /** As MatmulShape.epilogue: 'residual', 'gelu', 'gelu_backward' (default 'none'). */
  epilogue?: 'none' | 'residual' | 'gelu' | 'gelu_backward';
  /** As MatmulShape.sumK: also sum op(B)'s columns ('b') or op(A)'s rows ('a') over k into extra. */
  sumK?: 'a' | 'b' | null;
}

/**
 * The fused products of shaders/matmul.wgsl: the product P = matmulRef(ops, shape), then
 * - 'residual': C = P + extra; 'gelu': C = P, extra = gelu(P); 'gelu_backward': C = P * gelu'(extra),
 *   elementwise over the written entries of C (extra laid out like C);
 * - sumK 'b': extra[j] = alpha * sum_k op(B)[k, j] + beta * extra[j] (j < n); 'a': the rows of op(A).
 * Returns C and the final extra (GELU in its textbook tanh forms, from activation.reference).
 */
export function matmulFusedRef(
  ops: MatmulRefOperands & { extra?: ArrayLike<number> },
  shape: MatmulFusedRefShape,
): { c: Float64Array; extra: Float64Array } {
  const c = matmulRef(ops, shape);
  const epilogue = shape.epilogue ?? 'none';
  const { m, n, k } = shape;
  const alpha = shape.alpha ?? 1;
  const beta = shape.beta ?? 0;
  if (shape.sumK) {
    // Batch b's sums at b * strideBias; entries between them keep their initial values.
    const length = shape.sumK === 'a' ? m : n;
    const transA = shape.transA ?? false;
    const transB = shape.transB ?? false;
    const lda = shape.lda ?? (transA ? m : k);
    const ldb = shape.ldb ?? (transB ? k : n);
    const batch = shape.batch ?? 1;
    const strideA = shape.strideA ?? (transA ? k : m) * lda;
    const strideB = shape.strideB ?? (transB ? n : k) * ldb;
    const strideBias = shape.strideBias ?? 0;
    const extra = new Float64Array(Math.max((batch - 1) * strideBias + length, ops.extra?.length ?? 0));
    if (ops.extra) extra.set(Array.from(ops.extra));
    for (let bt = 0; bt < batch; bt++) {
      for (let j = 0; j < length; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) {
          s += shape.sumK === 'a' ? ops.a[bt * strideA + (transA ? p * lda + j : j * lda + p)] : ops.b[bt * strideB + (transB ? j * ldb + p : p * ldb + j)];
        }
        const e = bt * strideBias + j;
        extra[e] = alpha * s + (beta !== 0 ? beta * extra[e] : 0);
      }
    }
    return { c, extra };
  }
  const extra = new Float64Array(c.length);
  if (ops.extra) extra.set(Array.from(ops.extra).slice(0, c.length));
  if (epilogue === 'none') return { c, extra };
  const batch = shape.batch ?? 1;
  const ldc = shape.ldc ?? n;
  const strideC = shape.strideC ?? m * ldc;
  for (let bt = 0; bt < batch; bt++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        const index = bt * strideC + i * ldc + j;
        const v = c[index];
        if (epilogue === 'residual') c[index] = v + extra[index];
        else if (epilogue === 'gelu') extra[index] = geluRef([v])[0];
        else c[index] = geluBackwardRef([extra[index]], [v])[0];
      }
    }
  }
  return { c, extra };
}
