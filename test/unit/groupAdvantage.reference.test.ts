// The float64 twin of the group-advantage kernel on hand-computed cases.
// Tolerance: 1e-12 absolute (float64 arithmetic on a handful of values).
import { describe, expect, it } from 'vitest';
import { GROUP_ADVANTAGE_DEFAULTS, type GroupAdvantageOptions } from '../../src/ops/groupAdvantage';
import { groupAdvantageRef, type GroupAdvantageProblem } from '../../src/ops/groupAdvantage.reference';
import { expectClose } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

const EXACT = { atol: 1e-12, rtol: 0 };
const SQRT2 = Math.SQRT2;

function run(
  rewards: number[],
  numGenerations: number,
  options: Partial<GroupAdvantageOptions> & { numCriteria?: number; weights?: number[] } = {},
) {
  const problem: GroupAdvantageProblem = {
    ...GROUP_ADVANTAGE_DEFAULTS,
    numCriteria: 1,
    ...options,
    rewards,
    numGenerations,
  };
  return groupAdvantageRef(problem);
}

describe('group advantage reference twin: sum_then_normalize, grpo', () => {
  // Groups [1, 3] (mean 2, unbiased std sqrt 2) and [0, 10] (mean 5, std 5 sqrt 2).
  const rewards = [1, 3, 0, 10];

  it('scale_rewards "group" divides by each group std + eps', () => {
    const out = run(rewards, 2);
    expectClose(out.advantages, [-1 / (SQRT2 + 1e-4), 1 / (SQRT2 + 1e-4), -5 / (5 * SQRT2 + 1e-4), 5 / (5 * SQRT2 + 1e-4)], EXACT, 'A');
    expectClose(out.groupMean, [2, 5], EXACT, 'group_mean');
    expectClose(out.groupStd, [SQRT2, 5 * SQRT2], EXACT, 'group_std');
    expect([out.zeroStdGroups, out.unscorable, out.unscorableGroups]).toEqual([0, 0, 0]);
  });

  it('scale_rewards "batch" divides by the std of the whole batch', () => {
    // Batch: mean 3.5, squared deviations 6.25 + 0.25 + 12.25 + 42.25 = 61, unbiased var 61/3.
    const sigma = Math.sqrt(61 / 3);
    const out = run(rewards, 2, { scaleRewards: 'batch', eps: 0 });
    expectClose(out.advantages, [-1 / sigma, 1 / sigma, -5 / sigma, 5 / sigma], EXACT, 'A');
    // Group statistics do not depend on the scaling.
    expectClose(out.groupStd, [SQRT2, 5 * SQRT2], EXACT, 'group_std');
  });

  it('scale_rewards "none" only centres', () => {
    expectClose(run(rewards, 2, { scaleRewards: 'none' }).advantages, [-1, 1, -5, 5], EXACT, 'A');
  });

  it('leaves missing rewards out of group and batch statistics and gives them 0', () => {
    // Groups [1, NaN, 3] and [5, 7, NaN]: valid 1, 3, 5, 7 (batch mean 4, unbiased var 20/3).
    const r = [1, NaN, 3, 5, 7, NaN];
    const group = run(r, 3, { eps: 0 });
    const a = 1 / SQRT2;
    expectClose(group.advantages, [-a, 0, a, -a, a, 0], EXACT, 'A group');
    expectClose(group.groupMean, [2, 6], EXACT, 'group_mean');
    expect(group.unscorable).toBe(2);
    expect(group.unscorableGroups).toBe(0);
    const batch = run(r, 3, { eps: 0, scaleRewards: 'batch' });
    const s = Math.sqrt(20 / 3);
    expectClose(batch.advantages, [-1 / s, 0, 1 / s, -1 / s, 1 / s, 0], EXACT, 'A batch');
  });

  it('counts a group with one valid member as zero-std (A = 0, std undefined)', () => {
    const out = run([1, NaN, 3, 5, NaN, NaN], 3, { eps: 0 });
    expectClose(out.advantages, [-1 / SQRT2, 0, 1 / SQRT2, 0, 0, 0], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(1);
    expect(out.unscorable).toBe(3);
    expect(out.groupMean[1]).toBe(5);
    expect(out.groupStd[1]).toBeNaN();
  });

  it('num_generations 1: every group is zero-std or unscorable', () => {
    const out = run([3, 5, NaN], 1);
    expect(Array.from(out.advantages)).toEqual([0, 0, 0]);
    expect([out.zeroStdGroups, out.unscorable, out.unscorableGroups]).toEqual([2, 1, 1]);
    expect(Array.from(out.groupMean)).toEqual([3, 5, NaN]);
    expect(Array.from(out.groupStd).every(Number.isNaN)).toBe(true);
  });

  it('counts an all-equal group as zero-std and gives it A = 0', () => {
    const out = run([2, 2, 2, 1, 2, 3], 3);
    expectClose(out.advantages, [0, 0, 0, -1 / (1 + 1e-4), 0, 1 / (1 + 1e-4)], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(1);
    expectClose(out.groupStd, [0, 1], EXACT, 'group_std');
  });

  it('batch std includes the members of zero-std groups', () => {
    // [1, 3] and [5, 5]: batch mean 3.5, squared deviations 6.25 + 0.25 + 2.25 + 2.25 = 11.
    const s = Math.sqrt(11 / 3);
    const out = run([1, 3, 5, 5], 2, { scaleRewards: 'batch', eps: 0 });
    expectClose(out.advantages, [-1 / s, 1 / s, 0, 0], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(1);
  });

  it('an all-missing group is unscorable, not zero-std', () => {
    const out = run([NaN, NaN, 1, 2], 2, { eps: 0 });
    expectClose(out.advantages, [0, 0, -1 / SQRT2, 1 / SQRT2], EXACT, 'A');
    expect([out.zeroStdGroups, out.unscorable, out.unscorableGroups]).toEqual([0, 2, 1]);
    expect(out.groupMean[0]).toBeNaN();
    expect(out.groupMean[1]).toBe(1.5);
  });

  it('combines criteria with weights over the valid ones; an all-missing row is unscorable', () => {
    // r = [2*1 + 0.5*0, 2*0 + 0.5*1, 2*1, missing] = [2, 0.5, 2, NaN]: mean 1.5, unbiased var 0.75.
    const out = run([1, 0, 0, 1, 1, NaN, NaN, NaN], 4, { numCriteria: 2, weights: [2, 0.5] });
    const d = Math.sqrt(0.75) + 1e-4;
    expectClose(out.advantages, [0.5 / d, -1 / d, 0.5 / d, 0], EXACT, 'A');
    expect(out.unscorable).toBe(1);
    expectClose(out.groupMean, [1.5], EXACT, 'group_mean');
  });

  it('matches the TRL formula on random complete rewards: per group, A sums to 0 with std sigma/(sigma+eps)', () => {
    const rand = rng(5);
    const G = 6;
    const r = normal(rand, 5 * G, 3);
    const out = run(r, G);
    for (let g = 0; g < 5; g++) {
      const a = Array.from(out.advantages.subarray(g * G, (g + 1) * G));
      const sigma = out.groupStd[g];
      expect(Math.abs(a.reduce((x, y) => x + y, 0))).toBeLessThan(1e-12);
      const std = Math.sqrt(a.reduce((s, x) => s + x * x, 0) / (G - 1));
      expect(std).toBeCloseTo(sigma / (sigma + 1e-4), 12);
    }
  });

  it('rejects num_generations that does not divide the rollouts', () => {
    expect(() => run([1, 2, 3], 2)).toThrow(/num_generations/);
  });
});

describe('group advantage reference twin: normalize_then_sum (GDPO)', () => {
  const gdpo = { multiObjectiveAggregation: 'normalize_then_sum' as const, numCriteria: 2, eps: 0 };
  // Group 0: criterion 0 = [1, 3] -> -+1/sqrt2, criterion 1 = [10, 10] zero-std -> 0.
  // Group 1: criterion 0 = [0, 4] -> -+1/sqrt2, criterion 1 = [5, 7] -> -+1/sqrt2.
  // Group 2: all ones -> zero-std group, r = 0.
  const a = 1 / SQRT2;
  const rewards = [1, 10, 3, 10, 0, 5, 4, 7, 1, 1, 1, 1];

  it('normalises per (group, criterion), sums, then normalises over the batch', () => {
    // r = [-a, a, -2a, 2a, 0, 0]: mean 0, squared deviations 10 a^2 = 5, unbiased var 1.
    const out = run(rewards, 2, gdpo);
    expectClose(out.advantages, [-a, a, -2 * a, 2 * a, 0, 0], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(1);
    expectClose(out.groupMean, [0, 0, 0], EXACT, 'group_mean of combined r');
    expectClose(out.groupStd, [1, 2, 0], EXACT, 'group_std of combined r');
  });

  it('weights the normalised criteria and ignores scale_rewards', () => {
    // Weights [1, 3]: r = [-a, a, -4a, 4a, 0, 0], squared deviations 34 a^2 = 17, var 17/5.
    const s = Math.sqrt(17 / 5);
    for (const scaleRewards of ['group', 'batch', 'none'] as const) {
      const out = run(rewards, 2, { ...gdpo, weights: [1, 3], scaleRewards });
      expectClose(out.advantages, [-a / s, a / s, (-4 * a) / s, (4 * a) / s, 0, 0], EXACT, `A (${scaleRewards})`);
    }
  });

  it('a missing criterion contributes 0; a rollout with none is unscorable and left out of the batch', () => {
    // Group 0 (G = 3): criterion 0 = [1, 3, NaN] -> [-a, a, -], criterion 1 = [NaN, 2, 4] -> [-, -a, a];
    // rows: r = [-a, 0, a]. Group 1: [NaN, NaN] rows 0 and 1, row 2 = [5, 6] alone -> zero-std, r = 0.
    const r = [1, NaN, 3, 2, NaN, 4, NaN, NaN, NaN, NaN, 5, 6];
    const out = run(r, 3, gdpo);
    // Scorable r: [-a, 0, a, 0]: mean 0, squared deviations 2 a^2 = 1, var 1/3.
    const s = Math.sqrt(1 / 3);
    expectClose(out.advantages, [-a / s, 0, a / s, 0, 0, 0], EXACT, 'A');
    expect([out.zeroStdGroups, out.unscorable, out.unscorableGroups]).toEqual([1, 2, 0]);
  });

  it('gives A = 0 everywhere when every scorable r is equal', () => {
    const out = run([1, 2, 1, 2, NaN, NaN, 3, 3], 2, gdpo);
    expect(Array.from(out.advantages)).toEqual([0, 0, 0, 0]);
    expect(out.zeroStdGroups).toBe(2);
  });

  it('rejects the rank estimator', () => {
    expect(() => run(rewards, 2, { ...gdpo, advantageEstimator: 'rank' })).toThrow(/advantage_estimator/);
  });
});

describe('group advantage reference twin: rank estimator', () => {
  it('averages tied ranks and maps them onto [-1, 1]', () => {
    // Ranks 0, 1.5, 1.5, 3 (n = 4, (n-1)/2 = 1.5); ranks 1.5, 1.5, 0 (n = 3, (n-1)/2 = 1).
    const out = run([1, 2, 2, 5, 5, 5, 1, NaN], 4, { advantageEstimator: 'rank' });
    expectClose(out.advantages, [-1, 0, 0, 1, 0.5, 0.5, -1, 0], EXACT, 'A');
  });

  it('skips missing members, and gives zero-std and single-member groups 0', () => {
    // Group 0: valid [3, 1, 3, 7] -> ranks 1.5, 0, 1.5, 3. Group 1: all 2. Group 2: one valid.
    const r = [3, NaN, 1, 3, 7, 2, 2, 2, 2, 2, NaN, 4, NaN, NaN, NaN];
    const out = run(r, 5, { advantageEstimator: 'rank' });
    expectClose(out.advantages, [0, 0, -1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(2);
  });

  it('ignores scale_rewards and eps', () => {
    const r = [0.3, -2, 7, 1, 4, 4];
    const base = run(r, 3, { advantageEstimator: 'rank' }).advantages;
    for (const scaleRewards of ['batch', 'none'] as const) {
      expectClose(run(r, 3, { advantageEstimator: 'rank', scaleRewards, eps: 0.5 }).advantages, base, EXACT, scaleRewards);
    }
    expectClose(base, [0, -1, 1, -1, 0.5, 0.5], EXACT, 'A');
  });
});

describe('group advantage reference twin: rloo estimator (TRL RLOOTrainer leave-one-out baseline)', () => {
  it('subtracts the mean of the other members of the group', () => {
    // [1, 3, 8]: 1 - 11/2, 3 - 9/2, 8 - 4/2; [0, 10]: 0 - 10, 10 - 0.
    const out = run([1, 3, 8, 0, 10, 4], 3, { advantageEstimator: 'rloo' });
    expectClose(out.advantages, [-4.5, -1.5, 6, -7, 8, -1], EXACT, 'A');
  });

  it('leaves missing members out, and gives zero-std, single-member and empty groups 0', () => {
    // Group 0 valid [1, 3, 5]: 1 - 4, (missing), 3 - 3, 5 - 2. Group 1 all 2. Group 2 one valid.
    const r = [1, NaN, 3, 5, 2, 2, 2, 2, NaN, 4, NaN, NaN, NaN, NaN, NaN, NaN];
    const out = run(r, 4, { advantageEstimator: 'rloo' });
    expectClose(out.advantages, [-3, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], EXACT, 'A');
    expect(out.zeroStdGroups).toBe(2);
    expect(out.unscorableGroups).toBe(1);
  });

  it('equals n / (n - 1) times the centred reward, whatever scale_rewards and eps say', () => {
    const r = normal(rng(5), 24, 3).map((x) => 100 + x);
    const centred = run(r, 6, { scaleRewards: 'none' }).advantages;
    for (const scaleRewards of ['group', 'batch', 'none'] as const) {
      const out = run(r, 6, { advantageEstimator: 'rloo', scaleRewards, eps: 0.5 }).advantages;
      expectClose(out, centred.map((a) => (6 / 5) * a), { atol: 1e-10, rtol: 0 }, scaleRewards);
    }
  });

  it('an infinite reward makes its group NaN, other groups stay finite', () => {
    const out = run([1, Infinity, 2, 3, 1, 5], 3, { advantageEstimator: 'rloo' });
    expect(Array.from(out.advantages.slice(0, 3)).every(Number.isNaN)).toBe(true);
    expectClose(out.advantages.slice(3), [0, -3, 3], EXACT, 'A');
  });

  it('rejects normalize_then_sum', () => {
    expect(() => run([1, 2], 2, { advantageEstimator: 'rloo', multiObjectiveAggregation: 'normalize_then_sum' })).toThrow(
      /advantage_estimator "rloo" works only with multi_objective_aggregation "sum_then_normalize"/,
    );
  });
});
