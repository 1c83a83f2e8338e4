// The dropout twin (counter-based mask, inverted scaling) and the float64 LoRA-linear twin:
// seeding, keep rate, and finite-difference checks of every gradient with dropout on.
import { describe, expect, it } from 'vitest';
import { dropoutAccumulateRef, dropoutKept, dropoutRef, dropoutSeed, dropoutThreshold } from '../../src/ops/dropout.reference';
import { loraBackwardRef, loraForwardRef, type LoraRefInput } from '../../src/model/loraLinear.reference';
import { normal, rng } from '../helpers/random';

describe('dropout twin', () => {
  const x = Array.from({ length: 20_000 }, (_, i) => 1 + (i % 5));

  it('is deterministic per seed and differs across seeds', () => {
    expect(Array.from(dropoutRef(x, 0.3, 11))).toEqual(Array.from(dropoutRef(x, 0.3, 11)));
    const a = dropoutRef(x, 0.3, 11);
    const b = dropoutRef(x, 0.3, 12);
    const differ = a.reduce((n, v, i) => n + ((v === 0) !== (b[i] === 0) ? 1 : 0), 0);
    expect(differ).toBeGreaterThan(0.3 * x.length);
  });

  it('drops about p of the elements and scales the rest by 1/(1-p), keeping the mean', () => {
    for (const p of [0.05, 0.3, 0.7]) {
      const out = dropoutRef(x, p, 5);
      const dropped = out.reduce((n, v) => n + (v === 0 ? 1 : 0), 0) / x.length;
      expect(Math.abs(dropped - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / x.length));
      out.forEach((v, i) => v !== 0 && expect(v).toBeCloseTo(x[i] / (1 - p), 12));
      const meanIn = x.reduce((s, v) => s + v, 0) / x.length;
      const meanOut = out.reduce((s, v) => s + v, 0) / x.length;
      expect(Math.abs(meanOut - meanIn) / meanIn).toBeLessThan(0.03);
    }
  });

  it('is the identity at p = 0, and accumulates', () => {
    expect(dropoutThreshold(0)).toBe(0);
    expect(Array.from(dropoutRef([1, -2, 3], 0, 9))).toEqual([1, -2, 3]);
    const acc = dropoutAccumulateRef([1, 1, 1], [2, 2, 2], 0.5, 3);
    acc.forEach((v, i) => expect(v).toBe(1 + (dropoutKept(3, i, 0.5) ? 4 : 0)));
  });

  it('rejects bad p and seeds', () => {
    expect(() => dropoutRef([1], 1, 0)).toThrow(/p must be in \[0, 1\), got 1/);
    expect(() => dropoutRef([1], -0.1, 0)).toThrow(/p must be in \[0, 1\)/);
    expect(() => dropoutRef([1], 0.1, -1)).toThrow(/seed must be a 32-bit unsigned integer/);
  });

  it('salts per-site seeds apart', () => {
    const seeds = new Set(Array.from({ length: 100 }, (_, i) => dropoutSeed(42, i)));
    expect(seeds.size).toBe(100);
    expect(dropoutSeed(42, 3)).toBe(dropoutSeed(42, 3));
  });
});

const H = 1e-6;

function numeric(f: (v: number[]) => number, base: ArrayLike<number>): number[] {
  const p = Array.from(base);
  return p.map((_, i) => {
    const plus = p.slice();
    const minus = p.slice();
    plus[i] += H;
    minus[i] -= H;
    return (f(plus) - f(minus)) / (2 * H);
  });
}

function expectClose(num: number[], ana: ArrayLike<number>, label: string) {
  expect(ana.length, label).toBe(num.length);
  num.forEach((n, i) => expect(Math.abs(n - ana[i]), `${label}[${i}]`).toBeLessThan(1e-7 + 1e-6 * Math.abs(ana[i])));
}

describe('LoRA linear twin', () => {
  for (const p of [0, 0.4]) {
    it(`has dx, dA and every dB equal to finite differences (two blocks, dropout ${p})`, () => {
      const rand = rng(17);
      const rows = 5;
      const inDim = 6;
      const r = 3;
      const outDims = [4, 2];
      const s: LoraRefInput = {
        rows,
        inDim,
        r,
        scale: 1.7,
        x: normal(rand, rows * inDim),
        a: normal(rand, r * inDim),
        b: outDims.map((o) => normal(rand, o * r)),
        outDims,
        dropout: p > 0 ? { p, seed: 99 } : null,
      };
      const dys = outDims.map((o) => normal(rand, rows * o));
      const objective = (t: LoraRefInput) => loraForwardRef(t).deltas.reduce((sum, d, j) => sum + d.reduce((acc, v, i) => acc + v * dys[j][i], 0), 0);
      const g = loraBackwardRef(s, dys);
      expectClose(numeric((x) => objective({ ...s, x }), s.x), g.dx, 'dx');
      expectClose(numeric((a) => objective({ ...s, a }), s.a), g.dA, 'dA');
      s.b.forEach((b, j) => expectClose(numeric((v) => objective({ ...s, b: s.b.map((old, k) => (k === j ? v : old)) }), b), g.dB[j], `dB${j}`));
      if (p > 0) expect(Array.from(g.dx).some((v) => v === 0)).toBe(true);
    });
  }
});
