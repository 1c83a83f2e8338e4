// The float64 twin of the distillation kernel: hand-computed divergences, TRL's conventions,
// top-K supports and finite-difference gradients for every mode.
import { describe, expect, it } from 'vitest';
import { distillBackwardRef, distillForwardRef, distillSupport, type DistillProblem } from '../../src/ops/distill.reference';
import { normal, rng } from '../helpers/random';

const kl = (x: number[], y: number[]) => x.reduce((s, xi, i) => s + (xi === 0 ? 0 : xi * Math.log(xi / y[i])), 0);
const softmax = (z: number[]) => {
  const e = z.map(Math.exp);
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
};

function one(student: number[], teacher: number[], beta: number, extra: Partial<DistillProblem> = {}): number {
  return distillForwardRef({ student, teacher, rows: 1, vocab: student.length, beta, temperature: 1, topK: null, ...extra }).loss[0];
}

describe('distill reference twin', () => {
  const s = [0.3, -1.2, 2.0, 0.5];
  const t = [1.0, 0.1, -0.4, 0.9];
  const p = softmax(s);
  const q = softmax(t);

  it('beta 0 is KL(teacher || student), beta 1 is KL(student || teacher) (TRL)', () => {
    expect(one(s, t, 0)).toBeCloseTo(kl(q, p), 14);
    expect(one(s, t, 1)).toBeCloseTo(kl(p, q), 14);
  });

  it('0 < beta < 1 is beta KL(q || m) + (1 - beta) KL(p || m) with m = beta q + (1 - beta) p', () => {
    const beta = 0.3;
    const m = p.map((pi, i) => beta * q[i] + (1 - beta) * pi);
    expect(one(s, t, beta)).toBeCloseTo(beta * kl(q, m) + (1 - beta) * kl(p, m), 14);
    // beta = 0.5 is the symmetric Jensen-Shannon divergence, at most ln 2.
    expect(one(s, t, 0.5)).toBeCloseTo(one(t, s, 0.5), 14);
    expect(one([0, -Infinity], [-Infinity, 0], 0.5)).toBeCloseTo(Math.log(2), 14);
  });

  it('divides both logits by the temperature', () => {
    expect(one(s.map((x) => 2 * x), t.map((x) => 2 * x), 0.3, { temperature: 2 })).toBeCloseTo(one(s, t, 0.3), 14);
  });

  it('-inf logits: 0 log 0 = 0, teacher mass where the student is -inf gives +inf', () => {
    // Both masked at entry 1: the same as dropping it.
    expect(one([0.3, -Infinity, 2], [1, -Infinity, -0.4], 0)).toBeCloseTo(one([0.3, 2], [1, -0.4], 0), 14);
    expect(one([0.3, -Infinity, 2], [1, 0.5, -0.4], 0)).toBe(Infinity);
    expect(one([0.3, -Infinity, 2], [1, 0.5, -0.4], 1)).toBeGreaterThan(0); // reverse: student has no mass there
    expect(Number.isFinite(one([0.3, -Infinity, 2], [1, 0.5, -0.4], 1))).toBe(true);
    expect(one([0.3, 0.5, 2], [1, -Infinity, -0.4], 1)).toBe(Infinity);
    expect(Number.isFinite(one([0.3, -Infinity, 2], [1, 0.5, -Infinity], 0.3))).toBe(true);
  });

  it('a NaN or +inf logit, or a row with every student entry masked, is NaN', () => {
    expect(one([0, NaN], [0, 1], 0)).toBeNaN();
    expect(one([0, 1], [Infinity, 1], 1)).toBeNaN();
    expect(one([-Infinity, -Infinity], [0, 1], 0.5)).toBeNaN();
    expect(one([3e38, 1], [0, 1], 0.5, { temperature: 0.5 })).toBeNaN();
  });

  it('top-K: the teacher K largest, ties to the lower id, excluded ids and -inf never chosen', () => {
    const base = { student: [0, 0, 0, 0, 0, 0], rows: 1, vocab: 6, beta: 1, temperature: 1 };
    const teacher = [1, 3, 3, -Infinity, 2, 3];
    expect(distillSupport({ ...base, teacher, topK: 2 }, 0)).toEqual([1, 2]);
    expect(distillSupport({ ...base, teacher, topK: 4 }, 0)).toEqual([1, 2, 4, 5]);
    expect(distillSupport({ ...base, teacher, topK: 2, excludedIds: [1] }, 0)).toEqual([2, 5]);
    expect(distillSupport({ ...base, teacher, topK: 10 }, 0)).toEqual([0, 1, 2, 4, 5]);
    // Renormalised on the support: the divergence of the restricted distributions.
    const sK = [0.5, 1.5];
    const tK = [3, 3];
    expect(one([0, 0.5, 1.5, 0, 7, 9], teacher, 1, { topK: 2 })).toBeCloseTo(kl(softmax(sK), softmax(tK)), 14);
  });

  it('mask and weights: masked tokens lose 0, mean over unmasked tokens', () => {
    const out = distillForwardRef({
      student: [...s, ...t, ...s],
      teacher: [...t, ...s, ...s],
      rows: 3,
      vocab: 4,
      beta: 0,
      temperature: 1,
      topK: null,
      mask: [1, 0, 1],
      weights: [2, 5, 1],
    });
    expect(out.loss[0]).toBeCloseTo(2 * kl(q, p), 14);
    expect(out.loss[1]).toBe(0);
    expect(out.loss[2]).toBeCloseTo(0, 14);
    expect(out.meanLoss).toBeCloseTo(kl(q, p), 14);
  });

  const cases: [string, Partial<DistillProblem>][] = [
    ['forward KL', { beta: 0 }],
    ['reverse KL', { beta: 1 }],
    ['JSD beta 0.3', { beta: 0.3 }],
    ['top-K reverse KL', { beta: 1, topK: 5, excludedIds: [2] }],
    ['top-K JSD beta 0.7, temperature 0.8', { beta: 0.7, topK: 4, temperature: 0.8 }],
    ['forward KL, temperature 1.7, masked entries', { beta: 0, temperature: 1.7 }],
  ];
  for (const [label, extra] of cases) {
    it(`has the gradient finite differences give: ${label}`, () => {
      const rows = 3;
      const vocab = 11;
      const rand = rng(label.length);
      const student = normal(rand, rows * vocab, 2);
      const teacher = normal(rand, rows * vocab, 2);
      if (label.includes('masked')) {
        // Masked on both sides (finite loss) and on the student only where the teacher is masked.
        for (const i of [3, 15, 30]) student[i] = teacher[i] = -Infinity;
        teacher[20] = -Infinity;
      }
      const problem: DistillProblem = {
        student,
        teacher,
        rows,
        vocab,
        beta: 0,
        temperature: 1,
        topK: null,
        mask: [1, 1, 0],
        weights: [1.5, 0.5, 1],
        ...extra,
      };
      const gradLoss = normal(rand, rows);
      const objective = (x: number[]) => {
        const l = distillForwardRef({ ...problem, student: x }).loss;
        return l.reduce((acc, v, r) => acc + gradLoss[r] * v, 0);
      };
      const analytic = distillBackwardRef(problem, gradLoss);
      const h = 1e-6;
      let nonzero = 0;
      for (let i = 0; i < student.length; i++) {
        if (student[i] === -Infinity) {
          expect(analytic[i]).toBe(0);
          continue;
        }
        const plus = student.slice();
        const minus = student.slice();
        plus[i] += h;
        minus[i] -= h;
        const numeric = (objective(plus) - objective(minus)) / (2 * h);
        expect(Math.abs(numeric - analytic[i]), `${label} logit ${i}`).toBeLessThan(1e-7);
        if (analytic[i] !== 0) nonzero++;
      }
      expect(nonzero).toBeGreaterThanOrEqual(8); // two unmasked rows, at least K = 4 entries each
      // The masked token (row 2) has no gradient.
      for (let i = 2 * vocab; i < 3 * vocab; i++) expect(analytic[i]).toBe(0);
    });
  }

  it('an infinite divergence has an undefined (NaN) gradient unless its token is masked', () => {
    const problem: DistillProblem = {
      student: [0.3, -Infinity, 2, 0.3, -Infinity, 2],
      teacher: [1, 0.5, -0.4, 1, 0.5, -0.4],
      rows: 2,
      vocab: 3,
      beta: 0,
      temperature: 1,
      topK: null,
      mask: [1, 0],
    };
    const g = distillBackwardRef(problem, [1, 1]);
    expect(Array.from(g)).toEqual([NaN, 0, NaN, 0, 0, 0]);
  });
});
