// Judge meta-evaluation (src/rubric/judgeMeta.ts) against hand-computed values.
import { describe, expect, it } from 'vitest';
import { averageRanks, cohenKappa, judgeLoad, questionIds, labelAgreement, leniency, verbosityBias, type LengthScore } from '../../../src/rubric/judgeMeta';
import type { CriterionResult } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';

const ok = (id: string, score: number): CriterionResult => ({ criterion_id: id, status: 'ok', score, reason: '' });
const bad = (id: string): CriterionResult => ({ criterion_id: id, status: 'unscorable', score: null, reason: 'x' });

const rubric = parseRubric({
  name: 'r',
  criteria: [
    { id: 'a', text: 'A', weight: 1, tier: 'essential', judge_question: 'A?' },
    { id: 'b', text: 'B', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['b'] } },
  ],
});

describe('agreement with labels', () => {
  it('counts the 2×2 table, agreement, Cohen\'s κ and the false-pass rate per criterion', () => {
    const out = labelAgreement([
      { criterion_id: 'a', score: 1, label: true },
      { criterion_id: 'a', score: 1, label: false },
      { criterion_id: 'a', score: 0, label: true },
      { criterion_id: 'a', score: 0, label: false },
      { criterion_id: 'a', score: 0.7, label: true },
      { criterion_id: 'a', score: null, label: true },
      { criterion_id: 'b', score: 1, label: true },
      { criterion_id: 'b', score: 0, label: false },
    ]);
    expect(out[0]).toMatchObject({ criterion_id: 'a', n: 5, unscored: 1, tp: 2, fp: 1, fn: 1, tn: 1, agreement: 0.6, false_pass_rate: 0.5 });
    // p_o = 0.6, p_e = 0.6·0.6 + 0.4·0.4 = 0.52 → κ = 0.08 / 0.48 = 1/6.
    expect(out[0].kappa).toBeCloseTo(1 / 6, 12);
    expect(out[1]).toMatchObject({ criterion_id: 'b', agreement: 1, kappa: 1, false_pass_rate: 0 });
  });

  it('κ is null when both raters are constant, and the threshold decides a pass', () => {
    expect(cohenKappa(3, 0, 0, 0)).toBeNull();
    expect(cohenKappa(0, 0, 0, 0)).toBeNull();
    expect(cohenKappa(0, 2, 2, 0)).toBeCloseTo(-1, 12);
    const [strict] = labelAgreement([{ criterion_id: 'a', score: 0.7, label: true }], 0.8);
    expect(strict).toMatchObject({ fn: 1, tp: 0 });
  });
});

describe('leniency against a reference judge', () => {
  it('pass-rate difference and the share of the reference\'s fails passed, on items both scored', () => {
    const judge = [[ok('a', 1), ok('b', 0)], [ok('a', 1), ok('b', 1)], [ok('a', 0), bad('b')]];
    const reference = [[ok('a', 0), ok('b', 0)], [ok('a', 1), ok('b', 1)], [ok('a', 0), ok('b', 1)]];
    const [a, b] = leniency(rubric, judge, reference);
    expect(a).toMatchObject({ n: 3, judge_pass_rate: 2 / 3, reference_pass_rate: 1 / 3, passes_reference_fails: 0.5 });
    expect(a.leniency).toBeCloseTo(1 / 3, 12);
    expect(b).toMatchObject({ n: 2, judge_pass_rate: 0.5, reference_pass_rate: 0.5, leniency: 0, passes_reference_fails: 0 });
    expect(() => leniency(rubric, judge, reference.slice(1))).toThrow(/3 rollouts judged but 2/);
  });
});

describe('verbosity bias', () => {
  it('pass rate by equal-count length bins and Spearman\'s ρ of length vs score', () => {
    const lengths = [80, 10, 30, 20, 50, 40, 70, 60];
    const scores = [1, 0, 0, 0, 0, 1, 1, 1];
    const items: LengthScore[] = lengths.map((length, i) => ({ length, score: scores[i] }));
    const v = verbosityBias([...items, { length: 5, score: null }]);
    expect(v.bins).toEqual([
      { min: 10, max: 20, n: 2, pass_rate: 0, mean_score: 0 },
      { min: 30, max: 40, n: 2, pass_rate: 0.5, mean_score: 0.5 },
      { min: 50, max: 60, n: 2, pass_rate: 0.5, mean_score: 0.5 },
      { min: 70, max: 80, n: 2, pass_rate: 1, mean_score: 1 },
    ]);
    // Ranks: lengths 1..8; scores 0 → 2.5, 1 → 6.5: Σdxdy = 28, Σdx² = 42, Σdy² = 32.
    expect(v.spearman).toBeCloseTo(28 / Math.sqrt(42 * 32), 12);
    expect([v.n, v.unscored]).toEqual([8, 1]);
  });

  it('keeps equal lengths in one bin; no verdict varies → ρ null', () => {
    const v = verbosityBias([5, 5, 5, 9].map((length) => ({ length, score: 1 })), 2);
    expect(v.bins.map((b) => b.n)).toEqual([3, 1]);
    expect(v.spearman).toBeNull();
    expect(averageRanks([3, 1, 3, 2])).toEqual([3.5, 1, 3.5, 2]);
    expect(() => verbosityBias([], 0)).toThrow(/bins/);
    expect(verbosityBias([]).bins).toEqual([]);
  });
});

describe('judge load', () => {
  it('counts model-judge requests (probes twice; rules and needs_model none) and their rate', () => {
    const rows = [
      [{ ...ok('a', 1), probe: 'survived' }, ok('b', 1)],
      [bad('a'), ok('b', 0)],
      [{ criterion_id: 'a', status: 'needs_model', score: null, reason: '' } as CriterionResult, ok('b', 0)],
    ];
    expect(judgeLoad(questionIds(rubric), 4, rows, 2)).toEqual({ step: 4, model_requests: 3, judge_seconds: 2, requests_per_second: 1.5, judge_calls: 3 });
    expect(judgeLoad(questionIds(rubric), 0, rows, 0).requests_per_second).toBeNull();
    expect([...questionIds(rubric)]).toEqual(['a']);
  });
});
