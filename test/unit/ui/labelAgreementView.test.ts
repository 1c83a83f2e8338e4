import { describe, expect, it } from 'vitest';
import { kappaNote, labelAgreementView, labelledVerdicts } from '../../../src/ui/lib/labelAgreementView';
import type { RubricLabels } from '../../../src/store';

const v = (rollout: string, criterion: string, score: number, correct: boolean) => ({ rollout, criterion, score, correct });

// Criterion "a", threshold 0.5 (judge met: 0.9, 0.8, 0.7; the person's verdict is the judge's when right):
//   0.9 right → both met (TP); 0.8 wrong → judge met, person not (FP); 0.2 right → both not (TN);
//   0.1 wrong → person met, judge not (FN); 0.7 right → TP.  TP 2, FP 1, FN 1, TN 1.
//   agreement 3/5; p_judge = p_person = 3/5, p_e = 0.36 + 0.16 = 0.52, κ = 0.08 / 0.48 = 1/6;
//   false-pass rate FP / (FP + TN) = 1/2.
const v1: RubricLabels = {
  marks: [{ rollout: 'r/0/0/0', group: 'r/0/0', label: 'better' }],
  verdicts: [v('r/0/0/0', 'a', 0.9, true), v('r/0/0/1', 'a', 0.8, false), v('r/0/0/2', 'a', 0.2, true), v('r/0/0/3', 'a', 0.1, false), v('r/0/0/4', 'a', 0.7, true), v('r/0/0/0', 'gone', 0.3, true)],
};
// Criterion "b", under a second (evolved) version: both verdicts met and marked right → κ undefined.
const v2: RubricLabels = { marks: [], verdicts: [v('r/3/0/0', 'b', 1, true), v('r/3/0/1', 'b', 0.6, true)] };

describe('labelAgreementView', () => {
  it('turns right/wrong labels into the 2×2 table, agreement, κ and false-pass rate (hand-computed)', () => {
    const rows = labelAgreementView(['b', 'a'], { v1, v2 }, ['v1', 'v2'], 0.5);
    // Rubric order first, then a criterion only the labels name.
    expect(rows.map((r) => r.criterion_id)).toEqual(['b', 'a', 'gone']);
    const a = rows[1];
    expect([a.n, a.tp, a.fp, a.fn, a.tn]).toEqual([5, 2, 1, 1, 1]);
    expect(a.agreement).toBeCloseTo(0.6, 12);
    expect(a.kappa).toBeCloseTo(1 / 6, 12);
    expect(a.false_pass_rate).toBeCloseTo(0.5, 12);
    expect(a.kappa_note).toBeNull();
    const b = rows[0];
    expect([b.n, b.tp, b.fp, b.fn, b.tn, b.agreement, b.kappa, b.false_pass_rate]).toEqual([2, 2, 0, 0, 0, 1, null, null]);
    expect(b.kappa_note).toBe('judge and labels both say met on all 2: chance agreement is 1');
    expect(rows[2].kappa_note).toBe('judge and labels both say not met on all 1: chance agreement is 1');
  });

  it("uses the run's pass threshold for the judge's verdict", () => {
    // Threshold 0.85: 0.9 right TP; 0.8 wrong → judge not met, person met (FN); 0.2 right TN; 0.1 wrong FN; 0.7 right TN.
    // agreement 3/5; p_judge 1/5, p_person 3/5, p_e = 0.12 + 0.32 = 0.44, κ = 0.16 / 0.56 = 2/7; false-pass 0/2.
    const [a] = labelAgreementView(['a'], { v1 }, ['v1'], 0.85);
    expect([a.tp, a.fp, a.fn, a.tn]).toEqual([1, 0, 2, 2]);
    expect(a.agreement).toBeCloseTo(0.6, 12);
    expect(a.kappa).toBeCloseTo(2 / 7, 12);
    expect(a.false_pass_rate).toBe(0);
  });

  it('counts only the versions asked for, each once', () => {
    expect(labelledVerdicts({ v1, v2 }, ['v2', 'v2'], 0.5)).toEqual([
      { criterion_id: 'b', score: 1, label: true },
      { criterion_id: 'b', score: 0.6, label: true },
    ]);
  });

  it('is empty with no labels: no version, an unloaded version, or only better/worse marks', () => {
    expect(labelAgreementView(['a'], { v1 }, [], 0.5)).toEqual([]);
    expect(labelAgreementView(['a'], {}, ['v1'], 0.5)).toEqual([]);
    expect(labelAgreementView(['a'], { v1: { marks: v1.marks, verdicts: [] } }, ['v1'], 0.5)).toEqual([]);
  });

  it('explains an undefined κ with no scored verdicts', () => {
    expect(kappaNote({ criterion_id: 'a', n: 0, unscored: 1, tp: 0, fp: 0, fn: 0, tn: 0, agreement: null, kappa: null, false_pass_rate: null })).toBe('no scored verdicts');
  });
});
