// Page side of the non-finite cases in test/browser/groupAdvantage.test.ts: host arrays straight
// into the launcher, since JSON requests cannot carry the +-Infinity rewards these cases need.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { runGroupAdvantage, type GroupAdvantageOptions } from '../../../src/ops/groupAdvantage';

export interface GroupAdvantageCase extends GroupAdvantageOptions {
  /** Row-major [N, K]; NaN = missing. */
  rewards: number[];
  criteria: number;
  weights?: number[];
}

export async function groupAdvantage(rt: GpuRuntime, c: GroupAdvantageCase) {
  const out = await runGroupAdvantage(rt, {
    ...c,
    rewards: new Float32Array(c.rewards),
    weights: c.weights ? new Float32Array(c.weights) : undefined,
  });
  return {
    advantages: Array.from(out.advantages ?? []),
    zeroStdGroups: out.zeroStdGroups,
    unscorable: out.unscorable,
    unscorableGroups: out.unscorableGroups,
    groupMean: Array.from(out.groupMean ?? []),
    groupStd: Array.from(out.groupStd ?? []),
  };
}
