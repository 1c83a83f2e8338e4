// The float64 twins of the attention and RoPE kernels: hand-computed cases, invariances
// (left padding, repeat_kv, scale), finite-difference gradients; plus the launchers' pure
// helpers (tile choice, shape errors, position ids, the f32 RoPE table).
import { describe, expect, it } from 'vitest';
import {
  attentionBackwardRef,
  attentionDecodeRef,
  attentionForwardRef,
  type AttentionProblem,
} from '../../src/ops/attention.reference';
import { attentionTile, resolveAttentionShape, validateAttentionDecodeShape } from '../../src/ops/attention';
import { ropeBackwardRef, ropeForwardRef, type RopeProblem } from '../../src/ops/rope.reference';
import { decodePositions, ropeInvFreq, ropePositions, ropeTableData } from '../../src/ops/rope';
import { expectClose } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

function problem(
  seed: number,
  batch: number,
  seqLen: number,
  numHeads: number,
  numKvHeads: number,
  headDim: number,
  pad: number[],
): AttentionProblem {
  const rand = rng(seed);
  return {
    q: normal(rand, batch * seqLen * numHeads * headDim),
    k: normal(rand, batch * seqLen * numKvHeads * headDim),
    v: normal(rand, batch * seqLen * numKvHeads * headDim),
    pad,
    batch,
    seqLen,
    numHeads,
    numKvHeads,
    headDim,
  };
}

/** Element [b, t, h, d] of a [B, T, H, D] array. */
function at(x: ArrayLike<number>, T: number, H: number, D: number, b: number, t: number, h: number, d: number): number {
  return x[((b * T + t) * H + h) * D + d];
}

const LIMITS_32K = { maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupSizeX: 256, maxStorageBufferBindingSize: 2 ** 30 } as GPUSupportedLimits;
const LIMITS_16K = { ...LIMITS_32K, maxComputeWorkgroupStorageSize: 16384 } as GPUSupportedLimits;

describe('attention reference twin: forward', () => {
  it('matches a hand-computed two-token causal case', () => {
    // Dh = 1, scale 1: row 0 sees only key 0; row 1 sees keys 0 and 1 with scores q1*k0, q1*k1.
    const p: AttentionProblem = { q: [1, 2], k: [0, Math.log(3) / 2], v: [10, 20], pad: [0], batch: 1, seqLen: 2, numHeads: 1, numKvHeads: 1, headDim: 1, scale: 1 };
    const { out, lse } = attentionForwardRef(p);
    expect(out[0]).toBeCloseTo(10, 14);
    expect(lse[0]).toBeCloseTo(0, 14);
    // scores [0, ln 3] -> weights [1/4, 3/4]
    expect(out[1]).toBeCloseTo(0.25 * 10 + 0.75 * 20, 12);
    expect(lse[1]).toBeCloseTo(Math.log(4), 12);
  });

  it('uses 1/sqrt(headDim) by default and honours a scale override', () => {
    const base = problem(1, 1, 4, 2, 2, 4, [0]);
    const a = attentionForwardRef({ ...base, scale: 0.3 });
    const b = attentionForwardRef({ ...base, q: Array.from(base.q as number[], (x) => x * 0.3 * 2) });
    expectClose(a.out, b.out, { atol: 1e-12, rtol: 0 }, 'out');
    expectClose(a.lse, b.lse, { atol: 1e-12, rtol: 0 }, 'lse');
  });

  it('gives padded rows 0 and ignores padded keys', () => {
    const p = problem(2, 2, 5, 2, 1, 3, [2, 0]);
    const { out, lse } = attentionForwardRef(p);
    for (let t = 0; t < 2; t++) {
      for (let h = 0; h < 2; h++) {
        expect(lse[h * 5 + t]).toBe(0);
        for (let d = 0; d < 3; d++) expect(at(out, 5, 2, 3, 0, t, h, d)).toBe(0);
      }
    }
    // Changing the padded keys and values of sequence 0 changes nothing.
    const k = Array.from(p.k as number[]);
    const v = Array.from(p.v as number[]);
    for (let i = 0; i < 2 * 3; i++) {
      k[i] += 5;
      v[i] -= 7;
    }
    const again = attentionForwardRef({ ...p, k, v });
    expectClose(again.out, out, { atol: 0, rtol: 0 }, 'out');
  });

  it('a left-padded row equals the unpadded sequence at shifted positions', () => {
    const T = 6;
    const pad = 2;
    const p = problem(3, 1, T, 2, 2, 4, [pad]);
    const slice = (x: ArrayLike<number>) => Array.from(x).slice(pad * 2 * 4);
    const short = attentionForwardRef({ ...p, q: slice(p.q), k: slice(p.k), v: slice(p.v), seqLen: T - pad, pad: [0] });
    const full = attentionForwardRef(p);
    expectClose(Array.from(full.out).slice(pad * 2 * 4), short.out, { atol: 1e-12, rtol: 0 }, 'out');
  });

  it('grouped-query attention equals full attention on repeated kv heads (repeat_kv)', () => {
    const [B, T, Hq, Hkv, D] = [2, 5, 6, 2, 3];
    const p = problem(4, B, T, Hq, Hkv, D, [1, 0]);
    const G = Hq / Hkv;
    const repeat = (x: ArrayLike<number>) => {
      const r: number[] = [];
      for (let b = 0; b < B; b++)
        for (let t = 0; t < T; t++)
          for (let h = 0; h < Hq; h++) for (let d = 0; d < D; d++) r.push(at(x, T, Hkv, D, b, t, Math.floor(h / G), d));
      return r;
    };
    const gqa = attentionForwardRef(p);
    const mha = attentionForwardRef({ ...p, k: repeat(p.k), v: repeat(p.v), numKvHeads: Hq });
    expectClose(gqa.out, mha.out, { atol: 1e-12, rtol: 0 }, 'out');
    expectClose(gqa.lse, mha.lse, { atol: 1e-12, rtol: 0 }, 'lse');
  });

  it('a row that sees one key returns its value, with lse = its score', () => {
    const p = problem(5, 1, 4, 1, 1, 2, [3]);
    const { out, lse } = attentionForwardRef(p);
    expect(out[3 * 2]).toBeCloseTo(p.v[3 * 2], 14);
    expect(out[3 * 2 + 1]).toBeCloseTo(p.v[3 * 2 + 1], 14);
    const s = (p.q[6] * p.k[6] + p.q[7] * p.k[7]) / Math.sqrt(2);
    expect(lse[3]).toBeCloseTo(s, 14);
  });
});

describe('attention reference twin: backward', () => {
  for (const [seed, B, T, Hq, Hkv, D, pad] of [
    [11, 1, 4, 2, 2, 3, [0]],
    [12, 2, 5, 4, 2, 3, [0, 2]],
    [13, 2, 4, 3, 1, 2, [3, 1]],
    [14, 1, 3, 2, 1, 2, [3]],
  ] as const) {
    it(`has the gradients finite differences give: seed ${seed}, B=${B} T=${T} Hq/Hkv=${Hq}/${Hkv} Dh=${D} pad=${pad}`, () => {
      const p = problem(seed, B, T, Hq, Hkv, D, [...pad]);
      const dout = normal(rng(seed + 50), B * T * Hq * D);
      const objective = (x: AttentionProblem) => {
        const out = attentionForwardRef(x).out;
        let s = 0;
        for (let i = 0; i < out.length; i++) s += dout[i] * out[i];
        return s;
      };
      const grads = attentionBackwardRef(p, dout);
      const h = 1e-6;
      for (const name of ['q', 'k', 'v'] as const) {
        const base = Array.from(p[name]);
        const analytic = grads[`d${name}`];
        for (let i = 0; i < base.length; i++) {
          const plus = base.slice();
          const minus = base.slice();
          plus[i] += h;
          minus[i] -= h;
          const numeric = (objective({ ...p, [name]: plus }) - objective({ ...p, [name]: minus })) / (2 * h);
          expect(Math.abs(numeric - analytic[i]), `d${name}[${i}]`).toBeLessThan(1e-7);
        }
      }
    });
  }

  it('gives exactly zero gradient to padded rows and padded keys', () => {
    const [B, T, Hq, Hkv, D] = [2, 5, 2, 1, 3];
    const p = problem(15, B, T, Hq, Hkv, D, [2, 5]);
    const g = attentionBackwardRef(p, normal(rng(16), B * T * Hq * D));
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < (b === 0 ? 2 : 5); t++) {
        for (let d = 0; d < D; d++) {
          for (let h = 0; h < Hq; h++) expect(at(g.dq, T, Hq, D, b, t, h, d)).toBe(0);
          expect(at(g.dk, T, Hkv, D, b, t, 0, d)).toBe(0);
          expect(at(g.dv, T, Hkv, D, b, t, 0, d)).toBe(0);
        }
      }
    }
    expect(g.dv.some((x) => x !== 0)).toBe(true);
  });
});

describe('attention reference twin: decode', () => {
  it('equals the last row of the full forward pass', () => {
    const [B, T, Hq, Hkv, D, Tmax] = [3, 7, 4, 2, 3, 9];
    const pad = [0, 3, 6];
    const p = problem(21, B, T, Hq, Hkv, D, pad);
    const rand = rng(22);
    // Cache [B, Hkv, Tmax, D]: positions < T copied from k, v; positions >= T hold junk.
    const kcache = normal(rand, B * Hkv * Tmax * D, 9);
    const vcache = normal(rand, B * Hkv * Tmax * D, 9);
    for (let b = 0; b < B; b++)
      for (let g = 0; g < Hkv; g++)
        for (let t = 0; t < T; t++)
          for (let d = 0; d < D; d++) {
            kcache[((b * Hkv + g) * Tmax + t) * D + d] = at(p.k, T, Hkv, D, b, t, g, d);
            vcache[((b * Hkv + g) * Tmax + t) * D + d] = at(p.v, T, Hkv, D, b, t, g, d);
          }
    const q: number[] = [];
    for (let b = 0; b < B; b++) for (let h = 0; h < Hq; h++) for (let d = 0; d < D; d++) q.push(at(p.q, T, Hq, D, b, T - 1, h, d));
    const dec = attentionDecodeRef({ q, kcache, vcache, pad, batch: B, numHeads: Hq, numKvHeads: Hkv, headDim: D, maxSeqLen: Tmax, length: T });
    const full = attentionForwardRef(p).out;
    const last: number[] = [];
    for (let b = 0; b < B; b++) for (let h = 0; h < Hq; h++) for (let d = 0; d < D; d++) last.push(at(full, T, Hq, D, b, T - 1, h, d));
    expectClose(dec, last, { atol: 1e-12, rtol: 0 }, 'decode');
  });

  it('gives 0 to a sequence with no key left (pad >= length)', () => {
    const out = attentionDecodeRef({ q: [1, 2], kcache: [1, 1, 1, 1], vcache: [3, 4, 5, 6], pad: [2], batch: 1, numHeads: 1, numKvHeads: 1, headDim: 2, maxSeqLen: 2, length: 2 });
    expect(Array.from(out)).toEqual([0, 0]);
  });
});

describe('attention launcher helpers', () => {
  it('picks tile 16 where 3 tiles + scores fit workgroup memory, else 8', () => {
    expect(attentionTile(LIMITS_32K, 128)).toBe(16); // 25.2 KiB
    expect(attentionTile(LIMITS_16K, 128)).toBe(8); // 12.3 KiB
    expect(attentionTile(LIMITS_16K, 64)).toBe(16); // 13.2 KiB
    expect(attentionTile(LIMITS_16K, 64, 8)).toBe(8);
    expect(() => attentionTile(LIMITS_16K, 128, 16)).toThrow(/tile 16 needs 25792 bytes/);
  });

  it('runs the row kernels by default on a software adapter, tiles elsewhere or when a tile is asked for', () => {
    const ok = { batch: 2, seqLen: 5, numHeads: 4, numKvHeads: 2, headDim: 8 };
    expect(resolveAttentionShape(ok, LIMITS_32K).kernels).toBe('tiles');
    expect(resolveAttentionShape(ok, LIMITS_32K, true).kernels).toBe('rows');
    expect(resolveAttentionShape({ ...ok, tile: 8 }, LIMITS_32K, true).kernels).toBe('tiles');
    expect(resolveAttentionShape({ ...ok, kernels: 'rows' }, LIMITS_32K).kernels).toBe('rows');
    expect(() => resolveAttentionShape({ ...ok, kernels: 'cols' as 'rows' }, LIMITS_32K)).toThrow(/kernels must be 'rows' or 'tiles', got cols/);
    // The row kernels read vec4s: other head dims take the tiles, and asking for rows is an error.
    expect(resolveAttentionShape({ ...ok, headDim: 6 }, LIMITS_32K, true).kernels).toBe('tiles');
    expect(() => resolveAttentionShape({ ...ok, headDim: 6, kernels: 'rows' }, LIMITS_32K)).toThrow(/headDim must be a multiple of 4, got 6/);
  });

  it('rejects bad shapes with a RangeError naming the argument', () => {
    const ok = { batch: 2, seqLen: 5, numHeads: 4, numKvHeads: 2, headDim: 8 };
    expect(resolveAttentionShape(ok, LIMITS_32K).scale).toBeCloseTo(1 / Math.sqrt(8), 15);
    expect(() => resolveAttentionShape({ ...ok, numKvHeads: 3 }, LIMITS_32K)).toThrow(/numHeads \(4\) must be a multiple of numKvHeads \(3\)/);
    expect(() => resolveAttentionShape({ ...ok, headDim: 130 }, LIMITS_32K)).toThrow(/headDim must be at most 128/);
    expect(() => resolveAttentionShape({ ...ok, seqLen: 0 }, LIMITS_32K)).toThrow(RangeError);
    expect(() => resolveAttentionShape({ ...ok, batch: 1.5 }, LIMITS_32K)).toThrow(/batch/);
    expect(() => resolveAttentionShape({ ...ok, scale: 0 }, LIMITS_32K)).toThrow(/scale/);
    expect(() => resolveAttentionShape({ ...ok, seqLen: 2 ** 20, batch: 64 }, LIMITS_32K)).toThrow(/q needs .* bytes in one binding/);
    const dec = { batch: 1, numHeads: 2, numKvHeads: 1, headDim: 8, maxSeqLen: 4, length: 5 };
    expect(() => validateAttentionDecodeShape(dec, LIMITS_32K)).toThrow(/length \(5\) must not exceed maxSeqLen \(4\)/);
  });
});

function ropeProblem(seed: number, tokens: number, numHeads: number, headDim: number, maxPos: number, theta?: number): RopeProblem {
  const rand = rng(seed);
  return {
    x: normal(rand, tokens * numHeads * headDim),
    positions: Array.from({ length: tokens }, () => Math.floor(rand() * maxPos)),
    tokens,
    numHeads,
    headDim,
    theta,
  };
}

describe('RoPE reference twin', () => {
  it('rotates (x_i, x_(i+Dh/2)) by pos * theta^(-2i/Dh) (rotate_half)', () => {
    // Dh = 4, theta = 100: inv_freq = [1, 0.1]; position 2: angles 2 and 0.2.
    const y = ropeForwardRef({ x: [1, 2, 3, 4], positions: [2], tokens: 1, numHeads: 1, headDim: 4, theta: 100 });
    const [c0, s0, c1, s1] = [Math.cos(2), Math.sin(2), Math.cos(0.2), Math.sin(0.2)];
    expectClose(y, [1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1], { atol: 1e-15, rtol: 0 }, 'y');
  });

  it('is the identity at position 0, keeps pair norms, and composes positions', () => {
    const p = ropeProblem(31, 3, 2, 8, 1);
    expectClose(ropeForwardRef(p), p.x, { atol: 0, rtol: 0 }, 'position 0');
    const a = { ...p, positions: [3, 7, 1] };
    const ya = ropeForwardRef(a);
    for (let n = 0; n < 3 * 2; n++) {
      for (let i = 0; i < 4; i++) {
        const before = Math.hypot(p.x[n * 8 + i], p.x[n * 8 + i + 4]);
        expect(Math.hypot(ya[n * 8 + i], ya[n * 8 + i + 4])).toBeCloseTo(before, 13);
      }
    }
    const twice = ropeForwardRef({ ...a, x: ropeForwardRef({ ...p, positions: [2, 5, 4] }) });
    expectClose(twice, ropeForwardRef({ ...p, positions: [5, 12, 5] }), { atol: 1e-13, rtol: 0 }, 'composition');
  });

  it('backward is the inverse rotation and matches finite differences', () => {
    const p = ropeProblem(32, 4, 2, 6, 50, 500);
    expectClose(ropeBackwardRef(p, ropeForwardRef(p)), p.x, { atol: 1e-13, rtol: 0 }, 'inverse');
    const g = normal(rng(33), p.x.length);
    const objective = (x: number[]) => ropeForwardRef({ ...p, x }).reduce((s, y, i) => s + g[i] * y, 0);
    const analytic = ropeBackwardRef(p, g);
    const h = 1e-6;
    const base = Array.from(p.x);
    for (let i = 0; i < base.length; i++) {
      const plus = base.slice();
      const minus = base.slice();
      plus[i] += h;
      minus[i] -= h;
      expect(Math.abs((objective(plus) - objective(minus)) / (2 * h) - analytic[i]), `dx[${i}]`).toBeLessThan(1e-8);
    }
  });
});

describe('RoPE launcher helpers', () => {
  it('builds position ids from left padding: t - pad[b], 0 on padding', () => {
    expect(Array.from(ropePositions([0, 2, 4], 4))).toEqual([0, 1, 2, 3, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(Array.from(decodePositions([0, 2, 4], 4))).toEqual([3, 1, 0]);
  });

  it('rounds inv_freq and the table as Hugging Face f32 does, close to the exact angles', () => {
    expect(Array.from(ropeInvFreq(4, 10000))).toEqual([1, Math.fround(0.01)]);
    expect(() => ropeInvFreq(5)).toThrow(/headDim must be even/);
    const D = 16;
    const table = ropeTableData(D, 100, 10000);
    for (const pos of [0, 1, 37, 99]) {
      for (let i = 0; i < D / 2; i++) {
        const angle = pos * Math.pow(10000, (-2 * i) / D);
        // f32 angle rounding: |error| <= ~1 ulp of the angle (< 1e-5 here)
        expect(Math.abs(table[2 * (pos * 8 + i)] - Math.cos(angle))).toBeLessThan(2e-5);
        expect(Math.abs(table[2 * (pos * 8 + i) + 1] - Math.sin(angle))).toBeLessThan(2e-5);
      }
    }
  });
});
