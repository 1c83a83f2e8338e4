import { describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS, parseGrpoConfig } from '../../../src/rl/config';

describe('GRPO config', () => {
  it('uses TRL GRPOConfig defaults', () => {
    expect(GRPO_DEFAULTS).toMatchObject({
      num_generations: 8,
      loss_type: 'dapo',
      beta: 0,
      epsilon: 0.2,
      epsilon_high: null,
      scale_rewards: 'group',
      num_iterations: 1,
      importance_sampling_level: 'token',
      temperature: 1,
      top_p: 1,
      top_k: 0,
      mask_truncated_completions: false,
      top_entropy_quantile: 1,
      entropy_coef: 0,
      learning_rate: 1e-6,
      multi_objective_aggregation: 'sum_then_normalize',
      seed: 42,
    });
  });

  it('rejects bad values and combinations with the option name', () => {
    expect(() => parseGrpoConfig({ num_generations: 1 })).toThrow(/num_generations/);
    expect(() => parseGrpoConfig({ num_generations: 4, generation_batch_size: 10 })).toThrow(/generation_batch_size: must be a multiple of num_generations \(4\)/);
    expect(() => parseGrpoConfig({ loss_type: 'ppo' })).toThrow(/loss_type/);
    expect(() => parseGrpoConfig({ advantage_estimator: 'rank', multi_objective_aggregation: 'normalize_then_sum' })).toThrow(/advantage_estimator: "rank" cannot be combined/);
    expect(() => parseGrpoConfig({ advantage_estimator: 'rloo', multi_objective_aggregation: 'normalize_then_sum' })).toThrow(/advantage_estimator: "rloo" cannot be combined/);
    expect(() => parseGrpoConfig({ dual_clip: 0.5 })).toThrow(/dual_clip/);
    expect(() => parseGrpoConfig({ lr: 0.1 })).toThrow(/unknown option\(s\) lr/);
    expect(() => parseGrpoConfig({ reward_aggregation: { method: 'median' } })).toThrow(/reward_aggregation\.method/);
  });

  it('keeps what the user set', () => {
    const c = parseGrpoConfig({ epsilon_high: 0.28, learning_rate: 5e-4, reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.2 } });
    expect(c.epsilon_high).toBe(0.28);
    expect(c.reward_aggregation).toEqual({ method: 'rubric_dropout', dropout_p: 0.2 });
  });

  it('takes the newer TRL loss options (issue 16) with TRL defaults, and refuses settings that would do nothing', () => {
    expect(GRPO_DEFAULTS).toMatchObject({ delta: null, sapo_temperature_pos: 1.0, sapo_temperature_neg: 1.05, use_bias_correction_kl: false });
    const c = parseGrpoConfig({ loss_type: 'cispo', epsilon_high: 5, use_bias_correction_kl: true, beta: 0.01, advantage_estimator: 'rloo' });
    expect(c).toMatchObject({ loss_type: 'cispo', epsilon_high: 5, use_bias_correction_kl: true, advantage_estimator: 'rloo' });
    expect(parseGrpoConfig({ loss_type: 'sapo', sapo_temperature_pos: 0.5 }).sapo_temperature_pos).toBe(0.5);
    expect(parseGrpoConfig({ delta: 4 }).delta).toBe(4);
    expect(() => parseGrpoConfig({ delta: 1 })).toThrow(/^delta:/m);
    expect(() => parseGrpoConfig({ sapo_temperature_neg: 0 })).toThrow(/^sapo_temperature_neg:/m);
    expect(() => parseGrpoConfig({ use_bias_correction_kl: 'yes' })).toThrow(/^use_bias_correction_kl:/m);
    expect(() => parseGrpoConfig({ loss_type: 'cispo', delta: 4 })).toThrow(/delta: applies only to loss_type grpo, bnpo, dapo or dr_grpo, not cispo/);
    expect(() => parseGrpoConfig({ loss_type: 'sapo', dual_clip: 3 })).toThrow(/dual_clip: applies only to loss_type .* not sapo/);
  });
});
