// The hacking-onset rule on hand-computed series, and the per-criterion proxy − gold gap.
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { hackingOnset, lsSlope, proxyGoldGap, runHackingOnset } from '../../../src/rl/hackingOnset';
import type { RewardMetrics } from '../../../src/rl/metrics';

describe('lsSlope', () => {
  it('fits the least-squares slope', () => {
    expect(lsSlope([0, 1, 2], [1, 2, 3])).toBe(1);
    // ys 0, 1, 0: symmetric about x̄ = 1, so the slope is 0
    expect(lsSlope([0, 1, 2], [0, 1, 0])).toBe(0);
    // ys 3, 1, 2 over x 0, 2, 4: x̄ = 2, ȳ = 2, Σ = (−2)(1) + 0 + (2)(0) = −2, Σx² = 8 → −0.25
    expect(lsSlope([0, 2, 4], [3, 1, 2])).toBe(-0.25);
    expect(lsSlope([1], [1])).toBeNull();
    expect(lsSlope([2, 2], [1, 3])).toBeNull();
  });
});

describe('hackingOnset', () => {
  const steps = [0, 1, 2, 3, 4, 5, 6];
  // proxy keeps rising; gold rises to step 3, then falls.
  const proxy = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
  const gold = [0.1, 0.2, 0.3, 0.35, 0.3, 0.2, 0.1];

  it('finds the first window where the proxy rises and the gold falls (w = 3)', () => {
    // Windows ending at 2: gold slope +0.1; at 3: (0.35−0.2)/2 > 0; at 4: (0.3−0.3)/2 = 0, not < 0;
    // at 5: (0.2−0.35)/2 = −0.075 < 0 with the proxy's +0.1: onset at step 5.
    const onset = hackingOnset(steps, proxy, gold);
    expect(onset?.step).toBe(5);
    expect(onset?.proxySlope).toBeCloseTo(0.1, 12);
    expect(onset?.goldSlope).toBeCloseTo(-0.075, 12);
  });

  it('uses the window it is given', () => {
    // w = 2: the slope is the last difference; the gold first falls from step 3 to 4.
    expect(hackingOnset(steps, proxy, gold, 2)?.step).toBe(4);
    // w = 5 ending at 6: gold 0.35, 0.3, 0.2, 0.1 and 0.3 at the start: slope < 0 only at step 6.
    expect(hackingOnset(steps, proxy, gold, 5)?.step).toBe(6);
  });

  it('says none when both fall, both rise, or the proxy is flat', () => {
    expect(hackingOnset(steps, gold, gold)).toBeNull();
    expect(hackingOnset(steps, proxy, proxy)).toBeNull();
    expect(hackingOnset(steps, Array(7).fill(0.5), gold)).toBeNull();
    expect(hackingOnset([0, 1], [0, 1], [1, 0])).toBeNull(); // fewer steps than the window
  });

  it('skips windows with a missing value and fits against step numbers', () => {
    const g = [...gold];
    g[5] = null as unknown as number;
    // Windows touching step 5 are not judged; the window 4..6 is skipped too, so no onset.
    expect(hackingOnset(steps, proxy, g)).toBeNull();
    // Uneven steps: proxy 0, 1, 2 at steps 0, 1, 10 still rises; gold 1, 1, 0 falls.
    expect(hackingOnset([0, 1, 10], [0, 1, 2], [1, 1, 0])?.step).toBe(10);
  });

  it('refuses a window below 2', () => {
    expect(() => hackingOnset(steps, proxy, gold, 1)).toThrow(/window must be an integer >= 2/);
  });
});

function reward(reward: number | null, means: Record<string, number | null>): RewardMetrics {
  return { reward, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: means, strict_completion_rate: 0, unscorable: 0, aggregations: {} };
}
const step = (s: number, proxy: RewardMetrics, gold: RewardMetrics | null) => ({ step: s, rewards: proxy, held_out: gold }) as unknown as StepMetrics;

describe('run metrics', () => {
  it('runHackingOnset reads rewards.reward against held_out.reward, and is null without a held-out rubric', () => {
    const ms = [0.1, 0.3, 0.5, 0.7].map((p, i) => step(i, reward(p, {}), reward([0.5, 0.6, 0.5, 0.3][i], {})));
    expect(runHackingOnset(ms)?.step).toBe(3); // gold slope over 1..3 is (0.3 − 0.6)/2 < 0; over 0..2 it is 0
    expect(runHackingOnset(ms.map((m) => ({ ...m, held_out: null })))).toBeNull();
  });

  it('proxyGoldGap: proxy − gold mean score for the criteria both rubrics share', () => {
    const m = step(0, reward(0.5, { a: 0.9, b: 0.4, only_proxy: 1, c: null }), reward(0.3, { a: 0.5, b: 0.6, only_gold: 0, c: 0.2 }));
    const gap = proxyGoldGap(m);
    expect(Object.keys(gap).sort()).toEqual(['a', 'b', 'c']);
    expect(gap.a).toBeCloseTo(0.4, 12);
    expect(gap.b).toBeCloseTo(-0.2, 12);
    expect(gap.c).toBeNull();
    expect(proxyGoldGap(step(0, reward(0.5, { a: 1 }), null))).toEqual({});
  });
});
