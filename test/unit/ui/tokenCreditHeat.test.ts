// The heatmap's token-credit views: span credit and entropy-pivot weight (diverging around 1),
// the final weight × advantage with a flipped sign, and the words for each.
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { buildCharts } from '../../../src/ui/lib/series';
import { contrastRatio, parseHex } from '../../../src/ui/lib/contrast';
import { describeValue, flippedCredit, heatPosition, heatRgb, heatScale, outOfLoss, quantitySpec, TOKEN_QUANTITIES, tokenValues } from '../../../src/ui/lib/tokenHeat';

const r: RolloutRecord = {
  step: 0,
  group: 0,
  index: 0,
  prompt: 'p',
  completion: 'a cat',
  completion_ids: [1, 2, 3],
  logprobs: [-1, -1, -1],
  tokens: ['a', ' c', 'at'],
  token_weight: [0.5, -2, 0],
  token_span_credit: [0.5, 2, 0.5],
  token_entropy_pivot: [1.5, 0.75, 0.75],
  token_cort_contrast: [0, 0.6, -0.3],
  truncated: false,
  results: [],
  scores: [],
  reward: 0.1,
  advantage: -0.4,
};

describe('token-credit heatmap views', () => {
  it('offers a view per weight source', () => {
    expect(TOKEN_QUANTITIES.map((q) => q.id)).toEqual(expect.arrayContaining(['advantage', 'span', 'pivot', 'cort']));
    expect(quantitySpec('span').help).toMatch(/span_credit/);
  });

  it('reads each source; the final view is weight × advantage, flipped tokens positive', () => {
    expect(tokenValues(r, 'span')).toEqual([0.5, 2, 0.5]);
    expect(tokenValues(r, 'pivot')).toEqual([1.5, 0.75, 0.75]);
    expect(tokenValues(r, 'cort')).toEqual([0, 0.6, -0.3]);
    const c = heatScale('cort', [0, 0.6, -0.3]);
    expect(c).toMatchObject({ kind: 'diverging', extent: 0.6 });
    expect(heatPosition(c, -0.3)).toBeCloseTo(-0.5, 12);
    expect(tokenValues(r, 'advantage').map((v) => Number(v!.toFixed(6)))).toEqual([-0.2, 0.8, 0]);
    expect([0, 1, 2].map((i) => flippedCredit(r, i))).toEqual([false, true, false]);
    expect([0, 1, 2].map((i) => outOfLoss(r, i))).toEqual([false, false, true]);
    expect(tokenValues({ ...r, token_span_credit: undefined }, 'span')).toEqual([null, null, null]);
  });

  it('scales around 1: blue above, orange below, white at 1, legible everywhere', () => {
    const s = heatScale('span', [0.5, 2, 0.5]);
    expect(s).toMatchObject({ kind: 'diverging', extent: 1, labels: ['0', '1', '2'] });
    expect(heatPosition(s, 2)).toBe(1);
    expect(heatPosition(s, 1)).toBe(0);
    expect(heatPosition(s, 0.5)).toBe(-0.5);
    expect(heatRgb(s, 0)).toEqual(parseHex('#ffffff'));
    const ink = parseHex('#1b1f24');
    for (let p = -1; p <= 1.0001; p += 0.1) expect(contrastRatio(ink, heatRgb(s, p)!)).toBeGreaterThanOrEqual(4.5);
  });

  it('says what a value is, and why one is missing', () => {
    expect(describeValue('span', 2, false)).toBe('span credit ×2');
    expect(describeValue('pivot', 0.75, true)).toBe('entropy pivot ×0.75 (out of the loss)');
    expect(describeValue('span', null, false)).toMatch(/option is off/);
    expect(describeValue('cort', 0.25, false)).toBe('CoRT contrast 0.25 nats');
  });
});

describe('the CriPO diagnostics chart', () => {
  const m = (step: number, extra: Partial<StepMetrics>) =>
    ({
      step,
      rewards: { reward: 0.5, reward_std: 0.1, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 0, unscorable: 0, aggregations: {} },
      held_out: null,
      completions: { mean_length: 4, min_length: 4, max_length: 4, clipped_ratio: 0 },
      frac_reward_zero_std: 0,
      kl: null,
      entropy: 1,
      clip_ratio_low: 0,
      clip_ratio_high: 0,
      clip_ratio_region: 0,
      sampling_tokens_per_second: 1,
      training_tokens_per_second: 1,
      ...extra,
    }) as StepMetrics;

  it('plots unexplored and suppressed counts per step, only for runs that recorded them', () => {
    const charts = buildCharts([m(0, { unexplored_criteria: 3, suppressed_criteria: 1 }), m(1, { unexplored_criteria: 1, suppressed_criteria: 2 })], [], 0);
    const chart = charts.find((c) => c.id === 'criteria-diagnostics')!;
    expect(chart.ys).toEqual([
      [3, 1],
      [1, 2],
    ]);
    expect(buildCharts([m(0, {})], [], 0).some((c) => c.id === 'criteria-diagnostics')).toBe(false);
  });
});
