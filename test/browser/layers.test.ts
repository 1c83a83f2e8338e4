// Per-layer WGSL kernels (LayerNorm, RMSNorm, GELU, SwiGLU, embedding, elementwise) against
// their float64 twins, in headless Chromium (WebGPU). Inputs are rounded to f32 first.
// Tolerances (f32 kernel vs f64 twin, values of order 1; see each constant):
//   norm y, mean, rstd: atol 5e-6 + rtol 5e-6 (row reductions of up to 1000 terms; measured
//     worst ~1e-6 on SwiftShader);
//   norm dx: atol 2e-5 + rtol 2e-5 (measured worst ~6e-6, at D = 2 where dx is large);
//   norm dGamma/dBeta: atol 5e-5 + rtol 5e-5 (sums over up to 70 rows; the rows offset by 1e3
//     lose ~2e-5 to f32 rounding of x - mean, inherent in f32);
//   GELU / SwiGLU: atol 1e-6 + rtol 1e-5 (one exp and a few flops per element; measured worst
//     ~5e-7 abs, headroom for GPUs with less accurate exp);
//   embedding forward: exact without positions, one f32 rounding (rtol 1.2e-7) with;
//   embedding gradients: atol 1e-6 + rtol 1e-6 (ordered f32 sums of a few rows), atol 2e-5
//     for 200 rows summed into 3 ids (measured ~4e-6);
//   elementwise: one f32 rounding (atol 1e-7 + rtol 1.2e-7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { addNormForwardRef, normBackwardRef, normForwardRef, type NormProblem } from '../../src/ops/norm.reference';
import { geluBackwardRef, geluRef, swigluBackwardRef, swigluRef } from '../../src/ops/activation.reference';
import { embeddingBackwardRef, embeddingForwardRef } from '../../src/ops/embedding.reference';
import { accumulateRef, addRef, fillRef, scaleRef } from '../../src/ops/elementwise.reference';
import { expectClose } from '../helpers/compare';
import { normal, randomInts, rng, uniform } from '../helpers/random';

const CASES = '/test/harness/cases/layers.ts';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const NORM_TOL = { atol: 5e-6, rtol: 5e-6 };
const NORM_DX_TOL = { atol: 2e-5, rtol: 2e-5 };
const NORM_PARAM_TOL = { atol: 5e-5, rtol: 5e-5 };
const ACT_TOL = { atol: 1e-6, rtol: 1e-5 };
const EMB_GRAD_TOL = { atol: 1e-6, rtol: 1e-6 };
const ONE_ROUNDING = { atol: 1e-7, rtol: 1.2e-7 };

function f32(values: number[]): number[] {
  return Array.from(new Float32Array(values));
}

function run(fn: string, input: unknown) {
  return harness.runModule(CASES, fn, input);
}

interface NormInput {
  kind: 'layernorm' | 'rmsnorm';
  rows: number;
  dim: number;
  eps: number;
  x: number[];
  gamma: number[];
  beta?: number[];
  dy: number[];
  dGammaInit?: number[];
  dBetaInit?: number[];
  /** Added to dx in the same dispatch (backward_input_add). */
  residual?: number[];
  /** Threads per row of the row kernels (default: this adapter's, 4 on SwiftShader). */
  threads?: number;
}

function randomNorm(kind: NormInput['kind'], seed: number, rows: number, dim: number, offset = 0): NormInput {
  const rand = rng(seed);
  return {
    kind,
    rows,
    dim,
    eps: 1e-5,
    x: f32(normal(rand, rows * dim, 2).map((v) => v + offset)),
    gamma: f32(uniform(rand, dim, 0.5, 1.5)),
    beta: kind === 'layernorm' ? f32(normal(rand, dim, 0.5)) : undefined,
    dy: f32(normal(rand, rows * dim)),
  };
}

async function checkNorm(input: NormInput, paramTol = NORM_PARAM_TOL) {
  const out = await run('norm', input);
  const problem: NormProblem = { ...input };
  const ref = normForwardRef(problem);
  const grads = normBackwardRef(problem, input.dy, input.residual);
  const tag = `${input.kind} ${input.rows}x${input.dim}${input.threads ? ` (${input.threads} threads)` : ''}${input.residual ? ' + residual' : ''}`;
  expectClose(out.y, ref.y, NORM_TOL, `${tag} y`);
  expectClose(out.mean, ref.mean, NORM_TOL, `${tag} mean`);
  expectClose(out.rstd, ref.rstd, NORM_TOL, `${tag} rstd`);
  expectClose(out.dx, grads.dx, NORM_DX_TOL, `${tag} dx`);
  const dGamma = input.dGammaInit ? grads.dGamma.map((g, i) => g + input.dGammaInit![i]) : grads.dGamma;
  expectClose(out.dGamma, dGamma, paramTol, `${tag} dGamma`);
  if (input.kind === 'layernorm') {
    const dBeta = input.dBetaInit ? grads.dBeta!.map((g, i) => g + input.dBetaInit![i]) : grads.dBeta!;
    expectClose(out.dBeta, dBeta, paramTol, `${tag} dBeta`);
  } else {
    expect(out.dBeta).toBeUndefined();
  }
  return out;
}

describe('residual add fused into the norm (decode)', () => {
  for (const kind of ['layernorm', 'rmsnorm'] as const) {
    for (const [seed, rows, dim] of [
      [11, 3, 128],
      [12, 2, 1100],
    ] as const) {
      it(`${kind}: ${rows} x ${dim} matches the float64 twin of add then norm, bit for bit the separate kernels`, async () => {
        const input = randomNorm(kind, seed, rows, dim);
        const b = f32(normal(rng(seed + 100), rows * dim, 1.5));
        const out = await run('addNorm', { ...input, b });
        // The sum as a separate add stores it: one f32 rounding of x + b.
        const ref = addNormForwardRef(input, b);
        expect(out.fused.sum).toEqual(Array.from(ref.sum));
        const tag = `${kind} ${rows}x${dim} add+norm`;
        expectClose(out.fused.y, ref.y, NORM_TOL, `${tag} y`);
        expectClose(out.fused.stats.filter((_: number, i: number) => i % 2 === 0), ref.mean, NORM_TOL, `${tag} mean`);
        expectClose(out.fused.stats.filter((_: number, i: number) => i % 2 === 1), ref.rstd, NORM_TOL, `${tag} rstd`);
        // The fusion changes no bits: decode's logits stay those of the unfused kernels.
        expect(out.fused).toEqual(out.apart);
      });
    }
  }
});

describe('norm kernels (WGSL) vs float64 twin', () => {
  for (const kind of ['layernorm', 'rmsnorm'] as const) {
    // Up to 256 rows dGamma/dBeta take one pass; 300 rows = 9 full partial chunks of 32 + 12
    // (partials + reduce). Dims below, at and over the row kernels' workgroup (4 threads here,
    // a software adapter: normRowThreads), and D = 1.
    for (const [seed, rows, dim] of [
      [1, 1, 2],
      [2, 7, 33],
      [3, 64, 256],
      [4, 3, 768],
      [5, 5, 1000],
      [6, 70, 40],
      [7, 4, 65],
      [8, 3, 1100],
      [9, 3, 1],
      [10, 300, 6],
    ] as const) {
      it(`${kind}: random ${rows} x ${dim}`, async () => {
        await checkNorm(randomNorm(kind, seed * 10 + (kind === 'layernorm' ? 0 : 1), rows, dim));
      });
    }

    // The sizes other adapters get (normRowThreads: 32 to 256 by dim), run here too.
    for (const [seed, rows, dim, threads] of [
      [11, 1, 1, 32],
      [12, 7, 33, 32],
      [13, 5, 130, 64],
      [14, 3, 1100, 256],
      [15, 300, 6, 64],
    ] as const) {
      it(`${kind}: random ${rows} x ${dim} with ${threads} threads per row`, async () => {
        await checkNorm({ ...randomNorm(kind, seed * 10 + (kind === 'layernorm' ? 0 : 1), rows, dim), threads });
      });
    }

    it(`${kind}: without the subgroups feature (tree sums) the same within tolerance`, async () => {
      for (const [seed, rows, dim] of [
        [18, 5, 130],
        [19, 300, 6],
      ] as const) {
        const input = { ...randomNorm(kind, seed, rows, dim), residual: f32(normal(rng(seed + 1), rows * dim)) };
        const out = await run('normWithoutSubgroups', input);
        const ref = normForwardRef(input);
        const grads = normBackwardRef(input, input.dy, input.residual);
        const tag = `${kind} ${rows}x${dim} without subgroups`;
        expectClose(out.y, ref.y, NORM_TOL, `${tag} y`);
        expectClose(out.rstd, ref.rstd, NORM_TOL, `${tag} rstd`);
        expectClose(out.dx, grads.dx, NORM_DX_TOL, `${tag} dx`);
        expectClose(out.dGamma, grads.dGamma, NORM_PARAM_TOL, `${tag} dGamma`);
      }
    });

    it(`${kind}: dx adds a residual gradient in the same dispatch (one and two passes over rows, 4 and 64 threads)`, async () => {
      for (const [seed, rows, dim, threads] of [
        [16, 9, 37, undefined],
        [17, 300, 6, 64],
      ] as const) {
        const input = { ...randomNorm(kind, seed, rows, dim), threads, residual: f32(normal(rng(seed + 1), rows * dim, 3)) };
        const rand = rng(seed + 2);
        input.dGammaInit = f32(normal(rand, dim));
        if (kind === 'layernorm') input.dBetaInit = f32(normal(rand, dim));
        const fused = await checkNorm(input);
        // The same as dx without the residual, then the residual added (what accumulate did).
        const apart = await run('norm', { ...input, residual: undefined });
        const sum = apart.dx.map((v: number, i: number) => Math.fround(v + input.residual[i]));
        // One rounding of the sum, plus one of the norm's dx where the compiler fuses its last
        // multiply with the add (dx values are below 10 here: 2e-6 covers that ulp).
        expectClose(fused.dx, sum, { atol: 2e-6, rtol: 1.2e-7 }, `${kind} ${rows}x${dim} residual vs add`);
        expect(fused.dGamma).toEqual(apart.dGamma);
      }
    });

    it(`${kind}: accumulates dGamma${kind === 'layernorm' ? '/dBeta' : ''} into existing gradients`, async () => {
      const input = randomNorm(kind, 77, 9, 37);
      const rand = rng(78);
      input.dGammaInit = f32(normal(rand, 37));
      if (kind === 'layernorm') input.dBetaInit = f32(normal(rand, 37));
      await checkNorm(input);
    });

    it(`${kind}: the same inputs give the same bits twice (no atomics)`, async () => {
      const input = randomNorm(kind, 79, 70, 300);
      const a = await run('norm', input);
      const b = await run('norm', input);
      expect(b).toEqual(a);
    });
  }

  it('rmsnorm: more rows than one grid dimension holds (65535 workgroups): a 2-D grid of rows', async () => {
    // RMSNorm: at D = 2, LayerNorm's dx of a row with two near-equal values is ill-conditioned
    // in f32. dGamma sums 70000 terms of order 1 in f32 (partials of 32 rows, then 2188 partials
    // in order): measured 2e-4 off the float64 sum, so atol 1e-3 there.
    await checkNorm(randomNorm('rmsnorm', 200, 70000, 2), { atol: 1e-3, rtol: 5e-5 });
  });

  it('dispatches: threads per row by adapter and dim, subgroup sums, one pass over rows up to 256, the residual in backward_input_add', async () => {
    const one = await run('normDispatches', { kind: 'layernorm', rows: 64, dim: 128 });
    // [hardware, software]: about 4 values a thread in [32, 256]; 4 on a software adapter.
    expect(one.threadsByDim).toEqual({ 1: [32, 4], 128: [32, 4], 129: [64, 4], 576: [256, 4], 1024: [256, 4], 4096: [256, 4] });
    const rowThreads = one.software ? 4 : 32;
    // Subgroup sums where a row's workgroup is one subgroup (SwiftShader: 4 and 4).
    const sg = one.subgroupSize === rowThreads;
    // The column kernels (dγ, dβ) take the row kernels' workgroup size and module, so that
    // dispatch pairing can run them with the dx kernel (pairing is off in this capture).
    expect(one.dispatches).toEqual([
      { entryPoint: 'forward', wg: rowThreads, subgroups: sg, workgroups: 64 },
      { entryPoint: 'backward_input', wg: rowThreads, subgroups: sg, workgroups: 64 },
      { entryPoint: 'param_grads_gamma_beta', wg: rowThreads, subgroups: sg, workgroups: 128 / rowThreads },
    ]);
    const two = await run('normDispatches', { kind: 'rmsnorm', rows: 257, dim: 300, threads: 64, residual: true });
    const sg64 = two.subgroupSize === 64;
    expect(two.dispatches).toEqual([
      { entryPoint: 'forward', wg: 64, subgroups: sg64, workgroups: 257 },
      { entryPoint: 'backward_input_add', wg: 64, subgroups: sg64, workgroups: 257 },
      { entryPoint: 'param_partials', wg: 64, subgroups: sg64, workgroups: 5 * 9 },
      { entryPoint: 'reduce_gamma', wg: 64, subgroups: sg64, workgroups: 5 },
    ]);
    // With pairing (the engine's default) a norm's dx and its dγ/dβ run as one dispatch.
    expect(one.pairedEntryPoints).toEqual(['forward', 'pair_main']);
    expect(two.pairedEntryPoints).toEqual(['forward', 'pair_main', 'reduce_gamma']);
  });

  it('layernorm: constant rows give rstd = 1/sqrt(eps) (large, finite) and y = beta exactly', async () => {
    const dim = 33;
    const input = randomNorm('layernorm', 80, 3, dim);
    input.x = f32([...Array(dim).fill(0.1), ...Array(dim).fill(-1234.5), ...Array(dim).fill(0)]);
    const out = await checkNorm(input);
    for (let r = 0; r < 3; r++) {
      expect(out.rstd[r]).toBeCloseTo(1 / Math.sqrt(1e-5), 2);
      expect(out.y.slice(r * dim, (r + 1) * dim)).toEqual(input.beta);
    }
  });

  it('layernorm: a large common offset (1e3) loses no accuracy', async () => {
    await checkNorm(randomNorm('layernorm', 81, 4, 100, 1000));
  });

  it('rmsnorm: an all-zero row gives y = 0 and rstd = 1/sqrt(eps)', async () => {
    const input = randomNorm('rmsnorm', 82, 2, 17);
    input.x = f32([...Array(17).fill(0), ...input.x.slice(17)]);
    const out = await checkNorm(input);
    expect(out.y.slice(0, 17).every((v: number) => v === 0)).toBe(true);
    expect(out.rstd[0]).toBeCloseTo(1 / Math.sqrt(1e-5), 2);
  });
});

describe('activation kernels (WGSL) vs float64 twin', () => {
  const extremes = [-1e30, -100, -85, -20.5, -8, -1e-3, 0, 1e-3, 8, 20.5, 85, 100, 1e30];

  for (const [seed, count] of [
    [1, 1],
    [2, 33],
    [3, 7 * 1000],
  ] as const) {
    it(`GELU: ${count} random values`, async () => {
      const rand = rng(seed);
      const x = f32(normal(rand, count, 3));
      const dy = f32(normal(rand, count));
      const out = await run('gelu', { x, dy });
      expectClose(out.y, geluRef(x), ACT_TOL, 'gelu y');
      expectClose(out.dx, geluBackwardRef(x, dy), ACT_TOL, 'gelu dx');
    });

    it(`SwiGLU: ${count} random values`, async () => {
      const rand = rng(seed + 10);
      const gate = f32(normal(rand, count, 3));
      const up = f32(normal(rand, count));
      const dh = f32(normal(rand, count));
      const out = await run('swiglu', { gate, up, dh });
      const g = swigluBackwardRef(gate, up, dh);
      expectClose(out.h, swigluRef(gate, up), ACT_TOL, 'swiglu h');
      expectClose(out.dGate, g.dGate, ACT_TOL, 'swiglu d_gate');
      expectClose(out.dUp, g.dUp, ACT_TOL, 'swiglu d_up');
    });
  }

  it('GELU: extreme inputs stay finite and match (gelu(x) = x for large x, 0 for very negative x)', async () => {
    const x = f32(extremes);
    const dy = x.map(() => 1);
    const out = await run('gelu', { x, dy });
    expect(out.y.every((v: number) => Number.isFinite(v))).toBe(true);
    expectClose(out.y, geluRef(x), ACT_TOL, 'gelu y');
    expectClose(out.dx, geluBackwardRef(x, dy), ACT_TOL, 'gelu dx');
  });

  it('GELU and SwiGLU pass NaN through (a NaN weight must reach the trainer\'s NaN guard)', async () => {
    const g = await run('gelu', { x: [NaN, 1], dy: [1, 1] });
    expect(Number.isNaN(g.y[0]) && Number.isNaN(g.dx[0])).toBe(true);
    expect(Number.isFinite(g.y[1])).toBe(true);
    const s = await run('swiglu', { gate: [NaN, 1], up: [1, 1], dh: [1, 1] });
    expect(Number.isNaN(s.h[0]) && Number.isNaN(s.dGate[0]) && Number.isNaN(s.dUp[0])).toBe(true);
    expect(Number.isFinite(s.h[1])).toBe(true);
  });

  it('GELU and SwiGLU give what torch gives for +-inf: -inf -> NaN, +inf -> +inf, NaN gradients', async () => {
    // The clamps inside the kernels used to map -inf to a finite activation and gradient.
    const x = [-Infinity, Infinity, NaN, -3, 0.5];
    const dy = [1, 1, 1, 1, 1];
    const g = await run('gelu', { x, dy });
    expectClose(g.y, geluRef(x), ACT_TOL, 'gelu y');
    expectClose(g.dx, geluBackwardRef(x, dy), ACT_TOL, 'gelu dx');
    expect(g.y.slice(0, 3)).toEqual([NaN, Infinity, NaN]);
    expect(g.dx.slice(0, 3)).toEqual([NaN, NaN, NaN]);
    const up = [2, 2, 2, 2, 2];
    const s = await run('swiglu', { gate: x, up, dh: dy });
    const sRef = swigluBackwardRef(x, up, dy);
    expectClose(s.h, swigluRef(x, up), ACT_TOL, 'swiglu h');
    expectClose(s.dGate, sRef.dGate, ACT_TOL, 'swiglu dGate');
    expectClose(s.dUp, sRef.dUp, ACT_TOL, 'swiglu dUp');
    expect(s.h.slice(0, 3)).toEqual([NaN, Infinity, NaN]);
    expect(s.dGate.slice(0, 3)).toEqual([NaN, NaN, NaN]);
    expect(s.dUp.slice(0, 3)).toEqual([NaN, Infinity, NaN]);
  });

  it('SwiGLU: extreme gates stay finite and match', async () => {
    const gate = f32(extremes);
    const up = f32(extremes.map((_, i) => (i % 2 ? 0.5 : -2)));
    const dh = f32(extremes.map((_, i) => (i % 3 ? 1 : -1.5)));
    const out = await run('swiglu', { gate, up, dh });
    const g = swigluBackwardRef(gate, up, dh);
    for (const v of [...out.h, ...out.dGate, ...out.dUp]) expect(Number.isFinite(v)).toBe(true);
    expectClose(out.h, swigluRef(gate, up), ACT_TOL, 'swiglu h');
    expectClose(out.dGate, g.dGate, ACT_TOL, 'swiglu d_gate');
    expectClose(out.dUp, g.dUp, ACT_TOL, 'swiglu d_up');
  });
});

describe('embedding kernels (WGSL) vs float64 twin', () => {
  async function checkEmbedding(
    seed: number,
    tokens: number,
    dim: number,
    vocab: number,
    positions: number,
    accumulate: boolean,
    gradTol = EMB_GRAD_TOL,
  ) {
    const rand = rng(seed);
    // Repeated ids, and both ends of the vocabulary.
    const ids = randomInts(rand, tokens, Math.min(vocab, 5 + tokens / 3));
    ids[0] = 0;
    if (tokens > 1) ids[tokens - 1] = vocab - 1;
    if (tokens > 2) ids[1] = vocab - 1;
    const table = f32(normal(rand, vocab * dim));
    const posIds = positions ? Array.from({ length: tokens }, (_, t) => t % positions) : undefined;
    const posTable = positions ? f32(normal(rand, positions * dim)) : undefined;
    const dOut = f32(normal(rand, tokens * dim));
    const dTableInit = accumulate ? f32(normal(rand, vocab * dim)) : undefined;
    const dPosInit = accumulate && positions ? f32(normal(rand, positions * dim)) : undefined;
    const input = { tokens, dim, vocab, positions, ids, table, posIds, posTable, dOut, dTableInit, dPosInit };
    const out = await run('embedding', input);
    const ref = embeddingForwardRef({ ids, table, dim, posIds, posTable });
    if (positions) expectClose(out.out, ref, ONE_ROUNDING, 'out');
    else expect(out.out).toEqual(Array.from(ref));
    expectClose(out.dTable, embeddingBackwardRef(ids, dOut, vocab, dim, dTableInit), gradTol, 'dTable');
    if (positions) expectClose(out.dPos, embeddingBackwardRef(posIds!, dOut, positions, dim, dPosInit), gradTol, 'dPos');
    else expect(out.dPos).toBeUndefined();
    return { input, out };
  }

  it('one token, dim 2', async () => {
    await checkEmbedding(1, 1, 2, 3, 0, false);
  });
  it('7 tokens, dim 33, vocab 50, repeated ids', async () => {
    await checkEmbedding(2, 7, 33, 50, 0, false);
  });
  it('64 tokens, dim 256, vocab 300, with a position table of 16', async () => {
    await checkEmbedding(3, 64, 256, 300, 16, false);
  });
  it('37 tokens, dim 1000 (loop over columns), with positions, accumulating into gradients', async () => {
    await checkEmbedding(4, 37, 1000, 40, 20, true);
  });
  it('200 tokens into 3 ids (long ordered sums), with 2 positions', async () => {
    await checkEmbedding(6, 200, 8, 3, 2, false, { atol: 2e-5, rtol: 1e-6 });
  });
  it('the scatter-add gives the same bits twice', async () => {
    const { input, out } = await checkEmbedding(5, 64, 65, 9, 8, false);
    expect(await run('embedding', input)).toEqual(out);
  });
});

describe('embedding: ids made on the GPU outside the table read as NaN rows', () => {
  it('an id or a position id past its table gives a NaN row, as the twin; the other rows are exact', async () => {
    // The sampler's NO_TOKEN (0xffffffff) must poison the next step, not read as zeros.
    const dim = 3;
    const table = f32([1, 2, 3, 4, 5, 6]); // 2 rows
    const posTable = f32([0.5, 0.25, 0.125, 1, 1, 1]); // 2 positions
    const ids = [1, 0xffffffff, 2, 0];
    const posIds = [0, 1, 1, 2];
    const input = { tokens: 4, dim, vocab: 2, ids, table };
    const plain = await run('embeddingGpuIds', input);
    expectClose(plain.out, embeddingForwardRef({ ids, table, dim }), ONE_ROUNDING, 'out');
    expect(plain.out).toEqual([4, 5, 6, NaN, NaN, NaN, NaN, NaN, NaN, 1, 2, 3]);
    const withPos = await run('embeddingGpuIds', { ...input, positions: 2, posIds, posTable });
    expectClose(withPos.out, embeddingForwardRef({ ids, table, dim, posIds, posTable }), ONE_ROUNDING, 'out with positions');
    expect(withPos.out.slice(9).every((v: number) => Number.isNaN(v))).toBe(true); // position 2 is past the table
  });
});

describe('elementwise kernels (WGSL) vs float64 twin', () => {
  for (const count of [1, 1000, 4097]) {
    it(`add, accumulate, scale, fill on ${count} values`, async () => {
      const rand = rng(count);
      const a = f32(normal(rand, count));
      const b = f32(normal(rand, count));
      const acc = f32(normal(rand, count));
      expect(await run('elementwise', { op: 'add', a, b })).toEqual(Array.from(new Float32Array(addRef(a, b))));
      expectClose(await run('elementwise', { op: 'add', a, b, alpha: 0.3 }), addRef(a, b, 0.3), ONE_ROUNDING, 'add alpha');
      expectClose(await run('elementwise', { op: 'accumulate', acc, a, alpha: -2 }), accumulateRef(acc, a, -2), ONE_ROUNDING, 'accumulate');
      expectClose(await run('elementwise', { op: 'scale', a, alpha: 1.7 }), scaleRef(a, 1.7), ONE_ROUNDING, 'scale');
      expect(await run('elementwise', { op: 'fill', count, alpha: -0.5 })).toEqual(Array.from(fillRef(count, -0.5)));
    });
  }
});

describe('bad shapes and ids are rejected with a RangeError naming the argument', () => {
  async function rejects(fn: string, input: unknown, pattern: RegExp) {
    const r = await run('attempt', { fn, input });
    expect(r.ok, `${fn} should fail with ${pattern}`).toBe(false);
    expect(r.name).toBe('RangeError');
    expect(r.message).toMatch(pattern);
  }

  it('host helpers', async () => {
    const ln = randomNorm('layernorm', 90, 2, 3);
    await rejects('norm', { ...ln, x: ln.x.slice(1) }, /x has 5 values, expected 6/);
    await rejects('norm', { ...ln, gamma: [1, 2] }, /gamma has 2 values, expected 3/);
    await rejects('norm', { ...ln, beta: undefined }, /beta is required/);
    await rejects('norm', { ...ln, kind: 'rmsnorm' }, /rmsnorm has no beta/);
    await rejects('norm', { ...ln, eps: -1 }, /eps must be/);
    await rejects('norm', { ...ln, rows: 0, x: [], dy: [] }, /rows must be a positive integer/);
    await rejects('norm', { ...ln, kind: 'batchnorm' }, /kind must be/);
    await rejects('gelu', { x: [1, 2], dy: [1] }, /dy has 1 values, expected 2/);
    await rejects('gelu', { x: [] }, /x is empty/);
    await rejects('swiglu', { gate: [1, 2], up: [1, 2, 3] }, /up has 3 values, expected 2/);
    const emb = { tokens: 3, dim: 2, vocab: 4, ids: [0, 3, 1], table: Array(8).fill(0) };
    await rejects('embedding', { ...emb, ids: [0, 4, 1] }, /ids\[1\] = 4 is outside the table of 4 rows/);
    await rejects('embedding', { ...emb, table: Array(7).fill(0) }, /table has 7 values, expected 8/);
    await rejects('embedding', { ...emb, positions: 2, posIds: [0, 1, 2], posTable: [0, 0, 0, 0] }, /posIds\[2\] = 2 is outside/);
    await rejects('embedding', { ...emb, positions: 2 }, /positions > 0, posIds and posTable go together/);
    await rejects('elementwise', { op: 'add', a: [1, 2], b: [1] }, /b has 1 values, expected 2/);
    await rejects('elementwise', { op: 'scale', a: [1] }, /alpha is required/);
    await rejects('elementwise', { op: 'fill', count: 0, alpha: 1 }, /count must be a positive integer/);
    await rejects('elementwise', { op: 'mul', a: [1] }, /unknown elementwise op "mul"/);
  });

  it('record-level launchers, before anything is dispatched', async () => {
    const r: Record<string, string> = await run('recordErrors', null);
    const expected: Record<string, RegExp> = {
      'layernorm without beta': /beta is required for layernorm/,
      'rmsnorm with beta': /beta must be null for rmsnorm/,
      'x too small': /x holds \d+ values, needs 1600/,
      'rows 0': /rows must be a positive integer/,
      'dim 1.5': /dim must be a positive integer/,
      'eps negative': /eps must be a finite number >= 0/,
      'accumulate without dBeta': /needs dBeta/,
      'dy too small': /dy holds \d+ values, needs 128/,
      'residual too small': /residual holds \d+ values, needs 128/,
      'threads 3': /threads must be a power of two from 1 to 256, got 3/,
      'gelu count 0': /count must be a positive integer/,
      'gelu x too small': /x holds \d+ values, needs 100/,
      'embedding table too small': /table holds \d+ values, needs 120/,
      'embedding positions without table': /positions = 4 but no position ids and table/,
      'embedding backward id out of range': /ids\[2\] = 5 is outside the table of 5 rows/,
      'embedding backward negative id': /ids\[1\] = -1/,
      'add b too small': /b holds \d+ values, needs 100/,
      'accumulate alpha NaN': /alpha must be a finite number/,
    };
    expect(Object.keys(r).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, pattern] of Object.entries(expected)) {
      expect(r[name], name).toMatch(/^RangeError: /);
      expect(r[name], name).toMatch(pattern);
    }
  });
});
