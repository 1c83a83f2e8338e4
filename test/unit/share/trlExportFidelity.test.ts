// The TRL export carries the aggregation options the trainer supports, and says where the page's
// defaults differ from TRL's on purpose (as the settings help does).
import { describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS, pageDefaultText, TRL_DEFAULT_DIFFERENCES, trlDefaultNote } from '../../../src/rl/config';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl, rubricRewardSpec } from '../../../src/share/trlExport';
import { ALL_OPTIONS, trlNote } from '../../../src/ui/lib/settingsCatalog';

const experiment = (config: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), config });

describe('aggregation options in the reward spec', () => {
  it('carries gate_base, dropout_aggregation and adaptive_tier_balance as set', async () => {
    const spec = await rubricRewardSpec(
      experiment({ reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.4, gate_base: 'healthbench_points', dropout_aggregation: 'essential_gated', adaptive_tier_balance: false } }),
    );
    expect(spec.reward.aggregation).toMatchObject({ method: 'rubric_dropout', dropout_p: 0.4, gate_base: 'healthbench_points', dropout_aggregation: 'essential_gated', adaptive_tier_balance: false });
  });

  it('fills their defaults when unset', async () => {
    const spec = await rubricRewardSpec(experiment({}));
    expect(spec.reward.aggregation).toMatchObject({ gate_base: 'weighted_mean', dropout_aggregation: 'weighted_mean', adaptive_tier_balance: true });
  });

  it('refuses GDPO with an aggregation it cannot train on, before writing anything', async () => {
    await expect(exportToTrl(experiment({ multi_objective_aggregation: 'normalize_then_sum', reward_aggregation: { method: 'essential_gated' } }))).rejects.toThrow(
      /multi_objective_aggregation: .*"essential_gated" is not one/,
    );
  });
});

describe('defaults that differ from TRL on purpose', () => {
  const keys = Object.keys(TRL_DEFAULT_DIFFERENCES) as (keyof typeof TRL_DEFAULT_DIFFERENCES)[];

  it('are the four the page chose', () => {
    expect(keys.sort()).toEqual(['generation_batch_size', 'max_completion_length', 'max_steps', 'save_steps']);
    expect(GRPO_DEFAULTS.save_steps).toBeNull();
    expect(trlDefaultNote('save_steps')).toBe(`TRL default: 500; here: auto because ${TRL_DEFAULT_DIFFERENCES.save_steps.why}`);
    expect(trlDefaultNote('num_generations')).toBeNull();
  });

  it('the settings tooltip says so for each, and only for them', () => {
    for (const key of keys) {
      const spec = ALL_OPTIONS.find((o) => o.key === key)!;
      expect(trlNote(spec), key).toContain(`TRL default: ${TRL_DEFAULT_DIFFERENCES[key].trl}; here: ${pageDefaultText(key)} because `);
    }
    expect(trlNote(ALL_OPTIONS.find((o) => o.key === 'num_generations')!)).toBe('TRL: num_generations · default 8');
  });

  it('train_grpo.py says so on each of their lines', async () => {
    const { files } = await exportToTrl(experiment({ save_steps: 20 }));
    const lines = files['train_grpo.py'].split('\n');
    for (const key of keys) {
      const line = lines.find((l) => l.trimStart().startsWith(`${key}=`));
      expect(line, key).toContain(`# TRL default: ${TRL_DEFAULT_DIFFERENCES[key].trl}; the page's default: ${pageDefaultText(key)} because`);
    }
    expect(lines.find((l) => l.trimStart().startsWith('save_steps='))).toMatch(/^\s*save_steps=20,\s+#/);
    // auto (the default) exports the page's interval for large checkpoints; 0 exports no saving.
    const auto = (await exportToTrl(experiment({}))).files['train_grpo.py'].split('\n');
    expect(auto.find((l) => l.trimStart().startsWith('save_steps='))).toMatch(/^\s*save_steps=10,\s+# TRL default: 500; the page's default: auto because/);
  });
});

describe('the settings expose the aggregation options', () => {
  const show = (key: string, config: Record<string, unknown>) => ALL_OPTIONS.find((o) => o.key === key)!.when?.(config) ?? true;

  it('each under the method that uses it', () => {
    expect(show('reward_aggregation.gate_base', { reward_aggregation: { method: 'essential_gated' } })).toBe(true);
    expect(show('reward_aggregation.gate_base', { reward_aggregation: { method: 'rubric_dropout', dropout_aggregation: 'essential_gated' } })).toBe(true);
    expect(show('reward_aggregation.gate_base', { reward_aggregation: { method: 'weighted_mean' } })).toBe(false);
    expect(show('reward_aggregation.dropout_aggregation', { reward_aggregation: { method: 'rubric_dropout' } })).toBe(true);
    expect(show('reward_aggregation.dropout_aggregation', { reward_aggregation: { method: 'adaptive_weights' } })).toBe(false);
    expect(show('reward_aggregation.adaptive_tier_balance', { reward_aggregation: { method: 'adaptive_weights' } })).toBe(true);
    expect(show('reward_aggregation.adaptive_tier_balance', {})).toBe(false);
  });

  it('with their defaults in the tooltip', () => {
    const note = (key: string) => trlNote(ALL_OPTIONS.find((o) => o.key === key)!);
    expect(note('reward_aggregation.gate_base')).toBe('not a TRL GRPOConfig option · default weighted_mean');
    expect(note('reward_aggregation.dropout_aggregation')).toBe('not a TRL GRPOConfig option · default weighted_mean');
    expect(note('reward_aggregation.adaptive_tier_balance')).toBe('not a TRL GRPOConfig option · default true');
  });
});
