// The WGSL attention (forward, backward, decode) and RoPE kernels against their float64 twins,
// in headless Chromium (WebGPU on SwiftShader). Inputs are rounded to f32 before both see them.
// Tolerances (f32 kernel vs f64 twin; inputs ~N(0, 1), so scores ~N(0, 1)); the largest
// errors observed over these cases are ~1e-6 for out/lse and ~4e-6 for gradients:
//   out, lse, decode out: atol 1e-5 + rtol 1e-4 (softmax-weighted sums of <= T f32 terms);
//   dq, dk, dv: atol 3e-5 + rtol 1e-3 (sums over up to G * T rows of O(1) f32 products);
//   RoPE: atol 3e-5 for |x| <~ 4 at positions < 64, 1e-4 at positions < 1000: one ulp of the
//   f32 angle pos * inv_freq bounds the table's error (Hugging Face rounds the same way).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { attentionBackwardRef, attentionDecodeRef, attentionForwardRef } from '../../src/ops/attention.reference';
import { ropeBackwardRef, ropeForwardRef } from '../../src/ops/rope.reference';
import { ropePositions } from '../../src/ops/rope';
import { expectClose, type Tolerance } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

const CASES = '/test/harness/cases/attention.ts';
const OUT_TOL = { atol: 1e-5, rtol: 1e-4 };
const GRAD_TOL = { atol: 3e-5, rtol: 1e-3 };
const ROPE_TOL = { atol: 3e-5, rtol: 0 };

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

function f32(values: number[]): number[] {
  return Array.from(new Float32Array(values));
}

interface Shape {
  batch: number;
  seqLen: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  pad: number[];
}

type Extra = { tile?: 8 | 16; scale?: number; kernels?: 'rows' | 'tiles' };

function makeCase(seed: number, s: Shape, extra: Extra = {}) {
  const rand = rng(seed);
  const qSize = s.batch * s.seqLen * s.numHeads * s.headDim;
  const kvSize = s.batch * s.seqLen * s.numKvHeads * s.headDim;
  return {
    ...s,
    ...extra,
    q: f32(normal(rand, qSize)),
    k: f32(normal(rand, kvSize)),
    v: f32(normal(rand, kvSize)),
    dout: f32(normal(rand, qSize)),
  };
}

async function checkAttention(seed: number, s: Shape, extra: Extra = {}) {
  const input = makeCase(seed, s, extra);
  const got = await harness.runModule(CASES, 'attention', input);
  const fwd = attentionForwardRef(input);
  const grads = attentionBackwardRef(input, input.dout);
  expectClose(got.out, fwd.out, OUT_TOL, 'out');
  expectClose(got.lse, fwd.lse, OUT_TOL, 'lse');
  expectClose(got.dq, grads.dq, GRAD_TOL, 'dq');
  expectClose(got.dk, grads.dk, GRAD_TOL, 'dk');
  expectClose(got.dv, grads.dv, GRAD_TOL, 'dv');
  return { got, input };
}

describe('attention kernels (WGSL) vs float64 twin', () => {
  // Each (headDim, tile) pair compiles its own pipelines (seconds on SwiftShader), so the
  // cases share few of them: tile 16 (the default on 32 KiB adapters) at Dh 8, 64 and 128,
  // tile 8 (the 16 KiB path) at Dh 16 and 128 (where each thread owns the most columns).
  const cases: [number, Shape, 8 | 16][] = [
    [1, { batch: 1, seqLen: 1, numHeads: 4, numKvHeads: 4, headDim: 8, pad: [0] }, 16],
    [2, { batch: 2, seqLen: 5, numHeads: 4, numKvHeads: 2, headDim: 16, pad: [0, 2] }, 8],
    [3, { batch: 3, seqLen: 17, numHeads: 6, numKvHeads: 1, headDim: 8, pad: [0, 5, 16] }, 16],
    [4, { batch: 2, seqLen: 64, numHeads: 4, numKvHeads: 2, headDim: 64, pad: [3, 0] }, 16],
    [5, { batch: 3, seqLen: 17, numHeads: 4, numKvHeads: 4, headDim: 16, pad: [17, 1, 9] }, 8],
    [6, { batch: 2, seqLen: 17, numHeads: 6, numKvHeads: 2, headDim: 8, pad: [16, 0] }, 16],
  ];
  for (const [seed, s, tile] of cases) {
    it(`tile ${tile}: B=${s.batch} T=${s.seqLen} Hq/Hkv=${s.numHeads}/${s.numKvHeads} Dh=${s.headDim} pad=[${s.pad}]`, async () => {
      const { got } = await checkAttention(seed, s, { tile });
      expect(got.tile).toBe(tile);
      expect(got.kernels).toBe('tiles');
    });
  }

  // The row kernels (one thread per query or key row, 4 keys or queries a step; the default on
  // this software adapter) at the head dims of the embedded model (32), GPT-2 / SmolLM (64), the
  // largest (128) and the smallest (4, one vec4): one token, lengths that are no multiple of 4,
  // grouped-query heads, a fully padded sequence.
  const rowCases: [number, Shape][] = [
    [15, { batch: 2, seqLen: 6, numHeads: 3, numKvHeads: 1, headDim: 4, pad: [0, 2] }],
    [11, { batch: 1, seqLen: 1, numHeads: 4, numKvHeads: 4, headDim: 32, pad: [0] }],
    [12, { batch: 3, seqLen: 19, numHeads: 6, numKvHeads: 2, headDim: 32, pad: [0, 5, 18] }],
    [13, { batch: 2, seqLen: 37, numHeads: 4, numKvHeads: 1, headDim: 64, pad: [3, 0] }],
    [14, { batch: 2, seqLen: 9, numHeads: 2, numKvHeads: 2, headDim: 128, pad: [9, 1] }],
  ];
  for (const [seed, s] of rowCases) {
    it(`rows: B=${s.batch} T=${s.seqLen} Hq/Hkv=${s.numHeads}/${s.numKvHeads} Dh=${s.headDim} pad=[${s.pad}]`, async () => {
      const { got } = await checkAttention(seed, s, { kernels: 'rows' });
      expect(got.kernels).toBe('rows');
    });
  }

  it('Dh = 128, tile 8 (16 columns per thread, the 16 KiB path) with a scale override', async () => {
    await checkAttention(21, { batch: 1, seqLen: 20, numHeads: 2, numKvHeads: 1, headDim: 128, pad: [2] }, { tile: 8, scale: 0.2 });
  });

  it('Dh = 128, tile 16 (25 KiB of workgroup memory, the default on 32 KiB adapters)', async () => {
    await checkAttention(22, { batch: 1, seqLen: 20, numHeads: 2, numKvHeads: 2, headDim: 128, pad: [5] }, { tile: 16 });
  });

  it('a long sequence (T = 300, odd block count) with padding', async () => {
    await checkAttention(23, { batch: 1, seqLen: 300, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [37] });
  });

  it('large scores (scale 4, std ~11): the online softmax rescales across blocks without overflow', async () => {
    const { got } = await checkAttention(24, { batch: 2, seqLen: 40, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [0, 7] }, { scale: 4 });
    expect(got.lse.every((x: number) => Number.isFinite(x))).toBe(true);
  });

  it('padded rows give out = lse = 0 and zero gradients; a fully padded sequence gives zeros', async () => {
    const s = { batch: 2, seqLen: 9, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [4, 9] };
    const { got } = await checkAttention(27, s);
    const rowFloats = s.numHeads * s.headDim;
    const kvRow = s.numKvHeads * s.headDim;
    expect(got.out.slice(0, 4 * rowFloats).every((x: number) => x === 0)).toBe(true);
    expect(got.dq.slice(0, 4 * rowFloats).every((x: number) => x === 0)).toBe(true);
    expect(got.dk.slice(0, 4 * kvRow).every((x: number) => x === 0)).toBe(true);
    expect(got.dv.slice(0, 4 * kvRow).every((x: number) => x === 0)).toBe(true);
    const second = (x: number[], n: number) => x.slice(9 * n, 18 * n);
    for (const [name, n] of [['out', rowFloats], ['dq', rowFloats], ['dk', kvRow], ['dv', kvRow]] as const) {
      expect(second(got[name], n).every((x: number) => x === 0), name).toBe(true);
    }
    expect(got.lse.slice(2 * 9).every((x: number) => x === 0)).toBe(true);
  });

  it('gradients are bitwise reproducible (no atomics)', async () => {
    const shape = { batch: 2, seqLen: 17, numHeads: 6, numKvHeads: 2, headDim: 16, pad: [0, 3] };
    for (const extra of [{ tile: 8 }, { kernels: 'rows' }] as const) {
      const same = await harness.runModule(CASES, 'attentionDeterministic', makeCase(25, shape, extra));
      expect(same).toEqual({ dq: true, dk: true, dv: true });
    }
  });

  it('picks tile 16 on this adapter and 8 under the 16 KiB default at Dh = 128', async () => {
    const r = await harness.runModule(CASES, 'tileChoice', { headDim: 128 });
    expect(r.tile).toBe(r.limit >= 25792 ? 16 : 8);
    expect(r.tileAt16KiB).toBe(8);
  });

  it('runs the row kernels by default on a software adapter (1 + 2 dispatches, decode 1), tiles elsewhere (1 + 3, decode 1)', async () => {
    const r = await harness.runModule(CASES, 'kernelChoice', { batch: 2, seqLen: 5, numHeads: 2, numKvHeads: 1, headDim: 8 });
    expect(r.kernels).toBe(r.software ? 'rows' : 'tiles');
    expect(r.rows).toEqual(['forward_rows', 'backward_dq_rows', 'backward_dkdv_rows', 'decode_rows']);
    expect(r.tiles).toEqual(['forward', 'backward_prep', 'backward_dq', 'backward_dkdv', 'decode']);
    expect(r.decodeDefault).toBe(r.software ? 'decode_rows' : 'decode');
  });

  it('rejects bad shapes and inputs with RangeErrors naming the argument', async () => {
    const base = makeCase(26, { batch: 2, seqLen: 3, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [0, 1] });
    const err = (c: unknown) => harness.runModule(CASES, 'errorOf', { kind: 'attention', case: c });
    expect(await err(base)).toBeNull();
    expect(await err({ ...base, numKvHeads: 3 })).toMatch(/RangeError: numHeads \(2\) must be a multiple of numKvHeads \(3\)/);
    expect(await err({ ...base, pad: [0, 4] })).toMatch(/RangeError: pad\[1\] = 4 must be an integer in \[0, seqLen = 3\]/);
    expect(await err({ ...base, pad: [0] })).toMatch(/RangeError: pad has 1 values/);
    expect(await err({ ...base, k: base.k.slice(1) })).toMatch(/RangeError: k has 47 values, expected batch\*seqLen\*numKvHeads\*headDim = 48/);
    expect(await err({ ...base, dout: base.dout.slice(1) })).toMatch(/RangeError: dout has/);
    expect(await err({ ...base, headDim: 130 })).toMatch(/RangeError: headDim must be at most 128/);
    expect(await err({ ...base, tile: 12 })).toMatch(/RangeError: tile must be 8 or 16/);
    expect(await err({ ...base, kernels: 'cols' })).toMatch(/RangeError: kernels must be 'rows' or 'tiles', got cols/);
  });
});

describe('attention decode kernel (KV cache [B, Hkv, Tmax, Dh]) vs the twin', () => {
  /** Builds caches from a full sequence; the decode query is the last row's. */
  function decodeCase(seed: number, s: Shape, maxSeqLen: number) {
    const full = makeCase(seed, s);
    const { batch: B, seqLen: T, numHeads: Hq, numKvHeads: Hkv, headDim: D } = s;
    const rand = rng(seed + 1000);
    const kcache = f32(normal(rand, B * Hkv * maxSeqLen * D, 30)); // junk past `length`
    const vcache = f32(normal(rand, B * Hkv * maxSeqLen * D, 30));
    const q: number[] = [];
    for (let b = 0; b < B; b++) {
      for (let g = 0; g < Hkv; g++) {
        for (let t = 0; t < T; t++) {
          for (let d = 0; d < D; d++) {
            kcache[((b * Hkv + g) * maxSeqLen + t) * D + d] = full.k[((b * T + t) * Hkv + g) * D + d];
            vcache[((b * Hkv + g) * maxSeqLen + t) * D + d] = full.v[((b * T + t) * Hkv + g) * D + d];
          }
        }
      }
      for (let h = 0; h < Hq; h++) for (let d = 0; d < D; d++) q.push(full.q[((b * T + T - 1) * Hq + h) * D + d]);
    }
    const lastRow: number[] = [];
    const out = attentionForwardRef(full).out;
    for (let b = 0; b < B; b++) for (let i = 0; i < Hq * D; i++) lastRow.push(out[(b * T + T - 1) * Hq * D + i]);
    const input = { batch: B, numHeads: Hq, numKvHeads: Hkv, headDim: D, maxSeqLen, length: T, pad: s.pad, q, kcache, vcache };
    return { input, lastRow };
  }

  for (const [seed, s, tmax] of [
    [31, { batch: 1, seqLen: 1, numHeads: 4, numKvHeads: 4, headDim: 8, pad: [0] }, 4],
    [32, { batch: 3, seqLen: 17, numHeads: 6, numKvHeads: 1, headDim: 16, pad: [0, 4, 16] }, 20],
    [33, { batch: 2, seqLen: 300, numHeads: 4, numKvHeads: 2, headDim: 64, pad: [0, 130] }, 301],
  ] as const) {
    it(`equals the full forward twin's last row: B=${s.batch} len=${s.seqLen} Tmax=${tmax} Hq/Hkv=${s.numHeads}/${s.numKvHeads} Dh=${s.headDim}`, async () => {
      const { input, lastRow } = decodeCase(seed, { ...s, pad: [...s.pad] }, tmax);
      for (const kernels of ['rows', 'tiles'] as const) {
        const got = await harness.runModule(CASES, 'decode', { ...input, kernels });
        expectClose(got.out, lastRow, OUT_TOL, `decode out (${kernels})`);
        expectClose(got.out, attentionDecodeRef(input), OUT_TOL, `decode out vs decode twin (${kernels})`);
      }
    });
  }

  it('gives 0 to a sequence whose cache holds only padding, and rejects length > maxSeqLen', async () => {
    const { input } = decodeCase(34, { batch: 2, seqLen: 5, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [5, 0] }, 6);
    for (const kernels of ['rows', 'tiles'] as const) {
      const got = await harness.runModule(CASES, 'decode', { ...input, kernels });
      expect(got.out.slice(0, 16).every((x: number) => x === 0)).toBe(true);
      expectClose(got.out, attentionDecodeRef(input), OUT_TOL, `decode out (${kernels})`);
    }
    const message = await harness.runModule(CASES, 'errorOf', { kind: 'decode', case: { ...input, length: 7 } });
    expect(message).toMatch(/RangeError: length \(7\) must not exceed maxSeqLen \(6\)/);
  });
});

/** The kernel is non-finite exactly where the twin is (or, with `superset`, at least there), and close where both are finite. */
function expectFinitePattern(actual: number[], expected: ArrayLike<number>, tol: Tolerance, label: string, superset = false) {
  const bad = (x: number | null) => x === null || !Number.isFinite(x);
  for (let i = 0; i < expected.length; i++) {
    if (bad(expected[i])) expect(bad(actual[i]), `${label}[${i}]: the twin is ${expected[i]}`).toBe(true);
    else if (!superset) expect(bad(actual[i]), `${label}[${i}]: the twin is finite (${expected[i]})`).toBe(false);
  }
  const keep = (i: number) => !bad(expected[i]) && !bad(actual[i]);
  expectClose(actual.map((x, i) => (keep(i) ? x : 0)), Array.from(expected, (x, i) => (keep(i) ? x : 0)), tol, label);
}

describe('NaN and Inf reach the attention outputs (the trainer\'s NaN guard depends on it)', () => {
  it('decode: a NaN or +inf key, or a NaN value, makes the heads that see it non-finite; padding never does', async () => {
    // The decode kernel used to write 0 wherever its softmax sum was not > 0: a NaN sum (where
    // exp(NaN) is NaN) or a row whose every score is -inf (torch gives NaN there).
    const [B, Hq, Hkv, D, Tmax, length] = [4, 4, 2, 8, 8, 6];
    const rand = rng(61);
    const q = f32(normal(rand, B * Hq * D));
    const kcache = f32(normal(rand, B * Hkv * Tmax * D));
    const vcache = f32(normal(rand, B * Hkv * Tmax * D));
    const at = (b: number, g: number, t: number, d: number) => ((b * Hkv + g) * Tmax + t) * D + d;
    kcache[at(0, 0, 3, 2)] = NaN; // b0, heads 0 and 1: every column
    kcache[at(1, 1, 1, 5)] = Infinity; // b1, heads 2 and 3 (their q[5] > 0: score +inf)
    q[(1 * Hq + 2) * D + 5] = 1;
    q[(1 * Hq + 3) * D + 5] = 1;
    vcache[at(1, 0, 4, 0)] = NaN; // b1, heads 0 and 1: column 0 only
    kcache[at(2, 0, 0, 0)] = NaN; // b2 pads 2 positions: invisible
    vcache[at(2, 1, 1, 3)] = NaN;
    kcache[at(2, 0, 7, 0)] = NaN; // past `length`: invisible
    q[(3 * Hq + 0) * D + 0] = Infinity; // b3 head 0: every score -inf (every key's k[0] < 0)
    for (let t = 0; t < length; t++) kcache[at(3, 0, t, 0)] = -0.1 - Math.abs(kcache[at(3, 0, t, 0)]);
    const input = { batch: B, numHeads: Hq, numKvHeads: Hkv, headDim: D, maxSeqLen: Tmax, length, pad: [0, 0, 2, 0], q, kcache, vcache };
    const ref = attentionDecodeRef(input);
    const head = (x: ArrayLike<number>, b: number, h: number) => Array.from(x).slice((b * Hq + h) * D, (b * Hq + h + 1) * D);
    // The twin itself shows the intended pattern.
    for (const h of [0, 1]) expect(head(ref, 0, h).every(Number.isNaN)).toBe(true);
    for (const h of [2, 3]) expect(head(ref, 1, h).every(Number.isNaN)).toBe(true);
    for (const h of [0, 1]) expect(head(ref, 1, h).map(Number.isNaN)).toEqual([true, false, false, false, false, false, false, false]);
    for (const h of [0, 1, 2, 3]) expect(head(ref, 2, h).every(Number.isFinite)).toBe(true);
    expect(head(ref, 3, 0).every(Number.isNaN)).toBe(true);
    for (const h of [1, 2, 3]) expect(head(ref, 3, h).every(Number.isFinite)).toBe(true);
    for (const kernels of ['rows', 'tiles'] as const) {
      const got = await harness.runModule(CASES, 'decode', { ...input, kernels });
      expectFinitePattern(got.out, ref, OUT_TOL, `decode out (${kernels})`);
    }
  });

  for (const extra of [{ tile: 16 }, { kernels: 'rows' }] as const) {
    it(`forward (${'kernels' in extra ? extra.kernels : 'tiles'}): a NaN key or value, or an infinite query, poisons exactly the rows that see it; backward keeps every NaN`, async () => {
      const s = { batch: 2, seqLen: 20, numHeads: 2, numKvHeads: 1, headDim: 8, pad: [0, 3] };
      const input = makeCase(62, s, extra);
      const { seqLen: T, numHeads: Hq, headDim: D } = s;
      const qAt = (b: number, t: number, h: number, d: number) => ((b * T + t) * Hq + h) * D + d;
      const kvAt = (b: number, t: number, d: number) => (b * T + t) * D + d; // one kv head
      input.k[kvAt(0, 5, 1)] = NaN; // b0: rows 5.. of both heads
      input.q[qAt(1, 10, 1, 0)] = Infinity; // b1 row 10 head 1: score +inf with key 10 (k[0] > 0)
      input.k[kvAt(1, 10, 0)] = 1;
      // A value at the first row of a tile: rows before it in the same tile would see p = 0 * NaN
      // (the kernel may spread a NaN there, never hide one), so none are placed after it.
      input.v[kvAt(1, 16, 3)] = NaN; // b1 rows 16.., column 3
      const got = await harness.runModule(CASES, 'attention', input);
      expect(got.kernels).toBe('kernels' in extra ? 'rows' : 'tiles');
      const fwd = attentionForwardRef(input);
      const grads = attentionBackwardRef(input, input.dout);
      expect(fwd.lse.filter((x) => !Number.isFinite(x)).length).toBe(2 * 15 + 1);
      expectFinitePattern(got.out, fwd.out, OUT_TOL, 'out');
      expectFinitePattern(got.lse, fwd.lse, OUT_TOL, 'lse');
      for (const name of ['dq', 'dk', 'dv'] as const) {
        expect(grads[name].some((x) => Number.isNaN(x)), `twin ${name} has NaN`).toBe(true);
        expectFinitePattern(got[name], grads[name], GRAD_TOL, name, true);
      }
    });
  }
});

describe('RoPE kernel (WGSL) vs float64 twin', () => {
  for (const [seed, B, T, H, D, theta] of [
    [41, 1, 1, 4, 8, 10000],
    [42, 3, 17, 6, 16, 10000],
    [43, 2, 64, 2, 64, 1000000],
    [44, 1, 5, 3, 128, 500000],
  ] as const) {
    it(`forward and backward: B=${B} T=${T} H=${H} Dh=${D} theta=${theta}`, async () => {
      const rand = rng(seed);
      // No padding in sequence 0; the last of several keeps one token; others random.
      const pad = Array.from({ length: B }, (_, b) => (b === 0 ? 0 : b === B - 1 ? T - 1 : Math.floor(rand() * T)));
      const positions = Array.from(ropePositions(pad, T));
      const x = f32(normal(rand, B * T * H * D));
      const problem = { x, positions, tokens: B * T, numHeads: H, headDim: D, theta };
      const fwd = await harness.runModule(CASES, 'rope', problem);
      expectClose(fwd.y, ropeForwardRef(problem), ROPE_TOL, 'rope forward');
      const bwd = await harness.runModule(CASES, 'rope', { ...problem, direction: 'backward' });
      expectClose(bwd.y, ropeBackwardRef(problem, x), ROPE_TOL, 'rope backward');
    });
  }

  it('large positions (up to 999) stay within tolerance', async () => {
    const rand = rng(45);
    const tokens = 40;
    const positions = Array.from({ length: tokens }, () => Math.floor(rand() * 1000));
    const x = f32(normal(rand, tokens * 2 * 32));
    const problem = { x, positions, tokens, numHeads: 2, headDim: 32 };
    const got = await harness.runModule(CASES, 'rope', problem);
    expectClose(got.y, ropeForwardRef(problem), { atol: 1e-4, rtol: 0 }, 'rope forward');
  });

  it('rejects an odd headDim and mismatched positions', async () => {
    const err = (c: unknown) => harness.runModule(CASES, 'errorOf', { kind: 'rope', case: c });
    expect(await err({ tokens: 1, numHeads: 1, headDim: 3, x: [1, 2, 3], positions: [0] })).toMatch(/RangeError: headDim must be even/);
    expect(await err({ tokens: 2, numHeads: 1, headDim: 2, x: [1, 2, 3, 4], positions: [0] })).toMatch(/RangeError: positions has 1 values/);
    expect(await err({ tokens: 1, numHeads: 1, headDim: 2, x: [1, 2], positions: [-1] })).toMatch(/RangeError: positions\[0\]/);
  });
});
