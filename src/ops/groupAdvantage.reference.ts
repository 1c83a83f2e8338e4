// Float64 reference twin of shaders/group_advantage.wgsl (see its header for the math).
// Written for clarity; tests compare the WGSL kernel against it. NaN marks a missing reward;
// +-Infinity is a value that poisons its statistics: NaN means, stds and advantages wherever
// it is used (see the kernel's header), so the trainer skips the step.
import type { GroupAdvantageOptions } from './groupAdvantage';

export interface GroupAdvantageProblem extends GroupAdvantageOptions {
  /** Row-major [N, K] rewards, N = B * numGenerations; NaN = missing. */
  rewards: ArrayLike<number>;
  /** K, the number of criteria (1 for a plain reward vector). */
  numCriteria: number;
  /** [K] weights; all 1 when absent. */
  weights?: ArrayLike<number>;
}

export interface GroupAdvantageResult {
  advantages: Float64Array;
  /** Groups with a valid member whose rewards carry no signal (one member, or all equal). */
  zeroStdGroups: number;
  /** Rollouts without a reward (every criterion missing). */
  unscorable: number;
  /** Groups without any valid member (not counted as zero-std). */
  unscorableGroups: number;
  /** [B] mean of the combined reward r over each group's valid members; NaN when none or poisoned. */
  groupMean: Float64Array;
  /** [B] unbiased std of r over each group's valid members; NaN when fewer than 2 or poisoned. */
  groupStd: Float64Array;
}

interface Stats {
  n: number;
  mean: number;
  /** Unbiased; NaN when n < 2. */
  std: number;
  min: number;
  max: number;
  /** A valid value is +-Infinity or NaN: every statistic is NaN. */
  poisoned: boolean;
}

/** null marks a missing value (a NaN reward, an unscorable rollout). */
type Value = number | null;

/** Two-pass statistics of the values that are not missing. */
function statsOf(values: readonly Value[]): Stats {
  const valid = values.filter((x): x is number => x !== null);
  const n = valid.length;
  const poisoned = valid.some((x) => !Number.isFinite(x));
  if (n === 0 || poisoned) return { n, mean: NaN, std: NaN, min: NaN, max: NaN, poisoned };
  const mean = valid.reduce((s, x) => s + x, 0) / n;
  const std = n < 2 ? NaN : Math.sqrt(valid.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  // reduce, not Math.min(...valid): a spread of a large batch overflows the call stack.
  return { n, mean, std, min: valid.reduce((a, b) => Math.min(a, b)), max: valid.reduce((a, b) => Math.max(a, b)), poisoned };
}

/** One valid member, or all equal: exact test, robust where isclose(std, 0) is not. Never when poisoned. */
function isZeroStd(s: Stats): boolean {
  return s.n >= 1 && !s.poisoned && (s.n === 1 || s.max === s.min);
}

/** x / d, or 0 where d is 0 (only possible with eps = 0 and an underflowed std). */
function safeDivide(x: number, d: number): number {
  return d > 0 ? x / d : 0;
}

export function groupAdvantageRef(p: GroupAdvantageProblem): GroupAdvantageResult {
  const K = p.numCriteria;
  const G = p.numGenerations;
  if (!Number.isInteger(K) || K < 1) throw new RangeError(`numCriteria must be a positive integer, got ${K}`);
  if (p.rewards.length % K !== 0) throw new RangeError(`rewards has ${p.rewards.length} values, not a multiple of K = ${K}`);
  const N = p.rewards.length / K;
  if (!Number.isInteger(G) || G < 1 || N % G !== 0) {
    throw new RangeError(`num_generations = ${G} must be a positive integer dividing the ${N} rollouts`);
  }
  if (p.advantageEstimator !== 'grpo' && p.multiObjectiveAggregation === 'normalize_then_sum') {
    throw new RangeError(`advantage_estimator "${p.advantageEstimator}" works only with multi_objective_aggregation "sum_then_normalize"`);
  }
  const B = N / G;
  const w = p.weights ?? new Array<number>(K).fill(1);
  const reward = (i: number, k: number): Value => (Number.isNaN(p.rewards[i * K + k]) ? null : p.rewards[i * K + k]);
  const gdpo = p.multiObjectiveAggregation === 'normalize_then_sum';

  // Combined reward per rollout; null when unscorable.
  const r: Value[] = new Array<Value>(N).fill(null);
  const gdpoZero: boolean[] = [];
  if (!gdpo) {
    for (let i = 0; i < N; i++) {
      let acc = 0;
      let any = false;
      for (let k = 0; k < K; k++) {
        const x = reward(i, k);
        if (x === null) continue;
        acc += w[k] * x;
        any = true;
      }
      if (any) r[i] = acc;
    }
  } else {
    for (let g = 0; g < B; g++) {
      const column = (k: number) => Array.from({ length: G }, (_, j) => reward(g * G + j, k));
      const perCriterion = Array.from({ length: K }, (_, k) => statsOf(column(k)));
      // Every criterion is zero-std or has no valid entry (and the group has some entry).
      gdpoZero[g] = perCriterion.some((s) => s.n > 0) && perCriterion.every((s) => s.n === 0 || isZeroStd(s));
      for (let j = 0; j < G; j++) {
        const i = g * G + j;
        let acc = 0;
        let any = false;
        for (let k = 0; k < K; k++) {
          const x = reward(i, k);
          if (x === null) continue;
          any = true;
          const s = perCriterion[k];
          if (s.poisoned) acc = NaN;
          else if (!isZeroStd(s)) acc += w[k] * safeDivide(x - s.mean, s.std + p.eps);
        }
        if (any) r[i] = acc;
      }
    }
  }

  const groups = Array.from({ length: B }, (_, g) => statsOf(r.slice(g * G, (g + 1) * G)));
  const zero = groups.map((s, g) => (gdpo ? gdpoZero[g] : isZeroStd(s)));
  const batch = statsOf(r);

  const advantages = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    const g = Math.floor(i / G);
    const s = groups[g];
    const ri = r[i];
    if (ri === null) continue;
    if (gdpo) {
      if (batch.poisoned) advantages[i] = NaN;
      else if (batch.n >= 2 && batch.max !== batch.min) advantages[i] = safeDivide(ri - batch.mean, batch.std + p.eps);
      continue;
    }
    if (s.n === 0 || zero[g]) continue;
    const batchScaled = p.advantageEstimator === 'grpo' && p.scaleRewards === 'batch';
    if (s.poisoned || (batchScaled && batch.poisoned)) {
      advantages[i] = NaN;
    } else if (p.advantageEstimator === 'rank') {
      let less = 0;
      let equal = 0;
      for (let j = g * G; j < (g + 1) * G; j++) {
        const rj = r[j];
        if (rj === null) continue;
        if (rj < ri) less++;
        if (rj === ri) equal++;
      }
      const rank = less + (equal - 1) / 2;
      const half = (s.n - 1) / 2;
      advantages[i] = (rank - half) / half;
    } else if (p.advantageEstimator === 'rloo') {
      // TRL RLOOTrainer: r_i minus the mean of the group's other (valid) members.
      let others = 0;
      for (let j = g * G; j < (g + 1) * G; j++) {
        const rj = r[j];
        if (rj !== null && j !== i) others += rj;
      }
      advantages[i] = ri - others / (s.n - 1);
    } else if (p.scaleRewards === 'none') {
      advantages[i] = ri - s.mean;
    } else {
      const sigma = p.scaleRewards === 'batch' ? batch.std : s.std;
      advantages[i] = safeDivide(ri - s.mean, sigma + p.eps);
    }
  }

  return {
    advantages,
    zeroStdGroups: zero.filter(Boolean).length,
    unscorable: r.filter((x) => x === null).length,
    unscorableGroups: groups.filter((s) => s.n === 0).length,
    groupMean: Float64Array.from(groups, (s) => s.mean),
    groupStd: Float64Array.from(groups, (s) => s.std),
  };
}
