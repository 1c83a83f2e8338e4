// Per-rollout aggregations against hand-computed values, missing scores → null, masks,
// and the side-by-side entry point.
import { describe, expect, it } from 'vitest';
import { essentialGated, healthbenchPoints, scoresOf, strictAllRequired, weightedMean } from '../../../src/rubric/aggregate';
import { aggregateAll, aggregateGroup } from '../../../src/rubric/aggregations';
import { weighted } from './fixtures';

// Weights 3 (essential), 2 (important), 1 (optional), -2 (a pitfall, important). Σ positive = 6.
const R = weighted([
  [3, 'essential'],
  [2, 'important'],
  [1, 'optional'],
  [-2, 'important'],
]);
const EXACT = 12;

describe('weighted mean (RaR explicit, pitfalls subtract)', () => {
  it.each([
    [[1, 0.5, 0, 1], (3 + 1 + 0 - 2) / 6],
    [[0, 1, 1, 0], 3 / 6],
    [[1, 1, 0, 0], 5 / 6],
    [[1, 1, 1, 0], 1],
    [[0, 0, 0, 1], -2 / 6], // not clipped
    [[1, 0.4, 1, 0.6], (3 + 0.8 + 1 - 1.2) / 6],
  ])('%j → %d', (scores, expected) => {
    expect(weightedMean(R, scores)).toBeCloseTo(expected, EXACT);
  });
});

describe('HealthBench points (met = score >= threshold, clipped to [0, 1])', () => {
  it.each([
    [[1, 0.5, 0, 1], 0.5, (3 + 2 - 2) / 6],
    [[1, 0.4, 1, 0.6], 0.5, (3 + 1 - 2) / 6],
    [[1, 0.4, 1, 0.6], 0.7, (3 + 1) / 6],
    [[0, 0, 0, 1], 0.5, 0], // -2/6 clipped
    [[1, 1, 1, 0], 0.5, 1],
  ])('%j at threshold %d → %d', (scores, threshold, expected) => {
    expect(healthbenchPoints(R, scores, { threshold })).toBeCloseTo(expected, EXACT);
  });
});

describe('essential gating', () => {
  it('caps the reward when an essential criterion fails', () => {
    expect(essentialGated(R, [0, 1, 1, 0])).toBe(0); // base 0.5, capped at 0
    expect(essentialGated(R, [0, 1, 1, 0], { cap: 0.2 })).toBeCloseTo(0.2, EXACT);
    expect(essentialGated(R, [0, 1, 1, 0], { cap: 0.8 })).toBeCloseTo(0.5, EXACT); // the cap only lowers
    expect(essentialGated(R, [1, 0.5, 0, 1])).toBeCloseTo(1 / 3, EXACT); // essential passes: base
    expect(essentialGated(R, [1, 0.5, 0, 1], { base: 'healthbench_points' })).toBeCloseTo(0.5, EXACT);
    expect(essentialGated(R, [0.4, 1, 1, 0], { threshold: 0.3 })).toBeCloseTo((1.2 + 3) / 6, EXACT);
  });

  it('counts a met essential pitfall as a failure', () => {
    const r = weighted([
      [1, 'important'],
      [-1, 'essential'],
    ]);
    expect(essentialGated(r, [1, 1], { cap: 0.1 })).toBe(0); // base 0 < cap
    expect(essentialGated(r, [1, 0.6], { cap: -1 })).toBe(-1);
    expect(essentialGated(r, [1, 0])).toBe(1);
  });
});

describe('strict all-required', () => {
  it('is 1 only when every essential/important criterion is met and no pitfall is', () => {
    expect(strictAllRequired(R, [1, 1, 0, 0])).toBe(1); // the optional one does not count
    expect(strictAllRequired(R, [1, 0.5, 0, 1])).toBe(0); // pitfall met
    expect(strictAllRequired(R, [0, 1, 1, 0])).toBe(0); // essential not met
    expect(strictAllRequired(R, [1, 0.6, 0, 0.4], { threshold: 0.7 })).toBe(0);
    expect(strictAllRequired(R, [1, 0.8, 0, 0.4], { threshold: 0.7 })).toBe(1);
  });
});

describe('missing scores and masks', () => {
  it('gives null, never 0, when an active criterion is missing', () => {
    for (const f of [weightedMean, healthbenchPoints, essentialGated, strictAllRequired]) {
      expect(f(R, [1, null, 1, 0])).toBeNull();
    }
  });

  it('ignores missing scores of weight-0 and dropped criteria', () => {
    const r = weighted([
      [1, 'essential'],
      [0, 'optional'],
    ]);
    expect(weightedMean(r, [1, null])).toBe(1);
    expect(weightedMean(R, [1, null, 0, 1], { keep: [true, false, true, true] })).toBeCloseTo((3 - 2) / (3 + 1), EXACT);
  });

  it('rejects bad input with RangeErrors naming it', () => {
    expect(() => weightedMean(R, [1, 1, 1])).toThrow('scores has 3 entries for 4 criteria');
    expect(() => weightedMean(R, [1, 1.5, 1, 0])).toThrow('scores[1] = 1.5 is outside [0, 1]');
    expect(() => weightedMean(R, [1, NaN, 1, 0])).toThrow('scores[1] = NaN');
    expect(() => healthbenchPoints(R, [1, 1, 1, 0], { threshold: 2 })).toThrow('threshold must be in [0, 1], got 2');
    expect(() => weightedMean(R, [1, 1, 1, 0], { keep: [false, false, false, true] })).toThrow('keep drops every positive-weight criterion');
    expect(() => essentialGated(R, [1, 1, 1, 0], { cap: NaN })).toThrow('cap must be finite');
  });

  it('scoresOf maps results by id and treats anything but ok as missing', () => {
    expect(
      scoresOf(R, [
        { criterion_id: 'c2', status: 'ok', score: 0.5, reason: '' },
        { criterion_id: 'c0', status: 'ok', score: 1, reason: '' },
        { criterion_id: 'c1', status: 'unscorable', score: null, reason: 'timeout' },
      ]),
    ).toEqual([1, null, 0.5, null]);
    expect(() => scoresOf(R, [{ criterion_id: 'zz', status: 'ok', score: 1, reason: '' }])).toThrow('results[0].criterion_id "zz" is not in the rubric');
    const dup = { criterion_id: 'c0', status: 'ok', score: 1, reason: '' } as const;
    expect(() => scoresOf(R, [dup, dup])).toThrow('results[1]: a second result for "c0"');
  });
});

describe('aggregateGroup / aggregateAll', () => {
  const group = [
    [1, 0.5, 0, 1],
    [0, 1, 1, 0],
    [1, 1, 0, 0],
    [1, null, 0, 0],
  ];

  it('computes every aggregation side by side with the same settings', () => {
    const all = aggregateAll(R, group, { gate_cap: 0.1 });
    expect(all.weighted_mean).toEqual([2 / 6, 3 / 6, 5 / 6, null].map((x) => (x === null ? null : expect.closeTo(x, EXACT))));
    expect(all.healthbench_points).toEqual([0.5, 0.5, 5 / 6, null].map((x) => (x === null ? null : expect.closeTo(x, EXACT))));
    expect(all.essential_gated).toEqual([expect.closeTo(1 / 3, EXACT), 0.1, expect.closeTo(5 / 6, EXACT), null]);
    expect(all.strict_all_required).toEqual([0, 0, 1, null]);
    expect(all.adaptive_weights).toHaveLength(4);
    expect(all.rubric_dropout).toBeUndefined(); // needs a context
    expect(aggregateAll(R, group, {}, { seed: 1, step: 0, group: 'g' }).rubric_dropout).toHaveLength(4);
  });

  it('selects by method and needs a context for dropout', () => {
    expect(aggregateGroup(R, group, { method: 'strict_all_required' }).rewards).toEqual([0, 0, 1, null]);
    expect(() => aggregateGroup(R, group, { method: 'rubric_dropout' })).toThrow(/needs the group context/);
    expect(() => aggregateGroup(R, group, { method: 'median' as 'weighted_mean' })).toThrow('unknown aggregation method "median"');
    const dropped = aggregateGroup(R, group, { method: 'rubric_dropout', dropout_p: 0.5 }, { seed: 3, step: 7, group: 'q' });
    expect(dropped.keep).toHaveLength(4);
  });
});
