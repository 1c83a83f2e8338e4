// Human-label metrics against hand-computed values.
import { describe, expect, it } from 'vitest';
import { judgeAgreement, pairsFromMarks, pairwiseAccuracy, rewardAuroc, type VerdictLabel } from '../../../src/rubric/labels';

const EXACT = 12;

describe('judgeAgreement', () => {
  it('agreement and Cohen kappa per criterion (hand-computed)', () => {
    // Criterion "a": judge met on r1, r2, r3, not on r4; the user marks r3 wrong.
    //   judge met [1,1,1,0], user met [1,1,0,0]: p_o = 3/4, p_J = 3/4, p_H = 1/2,
    //   p_e = 3/8 + 1/8 = 1/2, κ = (3/4 − 1/2) / (1/2) = 1/2.
    // Criterion "b": two verdicts, both right, both met: p_e = 1 → κ null.
    const labels: VerdictLabel[] = [
      { rollout: 'r1', criterion: 'a', score: 1, correct: true },
      { rollout: 'r2', criterion: 'a', score: 0.8, correct: true },
      { rollout: 'r1', criterion: 'b', score: 1, correct: true },
      { rollout: 'r3', criterion: 'a', score: 0.5, correct: false },
      { rollout: 'r4', criterion: 'a', score: 0, correct: true },
      { rollout: 'r2', criterion: 'b', score: 1, correct: true },
    ];
    const out = judgeAgreement(labels);
    expect(out.map((c) => c.criterion)).toEqual(['a', 'b']);
    expect(out[0].labelled).toBe(4);
    expect(out[0].agreement).toBeCloseTo(3 / 4, EXACT);
    expect(out[0].kappa).toBeCloseTo(1 / 2, EXACT);
    expect(out[1]).toEqual({ criterion: 'b', labelled: 2, agreement: 1, kappa: null });
  });
  it('every verdict wrong on a balanced criterion gives kappa −1; the threshold decides met', () => {
    const labels: VerdictLabel[] = [
      { rollout: 'r1', criterion: 'a', score: 1, correct: false },
      { rollout: 'r2', criterion: 'a', score: 0, correct: false },
    ];
    expect(judgeAgreement(labels)[0]).toEqual({ criterion: 'a', labelled: 2, agreement: 0, kappa: -1 });
    // With threshold 0 both are judged met and the user says neither: p_J = 1, p_H = 0, p_e = 0, κ = 0.
    expect(judgeAgreement(labels, 0)[0].kappa).toBe(0);
    expect(() => judgeAgreement([{ rollout: 'r', criterion: 'a', score: 2, correct: true }])).toThrow(/label 1: score 2 is outside/);
  });
});

describe('rewardAuroc', () => {
  it('Mann–Whitney with ties ½, skipping rollouts without a reward (hand-computed)', () => {
    const rewards = new Map<string, number | null>([
      ['p1', 0.9],
      ['p2', 0.4],
      ['n1', 0.4],
      ['n2', 0.1],
      ['n3', null],
    ]);
    const marks = [
      { rollout: 'p1', label: 'better' as const },
      { rollout: 'p2', label: 'better' as const },
      { rollout: 'n1', label: 'worse' as const },
      { rollout: 'n2', label: 'worse' as const },
      { rollout: 'n3', label: 'worse' as const },
      { rollout: 'gone', label: 'worse' as const },
    ];
    // p1 > n1, p1 > n2, p2 = n1 (½), p2 > n2 → 3.5 / 4.
    expect(rewardAuroc(rewards, marks)).toEqual({ value: 3.5 / 4, compared: 4, ties: 1, skipped: 2 });
    expect(rewardAuroc(rewards, marks.slice(0, 2)).value).toBeNull();
    // A reward that ranks them backwards: 0.
    expect(rewardAuroc(new Map([['a', 0], ['b', 1]]), [{ rollout: 'a', label: 'better' }, { rollout: 'b', label: 'worse' }]).value).toBe(0);
  });
});

describe('pairwiseAccuracy', () => {
  it('the share of pairs ordered as the user prefers, ties ½, null rewards skipped', () => {
    const rewards = new Map<string, number | null>([
      ['a', 1],
      ['b', 0.5],
      ['c', 0.5],
      ['d', null],
    ]);
    const out = pairwiseAccuracy(rewards, [
      { better: 'a', worse: 'b' }, // 1
      { better: 'b', worse: 'c' }, // ½
      { better: 'c', worse: 'a' }, // 0
      { better: 'a', worse: 'd' }, // skipped
    ]);
    expect(out).toEqual({ value: 1.5 / 3, compared: 3, ties: 1, skipped: 1 });
    expect(pairwiseAccuracy(rewards, []).value).toBeNull();
  });
  it('pairs from marks stay within a group', () => {
    const pairs = pairsFromMarks([
      { rollout: 'a', label: 'better', group: 'g1' },
      { rollout: 'b', label: 'worse', group: 'g1' },
      { rollout: 'c', label: 'worse', group: 'g2' },
      { rollout: 'd', label: 'better', group: 'g2' },
      { rollout: 'e', label: 'worse', group: 'g1' },
    ]);
    expect(pairs).toEqual([
      { better: 'a', worse: 'b' },
      { better: 'a', worse: 'e' },
      { better: 'd', worse: 'c' },
    ]);
  });
});
