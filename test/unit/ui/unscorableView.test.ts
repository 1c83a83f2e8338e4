// What the run view says about judge failures: the warning from the steps' metrics, and charts
// that say "no reward could be computed" (not "no data yet") when steps exist without rewards.
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';
import { buildCharts, lastValues } from '../../../src/ui/lib/series';
import { unscorableWarning } from '../../../src/ui/lib/unscorable';
import { metrics as base } from '../store/fixtures';

/** A step where `bad` of 4 rollouts had no reward (threshold 0.5). */
function step(s: number, bad: number, reward: number | null = bad === 4 ? null : 0.5): StepMetrics {
  const rollouts = Array.from({ length: 4 }, (_, i) => ({
    results: [i < bad ? { criterion_id: 'polite', status: 'unscorable' as const, score: null, reason: `HTTP 500 from the endpoint at step ${s}` } : { criterion_id: 'polite', status: 'ok' as const, score: 1, reason: 'yes' }],
    reward: i < bad ? null : 1,
  }));
  const m = base(s);
  return {
    ...m,
    rewards: { ...m.rewards, reward, reward_std: reward === null ? null : 0.1, criterion_pass_rate: { polite: reward === null ? null : 1 }, unscorable: bad },
    judge_failures: judgeFailureMetrics(rollouts, 0.5),
  };
}

describe('judge-failure warning', () => {
  it('none while every step is under the threshold, or for steps saved before the metrics existed', () => {
    expect(unscorableWarning([step(0, 0), step(1, 2)])).toBeNull();
    expect(unscorableWarning([base(0)])).toBeNull();
  });

  it('names the latest flagged step with its count and first reason, and how many steps were flagged', () => {
    const w = unscorableWarning([step(0, 4), step(1, 1), step(2, 3)])!;
    expect(w.step).toBe(2);
    expect(w.message).toBe('3 of 4 rollouts had no reward at step 2 (3 of 4 criterion verdicts failed): criterion "polite": HTTP 500 from the endpoint at step 2');
    expect(w.flagged).toBe(2);
    expect(w.steps).toBe(3);
    expect(w.recovered).toBe(false);
    expect(unscorableWarning([step(0, 4), step(1, 0)])!.recovered).toBe(true);
  });
});

describe('charts without rewards', () => {
  it('say that no reward could be computed when steps exist but every reward is null', () => {
    const charts = buildCharts([step(0, 4), step(1, 4)], ['polite'], 0);
    const reward = charts.find((c) => c.id === 'reward')!;
    expect(lastValues(reward)).toMatch(/^No reward could be computed/);
    expect(lastValues(charts.find((c) => c.id === 'pass-rates')!)).toMatch(/^No criterion could be scored/);
    // Before any step it is still "no data yet"; with a reward, the last value.
    expect(lastValues(buildCharts([], ['polite'], 0).find((c) => c.id === 'reward')!)).toBe('no data yet');
    expect(lastValues(buildCharts([step(0, 1)], ['polite'], 0).find((c) => c.id === 'reward')!)).toBe('reward mean 0.5 at step 0');
  });
});
