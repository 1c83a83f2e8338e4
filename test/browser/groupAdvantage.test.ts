// The WGSL group-advantage kernel against its float64 twin, run in headless Chromium (WebGPU).
// Inputs are rounded to f32 before both run, so every discrete decision (missing, max == min,
// rank ties) sees the same numbers. Tolerances, f32 kernel vs f64 twin, for rewards of order
// 1-10: advantages and group statistics atol 1e-5 + rtol 1e-5 (two-pass f32 means and stds of
// up to 2,100 values, then a division by std + eps; the worst seen is 2e-6); rank advantages
// are exact rationals from integer counts, atol 1e-6; counts must be equal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import {
  GROUP_ADVANTAGE_DEFAULTS,
  type AdvantageEstimator,
  type MultiObjectiveAggregation,
  type ScaleRewards,
} from '../../src/ops/groupAdvantage';
import { groupAdvantageRef, type GroupAdvantageResult } from '../../src/ops/groupAdvantage.reference';
import { expectClose } from '../helpers/compare';
import { chunk, normal, rng, uniform } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const TOL = { atol: 1e-5, rtol: 1e-5 };
const RANK_TOL = { atol: 1e-6, rtol: 0 };

function f32(values: number[]): number[] {
  return Array.from(new Float32Array(values));
}

const toJson = (x: number) => (Number.isNaN(x) ? null : x);

type GroupKind = 'normal' | 'discrete' | 'equal' | 'missing' | 'single';

/**
 * Random rewards [B*G, K] with a mix of group kinds: continuous with some missing values,
 * discrete (ties, sometimes all equal), all equal, all missing, and one valid member.
 * Equal groups repeat one row, so their combined rewards are equal in any precision.
 */
function randomRewards(seed: number, B: number, G: number, K: number, kinds: GroupKind[]): number[] {
  const rand = rng(seed);
  const out: number[] = [];
  for (let g = 0; g < B; g++) {
    const kind = kinds[Math.floor(rand() * kinds.length)];
    const row = normal(rand, K, 3);
    for (let j = 0; j < G; j++) {
      for (let k = 0; k < K; k++) {
        let x: number;
        if (kind === 'equal') x = row[k];
        else if (kind === 'missing') x = NaN;
        else if (kind === 'single') x = j === 0 ? row[k] : NaN;
        else if (kind === 'discrete') x = rand() < 0.1 ? NaN : [0, 0.5, 1][Math.floor(rand() * 3)];
        else x = rand() < 0.15 ? NaN : normal(rand, 1, 3)[0];
        out.push(x);
      }
    }
  }
  return f32(out);
}

interface Config {
  K: number;
  scaleRewards?: ScaleRewards;
  aggregation?: MultiObjectiveAggregation;
  estimator?: AdvantageEstimator;
  /** Send a flat `rewards` vector (K must be 1) rather than rewards_per_criterion. */
  flat?: boolean;
  weights?: boolean;
  eps?: number;
}

async function compare(rewards: number[], G: number, c: Config, seed: number) {
  const K = c.K;
  const weights = c.weights ? f32(uniform(rng(seed + 99), K, 0.1, 2)) : undefined;
  const request: Record<string, unknown> = {
    num_generations: G,
    ...(c.flat ? { rewards: rewards.map(toJson) } : { rewards_per_criterion: chunk(rewards.map(toJson), K) }),
    ...(weights ? { reward_weights: weights } : {}),
    ...(c.scaleRewards ? { scale_rewards: c.scaleRewards } : {}),
    ...(c.aggregation ? { multi_objective_aggregation: c.aggregation } : {}),
    ...(c.estimator ? { advantage_estimator: c.estimator } : {}),
    ...(c.eps !== undefined ? { eps: c.eps } : {}),
  };
  const out = await harness.run('group_advantage', request);
  const ref = groupAdvantageRef({
    rewards,
    numCriteria: K,
    weights,
    numGenerations: G,
    scaleRewards: c.scaleRewards ?? GROUP_ADVANTAGE_DEFAULTS.scaleRewards,
    eps: Math.fround(c.eps ?? GROUP_ADVANTAGE_DEFAULTS.eps),
    multiObjectiveAggregation: c.aggregation ?? GROUP_ADVANTAGE_DEFAULTS.multiObjectiveAggregation,
    advantageEstimator: c.estimator ?? GROUP_ADVANTAGE_DEFAULTS.advantageEstimator,
  });
  return { out, ref };
}

function expectMatch(out: any, ref: GroupAdvantageResult, c: Config, label: string) {
  expectClose(out.advantages, ref.advantages, c.estimator === 'rank' ? RANK_TOL : TOL, `${label} advantages`);
  expect(
    { zero_std_groups: out.zero_std_groups, unscorable: out.unscorable, unscorable_groups: out.unscorable_groups },
    `${label} counts`,
  ).toEqual({ zero_std_groups: ref.zeroStdGroups, unscorable: ref.unscorable, unscorable_groups: ref.unscorableGroups });
  expectClose(out.group_mean, ref.groupMean, TOL, `${label} group_mean`);
  expectClose(out.group_std, ref.groupStd, TOL, `${label} group_std`);
  // Undefined statistics travel as null, never NaN.
  for (const x of [...out.group_mean, ...out.group_std]) expect(Number.isNaN(x)).toBe(false);
}

const CONFIGS: [string, Config][] = [
  ['K=1 group', { K: 1, flat: true }],
  ['K=1 batch', { K: 1, flat: true, scaleRewards: 'batch' }],
  ['K=1 none', { K: 1, flat: true, scaleRewards: 'none' }],
  ['K=1 rank', { K: 1, flat: true, estimator: 'rank' }],
  ['K=1 rloo', { K: 1, flat: true, estimator: 'rloo' }],
  ['K=1 GDPO', { K: 1, aggregation: 'normalize_then_sum' }],
  ['K=5 weighted group', { K: 5, weights: true }],
  ['K=5 batch eps 0', { K: 5, scaleRewards: 'batch', eps: 0 }],
  ['K=5 weighted rank', { K: 5, weights: true, estimator: 'rank' }],
  ['K=5 weighted rloo', { K: 5, weights: true, estimator: 'rloo' }],
  ['K=5 weighted GDPO', { K: 5, weights: true, aggregation: 'normalize_then_sum' }],
];

const ALL_KINDS: GroupKind[] = ['normal', 'normal', 'normal', 'discrete', 'equal', 'missing', 'single'];

describe('group_advantage kernel (WGSL) vs float64 twin', () => {
  for (const [seed, B, G] of [
    [1, 1, 2],
    [2, 3, 4],
    [3, 16, 8],
    [4, 64, 16],
    [5, 300, 7],
  ] as const) {
    it(`random rewards: seed ${seed}, B x G = ${B} x ${G}, every option`, async () => {
      for (const [name, c] of CONFIGS) {
        // Small batches get only continuous groups too, so they are not all degenerate.
        const kinds = B * G <= 12 ? (['normal', 'discrete'] as GroupKind[]) : ALL_KINDS;
        const rewards = randomRewards(seed * 31 + c.K, B, G, c.K, kinds);
        const { out, ref } = await compare(rewards, G, c, seed);
        expectMatch(out, ref, c, `${name} (seed ${seed}, ${B}x${G})`);
      }
    });
  }

  it('the random batches do exercise every kind of group', async () => {
    const rewards = randomRewards(5 * 31 + 1, 300, 7, 1, ALL_KINDS);
    const ref = groupAdvantageRef({ ...GROUP_ADVANTAGE_DEFAULTS, rewards, numCriteria: 1, numGenerations: 7 });
    expect(ref.zeroStdGroups).toBeGreaterThan(20);
    expect(ref.unscorableGroups).toBeGreaterThan(20);
    expect(ref.unscorable).toBeGreaterThan(ref.unscorableGroups * 7);
  });

  it('hand example: [1, 3 | 0, 10] with the default eps', async () => {
    const out = await harness.run('group_advantage', { rewards: [1, 3, 0, 10], num_generations: 2 });
    const d0 = Math.SQRT2 + 1e-4;
    const d1 = 5 * Math.SQRT2 + 1e-4;
    expectClose(out.advantages, [-1 / d0, 1 / d0, -5 / d1, 5 / d1], { atol: 1e-6, rtol: 1e-6 }, 'advantages');
    expectClose(out.group_mean, [2, 5], { atol: 1e-6, rtol: 0 }, 'group_mean');
    expectClose(out.group_std, [Math.SQRT2, 5 * Math.SQRT2], { atol: 1e-6, rtol: 1e-6 }, 'group_std');
  });

  it('hand example, rloo: [1, 3, 8 | 0, 10, 4] minus the mean of the others', async () => {
    const out = await harness.run('group_advantage', { rewards: [1, 3, 8, 0, 10, 4], num_generations: 3, advantage_estimator: 'rloo' });
    expectClose(out.advantages, [-4.5, -1.5, 6, -7, 8, -1], { atol: 1e-5, rtol: 1e-6 }, 'advantages');
  });

  it('num_generations 1: every group has size 1, every advantage is 0', async () => {
    for (const c of CONFIGS.map(([, c]) => c)) {
      const rewards = randomRewards(7, 40, 1, c.K, ['normal', 'missing']);
      const { out, ref } = await compare(rewards, 1, c, 7);
      expectMatch(out, ref, c, 'G=1');
      expect(out.advantages.every((a: number) => a === 0)).toBe(true);
      expect(out.zero_std_groups + out.unscorable_groups).toBe(40);
    }
  });

  it('all rewards equal: every group zero-std, A = 0', async () => {
    for (const c of CONFIGS.map(([, c]) => c)) {
      const rewards = new Array(24 * c.K).fill(0.7).map((x, i) => x + (i % c.K));
      const { out, ref } = await compare(f32(rewards), 6, c, 8);
      expectMatch(out, ref, c, 'all equal');
      expect(out.advantages.every((a: number) => a === 0)).toBe(true);
      expect(out.zero_std_groups).toBe(4);
    }
  });

  it('every reward missing: all unscorable, A = 0, statistics null', async () => {
    const out = await harness.run('group_advantage', { rewards: [null, null, null, null, null, null], num_generations: 3 });
    expect(out).toEqual({
      advantages: [0, 0, 0, 0, 0, 0],
      zero_std_groups: 0,
      unscorable: 6,
      unscorable_groups: 2,
      group_mean: [null, null],
      group_std: [null, null],
    });
  });

  it('one large group (G = 1000, K = 3) with a large common offset keeps its precision', async () => {
    const rand = rng(9);
    const rewards = f32(normal(rand, 3000, 1).map((x) => 1000 + x));
    for (const c of [{ K: 3 }, { K: 3, scaleRewards: 'batch' as const }, { K: 3, aggregation: 'normalize_then_sum' as const }]) {
      const { out, ref } = await compare(rewards, 1000, c, 9);
      // One f32 ulp of 3000 is 2.4e-4: the centred combined reward carries that much error.
      expectClose(out.advantages, ref.advantages, { atol: 5e-4, rtol: 1e-4 }, 'advantages');
      expectClose(out.group_mean, ref.groupMean, { atol: 1e-4, rtol: 1e-6 }, 'group_mean');
    }
  });

  it('accepts TRL booleans for scale_rewards (true = group, false = none)', async () => {
    const rewards = [1, 3, 0, 10];
    const group = await harness.run('group_advantage', { rewards, num_generations: 2, scale_rewards: 'group' });
    const none = await harness.run('group_advantage', { rewards, num_generations: 2, scale_rewards: 'none' });
    expect(await harness.run('group_advantage', { rewards, num_generations: 2, scale_rewards: true })).toEqual(group);
    expect(await harness.run('group_advantage', { rewards, num_generations: 2, scale_rewards: false })).toEqual(none);
  });

  it('+-inf rewards poison their group (or the batch, where its statistics are used): NaN advantages, as the twin', async () => {
    // Before, std = NaN failed `denom > 0` and the group silently got advantages of 0.
    // JSON cannot carry inf, so this goes through the launcher directly.
    const G = 4;
    const rewards = f32([
      1, 2, 3, 4, // g0: normal
      1, Infinity, 2, NaN, // g1: one +inf, one missing
      5, 5, 5, 5, // g2: zero-std
      NaN, NaN, NaN, NaN, // g3: empty
      -Infinity, Infinity, 0, 1, // g4: inf - inf
      Infinity, NaN, NaN, NaN, // g5: a single +inf member
    ]);
    const poisonedGroup = [false, true, false, false, true, true];
    const missing = (i: number) => Number.isNaN(rewards[i]);
    for (const [name, c] of CONFIGS.filter(([, c]) => c.K === 1)) {
      const options = {
        numGenerations: G,
        scaleRewards: c.scaleRewards ?? GROUP_ADVANTAGE_DEFAULTS.scaleRewards,
        eps: Math.fround(GROUP_ADVANTAGE_DEFAULTS.eps),
        multiObjectiveAggregation: c.aggregation ?? GROUP_ADVANTAGE_DEFAULTS.multiObjectiveAggregation,
        advantageEstimator: c.estimator ?? GROUP_ADVANTAGE_DEFAULTS.advantageEstimator,
      };
      const out = await harness.runModule('/test/harness/cases/groupAdvantage.ts', 'groupAdvantage', { ...options, rewards, criteria: 1 });
      const ref = groupAdvantageRef({ ...options, rewards, numCriteria: 1 });
      expectClose(out.advantages, ref.advantages, c.estimator === 'rank' ? RANK_TOL : TOL, `${name} advantages`);
      expectClose(out.groupMean, ref.groupMean, TOL, `${name} group_mean`);
      expectClose(out.groupStd, ref.groupStd, TOL, `${name} group_std`);
      expect([out.zeroStdGroups, out.unscorable, out.unscorableGroups], `${name} counts`).toEqual([ref.zeroStdGroups, ref.unscorable, ref.unscorableGroups]);
      // The twin's intended pattern: batch statistics (GDPO, "batch") poison every scored member.
      const batchWide = options.multiObjectiveAggregation === 'normalize_then_sum' || (options.scaleRewards === 'batch' && options.advantageEstimator === 'grpo');
      ref.advantages.forEach((a, i) => {
        const g = Math.floor(i / G);
        const nan = !missing(i) && (poisonedGroup[g] || (batchWide && (g !== 2 || options.multiObjectiveAggregation === 'normalize_then_sum')));
        expect(Number.isNaN(a), `${name}: advantage ${i}`).toBe(nan);
      });
    }
  });

  it('GDPO: an inf in one (group, criterion) column poisons the batch; a finite batch stays finite', async () => {
    const K = 2;
    const finite = f32([1, 0, 2, 1, 0, 1, 3, 0, /* g1 */ 1, 1, 2, 0, 1, 1, 0, 0]);
    const poisoned = finite.map((x, i) => (i === 3 ? Infinity : x));
    const options = { ...GROUP_ADVANTAGE_DEFAULTS, numGenerations: 4, multiObjectiveAggregation: 'normalize_then_sum' as const };
    for (const [label, rewards] of [['finite', finite], ['inf', poisoned]] as const) {
      const out = await harness.runModule('/test/harness/cases/groupAdvantage.ts', 'groupAdvantage', { ...options, rewards, criteria: K, weights: [1, 0.5] });
      const ref = groupAdvantageRef({ ...options, rewards, numCriteria: K, weights: [1, 0.5] });
      expectClose(out.advantages, ref.advantages, TOL, `${label} advantages`);
      expect(ref.advantages.every((a) => Number.isNaN(a))).toBe(label === 'inf');
      expect(ref.advantages.every((a) => Number.isFinite(a))).toBe(label === 'finite');
    }
  });

  it('rejects bad requests with an error naming the field', async () => {
    const run = (request: unknown) => harness.run('group_advantage', request);
    await expect(run({ num_generations: 2 })).rejects.toThrow(/rewards, rewards_per_criterion: one of them is required/);
    await expect(run({ rewards: [1, 2], rewards_per_criterion: [[1], [2]], num_generations: 2 })).rejects.toThrow(
      /rewards, rewards_per_criterion: give one of them/,
    );
    await expect(run({ rewards: [1, 2] })).rejects.toThrow(/num_generations: is required/);
    await expect(run({ rewards: [1, 2, 3], num_generations: 2 })).rejects.toThrow(/num_generations: 2 does not divide/);
    await expect(run({ rewards: [1, 2], num_generations: 0 })).rejects.toThrow(/num_generations: expected a positive integer/);
    await expect(run({ rewards: [1, 2], num_generations: 2, scale_rewards: 'grp' })).rejects.toThrow(/scale_rewards: expected one of/);
    await expect(run({ rewards: [1, 2], num_generations: 2, eps: -1 })).rejects.toThrow(/eps: must be >= 0/);
    await expect(run({ rewards: [1, 2], num_generations: 2, multi_objective_aggregation: 'mean' })).rejects.toThrow(
      /multi_objective_aggregation: expected one of/,
    );
    await expect(run({ rewards: [1, 2], num_generations: 2, advantage_estimator: 'gae' })).rejects.toThrow(/advantage_estimator: expected one of/);
    await expect(
      run({ rewards: [1, 2], num_generations: 2, advantage_estimator: 'rloo', multi_objective_aggregation: 'normalize_then_sum' }),
    ).rejects.toThrow(/advantage_estimator: "rloo" works only with/);
    await expect(
      run({ rewards: [1, 2], num_generations: 2, advantage_estimator: 'rank', multi_objective_aggregation: 'normalize_then_sum' }),
    ).rejects.toThrow(/advantage_estimator: "rank" works only with/);
    await expect(run({ rewards: [1, 2], num_generations: 2, num_generation: 2 })).rejects.toThrow(/num_generation: unknown field/);
    await expect(run({ rewards: [1, 'x'], num_generations: 2 })).rejects.toThrow(/rewards\[1\]: expected a number or null/);
    await expect(run({ rewards: [1e39, 1], num_generations: 2 })).rejects.toThrow(/rewards\[0\]: 1e\+39 is outside the f32 range/);
    await expect(run({ rewards: [], num_generations: 1 })).rejects.toThrow(/rewards: must not be empty/);
    await expect(run({ rewards_per_criterion: [[1, 2], [3]], num_generations: 2 })).rejects.toThrow(/rewards_per_criterion\[1\]/);
    await expect(run({ rewards_per_criterion: [[1, 2], [3, 4]], reward_weights: [1], num_generations: 2 })).rejects.toThrow(
      /reward_weights: expected 2 values/,
    );
    await expect(run({ rewards: [1, 2], reward_weights: [1], num_generations: 2 })).rejects.toThrow(
      /reward_weights: applies only to rewards_per_criterion/,
    );
  });
});
