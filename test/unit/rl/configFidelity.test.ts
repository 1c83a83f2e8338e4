// The aggregation options the code supports are accepted by the config and reach the reward;
// GDPO is refused with aggregations that are not a weighted sum of criterion scores.
import { describe, expect, it } from 'vitest';
import { gdpoAggregationIssue, parseGrpoConfig } from '../../../src/rl/config';
import { ROLLOUT_AGGREGATIONS } from '../../../src/rubric/aggregate';
import { aggregateGroup, ROLLOUT_AGGREGATION_NAMES } from '../../../src/rubric/aggregations';
import { weighted } from '../rubric/fixtures';

const EXACT = 12;

describe('reward_aggregation options', () => {
  it('names every per-rollout aggregation as a rubric_dropout base', () => {
    expect([...ROLLOUT_AGGREGATION_NAMES].sort()).toEqual(Object.keys(ROLLOUT_AGGREGATIONS).sort());
  });

  it('gate_base changes what essential_gated caps', () => {
    // essential w=2 scores 0.4 (not met), important w=1 scores 0.8 (met); cap 1 (no cap in effect).
    const R = weighted([[2, 'essential'], [1, 'important']]);
    const scores = [[0.4, 0.8]];
    const mean = parseGrpoConfig({ reward_aggregation: { method: 'essential_gated', gate_cap: 1 } }).reward_aggregation;
    const points = parseGrpoConfig({ reward_aggregation: { method: 'essential_gated', gate_cap: 1, gate_base: 'healthbench_points' } }).reward_aggregation;
    expect(points.gate_base).toBe('healthbench_points');
    expect(aggregateGroup(R, scores, mean).rewards[0]).toBeCloseTo((2 * 0.4 + 0.8) / 3, EXACT); // 0.5333
    expect(aggregateGroup(R, scores, points).rewards[0]).toBeCloseTo(1 / 3, EXACT); // only the important point
  });

  it('dropout_aggregation applies the chosen aggregation to the kept criteria', () => {
    // p = 0 keeps every criterion: strict_all_required fails on the important criterion (0.2 < 0.5).
    const R = weighted([[1, 'essential'], [1, 'important'], [1, 'optional']]);
    const scores = [[1, 0.2, 0.9]];
    const ctx = { seed: 1, step: 0, group: 0 };
    const strict = parseGrpoConfig({ reward_aggregation: { method: 'rubric_dropout', dropout_p: 0, dropout_aggregation: 'strict_all_required' } }).reward_aggregation;
    const mean = parseGrpoConfig({ reward_aggregation: { method: 'rubric_dropout', dropout_p: 0 } }).reward_aggregation;
    expect(aggregateGroup(R, scores, strict, ctx).rewards).toEqual([0]);
    expect(aggregateGroup(R, scores, mean, ctx).rewards[0]).toBeCloseTo(2.1 / 3, EXACT);
  });

  it('adaptive_tier_balance false drops the per-tier rescaling', () => {
    // Spreads (population std): c0 0.5, c1 0.5, c2 0 → multipliers 1, 1, 0.1 (floor 0.1) → u = 2, 1, 0.1.
    // Balanced: the important tier (human 2, adapted 1.1) becomes 20/11, 2/11 → r0 = (2 + 20/11) / 4 = 21/22.
    // Unbalanced: r0 = (2 + 1) / 3.1 = 30/31.
    const R = weighted([[2, 'essential'], [1, 'important'], [1, 'important']]);
    const group = [[1, 1, 0], [0, 0, 0]];
    const on = parseGrpoConfig({ reward_aggregation: { method: 'adaptive_weights' } }).reward_aggregation;
    const off = parseGrpoConfig({ reward_aggregation: { method: 'adaptive_weights', adaptive_tier_balance: false } }).reward_aggregation;
    expect(aggregateGroup(R, group, on).rewards[0]).toBeCloseTo(21 / 22, EXACT);
    expect(aggregateGroup(R, group, off).rewards[0]).toBeCloseTo(30 / 31, EXACT);
  });

  it('rejects bad values with the option name', () => {
    expect(() => parseGrpoConfig({ reward_aggregation: { method: 'essential_gated', gate_base: 'strict_all_required' } })).toThrow(/reward_aggregation\.gate_base/);
    expect(() => parseGrpoConfig({ reward_aggregation: { method: 'rubric_dropout', dropout_aggregation: 'rubric_dropout' } })).toThrow(/reward_aggregation\.dropout_aggregation/);
    expect(() => parseGrpoConfig({ reward_aggregation: { method: 'adaptive_weights', adaptive_tier_balance: 'yes' } })).toThrow(/reward_aggregation\.adaptive_tier_balance/);
  });
});

describe('normalize_then_sum (GDPO) with reward aggregations', () => {
  it('is accepted with weighted_mean and with rubric_dropout over weighted_mean', () => {
    expect(parseGrpoConfig({ multi_objective_aggregation: 'normalize_then_sum' }).reward_aggregation.method).toBe('weighted_mean');
    expect(() => parseGrpoConfig({ multi_objective_aggregation: 'normalize_then_sum', reward_aggregation: { method: 'rubric_dropout' } })).not.toThrow();
    expect(() => parseGrpoConfig({ multi_objective_aggregation: 'normalize_then_sum', reward_aggregation: { method: 'rubric_dropout', dropout_aggregation: 'weighted_mean' } })).not.toThrow();
  });

  it.each(['healthbench_points', 'essential_gated', 'strict_all_required', 'adaptive_weights', 'correlation_weights', 'fork_precision_recall', 'irt_ability'])('is refused with %s, saying why and what to use', (method) => {
    expect(() => parseGrpoConfig({ multi_objective_aggregation: 'normalize_then_sum', reward_aggregation: { method } })).toThrow(
      new RegExp(`multi_objective_aggregation: .*reward_aggregation "${method}" is not one .*"sum_then_normalize" with "${method}"`),
    );
    expect(() => parseGrpoConfig({ multi_objective_aggregation: 'sum_then_normalize', reward_aggregation: { method } })).not.toThrow();
  });

  it('is refused with rubric_dropout over another aggregation', () => {
    expect(gdpoAggregationIssue('normalize_then_sum', { method: 'rubric_dropout', dropout_aggregation: 'essential_gated' })).toMatch(/rubric_dropout over "essential_gated"/);
    expect(gdpoAggregationIssue('sum_then_normalize', { method: 'rubric_dropout', dropout_aggregation: 'essential_gated' })).toBeNull();
  });
});
