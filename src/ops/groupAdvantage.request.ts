// JSON request/response of the `group_advantage` kernel for scripts/kernel.mjs and the tests:
//   in  {rewards?: (number|null)[N] | rewards_per_criterion?: (number|null)[N][K], reward_weights?: number[K],
//        num_generations, scale_rewards?: "group"|"batch"|"none" (or true/false as in TRL),
//        eps? (1e-4), multi_objective_aggregation?: "sum_then_normalize"|"normalize_then_sum",
//        advantage_estimator?: "grpo"|"rank"|"rloo"}
//   out {advantages: number[N], zero_std_groups, unscorable, unscorable_groups,
//        group_mean: (number|null)[B], group_std: (number|null)[B]}
// null marks a missing reward in, and an undefined statistic (no / one valid member) out.
import type { GpuRuntime } from '../gpu/runtime';
import { ADVANTAGE_ESTIMATORS, runGroupAdvantage, type AdvantageEstimator, type MultiObjectiveAggregation, type ScaleRewards } from './groupAdvantage';
import {
  asObject,
  matrix,
  oneOf,
  optionalNumber,
  positiveInteger,
  rejectUnknownFields,
  vector,
  KernelRequestError,
  type JsonObject,
} from './requestFields';

const FIELDS = [
  'rewards',
  'rewards_per_criterion',
  'reward_weights',
  'num_generations',
  'scale_rewards',
  'eps',
  'multi_objective_aggregation',
  'advantage_estimator',
] as const;

/** Rounds to f32 and names the first element that leaves the f32 range (it would become +-Infinity). */
function toF32(values: ArrayLike<number>, name: (i: number) => string): Float32Array {
  const out = new Float32Array(values);
  out.forEach((x, i) => {
    if (!Number.isNaN(values[i]) && !Number.isFinite(x)) {
      throw new KernelRequestError(name(i), `${values[i]} is outside the f32 range`);
    }
  });
  return out;
}

function scaleRewards(obj: JsonObject): ScaleRewards {
  // TRL still accepts booleans: true = "group", false = "none".
  if (obj.scale_rewards === true) return 'group';
  if (obj.scale_rewards === false) return 'none';
  return oneOf(obj, 'scale_rewards', ['group', 'batch', 'none'], 'group');
}

export async function groupAdvantageRequest(rt: GpuRuntime, request: unknown): Promise<object> {
  const obj = asObject(request);
  rejectUnknownFields(obj, FIELDS);
  const hasFlat = obj.rewards !== undefined;
  const hasPerCriterion = obj.rewards_per_criterion !== undefined;
  if (hasFlat === hasPerCriterion) {
    throw new KernelRequestError(
      'rewards, rewards_per_criterion',
      hasFlat ? 'give one of them, not both' : 'one of them is required',
    );
  }

  let rewards: Float32Array;
  let criteria = 1;
  let weights: Float32Array | undefined;
  if (hasFlat) {
    if (obj.reward_weights !== undefined) {
      throw new KernelRequestError('reward_weights', 'applies only to rewards_per_criterion');
    }
    const flat = vector(obj, 'rewards', { nullAs: NaN });
    rewards = toF32(flat, (i) => `rewards[${i}]`);
  } else {
    const m = matrix(obj, 'rewards_per_criterion', { nullAs: NaN });
    criteria = m.cols;
    rewards = toF32(m.data, (i) => `rewards_per_criterion[${Math.floor(i / criteria)}][${i % criteria}]`);
    if (obj.reward_weights !== undefined) {
      weights = toF32(vector(obj, 'reward_weights', {}, criteria), (i) => `reward_weights[${i}]`);
    }
  }
  const rollouts = rewards.length / criteria;

  const numGenerations = positiveInteger(obj, 'num_generations');
  if (rollouts % numGenerations !== 0) {
    throw new KernelRequestError('num_generations', `${numGenerations} does not divide the ${rollouts} rollouts into whole groups`);
  }
  const eps = optionalNumber(obj, 'eps', 1e-4);
  if (eps < 0) throw new KernelRequestError('eps', `must be >= 0, got ${eps}`);
  if (!Number.isFinite(Math.fround(eps))) throw new KernelRequestError('eps', `${eps} is outside the f32 range`);
  const multiObjectiveAggregation = oneOf<MultiObjectiveAggregation>(
    obj,
    'multi_objective_aggregation',
    ['sum_then_normalize', 'normalize_then_sum'],
    'sum_then_normalize',
  );
  const advantageEstimator = oneOf<AdvantageEstimator>(obj, 'advantage_estimator', ADVANTAGE_ESTIMATORS, 'grpo');
  if (advantageEstimator !== 'grpo' && multiObjectiveAggregation === 'normalize_then_sum') {
    throw new KernelRequestError('advantage_estimator', `"${advantageEstimator}" works only with multi_objective_aggregation "sum_then_normalize"`);
  }

  const out = await runGroupAdvantage(rt, {
    rewards,
    criteria,
    weights,
    numGenerations,
    scaleRewards: scaleRewards(obj),
    eps,
    multiObjectiveAggregation,
    advantageEstimator,
  });
  // Written explicitly: Playwright would pass NaN through, JSON would print null; say null always.
  const nullable = (a: Float32Array | undefined) => Array.from(a ?? [], (x) => (Number.isNaN(x) ? null : x));
  return {
    advantages: Array.from(out.advantages ?? []),
    zero_std_groups: out.zeroStdGroups,
    unscorable: out.unscorable,
    unscorable_groups: out.unscorableGroups,
    group_mean: nullable(out.groupMean),
    group_std: nullable(out.groupStd),
  };
}
