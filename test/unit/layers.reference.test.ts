// Float64 twins of the per-layer kernels (norms, activations, embedding, elementwise):
// hand-computed cases and central finite differences (h = 1e-6) for every backward.
import { describe, expect, it } from 'vitest';
import { normBackwardRef, normForwardRef, type NormProblem } from '../../src/ops/norm.reference';
import { geluBackwardRef, geluRef, swigluBackwardRef, swigluRef } from '../../src/ops/activation.reference';
import { embeddingBackwardRef, embeddingForwardRef } from '../../src/ops/embedding.reference';
import { accumulateRef, addRef, fillRef, scaleRef } from '../../src/ops/elementwise.reference';
import { buildScatterIndex } from '../../src/ops/embedding';
import { normal, randomInts, rng } from '../helpers/random';

const H = 1e-6;

/** Central differences of a scalar objective at `base`, one coordinate at a time. */
function numericGradient(objective: (v: number[]) => number, base: ArrayLike<number>): number[] {
  const point = Array.from(base);
  return point.map((_, i) => {
    const plus = point.slice();
    const minus = point.slice();
    plus[i] += H;
    minus[i] -= H;
    return (objective(plus) - objective(minus)) / (2 * H);
  });
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** |numeric - analytic| <= 1e-7 + 1e-6 |analytic| everywhere (f64 central differences). */
function expectGradient(numeric: number[], analytic: ArrayLike<number>, label: string): void {
  expect(analytic.length, `${label}: length`).toBe(numeric.length);
  for (let i = 0; i < numeric.length; i++) {
    expect(Math.abs(numeric[i] - analytic[i]), `${label}[${i}]: ${numeric[i]} vs ${analytic[i]}`).toBeLessThan(
      1e-7 + 1e-6 * Math.abs(analytic[i]),
    );
  }
}

describe('LayerNorm / RMSNorm twin', () => {
  it('matches a hand-computed LayerNorm row', () => {
    // mean 2, variance 2/3, rstd = sqrt(3/2): xhat = [-1, 0, 1] sqrt(3/2).
    const out = normForwardRef({ kind: 'layernorm', x: [1, 2, 3], gamma: [2, 1, 1], beta: [0, 5, -1], rows: 1, dim: 3, eps: 0 });
    const r = Math.sqrt(1.5);
    expect(out.mean[0]).toBeCloseTo(2, 14);
    expect(out.rstd[0]).toBeCloseTo(r, 14);
    expect(Array.from(out.y)).toEqual([-2 * r, 5, r - 1].map((v) => expect.closeTo(v, 14)));
  });

  it('matches a hand-computed RMSNorm row (no centering, no bias)', () => {
    // mean square (9 + 16) / 2 = 12.5.
    const out = normForwardRef({ kind: 'rmsnorm', x: [3, 4], gamma: [1, 2], rows: 1, dim: 2, eps: 0 });
    const r = 1 / Math.sqrt(12.5);
    expect(out.mean[0]).toBe(0);
    expect(out.rstd[0]).toBeCloseTo(r, 14);
    expect(out.y[0]).toBeCloseTo(3 * r, 14);
    expect(out.y[1]).toBeCloseTo(8 * r, 14);
  });

  it('gives a constant LayerNorm row rstd = 1/sqrt(eps) and y = beta', () => {
    const out = normForwardRef({ kind: 'layernorm', x: [0.7, 0.7, 0.7, 0.7], gamma: [1, 2, 3, 4], beta: [1, 2, 3, 4], rows: 1, dim: 4, eps: 1e-5 });
    expect(out.rstd[0]).toBeCloseTo(1 / Math.sqrt(1e-5), 9);
    expect(Array.from(out.y)).toEqual([1, 2, 3, 4]);
  });

  for (const kind of ['layernorm', 'rmsnorm'] as const) {
    for (const [seed, rows, dim] of [
      [1, 1, 2],
      [2, 3, 5],
      [3, 4, 9],
    ] as const) {
      it(`${kind}: gradients equal finite differences (seed ${seed}, ${rows} x ${dim})`, () => {
        const rand = rng(seed);
        const base: NormProblem = {
          kind,
          x: normal(rand, rows * dim, 1.5).map((v) => v + 0.3),
          gamma: normal(rand, dim).map((v) => 1 + 0.5 * v),
          beta: kind === 'layernorm' ? normal(rand, dim, 0.5) : undefined,
          rows,
          dim,
          eps: 1e-5,
        };
        const dy = normal(rand, rows * dim);
        const loss = (p: NormProblem) => dot(dy, normForwardRef(p).y);
        const g = normBackwardRef(base, dy);
        expectGradient(numericGradient((x) => loss({ ...base, x }), base.x), g.dx, 'dx');
        expectGradient(numericGradient((gamma) => loss({ ...base, gamma }), base.gamma), g.dGamma, 'dGamma');
        if (kind === 'layernorm') {
          expectGradient(numericGradient((beta) => loss({ ...base, beta }), base.beta!), g.dBeta!, 'dBeta');
        } else {
          expect(g.dBeta).toBeUndefined();
        }
      });
    }
  }

  it('LayerNorm dx sums to zero per row (the mean is removed)', () => {
    const rand = rng(9);
    const p: NormProblem = { kind: 'layernorm', x: normal(rand, 12), gamma: normal(rand, 6), beta: normal(rand, 6), rows: 2, dim: 6, eps: 1e-5 };
    const { dx } = normBackwardRef(p, normal(rand, 12));
    expect(Math.abs(dx.slice(0, 6).reduce((a, b) => a + b))).toBeLessThan(1e-12);
    expect(Math.abs(dx.slice(6).reduce((a, b) => a + b))).toBeLessThan(1e-12);
  });

  it('with a residual gradient, dx is that residual plus the norm dx; dGamma/dBeta are unchanged', () => {
    // Twin of backward_input_add: a residual stream y = x + norm(x) has dL/dx = dy + norm backward.
    const rand = rng(10);
    for (const kind of ['layernorm', 'rmsnorm'] as const) {
      const p: NormProblem = { kind, x: normal(rand, 15), gamma: normal(rand, 5), beta: kind === 'layernorm' ? normal(rand, 5) : undefined, rows: 3, dim: 5, eps: 1e-5 };
      const dy = normal(rand, 15);
      const residual = normal(rand, 15);
      const plain = normBackwardRef(p, dy);
      const fused = normBackwardRef(p, dy, residual);
      fused.dx.forEach((v, i) => expect(v).toBeCloseTo(plain.dx[i] + residual[i], 12));
      expect(fused.dGamma).toEqual(plain.dGamma);
      expect(fused.dBeta).toEqual(plain.dBeta);
      // Finite differences of sum(dy * norm(x)) + sum(residual * x) agree.
      const loss = (x: number[]) => dot(dy, normForwardRef({ ...p, x }).y) + dot(residual, x);
      const h = 1e-6;
      const x0 = Array.from(p.x);
      for (const i of [0, 7, 14]) {
        const up = [...x0];
        up[i] += h;
        const down = [...x0];
        down[i] -= h;
        expect(fused.dx[i]).toBeCloseTo((loss(up) - loss(down)) / (2 * h), 5);
      }
    }
  });
});

describe('GELU / SwiGLU twin', () => {
  it('matches known gelu_new values', () => {
    const y = geluRef([0, 1, -1, 3, 12, -12]);
    expect(y[0]).toBe(0);
    // 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.8411919906...
    expect(y[1]).toBeCloseTo(0.8411919906082768, 14);
    expect(y[2]).toBeCloseTo(0.8411919906082768 - 1, 14); // gelu(-x) = gelu(x) - x
    expect(y[3]).toBeCloseTo(2.996362607918227, 14); // 1.5 (1 + tanh(sqrt(2/pi) 4.207305)), computed in Python
    expect(y[4]).toBe(12);
    expect(Math.abs(y[5])).toBeLessThan(1e-30);
  });

  it('0.5 (1 + tanh u) equals sigmoid(2u), the form the kernel uses', () => {
    for (const u of [-30, -5, -0.3, 0, 1e-4, 0.7, 4, 30]) {
      expect(0.5 * (1 + Math.tanh(u))).toBeCloseTo(1 / (1 + Math.exp(-2 * u)), 15);
    }
  });

  it('GELU backward equals finite differences', () => {
    const x = [...normal(rng(4), 20, 2), -7, -3, 0, 3, 7];
    const dy = normal(rng(5), x.length);
    const numeric = numericGradient((v) => dot(dy, geluRef(v)), x);
    expectGradient(numeric, geluBackwardRef(x, dy), 'gelu dx');
  });

  it('matches hand-computed SwiGLU values', () => {
    const s1 = 1 / (1 + Math.exp(-1));
    const h = swigluRef([0, 1, -2, 50], [3, 2, 1, 0.5]);
    expect(h[0]).toBe(0);
    expect(h[1]).toBeCloseTo(2 * s1, 14);
    expect(h[2]).toBeCloseTo((-2 / (1 + Math.exp(2))) * 1, 14);
    expect(h[3]).toBeCloseTo(25, 12);
  });

  it('SwiGLU backward equals finite differences for gate and up', () => {
    const rand = rng(6);
    const gate = [...normal(rand, 15, 2), -9, 0, 9];
    const up = normal(rand, gate.length);
    const dh = normal(rand, gate.length);
    const g = swigluBackwardRef(gate, up, dh);
    expectGradient(numericGradient((v) => dot(dh, swigluRef(v, up)), gate), g.dGate, 'd_gate');
    expectGradient(numericGradient((v) => dot(dh, swigluRef(gate, v)), up), g.dUp, 'd_up');
  });
});

describe('embedding twin', () => {
  it('gathers token rows and adds position rows', () => {
    const table = [0, 1, 10, 11, 20, 21]; // vocab 3, dim 2
    const posTable = [100, 200, 300, 400]; // 2 positions
    expect(Array.from(embeddingForwardRef({ ids: [2, 0, 2], table, dim: 2 }))).toEqual([20, 21, 0, 1, 20, 21]);
    expect(Array.from(embeddingForwardRef({ ids: [2, 0], table, dim: 2, posIds: [1, 0], posTable }))).toEqual([320, 421, 100, 201]);
  });

  it('scatter-adds repeated ids and accumulates into an initial gradient', () => {
    const dOut = [1, 2, 3, 4, 5, 6];
    expect(Array.from(embeddingBackwardRef([1, 0, 1], dOut, 3, 2))).toEqual([3, 4, 6, 8, 0, 0]);
    expect(Array.from(embeddingBackwardRef([1, 0, 1], dOut, 3, 2, [1, 1, 1, 1, 1, 1]))).toEqual([4, 5, 7, 9, 1, 1]);
  });

  it('table gradients equal finite differences (token and position tables)', () => {
    const rand = rng(7);
    const vocab = 5;
    const positions = 4;
    const dim = 3;
    const ids = [4, 0, 4, 2, 4, 0];
    const posIds = [0, 1, 2, 3, 0, 1];
    const table = normal(rand, vocab * dim);
    const posTable = normal(rand, positions * dim);
    const dOut = normal(rand, ids.length * dim);
    const loss = (t: number[], p: number[]) => dot(dOut, embeddingForwardRef({ ids, table: t, dim, posIds, posTable: p }));
    expectGradient(numericGradient((t) => loss(t, posTable), table), embeddingBackwardRef(ids, dOut, vocab, dim), 'dTable');
    expectGradient(numericGradient((p) => loss(table, p), posTable), embeddingBackwardRef(posIds, dOut, positions, dim), 'dPos');
  });
});

describe('embedding scatter index (host CSR)', () => {
  it('groups positions by id: unique ids ascending, positions ascending within each id', () => {
    const { unique, data } = buildScatterIndex([3, 0, 3, 7, 0, 3], 8);
    expect(unique).toBe(3);
    // ids [0, 3, 7] | offsets [0, 2, 5, 6] | positions [1, 4, 0, 2, 5, 3]
    expect(Array.from(data)).toEqual([0, 3, 7, 0, 2, 5, 6, 1, 4, 0, 2, 5, 3]);
  });

  it('covers every token exactly once for random ids, including 0 and V - 1', () => {
    const vocab = 50;
    const ids = [0, vocab - 1, ...randomInts(rng(8), 200, vocab), vocab - 1];
    const { unique, data } = buildScatterIndex(ids, vocab);
    const positions = Array.from(data.slice(2 * unique + 1));
    expect(positions.slice().sort((a, b) => a - b)).toEqual(ids.map((_, t) => t));
    for (let k = 0; k < unique; k++) {
      const span = positions.slice(data[unique + k], data[unique + k + 1]);
      expect(span.every((t) => ids[t] === data[k])).toBe(true);
      expect(span).toEqual(span.slice().sort((a, b) => a - b));
    }
  });

  it('rejects ids outside the table with a RangeError naming the token', () => {
    expect(() => buildScatterIndex([0, 5], 5)).toThrow(RangeError);
    expect(() => buildScatterIndex([0, 5], 5)).toThrow(/ids\[1\] = 5 is outside the table of 5 rows/);
    expect(() => buildScatterIndex([0.5], 5, 'posIds')).toThrow(/posIds\[0\] = 0.5/);
    expect(() => buildScatterIndex([-1], 5)).toThrow(/ids\[0\] = -1/);
  });
});

describe('elementwise twin', () => {
  it('adds, accumulates, scales and fills', () => {
    expect(Array.from(addRef([1, 2], [10, 20]))).toEqual([11, 22]);
    expect(Array.from(addRef([1, 2], [10, 20], 0.5))).toEqual([6, 12]);
    expect(Array.from(accumulateRef([1, 2], [10, 20], -1))).toEqual([-9, -18]);
    expect(Array.from(scaleRef([1, -2], 3))).toEqual([3, -6]);
    expect(Array.from(fillRef(3, 0.25))).toEqual([0.25, 0.25, 0.25]);
  });
});
