import { describe, expect, it } from 'vitest';
import { changedKeys, isChanged, sameSetting } from '../../../src/ui/lib/settingsChanged';
import { FIRST_VISIT } from '../../../src/share/presets';
import { GRPO_DEFAULTS } from '../../../src/rl/config';

describe('settings changed from the defaults', () => {
  it('a value spelled out at its default is not changed', () => {
    expect(isChanged({ save_steps: GRPO_DEFAULTS.save_steps }, 'save_steps')).toBe(false);
    expect(isChanged({ temperature: 1.0 }, 'temperature')).toBe(GRPO_DEFAULTS.temperature !== 1);
    expect(isChanged({ temperature: 0.7 }, 'temperature')).toBe(true);
    expect(isChanged({}, 'temperature')).toBe(false);
  });

  it('nested aggregation settings compare with their own defaults', () => {
    expect(isChanged({ reward_aggregation: { method: 'weighted_mean' } }, 'reward_aggregation.method')).toBe(false);
    expect(isChanged({ reward_aggregation: { method: 'essential_gated' } }, 'reward_aggregation.method')).toBe(true);
    expect(isChanged({ reward_aggregation: { method: 'essential_gated', pass_threshold: 0.5 } }, 'reward_aggregation.pass_threshold')).toBe(false);
  });

  it('counts only real differences in the first-visit preset', () => {
    const config = FIRST_VISIT.experiment.config as Record<string, unknown>;
    const keys = changedKeys(config);
    for (const k of keys) expect(config[k]).not.toEqual((GRPO_DEFAULTS as unknown as Record<string, unknown>)[k]);
    const setButDefault = Object.keys(config).filter((k) => config[k] === (GRPO_DEFAULTS as unknown as Record<string, unknown>)[k]);
    expect(setButDefault.length).toBeGreaterThan(0); // the preset does spell out defaults (e.g. temperature 1.0)
    expect(keys.length).toBe(Object.keys(config).length - setButDefault.length);
  });

  it('arrays compare by value', () => {
    expect(sameSetting(['q_proj', 'v_proj'], ['q_proj', 'v_proj'])).toBe(true);
    expect(sameSetting(['q_proj'], ['q_proj', 'v_proj'])).toBe(false);
    expect(sameSetting(null, 0)).toBe(false);
  });
});
