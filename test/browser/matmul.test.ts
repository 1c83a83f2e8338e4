// The WGSL matmul kernels against their float64 twin, run in headless Chromium (WebGPU).
// Tolerance: atol 1e-4*sqrt(K) + rtol 1e-4 on N(0, 1) inputs. A K-term f32 dot product has
// partial sums of size ~sqrt(K) and rounding error ~6e-8*sqrt(K) per addition, so ~6e-8*K
// even if every rounding had the same sign: 70x under the bound at K = 512. An index error
// moves a result by O(1) and fails it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { columnSumRef, matmulFusedRef, matmulRef, type MatmulFusedRefShape } from '../../src/ops/matmul.reference';
import type { MatmulShape } from '../../src/ops/matmul';
import { expectClose } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

const CASES = '/test/harness/cases/matmul.ts';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

function tol(k: number) {
  return { atol: 1e-4 * Math.sqrt(k), rtol: 1e-4 };
}

/** f32-rounded N(0, 1) values, so kernel and twin see the same numbers. */
function f32(rand: () => number, n: number): number[] {
  return Array.from(new Float32Array(normal(rand, n)));
}

interface Options {
  bias?: boolean;
  /** Initial C for beta != 0. */
  withC?: boolean;
}

/** Random operands sized for `shape` (including batches, leading dimensions and strides). */
function operands(seed: number, shape: MatmulShape, opts: Options = {}) {
  const { m, n, k } = shape;
  const batch = shape.batch ?? 1;
  const [rowsA, colsA] = shape.transA ? [k, m] : [m, k];
  const [rowsB, colsB] = shape.transB ? [n, k] : [k, n];
  const lda = shape.lda ?? colsA;
  const ldb = shape.ldb ?? colsB;
  const ldc = shape.ldc ?? n;
  const extent = (stride: number | undefined, rows: number, ld: number, cols: number) =>
    (batch - 1) * (stride ?? rows * ld) + (rows - 1) * ld + cols;
  const rand = rng(seed);
  return {
    a: f32(rand, extent(shape.strideA, rowsA, lda, colsA)),
    b: f32(rand, extent(shape.strideB, rowsB, ldb, colsB)),
    ...(opts.withC ? { c: f32(rand, extent(shape.strideC, m, ldc, n)) } : {}),
    ...(opts.bias ? { bias: f32(rand, (batch - 1) * (shape.strideBias ?? 0) + n) } : {}),
  };
}

/** Float32 bytes as base64: page.evaluate passes a string far faster than 262k numbers. */
function pack(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

async function check(seed: number, shape: MatmulShape, opts: Options = {}): Promise<string> {
  const ops = operands(seed, shape, opts);
  const packed = Object.fromEntries(Object.entries(ops).map(([name, values]) => [name, pack(values)]));
  const out = await harness.runModule(CASES, 'matmul', { ...packed, ...shape });
  expectClose(out.c, matmulRef(ops, shape), tol(shape.k), `C of ${JSON.stringify(shape)}`);
  return out.kernel;
}

const COMBOS = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
] as const;

/**
 * The kernel a software adapter takes for a vec4-friendly product of M > 8 rows (outer_tn for
 * Aᵀ.B, blocked for A.op(B)), or null where it takes the tiled one as a GPU does.
 */
function softwareKernel(transA: boolean, transB: boolean): 'outer_tn' | 'blocked' | null {
  if (!harness.info.isFallback) return null;
  if (!transA) return 'blocked';
  return transB ? null : 'outer_tn';
}

describe('matmul kernels (WGSL) vs float64 twin', () => {
  it('reports a WebGPU adapter', () => {
    expect(harness.info.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
  });

  it('tiled kernel, every transA/transB combination, shapes that are not multiples of the tile', async () => {
    const shapes = [
      [1, 1, 1],
      [3, 5, 7],
      [17, 33, 65],
      [64, 64, 64],
      [130, 70, 257],
    ] as const;
    let seed = 100;
    for (const [m, n, k] of shapes) {
      for (const [transA, transB] of COMBOS) {
        // Odd seeds add a bias and accumulate into a random C.
        const extra = ++seed % 2 === 1;
        const shape: MatmulShape = { m, n, k, transA, transB, path: 'tiled', alpha: extra ? 0.75 : 1, beta: extra ? -1.5 : 0 };
        const kernel = await check(seed, shape, { bias: extra, withC: extra });
        const quad = [transA ? m : k, transB ? k : n, n].every((v) => v % 4 === 0);
        expect(kernel, JSON.stringify(shape)).toBe(quad ? 'tiled_vec4' : 'tiled');
      }
    }
  });

  it('vec4 path on multiples of 4 that are not multiples of 64, with bias and beta', async () => {
    let seed = 200;
    for (const [transA, transB] of COMBOS) {
      const shape = { m: 68, n: 132, k: 36, transA, transB, alpha: 1.25, beta: 0.5 };
      // On a software adapter Aᵀ.B takes the outer-product kernel and A.op(B) the blocked one;
      // forced, the tiled one.
      const software = softwareKernel(transA, transB);
      expect(await check(++seed, shape, { bias: true, withC: true })).toBe(software ?? 'tiled_vec4');
      if (software) expect(await check(++seed, { ...shape, path: 'tiled' }, { bias: true, withC: true })).toBe('tiled_vec4');
    }
    // K = 20 and 36: multiples of 4 that end part-way through a TK = 32 stage.
    expect(await check(++seed, { m: 12, n: 8, k: 20, path: 'tiled' })).toBe('tiled_vec4');
  });

  it('small-M path (M <= 8) for every combination, M in {1, 2, 5, 8}', async () => {
    let seed = 300;
    for (const [transA, transB] of COMBOS) {
      for (const m of [1, 2, 5, 8]) {
        const shape = { m, n: 37, k: 45, transA, transB, alpha: 2, beta: 1 };
        expect(await check(++seed, shape, { bias: m % 2 === 0, withC: true })).toBe('small_m');
      }
    }
  });

  it('decode shapes M = 1 and M = 4 with K = N = 512 (X.W^T and X.W)', async () => {
    let seed = 400;
    for (const m of [1, 4]) {
      for (const transB of [true, false]) {
        expect(await check(++seed, { m, n: 512, k: 512, transB }, { bias: true })).toBe(transB ? 'skinny_nt' : 'skinny_nn');
        expect(await check(++seed, { m, n: 512, k: 512, transB, path: 'small' }, { bias: true })).toBe('small_m');
      }
    }
  });

  it('skinny kernels (M <= 8): every row count, a K tail, transposed A, alpha/beta/bias, batches, leading dimensions; other layouts take small_m', async () => {
    let seed = 1300;
    // Each row count is a pipeline of its own (the shader's M_ROWS).
    for (const m of [1, 2, 3, 4, 5, 6, 7, 8]) {
      // K = 13: the 4-step K loop and its tail.
      expect(await check(++seed, { m, n: 20, k: 13 }, { bias: true })).toBe('skinny_nn');
      expect(await check(++seed, { m, n: 9, k: 16, transB: true }, { bias: true })).toBe('skinny_nt');
    }
    expect(await check(++seed, { m: 5, n: 16, k: 9, transA: true })).toBe('skinny_nn');
    expect(await check(++seed, { m: 4, n: 12, k: 10, alpha: 0.5, beta: 1 }, { withC: true, bias: true })).toBe('skinny_nn');
    expect(await check(++seed, { m: 6, n: 5, k: 12, transB: true, alpha: -2, beta: 0.5 }, { withC: true })).toBe('skinny_nt');
    // Batches with strides and leading dimensions that keep the vector loads (multiples of 4).
    expect(await check(++seed, { m: 3, n: 8, k: 6, batch: 3, lda: 10, ldb: 12, ldc: 16, strideA: 40, strideB: 80, strideC: 64 })).toBe('skinny_nn');
    expect(await check(++seed, { m: 2, n: 5, k: 8, transB: true, batch: 2, lda: 12, ldb: 8, strideA: 24, strideB: 48 })).toBe('skinny_nt');
    // B broadcast over the batch (stride 0).
    expect(await check(++seed, { m: 4, n: 8, k: 7, batch: 3, strideB: 0 })).toBe('skinny_nn');
    // Layouts without the vector loads.
    expect(await check(++seed, { m: 4, n: 6, k: 8 })).toBe('small_m');
    expect(await check(++seed, { m: 2, n: 7, k: 10, transB: true })).toBe('small_m');
    expect(await check(++seed, { m: 3, n: 8, k: 8, transA: true, transB: true })).toBe('small_m');
  });

  it('forced paths agree: tiled on M <= 8, small on the same shape', async () => {
    const shape = { m: 6, n: 40, k: 70, transB: true };
    expect(await check(500, { ...shape, path: 'tiled' })).toBe('tiled');
    expect(await check(500, { ...shape, path: 'small' })).toBe('small_m');
  });

  it('beta = 0 ignores NaN in the old C; beta = 1 accumulates (gradient accumulation)', async () => {
    for (const path of ['tiled', 'small'] as const) {
      const shape = { m: 5, n: 9, k: 11, path };
      const ops = operands(600, shape);
      const stale = await harness.runModule(CASES, 'matmul', { ...ops, ...shape, c: new Array(45).fill(NaN) });
      expectClose(stale.c, matmulRef(ops, shape), tol(11), `beta = 0 over NaN (${path})`);
      const twice = await harness.runModule(CASES, 'matmul', { ...ops, ...shape, c: stale.c, beta: 1 });
      expectClose(twice.c, matmulRef(ops, { ...shape, alpha: 2 }), tol(11), `beta = 1 (${path})`);
    }
  });

  it('NaN and Inf stay in their own rows and columns (zero-padded tiles never mix them in)', async () => {
    let seed = 650;
    for (const [transA, transB] of COMBOS) {
      for (const [m, n, k, path] of [
        [5, 6, 7, 'tiled'],
        [8, 8, 8, 'tiled'],
        [3, 10, 9, 'small'],
      ] as const) {
        const shape = { m, n, k, transA, transB, path };
        const ops = operands(++seed, shape);
        // NaN at op(A)[2, 0] and Inf at op(B)[0, 1]. With A stored [M, K] (B stored [N, K])
        // each begins a stored row, so a tile that read past K in the row before would pull
        // it into row 1 (column 0) of C, as NaN or Inf * 0 = NaN.
        ops.a[transA ? 2 : 2 * k] = NaN;
        ops.b[transB ? k : 1] = Infinity;
        const out = await harness.runModule(CASES, 'matmul', { ...ops, ...shape });
        const ref = matmulRef(ops, shape);
        expect(ref.slice(n, 2 * n).some((v) => Number.isNaN(v))).toBe(false);
        expectClose(out.c, ref, tol(k), `C of ${JSON.stringify(shape)}`);
      }
    }
  });

  it('batched [B,M,K] x [B,K,N] products, every combination, both paths', async () => {
    let seed = 700;
    for (const [transA, transB] of COMBOS) {
      for (const m of [3, 19]) {
        const shape = { m, n: 13, k: 21, batch: 3, transA, transB, alpha: 0.5, beta: 1 };
        await check(++seed, shape, { bias: true, withC: true });
      }
      // vec4-eligible batched shape (strides are multiples of 4): the kernel an unbatched product takes.
      const vec4Shape = { m: 20, n: 12, k: 8, batch: 2, transA, transB };
      expect(await check(++seed, vec4Shape)).toBe(softwareKernel(transA, transB) ?? 'tiled_vec4');
      expect(await check(++seed, { ...vec4Shape, path: 'tiled' })).toBe('tiled_vec4');
    }
  });

  it('batch stride 0 broadcasts one matrix; leading dimensions address one head of [T, H*D]', async () => {
    // Shared weights: B broadcast over 4 batches.
    await check(800, { m: 10, n: 7, k: 9, batch: 4, strideB: 0 });
    await check(801, { m: 2, n: 7, k: 9, batch: 4, strideB: 0 });
    // Attention scores for H = 3 heads of D = 5 in Q, K stored [T, H*D]: batch over heads with
    // stride D and leading dimension H*D; scores [H, T, T] packed.
    const T = 11;
    const H = 3;
    const D = 5;
    const shape = { m: T, n: T, k: D, transB: true, batch: H, lda: H * D, ldb: H * D, strideA: D, strideB: D, alpha: 1 / Math.sqrt(D) };
    await check(802, shape);
    // Context = P . V with V [T, H*D]: C written into the [T, H*D] layout (ldc = H*D, strideC = D).
    await check(803, { m: T, n: D, k: T, batch: H, ldb: H * D, strideB: D, ldc: H * D, strideC: D });
    // A padded leading dimension that is a multiple of 4 keeps the vec4 paths.
    expect(await check(804, { m: 9, n: 12, k: 8, lda: 12, ldb: 16, ldc: 20, path: 'tiled' })).toBe('tiled_vec4');
    expect(await check(805, { m: 9, n: 12, k: 8, lda: 12, ldb: 16, ldc: 20 })).toBe(softwareKernel(false, false) ?? 'tiled_vec4');
  });

  it('honours binding offsets and leaves memory around C untouched', async () => {
    const cases: [number, MatmulShape, string][] = [
      [900, { m: 33, n: 20, k: 12, path: 'tiled' }, 'tiled_vec4'],
      [903, { m: 33, n: 20, k: 12 }, softwareKernel(false, false) ?? 'tiled_vec4'],
      [901, { m: 30, n: 21, k: 13, transA: true }, 'tiled'],
      [902, { m: 3, n: 21, k: 13 }, 'small_m'],
    ];
    for (const [seed, shape, kernel] of cases) {
      const ops = operands(seed, shape);
      const out = await harness.runModule(CASES, 'matmulOffsets', { ...ops, ...shape });
      expectClose(out.c, matmulRef(ops, shape), tol(shape.k), `C with offsets ${JSON.stringify(shape)}`);
      expect(out.padding.every((v: number) => v === -7)).toBe(true);
      expect(out.kernel).toBe(kernel);
    }
  });

  it('column sum (bias gradient): shapes, leading dimension, alpha and beta', async () => {
    let seed = 1000;
    for (const [rows, cols, ld, alpha, beta] of [
      [1, 1, 1, 1, 0],
      [37, 33, 33, 1, 0],
      [300, 70, 75, 0.5, 1],
      [9, 100, 100, 1, -2],
    ] as const) {
      const rand = rng(++seed);
      const x = f32(rand, (rows - 1) * ld + cols);
      const out = f32(rand, cols);
      const shape = { rows, cols, ld, alpha, beta };
      const got = await harness.runModule(CASES, 'columnSum', { x, ...shape, ...(beta !== 0 ? { out } : {}) });
      expectClose(got, columnSumRef(x, shape, out), tol(rows), `column sum ${JSON.stringify(shape)}`);
    }
  });

  it('a linear layer forward + backward over two micro-batches in one submission', async () => {
    const [tokens, inF, outF] = [10, 12, 7];
    const rand = rng(1100);
    const w = f32(rand, outF * inF);
    const b = f32(rand, outF);
    const x = [f32(rand, tokens * inF), f32(rand, tokens * inF)];
    const dy = [f32(rand, tokens * outF), f32(rand, tokens * outF)];
    const out = await harness.runModule(CASES, 'linearLayer', { x, dy, w, b, tokens, inF, outF });
    expect(out.submits).toBe(1);
    for (let i = 0; i < 2; i++) {
      expectClose(out.y[i], matmulRef({ a: x[i], b: w, bias: b }, { m: tokens, n: outF, k: inF, transB: true }), tol(inF), `y${i}`);
      expectClose(out.dx[i], matmulRef({ a: dy[i], b: w }, { m: tokens, n: inF, k: outF }), tol(outF), `dx${i}`);
    }
    const dw0 = matmulRef({ a: dy[0], b: x[0] }, { m: outF, n: inF, k: tokens, transA: true });
    const dw = matmulRef({ a: dy[1], b: x[1], c: dw0 }, { m: outF, n: inF, k: tokens, transA: true, beta: 1 });
    expectClose(out.dw, dw, tol(2 * tokens), 'dW accumulated');
    const db0 = columnSumRef(dy[0], { rows: tokens, cols: outF });
    expectClose(out.db, columnSumRef(dy[1], { rows: tokens, cols: outF, beta: 1 }, db0), tol(2 * tokens), 'db accumulated');
    // y = x.Wᵀ (N = 7): the ragged blocked kernel on a software adapter; dX (K = 7): tiled.
    const forward = harness.info.isFallback ? 'blocked_ragged' : 'tiled';
    expect(out.kernels).toEqual([forward, 'tiled', 'skinny_nn', forward, 'tiled', 'skinny_nn']);
  });

  it('rejects bad shapes with a RangeError naming the argument', async () => {
    const ok = { a: [1, 2, 3, 4], b: [1, 2, 3, 4], m: 2, n: 2, k: 2 };
    const messages = await harness.runModule(CASES, 'errors', [
      { ...ok, m: 0 },
      { ...ok, k: 1.5 },
      { ...ok, lda: 1 },
      { ...ok, a: [1, 2, 3] },
      { ...ok, beta: 1 },
      { ...ok, alpha: NaN },
      { ...ok, batch: 2, strideA: 0, strideB: 0, strideC: 3 },
      { ...ok, path: 'small', m: 9, a: new Array(18).fill(1) },
      { ...ok, batch: 0 },
      { ...ok, strideB: -1, batch: 2, strideA: 0 },
    ]);
    const expected = [/m must be/, /k must be/, /lda must be/, /a has 3 values/, /c is required when beta/, /alpha must be/, /strideC = 3/, /path 'small' needs m <= 8/, /batch must be/, /strideB must be/];
    messages.forEach((msg: string, i: number) => {
      expect(msg, `request ${i}`).toMatch(/^RangeError: /);
      expect(msg, `request ${i}`).toMatch(expected[i]);
    });
    expect(await harness.runModule(CASES, 'aliasedOutput', null)).toMatch(/RangeError: c must not share a GPU buffer with a/);
    const sum = { x: [1, 2, 3, 4], rows: 2, cols: 2 };
    await expect(harness.runModule(CASES, 'columnSum', { ...sum, ld: 1 })).rejects.toThrow(/RangeError: ld must be an integer >= cols = 2/);
    await expect(harness.runModule(CASES, 'columnSum', { ...sum, rows: 3 })).rejects.toThrow(/RangeError: x has 4 values; this product needs 6/);
    await expect(harness.runModule(CASES, 'columnSum', { ...sum, beta: 1 })).rejects.toThrow(/RangeError: out is required when beta/);
  });

  /** A fused product against matmulFusedRef: C and extra. */
  async function checkFused(seed: number, shape: MatmulShape & MatmulFusedRefShape, opts: Options & { extra?: boolean } = {}): Promise<string> {
    const ops = operands(seed, shape, opts);
    const rand = rng(seed * 7 + 1);
    const sumsAt = ((shape.batch ?? 1) - 1) * (shape.strideBias ?? 0);
    const extraLength = shape.sumK === 'a' ? sumsAt + shape.m : shape.sumK === 'b' ? sumsAt + shape.n : matmulRef(ops, shape).length;
    const extra = opts.extra ? f32(rand, extraLength) : undefined;
    const all = { ...ops, ...(extra ? { extra } : {}) };
    const packed = Object.fromEntries(Object.entries(all).map(([name, values]) => [name, pack(values)]));
    const out = await harness.runModule(CASES, 'matmulFused', { ...packed, ...shape });
    const ref = matmulFusedRef(all, shape);
    const label = JSON.stringify(shape);
    expectClose(out.c, ref.c, tol(shape.k), `C of ${label}`);
    expectClose(out.extra, ref.extra, tol(shape.k), `extra of ${label}`);
    return out.kernel;
  }

  it('fused bias gradient (sumK): op(B) columns or op(A) rows summed by the dW dispatch, every layout', async () => {
    let seed = 1300;
    // Both layouts' dW products are transA (Xᵀ.dY and dYᵀ.X): every shape there; one more
    // layout (B stored transposed) on one shape. Few layouts keep the pipelines compiled few.
    for (const [transA, transB, shapes] of [
      [true, false, [[70, 130, 77], [68, 72, 100], [5, 9, 33]]],
      [false, true, [[70, 130, 77]]],
    ] as const) {
      // Several row and column tiles (only the first row / column tile sums), k over 3 stages of 32.
      for (const [m, n, k] of shapes) {
        for (const sumK of ['a', 'b'] as const) {
          const beta = ++seed % 2 === 1 ? 1 : 0;
          const shape = { m, n, k, transA, transB, sumK, beta, alpha: beta ? 0.5 : 1 };
          const kernel = await checkFused(seed, shape, { withC: beta === 1, extra: beta === 1 });
          // m <= 8 still runs tiled: the small-M kernel has no k-sum.
          const quad = [transA ? m : k, transB ? k : n, n].every((v) => v % 4 === 0);
          // On a software adapter Aᵀ.B with M, N multiples of 4 takes the outer-product kernel; forced, the tiled one.
          const outer = harness.info.isFallback && transA && !transB && m % 4 === 0 && n % 4 === 0;
          expect(kernel, JSON.stringify(shape)).toBe(outer ? 'outer_tn' : quad ? 'tiled_vec4' : 'tiled');
          if (outer) expect(await checkFused(seed, { ...shape, path: 'tiled' }, { withC: beta === 1, extra: beta === 1 })).toBe('tiled_vec4');
        }
      }
    }
    // The embedded GPT-2's MLP-up dW (Conv1D layout): dW [128, 512] += Xᵀ.dY, db += colsum(dY).
    const mlpUp = { m: 128, n: 512, k: 64, transA: true, sumK: 'b', beta: 1 } as const;
    expect(await checkFused(1399, mlpUp, { withC: true, extra: true })).toBe(harness.info.isFallback ? 'outer_tn' : 'tiled_vec4');
    expect(await checkFused(1399, { ...mlpUp, path: 'tiled' }, { withC: true, extra: true })).toBe('tiled_vec4');
  });

  it('outer-product kernel (Aᵀ.B on a software adapter): odd row quads, short and long K, leading dimensions, alpha/beta/bias, both k-sums; other shapes take the tiled kernel', async () => {
    const software = harness.info.isFallback;
    const outer = (ok: boolean) => (software && ok ? 'outer_tn' : 'tiled_vec4');
    let seed = 1500;
    // M = 12: three row quads, the last block of 8 rows half full.
    for (const k of [1, 5, 64]) expect(await check(++seed, { m: 12, n: 20, k, transA: true })).toBe(outer(true));
    expect(await check(++seed, { m: 16, n: 8, k: 9, transA: true, alpha: -0.5, beta: 1 }, { withC: true, bias: true })).toBe(outer(true));
    expect(await check(++seed, { m: 12, n: 8, k: 7, transA: true, lda: 20, ldb: 12, ldc: 16 })).toBe(outer(true));
    for (const sumK of ['a', 'b'] as const) {
      for (const beta of [0, 1]) {
        expect(await checkFused(++seed, { m: 20, n: 12, k: 33, transA: true, sumK, beta, alpha: 2 }, { withC: beta === 1, extra: beta === 1 })).toBe(outer(true));
      }
    }
    // K past OUTER_MAX_K or a batch stride not a multiple of 4: the tiled kernel. M not a multiple of 4: the ragged one (next case).
    expect(await check(++seed, { m: 8 + 4, n: 8, k: 600, transA: true })).toBe('tiled_vec4');
    expect(await check(++seed, { m: 12, n: 8, k: 8, transA: true, batch: 2 })).toBe(outer(true));
    expect(await check(++seed, { m: 12, n: 8, k: 8, transA: true, batch: 2, strideB: 66 })).toBe('tiled');
    expect(await check(++seed, { m: 10, n: 8, k: 8, transA: true })).toBe(software ? 'outer_tn_ragged' : 'tiled');
  });

  it('ragged outer-product kernel (Aᵀ.B with M or lda not a multiple of 4, a tied head\'s dE): M tails, K from 1, alpha/beta/bias, NaN; with k-sums, N ragged or long K, the tiled kernel', async () => {
    const ragged = harness.info.isFallback ? 'outer_tn_ragged' : 'tiled';
    let seed = 1550;
    // M = 9 (a row quad of one row), 13, 14, 15 (every tail of the last quad), 37, and a head-like
    // dE of 259 x 128 from 64 rows; K = 1 and 7 (no K alignment needed).
    for (const m of [9, 13, 14, 15, 37]) expect(await check(++seed, { m, n: 16, k: 7, transA: true })).toBe(ragged);
    expect(await check(++seed, { m: 259, n: 128, k: 64, transA: true, beta: 1 }, { withC: true })).toBe(ragged);
    expect(await check(++seed, { m: 11, n: 8, k: 1, transA: true })).toBe(ragged);
    expect(await check(++seed, { m: 21, n: 12, k: 9, transA: true, alpha: -0.5, beta: 1.5 }, { withC: true, bias: true })).toBe(ragged);
    // M a multiple of 4 but lda not (A's rows unaligned), and ldb / ldc wider than N.
    expect(await check(++seed, { m: 12, n: 8, k: 5, transA: true, lda: 13, ldb: 12, ldc: 16 })).toBe(ragged);
    // Forced tiled, a k-sum, N not a multiple of 4, K past OUTER_MAX_K: the tiled kernel.
    expect(await check(++seed, { m: 13, n: 8, k: 8, transA: true, path: 'tiled' })).toBe('tiled');
    expect(await checkFused(++seed, { m: 13, n: 8, k: 8, transA: true, sumK: 'b' })).toBe('tiled');
    expect(await check(++seed, { m: 13, n: 6, k: 8, transA: true })).toBe('tiled');
    expect(await check(++seed, { m: 13, n: 8, k: 600, transA: true })).toBe('tiled');
    // NaN in A's row k = 2, column (C's row) 5 and Inf in B's row 3, column 6 reach only their own row and column of C.
    const shape = { m: 13, n: 8, k: 8, transA: true };
    const ops = operands(++seed, shape);
    ops.a[2 * 13 + 5] = NaN;
    ops.b[3 * 8 + 6] = Infinity;
    const out = await harness.runModule(CASES, 'matmul', { ...ops, ...shape });
    expect(out.kernel).toBe(ragged);
    expectClose(out.c, matmulRef(ops, shape), tol(8), `C of ${JSON.stringify(shape)}`);
  });

  it('blocked kernel (A.op(B), M > 8, on a software adapter): row tails, K = 4, both layouts, alpha/beta/bias, leading dimensions, batches, NaN rows; other layouts take the tiled kernel', async () => {
    const blocked = softwareKernel(false, false) ?? 'tiled_vec4';
    let seed = 1600;
    for (const transB of [false, true]) {
      // M = 9 (one full block of 8 rows and a row alone), 17, 70: the last block part full.
      for (const m of [9, 17, 70]) expect(await check(++seed, { m, n: 12, k: 20, transB })).toBe(blocked);
      expect(await check(++seed, { m: 12, n: 4, k: 4, transB })).toBe(blocked);
      expect(await check(++seed, { m: 24, n: 36, k: 44, transB, alpha: -0.5, beta: 1 }, { withC: true, bias: true })).toBe(blocked);
      expect(await check(++seed, { m: 10, n: 8, k: 8, transB, lda: 12, ldb: 16, ldc: 20 }, { bias: true })).toBe(blocked);
      expect(await check(++seed, { m: 11, n: 8, k: 12, transB, batch: 3, alpha: 0.5, beta: 1 }, { withC: true })).toBe(blocked);
      expect(await check(++seed, { m: 12, n: 8, k: 8, transB, batch: 2, strideB: 0 })).toBe(blocked);
      // Any K (a vocabulary-sized one: a tied head's input gradient); off a software adapter the tiled kernel.
      expect(await check(++seed, { m: 16, n: 8, k: 4100, transB })).toBe(blocked);
      // K, N or a leading dimension not a multiple of 4: the tiled kernel.
      expect(await check(++seed, { m: 12, n: 8, k: 7, transB })).toBe('tiled');
      // N = 6 with A.Bᵀ: the ragged kernel (next case).
      expect(await check(++seed, { m: 12, n: 6, k: 8, transB })).toBe(transB && harness.info.isFallback ? 'blocked_ragged' : 'tiled');
      // NaN in op(A)'s row 2 and Inf in op(B)'s column 1 reach only their own row and column of C.
      const shape = { m: 12, n: 8, k: 8, transB };
      const ops = operands(++seed, shape);
      ops.a[2 * 8] = NaN;
      ops.b[transB ? 8 : 1] = Infinity;
      const out = await harness.runModule(CASES, 'matmul', { ...ops, ...shape });
      expect(out.kernel).toBe(blocked);
      expectClose(out.c, matmulRef(ops, shape), tol(8), `C of ${JSON.stringify(shape)}`);
    }
  });

  it('ragged blocked kernel (A.Bᵀ with N, ldc or C\'s batch stride not a multiple of 4, a vocabulary head): N tails, alpha/beta/bias, batches, NaN; with an epilogue or ragged K, the tiled kernel', async () => {
    const ragged = harness.info.isFallback ? 'blocked_ragged' : 'tiled';
    let seed = 1700;
    // N = 1, 3, 5 (the last pair of quads part full), 37, and a head-like 259 x 128.
    for (const n of [1, 3, 5, 37]) expect(await check(++seed, { m: 17, n, k: 12, transB: true })).toBe(ragged);
    expect(await check(++seed, { m: 24, n: 259, k: 128, transB: true })).toBe(ragged);
    expect(await check(++seed, { m: 10, n: 13, k: 8, transB: true, alpha: -0.5, beta: 1.5 }, { withC: true, bias: true })).toBe(ragged);
    // N a multiple of 4 but ldc not: ragged too.
    expect(await check(++seed, { m: 9, n: 8, k: 8, transB: true, ldc: 11 }, { bias: true })).toBe(ragged);
    // Batches with an odd C stride, and a shared B.
    expect(await check(++seed, { m: 11, n: 7, k: 12, transB: true, batch: 3, alpha: 0.5, beta: 1 }, { withC: true })).toBe(ragged);
    expect(await check(++seed, { m: 12, n: 5, k: 8, transB: true, batch: 2, strideB: 0 })).toBe(ragged);
    // Forced tiled still tiled; A.B with odd N, an epilogue, or K not a multiple of 4: tiled.
    expect(await check(++seed, { m: 17, n: 5, k: 12, transB: true, path: 'tiled' })).toBe('tiled');
    expect(await check(++seed, { m: 17, n: 5, k: 12 })).toBe('tiled');
    expect(await check(++seed, { m: 17, n: 5, k: 10, transB: true })).toBe('tiled');
    // NaN in A's row 2 and Inf in B's row (op(B)'s column) 4 reach only their own row and column.
    const shape = { m: 12, n: 7, k: 8, transB: true };
    const ops = operands(++seed, shape);
    ops.a[2 * 8] = NaN;
    ops.b[4 * 8] = Infinity;
    const out = await harness.runModule(CASES, 'matmul', { ...ops, ...shape });
    expect(out.kernel).toBe(ragged);
    expectClose(out.c, matmulRef(ops, shape), tol(8), `C of ${JSON.stringify(shape)}`);
  });

  it('a linear layer\'s dW and db from one fused dispatch equal the product plus recordColumnSum', async () => {
    const [rows, inF, outF] = [37, 20, 44];
    const rand = rng(1400);
    const x = f32(rand, rows * inF);
    const dy = f32(rand, rows * outF);
    const db = columnSumRef(dy, { rows, cols: outF });
    const outIn = await harness.runModule(CASES, 'matmulFused', { a: dy, b: x, m: outF, n: inF, k: rows, transA: true, sumK: 'a' });
    const inOut = await harness.runModule(CASES, 'matmulFused', { a: x, b: dy, m: inF, n: outF, k: rows, transA: true, sumK: 'b' });
    expectClose(outIn.extra, db, tol(rows), 'db (out_in)');
    expectClose(inOut.extra, db, tol(rows), 'db (in_out)');
    expectClose(outIn.c, matmulRef({ a: dy, b: x }, { m: outF, n: inF, k: rows, transA: true }), tol(rows), 'dW (out_in)');
  });

  it('epilogues (residual, gelu, gelu_backward) on the scalar, vec4, blocked, small-M and skinny kernels, batched too', async () => {
    let seed = 1500;
    const blocked = softwareKernel(false, false) ?? 'tiled_vec4';
    const cases = {
      residual: [
        [{ m: 33, n: 70, k: 45, transB: true }, 'tiled'],
        [{ m: 68, n: 132, k: 36, path: 'tiled' }, 'tiled_vec4'],
        [{ m: 68, n: 132, k: 36 }, blocked],
        [{ m: 5, n: 37, k: 45, transB: true }, 'small_m'],
        [{ m: 19, n: 13, k: 21, batch: 3, transA: true }, 'tiled'],
        [{ m: 20, n: 12, k: 8, batch: 2 }, blocked],
        // m <= 8 on a layout the skinny kernels take: the skinny kernel stores through the epilogue.
        [{ m: 2, n: 12, k: 8, batch: 2 }, 'skinny_nn'],
        [{ m: 8, n: 8, k: 5 }, 'skinny_nn'],
        [{ m: 1, n: 16, k: 12, transB: true }, 'skinny_nt'],
      ],
      gelu: [
        [{ m: 33, n: 70, k: 45, transB: true }, 'tiled'],
        [{ m: 68, n: 132, k: 36, path: 'tiled' }, 'tiled_vec4'],
        [{ m: 68, n: 132, k: 36, transB: true }, blocked],
        [{ m: 3, n: 37, k: 20 }, 'small_m'],
        [{ m: 3, n: 40, k: 20 }, 'skinny_nn'],
        [{ m: 7, n: 10, k: 16, transB: true }, 'skinny_nt'],
      ],
      // The GPT-2 MLP's dHidden = dOut . W_downᵀ (Conv1D W [512, 128] read transposed).
      gelu_backward: [
        [{ m: 33, n: 70, k: 45, transB: true }, 'tiled'],
        [{ m: 64, n: 128, k: 64, transB: true, path: 'tiled' }, 'tiled_vec4'],
        [{ m: 64, n: 128, k: 64, transB: true }, blocked],
        [{ m: 17, n: 8, k: 12, batch: 2 }, blocked],
        [{ m: 5, n: 37, k: 45, transB: true }, 'small_m'],
        [{ m: 5, n: 36, k: 44, transB: true }, 'skinny_nt'],
        [{ m: 1, n: 24, k: 9 }, 'skinny_nn'],
      ],
    } as const;
    for (const epilogue of ['residual', 'gelu', 'gelu_backward'] as const) {
      for (const [shape, kernel] of cases[epilogue]) {
        const extra = ++seed % 2 === 1;
        const full = { ...shape, epilogue, alpha: extra ? 0.75 : 1, beta: extra ? -1.5 : 0 };
        const needsExtra = epilogue !== 'gelu';
        expect(await checkFused(seed, full, { bias: true, withC: extra, extra: needsExtra })).toBe(kernel);
      }
    }
  });

  it('a stack of products (batch with strideBias): each batch its own bias and k-sums, on every kernel', async () => {
    // q, k and v of one input in one dispatch: A shared (strideA 0), B and C batch after batch
    // with gaps between them, each batch's bias (and bias gradient) strideBias further on.
    const software = harness.info.isFallback;
    let seed = 1700;
    const stack = { batch: 3, strideA: 0 };
    const cases: [MatmulShape & MatmulFusedRefShape, string, Options & { extra?: boolean }][] = [
      [{ ...stack, m: 12, n: 8, k: 8, strideB: 72, strideC: 100, strideBias: 12 }, software ? 'blocked' : 'tiled_vec4', { bias: true }],
      [{ ...stack, m: 12, n: 8, k: 8, strideB: 72, strideBias: 12, alpha: 0.5, beta: 1 }, software ? 'blocked' : 'tiled_vec4', { bias: true, withC: true }],
      [{ ...stack, m: 12, n: 7, k: 8, transB: true, strideB: 60, strideBias: 9 }, software ? 'blocked_ragged' : 'tiled', { bias: true }],
      [{ ...stack, m: 3, n: 8, k: 8, strideBias: 10 }, 'skinny_nn', { bias: true }],
      [{ ...stack, m: 3, n: 8, k: 8, transB: true, strideBias: 8 }, 'skinny_nt', { bias: true }],
      [{ ...stack, m: 3, n: 6, k: 8, strideBias: 7 }, 'small_m', { bias: true }],
      [{ ...stack, m: 12, n: 7, k: 9, strideBias: 7, path: 'tiled' }, 'tiled', { bias: true }],
      [{ ...stack, m: 12, n: 8, k: 8, strideBias: 8, path: 'tiled' }, 'tiled_vec4', { bias: true }],
      [{ ...stack, m: 3, n: 8, k: 8, strideBias: 10, epilogue: 'gelu' }, 'skinny_nn', { bias: true }],
      // Weight gradients of the stack: dW_b += Xᵀ.dY_b, db_b += colsum(dY_b) (in_out), or the rows of dY_bᵀ (out_in).
      [{ ...stack, m: 12, n: 8, k: 16, transA: true, strideB: 132, strideC: 100, sumK: 'b', strideBias: 12, alpha: 0.5, beta: 1 }, software ? 'outer_tn' : 'tiled_vec4', { withC: true, extra: true }],
      [{ ...stack, strideA: 196, strideB: 0, m: 12, n: 8, k: 16, transA: true, sumK: 'a', strideBias: 13 }, software ? 'outer_tn' : 'tiled_vec4', {}],
      [{ ...stack, m: 12, n: 8, k: 16, transA: true, strideB: 132, sumK: 'b', strideBias: 12, beta: 1, path: 'tiled' }, 'tiled_vec4', { withC: true, extra: true }],
      [{ ...stack, m: 13, n: 7, k: 9, transA: true, sumK: 'b', strideBias: 9 }, 'tiled', {}],
    ];
    for (const [shape, kernel, opts] of cases) {
      const fused = shape.sumK || (shape.epilogue && shape.epilogue !== 'none');
      expect(await (fused ? checkFused(++seed, shape, opts) : check(++seed, shape, opts)), JSON.stringify(shape)).toBe(kernel);
    }
  });

  it('sumBatches: one C from every batch\'s product (a stack\'s input gradient), in one blocked or tiled dispatch or one per batch', async () => {
    const software = harness.info.isFallback;
    let seed = 1800;
    // dX = dq.Wqᵀ + dk.Wkᵀ + dv.Wvᵀ: A's slots 128 floats apart, B's 64 (binding offsets, for the one-by-one path).
    const stack = { batch: 3, strideA: 128, strideB: 64, sumBatches: true };
    expect(await check(++seed, { ...stack, m: 12, n: 8, k: 8, transB: true, alpha: 0.5, beta: 1 }, { withC: true, bias: true })).toBe(software ? 'blocked' : 'tiled_vec4');
    expect(await check(++seed, { ...stack, m: 12, n: 8, k: 8 }, { bias: true })).toBe(software ? 'blocked' : 'tiled_vec4');
    expect(await check(++seed, { ...stack, m: 20, n: 8, k: 4, transB: true, path: 'tiled' })).toBe('tiled_vec4');
    // The tiled kernels sum the batches in one dispatch: batches at any offset (140 and 148 bytes
    // apart here, which a dispatch per batch could not bind), a ragged shape on the scalar kernel.
    const ragged = { batch: 3, strideA: 35, strideB: 37, sumBatches: true, m: 9, n: 7, k: 5, path: 'tiled' } as const;
    expect(await check(++seed, { ...ragged, alpha: 0.5, beta: 1 }, { withC: true, bias: true })).toBe('tiled');
    expect(await check(++seed, { ...ragged, transB: true, m: 70, k: 33, strideA: 33 * 70, strideB: 7 * 33 })).toBe('tiled');
    // M <= 8: the skinny kernels sum the batches too (strides off the binding alignment);
    // small_m and the ragged kernels take a dispatch per batch.
    expect(await check(++seed, { ...stack, m: 3, n: 8, k: 8, transB: true, beta: 1 }, { withC: true, bias: true })).toBe('skinny_nt');
    expect(await check(++seed, { ...stack, strideA: 20, strideB: 44, m: 5, n: 8, k: 4, alpha: 2 }, { bias: true })).toBe('skinny_nn');
    expect(await check(++seed, { ...stack, m: 3, n: 6, k: 8 })).toBe('small_m');
    if (software) expect(await check(++seed, { ...stack, m: 12, n: 6, k: 8, transB: true })).toBe('blocked_ragged');
    // One batch is the plain product.
    expect(await check(++seed, { m: 12, n: 8, k: 8, batch: 1, sumBatches: true })).toBe(software ? 'blocked' : 'tiled_vec4');
    // One dispatch per batch needs each batch at a binding offset; epilogues and k-sums are refused.
    await expect(check(++seed, { m: 3, n: 6, k: 8, batch: 2, strideA: 24, sumBatches: true })).rejects.toThrow(/sumBatches: batch 1 of a starts at byte 96, not a multiple/);
    const ok = { a: [1, 2, 3, 4, 5, 6, 7, 8], b: [1, 2, 3, 4, 5, 6, 7, 8], m: 2, n: 2, k: 2, batch: 2, sumBatches: true };
    await expect(harness.runModule(CASES, 'matmulFused', { ...ok, epilogue: 'gelu' })).rejects.toThrow(/RangeError: sumBatches takes no epilogue and no k-sum/);
  });

  it('fused products refuse a missing or misused extra operand', async () => {
    const ok = { a: [1, 2, 3, 4], b: [1, 2, 3, 4], m: 2, n: 2, k: 2 };
    const refuse = (input: object, message: RegExp) => expect(harness.runModule(CASES, 'matmulFused', input)).rejects.toThrow(message);
    await refuse({ ...ok, epilogue: 'residual' }, /RangeError: extra is required by the 'residual' epilogue/);
    await refuse({ ...ok, epilogue: 'gelu', sumK: 'b' }, /RangeError: a product takes an epilogue or a k-sum/);
    await refuse({ ...ok, sumK: 'b', batch: 2, strideA: 0, strideB: 0, strideC: 4 }, /RangeError: strideBias = 0 would make the 2 batches' k-sums overlap/);
    await refuse({ ...ok, sumK: 'a', path: 'small' }, /RangeError: sumK runs on the tiled kernels/);
    await refuse({ ...ok, extra: [0, 0, 0, 0] }, /RangeError: extra is given but the product has no epilogue/);
    await refuse({ ...ok, epilogue: 'relu' }, /RangeError: epilogue must be/);
  });

  it('a repeated product compiles no pipeline and creates no buffer', async () => {
    const shape = { m: 20, n: 24, k: 16, transB: true };
    const r = await harness.runModule(CASES, 'steadyState', { ...operands(1200, shape), ...shape });
    expect(r).toEqual({ compiled: 0, created: 0 });
  });
});
