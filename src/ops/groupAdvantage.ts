// Launcher for shaders/group_advantage.wgsl: GRPO group-relative advantages (TRL semantics,
// research/anchors-grpo-trainers.md 3.2), one workgroup, one dispatch. The advantages stay on
// the GPU for the policy-loss kernel; only the counts (and, when asked, advantages and group
// statistics) are read back.
import code from '../../shaders/group_advantage.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const KERNEL: KernelSpec = {
  name: 'group_advantage',
  code,
  entryPoint: 'main',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage', 'storage', 'storage', 'storage', 'storage'],
};

/** Words in the stats buffer: zero_std_groups, unscorable, unscorable_groups, scorable. */
const STATS_WORDS = 4;

export type ScaleRewards = 'group' | 'batch' | 'none';
export type MultiObjectiveAggregation = 'sum_then_normalize' | 'normalize_then_sum';
export type AdvantageEstimator = 'grpo' | 'rank' | 'rloo';
/** Every estimator; "rank" and "rloo" ignore scale_rewards and eps and need sum_then_normalize. */
export const ADVANTAGE_ESTIMATORS: readonly AdvantageEstimator[] = ['grpo', 'rank', 'rloo'];

/** TRL GRPOConfig names, camel-cased. */
export interface GroupAdvantageOptions {
  numGenerations: number;
  /** Ignored by normalize_then_sum (GDPO) and by the rank and rloo estimators. */
  scaleRewards: ScaleRewards;
  /** Added to the std before dividing; >= 0. */
  eps: number;
  multiObjectiveAggregation: MultiObjectiveAggregation;
  /** "rank" and "rloo" need sum_then_normalize. */
  advantageEstimator: AdvantageEstimator;
}

export const GROUP_ADVANTAGE_DEFAULTS: Omit<GroupAdvantageOptions, 'numGenerations'> = {
  scaleRewards: 'group',
  eps: 1e-4,
  multiObjectiveAggregation: 'sum_then_normalize',
  advantageEstimator: 'grpo',
};

export interface GroupAdvantageShape extends GroupAdvantageOptions {
  /** Rollouts N = B * numGenerations. */
  rollouts: number;
  /** Criteria K per rollout (1 for a plain reward vector). */
  criteria: number;
}

/** GPU buffers the kernel produces (pooled: release them when done). */
export interface GroupAdvantageBuffers {
  /** [N] f32 advantages; NaN for scored members of a group (or batch) holding an +-inf reward. */
  advantages: GPUBuffer;
  /** [2B] f32: group means, then group unbiased stds of the combined reward; NaN when undefined. */
  groupStats: GPUBuffer;
  /** [4] u32: zero_std_groups, unscorable, unscorable_groups, scorable. */
  stats: GPUBuffer;
}

export function validateGroupAdvantageShape(shape: GroupAdvantageShape, maxBindingBytes: number): void {
  const { rollouts: n, criteria: k, numGenerations: g, eps } = shape;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`criteria must be a positive integer, got ${k}`);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`rewards must hold at least one rollout, got ${n}`);
  if (!Number.isInteger(g) || g < 1) throw new RangeError(`num_generations must be a positive integer, got ${g}`);
  if (n % g !== 0) throw new RangeError(`num_generations = ${g} does not divide the ${n} rollouts into whole groups`);
  if (!(eps >= 0) || !Number.isFinite(eps)) throw new RangeError(`eps must be a finite number >= 0, got ${eps}`);
  if (!ADVANTAGE_ESTIMATORS.includes(shape.advantageEstimator)) {
    throw new RangeError(`advantage_estimator must be one of ${ADVANTAGE_ESTIMATORS.join(', ')}, got ${String(shape.advantageEstimator)}`);
  }
  if (shape.advantageEstimator !== 'grpo' && shape.multiObjectiveAggregation === 'normalize_then_sum') {
    throw new RangeError(`advantage_estimator "${shape.advantageEstimator}" works only with multi_objective_aggregation "sum_then_normalize"`);
  }
  // The largest binding is the rewards [N, K] or the scratch [N + 2 B K]; u32 indices stay in range below 2^32 bytes.
  const words = Math.max(n * k, n + 2 * (n / g) * k);
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  if (words * 4 > limit) {
    throw new RangeError(
      `${n} rollouts x ${k} criteria need ${words * 4} bytes in one binding, over this GPU's limit of ${limit} bytes; ` +
        'compute advantages for fewer rollouts (whole groups) at a time',
    );
  }
}

/**
 * Records the advantage computation. `rewards` is [N, K] f32 with NaN for a missing value;
 * `weights` is [K] f32. Output buffers come from the pool; scratch lives until submit.
 */
export function recordGroupAdvantage(
  rt: GpuRuntime,
  rec: Recorder,
  rewards: GPUBuffer,
  weights: GPUBuffer,
  shape: GroupAdvantageShape,
): GroupAdvantageBuffers {
  validateGroupAdvantageShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const n = shape.rollouts;
  const groups = n / shape.numGenerations;
  const gdpo = shape.multiObjectiveAggregation === 'normalize_then_sum';
  const pairs = gdpo ? groups * shape.criteria : 0;
  const advantages = rt.storage(n * 4, 'group_advantage.advantages');
  const groupStats = rt.storage(2 * groups * 4, 'group_advantage.group_stats');
  const stats = rt.storage(STATS_WORDS * 4, 'group_advantage.stats');
  const work = rec.scratch((n + 2 * pairs) * 4, 'group_advantage.work');
  const flags = rec.scratch((groups + pairs) * 4, 'group_advantage.flags');
  const params = rec.uniform(paramsFor(shape));
  // One workgroup: N is hundreds to thousands, and one group of threads keeps every phase's
  // barrier inside the dispatch.
  rec.dispatch(rt.pipeline(KERNEL), [params, rewards, weights, advantages, groupStats, stats, work, flags], 1);
  return { advantages, groupStats, stats };
}

function paramsFor(shape: GroupAdvantageShape): Uint32Array {
  const data = new ArrayBuffer(32);
  const u32 = new Uint32Array(data);
  u32[0] = shape.rollouts;
  u32[1] = shape.numGenerations;
  u32[2] = shape.rollouts / shape.numGenerations;
  u32[3] = shape.criteria;
  u32[4] = shape.multiObjectiveAggregation === 'normalize_then_sum' ? 1 : 0;
  u32[5] = { group: 0, batch: 1, none: 2 }[shape.scaleRewards];
  u32[6] = ADVANTAGE_ESTIMATORS.indexOf(shape.advantageEstimator);
  new Float32Array(data)[7] = shape.eps;
  return u32;
}

export interface GroupAdvantageHostInput extends GroupAdvantageOptions {
  /** Row-major [N, K]; NaN = missing. */
  rewards: Float32Array;
  /** K (1 for a plain reward vector). */
  criteria: number;
  /** [K]; all 1 when absent. */
  weights?: Float32Array;
  /** Read the advantages back (default true). */
  readAdvantages?: boolean;
  /** Read the group means and stds back (default true). */
  readGroupStats?: boolean;
}

export interface GroupAdvantageHostOutput {
  advantages?: Float32Array;
  zeroStdGroups: number;
  unscorable: number;
  unscorableGroups: number;
  /** Rollouts with a reward (the batch statistics' count). */
  scorable: number;
  groupMean?: Float32Array;
  groupStd?: Float32Array;
}

/** Host arrays in, host arrays out, one submission. For the kernel runner, tests and benchmarks. */
export async function runGroupAdvantage(rt: GpuRuntime, input: GroupAdvantageHostInput): Promise<GroupAdvantageHostOutput> {
  const k = input.criteria;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`criteria must be a positive integer, got ${k}`);
  if (input.rewards.length % k !== 0) {
    throw new RangeError(`rewards has ${input.rewards.length} values, not a multiple of ${k} criteria`);
  }
  const weights = input.weights ?? new Float32Array(k).fill(1);
  if (weights.length !== k) throw new RangeError(`reward_weights has ${weights.length} values, expected ${k}`);
  const shape: GroupAdvantageShape = { ...input, rollouts: input.rewards.length / k };
  validateGroupAdvantageShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const groups = shape.rollouts / input.numGenerations;

  const rec = rt.recorder('group_advantage');
  const rewardsBuf = rt.upload(input.rewards, 'rewards');
  const weightsBuf = rt.upload(weights, 'reward_weights');
  const owned = [rewardsBuf, weightsBuf];
  try {
    const out = recordGroupAdvantage(rt, rec, rewardsBuf, weightsBuf, shape);
    owned.push(out.advantages, out.groupStats, out.stats);
    const stats = rec.readU32(out.stats, STATS_WORDS);
    const advantages = input.readAdvantages === false ? undefined : rec.readF32(out.advantages, shape.rollouts);
    const groupStats = input.readGroupStats === false ? undefined : rec.readF32(out.groupStats, 2 * groups);
    await rec.submit();
    const s = await stats;
    const gs = groupStats && (await groupStats);
    return {
      advantages: advantages && (await advantages),
      zeroStdGroups: s[0],
      unscorable: s[1],
      unscorableGroups: s[2],
      scorable: s[3],
      groupMean: gs?.subarray(0, groups),
      groupStd: gs?.subarray(groups, 2 * groups),
    };
  } finally {
    rt.release(...owned);
  }
}
