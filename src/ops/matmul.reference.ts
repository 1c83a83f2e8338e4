// Float64 reference twin of shaders/matmul.wgsl: the textbook triple loop over the same
// strided, batched layout, written for clarity; tests compare the WGSL kernels against it.

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
  /** bias[n], added to every row. */
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
  const length = ops.c ? ops.c.length : (batch - 1) * strideC + (m - 1) * ldc + n;
  const out = new Float64Array(length);
  if (ops.c) out.set(Array.from(ops.c));

  const opA = (base: number, i: number, p: number) => ops.a[base + (transA ? p * lda + i : i * lda + p)];
  const opB = (base: number, p: number, j: number) => ops.b[base + (transB ? j * ldb + p : p * ldb + j)];
  for (let bt = 0; bt < batch; bt++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let p = 0; p < k; p++) dot += opA(bt * strideA, i, p) * opB(bt * strideB, p, j);
        const index = bt * strideC + i * ldc + j;
        let v = alpha * dot;
        if (beta !== 0) v += beta * out[index];
        if (ops.bias) v += ops.bias[j];
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
