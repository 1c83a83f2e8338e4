import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/rubric/dropout';
import { fitProbe, probeScore, sigmoid } from '../../../src/rubric/probe';
import { examplesByCriterion, labelTarget, PROBE_MIN_PER_CLASS, probeExamples, ProbeLabelError } from '../../../src/rubric/probeLabels';

/** Gaussian draws (Box–Muller) from a seeded generator. */
function gauss(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** n synthetic hidden states of dimension D; labels from a hidden direction, `flip` of them noisy. */
function synthetic(seed: number, n: number, D: number, flip: number) {
  const rand = mulberry32(seed);
  const direction = Array.from({ length: D }, () => gauss(rand));
  const offset = Array.from({ length: D }, () => 3 * gauss(rand));
  const X = Array.from({ length: n }, () => Array.from({ length: D }, (_, j) => offset[j] + 2 * gauss(rand)));
  const y = X.map((x) => x.reduce((s, v, j) => s + (v - offset[j]) * direction[j], 0) > 0);
  const noisy = y.map((t) => (rand() < flip ? !t : t));
  return { X, y: noisy, clean: y };
}

/**
 * The reference the fit is checked against: plain gradient descent on the same objective, in
 * the raw coordinates (standardised the same way), run to convergence — no Newton, no basis.
 */
function gradientDescentReference(X: number[][], y: boolean[], l2: number) {
  const n = X.length;
  const D = X[0].length;
  const mean = Array.from({ length: D }, (_, j) => X.reduce((s, x) => s + x[j], 0) / n);
  const sd = Array.from({ length: D }, (_, j) => Math.sqrt(X.reduce((s, x) => s + (x[j] - mean[j]) ** 2, 0) / n) || 1);
  const Z = X.map((x) => x.map((v, j) => (v - mean[j]) / sd[j]));
  const w = new Array<number>(D).fill(0);
  let b = 0;
  // Step 1/L with L bounding the Hessian: n·max|z|²/4 + l2.
  const L = (n * Math.max(...Z.map((z) => z.reduce((s, v) => s + v * v, 1)))) / 4 + l2;
  for (let it = 0; it < 200_000; it++) {
    const gw = w.map((wj) => l2 * wj);
    let gb = 0;
    Z.forEach((z, i) => {
      const e = sigmoid(z.reduce((s, v, j) => s + v * w[j], b)) - (y[i] ? 1 : 0);
      z.forEach((v, j) => (gw[j] += e * v));
      gb += e;
    });
    const g = Math.max(Math.abs(gb), ...gw.map(Math.abs));
    w.forEach((_, j) => (w[j] -= gw[j] / L));
    b -= gb / L;
    if (g < 1e-11) break;
  }
  const weights = w.map((wj, j) => wj / sd[j]);
  return { weights, bias: b - weights.reduce((s, wj, j) => s + wj * mean[j], 0) };
}

describe('fitProbe', () => {
  it('matches a hand-checked one-dimensional case', () => {
    // x = ±1 with labels 1 / 0: by symmetry b = 0 and the optimum solves 2(1 − σ(w)) = l2·w.
    // (standardisation leaves x = ±1 alone: mean 0, sd 1.) Bisection gives w.
    const l2 = 0.5;
    let lo = 0;
    let hi = 10;
    for (let k = 0; k < 200; k++) {
      const mid = (lo + hi) / 2;
      if (2 * (1 - sigmoid(mid)) - l2 * mid > 0) lo = mid;
      else hi = mid;
    }
    const fit = fitProbe([[1], [-1]], [true, false], { l2 });
    expect(fit.weights[0]).toBeCloseTo(lo, 12);
    expect(fit.bias).toBeCloseTo(0, 12);
    expect(probeScore(fit, [1])).toBeCloseTo(sigmoid(lo), 12);
  });

  it('agrees with a gradient-descent reference on noisy data (n > D: full coordinates)', () => {
    const { X, y } = synthetic(7, 60, 5, 0.2);
    const fit = fitProbe(X, y, { l2: 2 });
    const ref = gradientDescentReference(X, y, 2);
    fit.weights.forEach((w, j) => expect(w).toBeCloseTo(ref.weights[j], 7));
    expect(fit.bias).toBeCloseTo(ref.bias, 7);
    expect(fit.gradient).toBeLessThan(1e-8);
  });

  it('agrees with the reference when there are fewer examples than dimensions (the span basis)', () => {
    const { X, y } = synthetic(11, 12, 40, 0.1);
    const fit = fitProbe(X, y, { l2: 1 });
    const ref = gradientDescentReference(X, y, 1);
    fit.weights.forEach((w, j) => expect(w).toBeCloseTo(ref.weights[j], 7));
    expect(fit.bias).toBeCloseTo(ref.bias, 7);
  });

  it('separates separable data and stays finite (the L2 penalty bounds the weights)', () => {
    const { X, y } = synthetic(3, 40, 8, 0);
    const fit = fitProbe(X, y, { l2: 0.01 });
    expect(fit.weights.every(Number.isFinite)).toBe(true);
    const right = X.filter((x, i) => probeScore(fit, x) >= 0.5 === y[i]).length;
    expect(right).toBe(X.length);
    // A stronger penalty shrinks the weights.
    const shrunk = fitProbe(X, y, { l2: 100 });
    const norm = (w: number[]) => Math.hypot(...w);
    expect(norm(shrunk.weights)).toBeLessThan(norm(fit.weights));
  });

  it('generalises on held-out noisy data better than chance', () => {
    const { X, y, clean } = synthetic(5, 200, 10, 0.15);
    const fit = fitProbe(X.slice(0, 100), y.slice(0, 100));
    const right = X.slice(100).filter((x, i) => probeScore(fit, x) >= 0.5 === clean[100 + i]).length;
    expect(right).toBeGreaterThan(85);
  });

  it('is deterministic and keeps constant features from dividing by zero', () => {
    const X = [
      [1, 5],
      [2, 5],
      [3, 5],
      [4, 5],
    ];
    const y = [false, false, true, true];
    const a = fitProbe(X, y);
    const b = fitProbe(X, y);
    expect(a).toEqual(b);
    expect(a.weights[1]).toBe(0);
  });

  it('refuses one-class labels, mismatched sizes and non-finite states', () => {
    expect(() => fitProbe([[1], [2]], [true, true])).toThrow(/both "yes" and "no"/);
    expect(() => fitProbe([[1], [2, 3]], [true, false])).toThrow(/hidden state 2 has 2 values/);
    expect(() => fitProbe([[1], [NaN]], [true, false])).toThrow(/non-finite/);
    expect(() => fitProbe([[1], [2]], [true, false], { l2: 0 })).toThrow(/l2/);
    expect(() => probeScore({ weights: [1, 2], bias: 0 }, [1])).toThrow(/trained on 2/);
  });
});

describe('probe labels', () => {
  it("turns a verdict label into the person's call", () => {
    expect(labelTarget({ score: 0.9, correct: true })).toBe(true);
    expect(labelTarget({ score: 0.9, correct: false })).toBe(false);
    expect(labelTarget({ score: 0.1, correct: true })).toBe(false);
    expect(labelTarget({ score: 0.1, correct: false })).toBe(true);
    expect(labelTarget({ score: 0.5, correct: true })).toBe(true); // the pass threshold is >= 0.5
  });

  it('joins labels with rollout texts, leaving out rule criteria and gone rollouts', () => {
    const texts = new Map([['r/0/0/0', { prompt: 'P', completion: 'C' }]]);
    const out = probeExamples(
      [
        { rollout: 'r/0/0/0', criterion: 'q', score: 0.2, correct: false },
        { rollout: 'r/0/0/0', criterion: 'rule', score: 1, correct: true },
        { rollout: 'r/9/0/0', criterion: 'q', score: 1, correct: true },
      ],
      (k) => texts.get(k),
      new Set(['q']),
    );
    expect(out.examples).toEqual([{ criterion_id: 'q', prompt: 'P', completion: 'C', target: true }]);
    expect(out.missing).toBe(1);
    expect(out.ignored).toBe(1);
  });

  it(`needs ${PROBE_MIN_PER_CLASS} labels of each answer per criterion, and names the criterion that lacks them`, () => {
    const ex = (criterion_id: string, target: boolean) => ({ criterion_id, prompt: 'p', completion: 'c', target });
    const enough = [...Array(PROBE_MIN_PER_CLASS)].flatMap(() => [ex('a', true), ex('a', false)]);
    expect(examplesByCriterion(enough, ['a']).get('a')).toHaveLength(2 * PROBE_MIN_PER_CLASS);
    const short = [...enough, ex('b', true), ex('b', true), ex('b', true), ex('b', false)];
    let err: unknown;
    try {
      examplesByCriterion(short, ['a', 'b']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProbeLabelError);
    expect((err as Error).message).toMatch(/criterion "b".*at least 3 "yes" and 3 "no".*has 3 yes and 1 no/);
    // A criterion with no labels at all is named too.
    expect(() => examplesByCriterion(enough, ['a', 'c'])).toThrow(/criterion "c".*has 0 yes and 0 no/);
  });
});
