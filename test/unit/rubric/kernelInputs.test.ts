// The per-criterion reward matrix for the group-advantage kernel: its weighted sum is the
// weighted mean (dropout included), unscorable rows are whole-null, and the float64 twin of the
// kernel gives the advantages the rubric layer intends.
import { describe, expect, it } from 'vitest';
import { kernelRewardInputs } from '../../../src/rubric/kernelInputs';
import { weightedMean } from '../../../src/rubric/aggregate';
import { GROUP_ADVANTAGE_DEFAULTS } from '../../../src/ops/groupAdvantage';
import { groupAdvantageRef } from '../../../src/ops/groupAdvantage.reference';
import { expectClose } from '../../helpers/compare';
import { weighted } from './fixtures';

const EXACT = { atol: 1e-12, rtol: 0 };
const R = weighted([
  [3, 'essential'],
  [2, 'important'],
  [1, 'optional'],
  [-2, 'important'],
  [0, 'optional'],
]);
const scores = [
  [1, 0.5, 0, 1, 1],
  [0, 1, 1, 0, null],
  [1, 1, 0, 0, 0],
  [1, null, 1, 0, 1],
];
const combined = (m: { rewards_per_criterion: (number | null)[][]; reward_weights: number[] }) =>
  m.rewards_per_criterion.map((row) => row.reduce<number>((s, x, k) => s + (x ?? 0) * m.reward_weights[k], 0));
const flat = (rows: (number | null)[][]) => rows.flat().map((x) => (x === null ? NaN : x));

describe('kernelRewardInputs', () => {
  it('normalises weights by the positive total and nulls whole unscorable rows', () => {
    const m = kernelRewardInputs(R, scores);
    expectClose(m.reward_weights, [0.5, 1 / 3, 1 / 6, -1 / 3, 0], EXACT, 'weights');
    expect(m.rewards_per_criterion[0]).toEqual([1, 0.5, 0, 1, 1]);
    expect(m.rewards_per_criterion[1]).toEqual([0, 1, 1, 0, null]); // weight-0 missing: that cell only
    expect(m.rewards_per_criterion[3]).toEqual([null, null, null, null, null]);
    expectClose(combined(m).slice(0, 3), scores.slice(0, 3).map((s) => weightedMean(R, s)!), EXACT, 'Σ w·cell');
  });

  it('applies per-group dropout masks so the weighted sum is the dropout weighted mean', () => {
    const keep = [
      [true, false, true, true, true],
      [true, false, true, false, true],
    ];
    const m = kernelRewardInputs(R, scores, { numGenerations: 2, keep });
    expect(m.rewards_per_criterion[0][1]).toBeNull();
    // Group 1 keeps positives c0 and c2 (Σ 4 of 6): cells scaled by 6/4; c1 is dropped, so its
    // missing score no longer makes row 3 unscorable.
    expect(m.rewards_per_criterion[3]).toEqual([1.5, null, 1.5, null, 1.5]);
    const expected = scores.map((s, i) => weightedMean(R, s, { keep: keep[Math.floor(i / 2)] })!);
    expectClose(combined(m), expected, EXACT, 'Σ w·cell');
  });

  it('gives the group-advantage twin the intended rewards (sum_then_normalize) and scale-free GDPO', () => {
    const keep = [
      [true, true, false, true, true],
      [true, false, true, true, true],
    ];
    const m = kernelRewardInputs(R, scores, { numGenerations: 2, keep });
    const run = (rewards: number[], extra: object) =>
      groupAdvantageRef({ ...GROUP_ADVANTAGE_DEFAULTS, numCriteria: 5, numGenerations: 2, rewards, weights: m.reward_weights, ...extra });
    const plain = run(flat(m.rewards_per_criterion), { scaleRewards: 'none' });
    const r = scores.map((s, i) => weightedMean(R, s, { keep: keep[Math.floor(i / 2)] })!);
    expectClose(Array.from(plain.advantages), [(r[0] - r[1]) / 2, (r[1] - r[0]) / 2, (r[2] - r[3]) / 2, (r[3] - r[2]) / 2], EXACT, 'A');
    expect(plain.unscorable).toBe(0);

    // GDPO z-scores each criterion in its group: the dropout factor does not change it (eps = 0).
    const unscaled = scores.map((row, i) => row.map((x, k) => (keep[Math.floor(i / 2)][k] ? x : null)));
    const gdpo = { multiObjectiveAggregation: 'normalize_then_sum', eps: 0 };
    expectClose(Array.from(run(flat(m.rewards_per_criterion), gdpo).advantages), Array.from(run(flat(unscaled), gdpo).advantages), EXACT, 'GDPO');
  });

  it('an unscorable row reaches the kernel as unscorable (advantage 0, counted)', () => {
    const m = kernelRewardInputs(R, scores);
    const out = groupAdvantageRef({ ...GROUP_ADVANTAGE_DEFAULTS, numCriteria: 5, numGenerations: 2, rewards: flat(m.rewards_per_criterion), weights: m.reward_weights });
    expect(out.unscorable).toBe(1);
    expect(out.advantages[3]).toBe(0);
  });

  it('rejects masks without whole groups', () => {
    expect(() => kernelRewardInputs(R, scores, { keep: [[true, true, true, true, true]] })).toThrow(/numGenerations = undefined/);
    expect(() => kernelRewardInputs(R, scores, { numGenerations: 2, keep: [[true, true, true, true, true]] })).toThrow('keep has 1 masks for 2 groups');
  });
});
