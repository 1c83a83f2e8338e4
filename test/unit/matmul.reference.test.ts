// The float64 twin of the matmul kernels: hand-computed products, layouts (transposes,
// batches, strides, leading dimensions), and the linear layer's gradients by finite differences.
import { describe, expect, it } from 'vitest';
import { geluBackwardRef, geluRef } from '../../src/ops/activation.reference';
import { columnSumRef, matmulFusedRef, matmulRef } from '../../src/ops/matmul.reference';
import { normal, rng } from '../helpers/random';

/** Row-major transpose of a [rows, cols] matrix. */
function transpose(x: ArrayLike<number>, rows: number, cols: number): number[] {
  const out = new Array<number>(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = x[i * cols + j];
  return out;
}

describe('matmul reference twin', () => {
  it('matches a hand-computed 2x3 . 3x2 product, with alpha, beta and bias', () => {
    const a = [1, 2, 3, 4, 5, 6]; // [[1,2,3],[4,5,6]]
    const b = [7, 8, 9, 10, 11, 12]; // [[7,8],[9,10],[11,12]]
    expect(Array.from(matmulRef({ a, b }, { m: 2, n: 2, k: 3 }))).toEqual([58, 64, 139, 154]);
    const c = [1, 1, 1, 1];
    const out = matmulRef({ a, b, c, bias: [10, 20] }, { m: 2, n: 2, k: 3, alpha: 2, beta: -1 });
    expect(Array.from(out)).toEqual([2 * 58 - 1 + 10, 2 * 64 - 1 + 20, 2 * 139 - 1 + 10, 2 * 154 - 1 + 20]);
  });

  it('reads A^T and B^T from the transposed storage', () => {
    const rand = rng(1);
    const [m, n, k] = [3, 4, 5];
    const a = normal(rand, m * k);
    const b = normal(rand, k * n);
    const plain = matmulRef({ a, b }, { m, n, k });
    for (const [transA, transB] of [[true, false], [false, true], [true, true]]) {
      const out = matmulRef(
        { a: transA ? transpose(a, m, k) : a, b: transB ? transpose(b, k, n) : b },
        { m, n, k, transA, transB },
      );
      out.forEach((v, i) => expect(v, `trans ${transA}/${transB} [${i}]`).toBeCloseTo(plain[i], 12));
    }
  });

  it('ignores NaN in C when beta = 0 and propagates it otherwise', () => {
    const ops = { a: [1, 2], b: [3, 4], c: [NaN] };
    expect(matmulRef(ops, { m: 1, n: 1, k: 2 })[0]).toBe(11);
    expect(matmulRef(ops, { m: 1, n: 1, k: 2, beta: 1 })[0]).toBeNaN();
  });

  it('batches with strides equal separate products; stride 0 broadcasts', () => {
    const rand = rng(2);
    const [m, n, k, batch] = [2, 3, 4, 3];
    const a = normal(rand, batch * m * k);
    const b = normal(rand, batch * k * n);
    const out = matmulRef({ a, b }, { m, n, k, batch });
    const shared = matmulRef({ a, b }, { m, n, k, batch, strideB: 0 });
    for (let t = 0; t < batch; t++) {
      const at = a.slice(t * m * k, (t + 1) * m * k);
      const one = matmulRef({ a: at, b: b.slice(t * k * n, (t + 1) * k * n) }, { m, n, k });
      const first = matmulRef({ a: at, b: b.slice(0, k * n) }, { m, n, k });
      one.forEach((v, i) => expect(out[t * m * n + i]).toBeCloseTo(v, 12));
      first.forEach((v, i) => expect(shared[t * m * n + i]).toBeCloseTo(v, 12));
    }
  });

  it('leading dimensions address sub-matrices and leave the rest of C untouched', () => {
    // A is the left 2x3 block of a 2x5 matrix; C is a 2x2 window (ldc 4) of an 8-float buffer.
    const a = [1, 2, 3, 99, 99, 4, 5, 6, 99, 99];
    const b = [7, 8, 9, 10, 11, 12];
    const c = [-1, -1, -1, -1, -1, -1, -1, -1];
    const out = matmulRef({ a, b, c }, { m: 2, n: 2, k: 3, lda: 5, ldc: 4 });
    expect(Array.from(out)).toEqual([58, 64, -1, -1, 139, 154, -1, -1]);
  });

  it('column sum: hand-computed, with leading dimension, alpha and beta', () => {
    const x = [1, 2, 0, 3, 4, 0, 5, 6, 0]; // 3 rows of [a, b] in a row stride of 3
    expect(Array.from(columnSumRef(x, { rows: 3, cols: 2, ld: 3 }))).toEqual([9, 12]);
    expect(Array.from(columnSumRef(x, { rows: 3, cols: 2, ld: 3, alpha: 2, beta: 1 }, [1, -1]))).toEqual([19, 23]);
    expect(Array.from(columnSumRef(x, { rows: 3, cols: 2, ld: 3 }, [NaN, NaN]))).toEqual([9, 12]);
  });

  it("gives a linear layer's gradients (dX = G.W, dW = G^T.X, db = colsum G) that finite differences confirm", () => {
    for (const [seed, tokens, inF, outF] of [
      [3, 1, 2, 3],
      [4, 5, 4, 3],
      [5, 7, 6, 9],
    ] as const) {
      const rand = rng(seed);
      const x = normal(rand, tokens * inF);
      const w = normal(rand, outF * inF); // PyTorch layout [out, in]
      const bias = normal(rand, outF);
      const g = normal(rand, tokens * outF); // dL/dY
      // L = sum G * (X W^T + b)
      const loss = (xs: number[], ws: number[], bs: number[]) => {
        const y = matmulRef({ a: xs, b: ws, bias: bs }, { m: tokens, n: outF, k: inF, transB: true });
        return y.reduce((s, v, i) => s + v * g[i], 0);
      };
      const dx = matmulRef({ a: g, b: w }, { m: tokens, n: inF, k: outF });
      const dw = matmulRef({ a: g, b: x }, { m: outF, n: inF, k: tokens, transA: true });
      const db = columnSumRef(g, { rows: tokens, cols: outF });
      const h = 1e-6;
      const numeric = (values: number[], i: number, f: (v: number[]) => number) => {
        const plus = values.slice();
        const minus = values.slice();
        plus[i] += h;
        minus[i] -= h;
        return (f(plus) - f(minus)) / (2 * h);
      };
      x.forEach((_, i) => expect(Math.abs(numeric(x, i, (v) => loss(v, w, bias)) - dx[i]), `seed ${seed} dX[${i}]`).toBeLessThan(1e-7));
      w.forEach((_, i) => expect(Math.abs(numeric(w, i, (v) => loss(x, v, bias)) - dw[i]), `seed ${seed} dW[${i}]`).toBeLessThan(1e-7));
      bias.forEach((_, i) => expect(Math.abs(numeric(bias, i, (v) => loss(x, w, v)) - db[i]), `seed ${seed} db[${i}]`).toBeLessThan(1e-7));
    }
  });

  it('accumulates with beta = 1 the way gradient accumulation over micro-batches needs', () => {
    const rand = rng(6);
    const [tokens, inF, outF] = [4, 3, 2];
    const g = [normal(rand, tokens * outF), normal(rand, tokens * outF)];
    const x = [normal(rand, tokens * inF), normal(rand, tokens * inF)];
    const first = matmulRef({ a: g[0], b: x[0] }, { m: outF, n: inF, k: tokens, transA: true });
    const acc = matmulRef({ a: g[1], b: x[1], c: first }, { m: outF, n: inF, k: tokens, transA: true, beta: 1 });
    // Equivalent to one product over the concatenated tokens.
    const all = matmulRef({ a: [...g[0], ...g[1]], b: [...x[0], ...x[1]] }, { m: outF, n: inF, k: 2 * tokens, transA: true });
    all.forEach((v, i) => expect(acc[i]).toBeCloseTo(v, 12));
  });
});

describe('fused matmul reference (epilogues and k-sums)', () => {
  const a = [1, 2, 3, 4, 5, 6]; // [[1,2,3],[4,5,6]]
  const b = [7, 8, 9, 10, 11, 12]; // [[7,8],[9,10],[11,12]]
  const shape = { m: 2, n: 2, k: 3 };

  it('residual: C = A.B + bias + R, by hand', () => {
    const out = matmulFusedRef({ a, b, bias: [10, 20], extra: [1, -1, 0.5, 2] }, { ...shape, epilogue: 'residual' });
    expect(Array.from(out.c)).toEqual([58 + 10 + 1, 64 + 20 - 1, 139 + 10 + 0.5, 154 + 20 + 2]);
  });

  it('gelu keeps the pre-activation in C and puts gelu(C) in extra; gelu_backward multiplies by gelu\'(extra)', () => {
    const a2 = [0.1, -0.2, 0.3, 0.4, 0.05, -0.6];
    const pre = matmulRef({ a: a2, b }, shape);
    const fwd = matmulFusedRef({ a: a2, b }, { ...shape, epilogue: 'gelu' });
    expect(Array.from(fwd.c)).toEqual(Array.from(pre));
    expect(Array.from(fwd.extra)).toEqual(Array.from(geluRef(pre)));
    const x = [-1.5, 0.25, 2, -0.1];
    const bwd = matmulFusedRef({ a: a2, b, extra: x }, { ...shape, epilogue: 'gelu_backward' });
    expect(Array.from(bwd.c)).toEqual(Array.from(geluBackwardRef(x, pre)));
    expect(Array.from(bwd.extra)).toEqual(x);
    // gelu'(0) = 0.5, so C = product / 2 there.
    expect(matmulFusedRef({ a, b, extra: [0, 0, 0, 0] }, { ...shape, epilogue: 'gelu_backward' }).c[0]).toBeCloseTo(29, 12);
  });

  it('sumK sums op(B) columns or op(A) rows over k, with alpha and beta, whatever the storage', () => {
    // op(B) columns: 7+9+11 = 27, 8+10+12 = 30; op(A) rows: 6, 15.
    expect(Array.from(matmulFusedRef({ a, b }, { ...shape, sumK: 'b' }).extra)).toEqual([27, 30]);
    expect(Array.from(matmulFusedRef({ a, b }, { ...shape, sumK: 'a' }).extra)).toEqual([6, 15]);
    const acc = matmulFusedRef({ a, b, extra: [1, 2] }, { ...shape, sumK: 'b', alpha: 2, beta: -1 });
    expect(Array.from(acc.extra)).toEqual([2 * 27 - 1, 2 * 30 - 2]);
    const at = transpose(a, 2, 3);
    const bt = transpose(b, 3, 2);
    expect(Array.from(matmulFusedRef({ a: at, b: bt }, { ...shape, transA: true, transB: true, sumK: 'a' }).extra)).toEqual([6, 15]);
    expect(Array.from(matmulFusedRef({ a: at, b: bt }, { ...shape, transA: true, transB: true, sumK: 'b' }).extra)).toEqual([27, 30]);
  });

  it('the fused dW product gives the bias gradient of both weight layouts (column sums of dY)', () => {
    const rand = rng(7);
    const [rows, inF, outF] = [5, 3, 4];
    const x = normal(rand, rows * inF);
    const dy = normal(rand, rows * outF);
    const db = columnSumRef(dy, { rows, cols: outF });
    // in_out (Conv1D): dW = Xᵀ.dY, sum op(B) = dY's columns; out_in (Linear): dW = dYᵀ.X, rows of op(A) = dYᵀ.
    const inOut = matmulFusedRef({ a: x, b: dy }, { m: inF, n: outF, k: rows, transA: true, sumK: 'b' });
    const outIn = matmulFusedRef({ a: dy, b: x }, { m: outF, n: inF, k: rows, transA: true, sumK: 'a' });
    for (const got of [inOut.extra, outIn.extra]) got.forEach((v, j) => expect(v).toBeCloseTo(db[j], 12));
  });
});
