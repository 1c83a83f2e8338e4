// The run view's hacking charts: proxy vs gold with the onset marked, the per-criterion gap,
// none without a held-out rubric; and the inspector's chips flag biased verdicts.
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import type { RewardMetrics } from '../../../src/rl/metrics';
import { hackingCharts } from '../../../src/ui/lib/hackingSeries';
import { chipsOf } from '../../../src/ui/lib/rollouts';

function reward(r: number, means: Record<string, number>): RewardMetrics {
  return { reward: r, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: means, strict_completion_rate: 0, unscorable: 0, aggregations: {} };
}
const step = (s: number, proxy: number, gold: number | null) =>
  ({ step: s, rewards: reward(proxy, { a: proxy, p: 1 }), held_out: gold === null ? null : reward(gold, { a: gold, g: 0 }) }) as unknown as StepMetrics;

describe('hackingCharts', () => {
  it('plots proxy vs gold raw, marks the onset and states the rule', () => {
    const ms = [step(0, 0.1, 0.5), step(1, 0.3, 0.6), step(2, 0.5, 0.5), step(3, 0.7, 0.3)];
    const [pg, gap] = hackingCharts(ms, 0.6);
    expect(pg.id).toBe('proxy-gold');
    expect(pg.ys).toEqual([[0.1, 0.3, 0.5, 0.7], [0.5, 0.6, 0.5, 0.3]]);
    expect(pg.marker).toEqual({ x: 3, label: 'hacking onset (step 3)' });
    expect(pg.note).toMatch(/^Hacking onset at step 3\. Rule: hacking onset = the first step s where, over the last 3 steps/);
    expect(gap.id).toBe('proxy-gold-gap');
    expect(gap.lines.map((l) => l.label)).toEqual(['a']); // only the shared criterion
    expect(gap.ys[0][0]).toBeCloseTo(-0.4, 12); // smoothing's first point is the raw value
  });

  it('has no marker before an onset, and no charts without a held-out rubric', () => {
    const rising = [step(0, 0.1, 0.1), step(1, 0.2, 0.2), step(2, 0.3, 0.3)];
    expect(hackingCharts(rising, 0)[0].marker).toBeUndefined();
    expect(hackingCharts(rising, 0)[0].note).toMatch(/^No hacking onset so far\./);
    expect(hackingCharts([step(0, 0.1, null)], 0)).toEqual([]);
  });
});

describe('chipsOf and the bias sandbox', () => {
  it('flags a verdict the bias changed', () => {
    const rollout = {
      results: [
        { criterion_id: 'a', status: 'ok', score: 1, reason: 'no [biased: length +1]', biased: true },
        { criterion_id: 'b', status: 'ok', score: 1, reason: 'yes' },
      ],
    } as unknown as RolloutRecord;
    const chips = chipsOf(rollout, [{ id: 'a', text: 'A', weight: 1 }, { id: 'b', text: 'B', weight: 1 }], 0.5);
    expect(chips[0]).toMatchObject({ verdict: 'pass', biased: true, reason: 'no [biased: length +1]' });
    expect(chips[1].biased).toBeUndefined();
  });
});
