// 2PL IRT over criteria: EM against a direct maximisation of the same objective (damped Newton
// on finite differences), recovery of known parameters from synthetic verdicts, abilities
// against a fine-grid integral, and the small helpers. Float64 throughout.
import { describe, expect, it } from 'vitest';
import { fitIrt, informativeCriteria, irtAbility, irtGrid, irtObjective, irtVerdicts, itemInformation, type Verdict } from '../../../src/rubric/irt';
import { weighted } from './fixtures';

/** mulberry32: a small seeded generator, so the synthetic data is the same on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const normal = (u: () => number) => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());

function synthetic(n: number, items: { a: number; b: number }[], seed: number, missing = 0): Verdict[][] {
  const u = rng(seed);
  return Array.from({ length: n }, () => {
    const theta = normal(u);
    return items.map(({ a, b }) => {
      if (u() < missing) return null;
      return u() < 1 / (1 + Math.exp(-a * (theta - b))) ? 1 : 0;
    });
  });
}

type P = { a: number; c: number };
const toVector = (ps: P[]) => ps.flatMap((p) => [p.a, p.c]);
const fromVector = (v: number[]): P[] => Array.from({ length: v.length / 2 }, (_, j) => ({ a: v[2 * j], c: v[2 * j + 1] }));

/** Direct maximisation of irtObjective: damped Newton with central-difference gradient and Hessian. */
function directFit(verdicts: Verdict[][], start: P[]): P[] {
  const f = (v: number[]) => irtObjective(verdicts, fromVector(v));
  let x = toVector(start);
  const h = 1e-4;
  const grad = (v: number[]) => v.map((_, i) => (f(v.map((y, k) => (k === i ? y + h : y))) - f(v.map((y, k) => (k === i ? y - h : y)))) / (2 * h));
  for (let it = 0; it < 60; it++) {
    const g = grad(x);
    if (Math.hypot(...g) < 1e-7) break;
    const H = x.map((_, i) => {
      const gp = grad(x.map((y, k) => (k === i ? y + h : y)));
      const gm = grad(x.map((y, k) => (k === i ? y - h : y)));
      return gp.map((v, k) => (v - gm[k]) / (2 * h));
    });
    // Solve H d = −g (Gaussian elimination); fall back to the gradient if d is not an ascent direction.
    const n = x.length;
    const A = H.map((row, i) => [...row, -g[i]]);
    for (let c = 0; c < n; c++) {
      let p = c;
      for (let r = c + 1; r < n; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
      [A[c], A[p]] = [A[p], A[c]];
      for (let r = 0; r < n; r++) {
        if (r === c) continue;
        const m = A[r][c] / A[c][c];
        for (let k = c; k <= n; k++) A[r][k] -= m * A[c][k];
      }
    }
    let d = A.map((row, i) => row[n] / row[i]);
    if (d.reduce((s, v, i) => s + v * g[i], 0) <= 0) d = g;
    let step = 1;
    const f0 = f(x);
    while (step > 1e-8 && f(x.map((v, i) => v + step * d[i])) < f0) step /= 2;
    x = x.map((v, i) => v + step * d[i]);
  }
  return fromVector(x);
}

describe('EM against a direct fit of the same objective', () => {
  const truth = [
    { a: 1.2, b: -0.5 },
    { a: 0.7, b: 0.3 },
    { a: 2.0, b: 0.8 },
  ];
  const verdicts = synthetic(80, truth, 7, 0.1);
  const em = fitIrt(verdicts, { tol: 1e-12, maxIterations: 5000 });
  const emParams = em.items.map((it) => ({ a: it!.a, c: -it!.a * it!.b }));

  it('converges, and the objective it reports is irtObjective at its parameters', () => {
    expect(em.converged).toBe(true);
    expect(em.objective).toBeCloseTo(irtObjective(verdicts, emParams), 9);
  });
  it('lands on the direct maximiser (parameters within 1e-4, objective within 1e-8)', () => {
    const direct = directFit(verdicts, [
      { a: 0.5, c: 0.5 },
      { a: 0.5, c: 0.5 },
      { a: 0.5, c: 0.5 },
    ]);
    direct.forEach((p, j) => {
      expect(Math.abs(p.a - emParams[j].a)).toBeLessThan(1e-4);
      expect(Math.abs(p.c - emParams[j].c)).toBeLessThan(1e-4);
    });
    expect(Math.abs(irtObjective(verdicts, direct) - em.objective)).toBeLessThan(1e-8);
  });
  it('the objective is flat at the EM solution (finite-difference gradient ≈ 0)', () => {
    const v = toVector(emParams);
    const h = 1e-5;
    v.forEach((_, i) => {
      const up = irtObjective(verdicts, fromVector(v.map((y, k) => (k === i ? y + h : y))));
      const down = irtObjective(verdicts, fromVector(v.map((y, k) => (k === i ? y - h : y))));
      expect(Math.abs((up - down) / (2 * h))).toBeLessThan(1e-5);
    });
  });
});

describe('recovery of known parameters', () => {
  it('fits a and b of 8 criteria from 3000 synthetic rollouts (within about 3 standard errors)', () => {
    const truth = [
      { a: 0.8, b: -1 },
      { a: 1.5, b: 0 },
      { a: 1.0, b: 0.5 },
      { a: 2.0, b: 1 },
      { a: 1.2, b: -0.5 },
      { a: 0.6, b: 0.2 },
      { a: 1.8, b: -1.2 },
      { a: 1.0, b: 1.5 },
    ];
    const fit = fitIrt(synthetic(3000, truth, 42));
    expect(fit.converged).toBe(true);
    fit.items.forEach((it, j) => {
      expect(Math.abs(it!.a - truth[j].a)).toBeLessThan(0.3);
      expect(Math.abs(it!.b - truth[j].b)).toBeLessThan(0.25);
    });
  });
});

describe('abilities (EAP: posterior mean of θ)', () => {
  const items = [
    { a: 1, b: -1 },
    { a: 1, b: 0 },
    { a: 2, b: 1 },
  ];
  it('match a fine-grid integral of θ φ(θ) L(θ)', () => {
    for (const row of [[1, 1, 0], [0, 0, 0], [1, null, 1]] as Verdict[][]) {
      let num = 0;
      let den = 0;
      for (let i = 0; i <= 16000; i++) {
        const t = -8 + i * 0.001;
        let l = Math.exp(-0.5 * t * t);
        row.forEach((x, j) => {
          if (x === null) return;
          const p = 1 / (1 + Math.exp(-items[j].a * (t - items[j].b)));
          l *= x ? p : 1 - p;
        });
        num += t * l;
        den += l;
      }
      expect(Math.abs(irtAbility(items, row) - num / den)).toBeLessThan(2e-3);
    }
  });
  it('rise with each criterion passed, more for a more discriminating one', () => {
    const none = irtAbility(items, [0, 0, 0]);
    const easy = irtAbility(items, [1, 0, 0]);
    const hard = irtAbility(items, [0, 0, 1]);
    expect(none).toBeLessThan(easy);
    expect(easy).toBeLessThan(hard);
  });
  it('fitIrt reports the same abilities as irtAbility under its items', () => {
    const verdicts = synthetic(40, items, 3);
    const fit = fitIrt(verdicts);
    verdicts.forEach((row, i) => expect(fit.abilities[i].mean).toBeCloseTo(irtAbility(fit.items, row), 10));
    expect(fit.abilities.every((x) => x.sd > 0 && x.sd < 1)).toBe(true);
  });
});

describe('helpers and bad input', () => {
  it('the grid weights are a normalised N(0, 1) on [−6, 6]', () => {
    const { theta, weight } = irtGrid();
    expect(weight.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 12);
    expect([theta[0], theta[30], theta[60]]).toEqual([-6, 0, 6]);
    expect(weight.reduce((s, w, q) => s + w * theta[q] ** 2, 0)).toBeCloseTo(1, 6);
  });
  it('verdicts: met passes, a met pitfall fails, weight 0 and unscored are null', () => {
    const rubric = weighted([
      [1, 'important'],
      [-1, 'important'],
      [0, 'optional'],
    ]);
    expect(irtVerdicts(rubric, [[0.7, 0.7, 1], [0.2, 0.2, null], [null, 0.5, 0]])).toEqual([
      [1, 0, null],
      [0, 1, null],
      [null, 0, null],
    ]);
  });
  it('leaves out a criterion every rollout passes; refuses when nothing is left', () => {
    const fit = fitIrt([
      [1, 1],
      [1, 0],
      [1, 1],
    ]);
    expect(fit.items[0]).toBeNull();
    expect(fit.items[1]).not.toBeNull();
    expect(() => fitIrt([[1], [1]])).toThrow('nothing to fit');
  });
  it('selects the criteria most informative at θ, skipping left-out ones', () => {
    const items = [{ a: 1, b: 0 }, null, { a: 2, b: 3 }, { a: 1.5, b: 0.2 }];
    // At θ = 0: 1·¼ = 0.25; 4·σ(−6)(1 − σ(−6)) ≈ 0.0099; 2.25·p(1 − p) with p = σ(−0.3) ≈ 0.5525.
    expect(informativeCriteria(items, 0, 2)).toEqual([3, 0]);
    // At θ = 3 the hard, sharp criterion is worth most.
    expect(informativeCriteria(items, 3, 1)).toEqual([2]);
    expect(informativeCriteria(items, 0, 10)).toEqual([3, 0, 2]);
    expect(() => informativeCriteria(items, 0, -1)).toThrow('budget');
  });
  it('Fisher information a² p (1 − p)', () => {
    expect(itemInformation({ a: 2, b: 0 }, 0)).toBeCloseTo(1, 12);
    expect(itemInformation({ a: 1, b: 0 }, Math.log(3))).toBeCloseTo(0.75 * 0.25, 12);
  });
});
