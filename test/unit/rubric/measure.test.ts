// Rubric measures on stored rollouts, against values computed by hand in the comments.
import { describe, expect, it } from 'vitest';
import { correlationAwareWeights, measureRubric, pearson, type MeasuredRollout } from '../../../src/rubric/measure';
import { weighted } from './fixtures';

const R = weighted([
  [1, 'important'],
  [1, 'important'],
  [1, 'important'],
]);
// Three groups of two: A = step 0 group 0, B = step 0 group 1, C = step 1 group 0 (not A: steps differ).
const ROLLOUTS: MeasuredRollout[] = [
  { step: 0, group: 0, scores: [1, 1, 0] },
  { step: 0, group: 0, scores: [0, 0, 0] },
  { step: 0, group: 1, scores: [1, 1, 0] },
  { step: 0, group: 1, scores: [1, 1, null] },
  { step: 1, group: 0, scores: [1, 1, 0] },
  { step: 1, group: 0, scores: [0.5, 0, 1] },
];
const EXACT = 12;

describe('per criterion', () => {
  const m = measureRubric(R, ROLLOUTS);
  it('counts rollouts and groups', () => {
    expect([m.rollouts, m.groups]).toEqual([6, 3]);
  });
  it('criterion 1: met 5/6 (0.5 is met), mean 0.75, variance mean(0.25, 0, 0.0625), mostly saturated groups', () => {
    const c = m.criteria[0];
    expect(c.scored).toBe(6);
    expect(c.metRate).toBeCloseTo(5 / 6, EXACT);
    expect(c.meanScore).toBeCloseTo(0.75, EXACT);
    expect(c.withinGroupVariance).toBeCloseTo((0.25 + 0 + 0.0625) / 3, EXACT);
    expect(c.groups).toEqual({ saturated: 2, unreachable: 0, mixed: 1 });
    expect(c.flag).toBe('saturated');
  });
  it('criterion 2: met 4/6, two mixed groups → discriminative', () => {
    const c = m.criteria[1];
    expect(c.metRate).toBeCloseTo(4 / 6, EXACT);
    expect(c.withinGroupVariance).toBeCloseTo(0.5 / 3, EXACT);
    expect(c.flag).toBe('discriminative');
  });
  it('criterion 3: the unscored rollout is left out (5 scored), a group with one score is not a group; a tie goes to discriminative', () => {
    const c = m.criteria[2];
    expect(c.scored).toBe(5);
    expect(c.metRate).toBeCloseTo(1 / 5, EXACT);
    expect(c.meanScore).toBeCloseTo(0.2, EXACT);
    expect(c.withinGroupVariance).toBeCloseTo(0.25 / 2, EXACT);
    expect(c.groups).toEqual({ saturated: 0, unreachable: 1, mixed: 1 });
    expect(c.flag).toBe('discriminative');
  });
  it('flags unreachable and unscored criteria', () => {
    const out = measureRubric(weighted([[1, 'important'], [1, 'important']]), [
      { step: 0, group: 0, scores: [0, null] },
      { step: 0, group: 0, scores: [0.2, 1] },
    ]);
    expect(out.criteria.map((c) => c.flag)).toEqual(['unreachable', 'unscored']);
    expect(out.criteria[1].withinGroupVariance).toBeNull();
  });
});

describe('between criteria', () => {
  const m = measureRubric(R, ROLLOUTS);
  it('Pearson correlations over rollouts scoring both (hand-computed)', () => {
    // 1 vs 2 (all six): Sxy = 1, Sxx = 0.875, Syy = 4/3 → r = 1 / sqrt(7/6).
    expect(m.correlation[0][1]).toBeCloseTo(Math.sqrt(6 / 7), EXACT);
    // 1 vs 3 (five): Sxy = −0.2, Sxx = Syy = 0.8 → −0.25.
    expect(m.correlation[0][2]).toBeCloseTo(-0.25, EXACT);
    // 2 vs 3: Sxy = −0.6, Sxx = 1.2, Syy = 0.8 → −sqrt(3/8).
    expect(m.correlation[1][2]).toBeCloseTo(-Math.sqrt(3 / 8), EXACT);
    expect(m.correlation[2][1]).toBe(m.correlation[1][2]);
    expect(m.correlation.map((row, k) => row[k])).toEqual([1, 1, 1]);
  });
  it('marks |r| >= 0.9 as redundant', () => {
    expect(m.redundant.map(({ a, b }) => [a, b])).toEqual([[0, 1]]);
  });
  it('correlation-aware weights: w / (1 + Σ positive r with the others)', () => {
    const s = 1 / (1 + Math.sqrt(6 / 7));
    m.correlationWeights.forEach((w, k) => expect(w).toBeCloseTo([s, s, 1][k], EXACT));
  });
  it('a cluster of m identical criteria counts once; opposed and tracked-only criteria do not shrink weights', () => {
    const one = [
      [1, 1, 1, 1],
      [1, 1, 1, 1],
      [1, 1, 1, -1],
      [1, 1, -1, 1],
    ];
    expect(correlationAwareWeights([3, 3, 3, 2], one)).toEqual([3 / 4, 3 / 4, 3 / 3, 2 / 3]);
    // A pitfall counts as "avoided": met together with the positive criterion (r = 1) it is not
    // redundant with it; met exactly when the positive one is not (r = −1) it counts the same thing twice.
    expect(correlationAwareWeights([2, -2, 0], [[1, 1, 1], [1, 1, 1], [1, 1, 1]])).toEqual([2, -2, 0]);
    expect(correlationAwareWeights([2, -2, 0], [[1, -1, 1], [-1, 1, 1], [1, 1, 1]])).toEqual([1, -1, 0]);
    expect(correlationAwareWeights([-1, -3], [[1, 1], [1, 1]])).toEqual([-1 / 2, -3 / 2]);
    expect(correlationAwareWeights([2, 2], [[1, null], [null, 1]])).toEqual([2, 2]);
  });
  it('pearson is null for fewer than 2 pairs or a constant side', () => {
    expect(pearson([1], [1])).toBeNull();
    expect(pearson([1, 1, 1], [0, 1, 0])).toBeNull();
    expect(pearson([0, 1, 2], [2, 1, 0])).toBeCloseTo(-1, EXACT);
  });
});

describe('bad input', () => {
  it('names the rollout whose scores do not fit the rubric', () => {
    expect(() => measureRubric(R, [{ step: 0, group: 0, scores: [1, 1] }])).toThrow('rollout 0 has 2 scores for 3 criteria');
    expect(() => measureRubric(R, [{ step: 0, group: 0, scores: [1, 2, 0] }])).toThrow('score 2 = 2 is outside [0, 1]');
  });
});
