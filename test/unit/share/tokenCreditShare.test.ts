// Token-credit options and data travel: share links and run files carry them, the TRL export says
// it cannot express them, the settings explain them.
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';
import { ALL_OPTIONS } from '../../../src/ui/lib/settingsCatalog';

const CREDIT = {
  span_credit: 0.5,
  cripo_flip: true,
  entropy_pivot_quantile: 0.2,
  entropy_pivot_boost: 3,
  credit_schedule: 'cosine',
  credit_schedule_steps: 40,
  cort_credit: true,
  cort_weight_min: 0.25,
  cort_weight_max: 3,
};
const experiment = (config: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), config });

describe('token credit options', () => {
  it('ride in share links', () => {
    const shared = { experiment: experiment(CREDIT) } as Parameters<typeof encodeShareLink>[0];
    expect(decodeShareLink(encodeShareLink(shared)).experiment.config).toMatchObject(CREDIT);
  });

  it('the TRL export says, for each, that TRL cannot express it', async () => {
    const { files, notes } = await exportToTrl(experiment(CREDIT));
    const script = files['train_grpo.py'];
    for (const name of ['span_credit 0.5', 'cripo_flip', 'entropy_pivot_quantile 0.2', 'credit_schedule "cosine"', 'cort_credit']) {
      expect(script).toContain(`# ${name}`);
      expect(notes.some((n) => n.startsWith(name))).toBe(true);
    }
    const plain = await exportToTrl(experiment({}));
    expect(plain.files['train_grpo.py']).not.toMatch(/span_credit|cripo_flip|entropy_pivot|cort_credit/);
  });

  it('have settings with help naming the method', () => {
    for (const key of Object.keys(CREDIT)) expect(ALL_OPTIONS.find((o) => o.key === key), key).toBeDefined();
    expect(ALL_OPTIONS.find((o) => o.key === 'span_credit')!.help).toMatch(/RCCA/);
    expect(ALL_OPTIONS.find((o) => o.key === 'cripo_flip')!.help).toMatch(/CriPO/);
    expect(ALL_OPTIONS.find((o) => o.key === 'cort_credit')!.help).toMatch(/CoRT/);
  });
});

describe('run files', () => {
  it('keep evidence spans, per-token credit and the CriPO marks and counts', async () => {
    const rollout: RolloutRecord = {
      step: 0,
      group: 0,
      index: 0,
      prompt: 'p',
      completion: 'a cat',
      completion_ids: [97, 32, 99, 97, 116],
      logprobs: [-1, -1, -1, -1, -1],
      tokens: ['a', ' ', 'c', 'a', 't'],
      token_weight: [1, 1, -2, -2, -2],
      token_span_credit: [0.5, 0.5, 1.5, 1.5, 1.5],
      token_entropy_pivot: [1, 1, 1, 1, 1],
      token_cort_contrast: [0, 0.1, 0.5, -0.2, 0],
      suppressed_criteria: ['cat'],
      unexplored_criteria: ['short'],
      truncated: false,
      results: [{ criterion_id: 'cat', status: 'ok', score: 1, reason: 'found "cat"', spans: [{ start: 2, end: 5 }] }],
      scores: [1],
      reward: 0.2,
      advantage: -1,
    };
    const rewards = { reward: 0.2, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 0, unscorable: 0, aggregations: {} };
    const metrics: StepMetrics = {
      step: 0,
      rewards,
      held_out: null,
      completions: { mean_length: 5, min_length: 5, max_length: 5, clipped_ratio: 0 },
      frac_reward_zero_std: 0,
      unexplored_criteria: 1,
      suppressed_criteria: 1,
      loss: 0,
      policy_loss: 0,
      kl: null,
      entropy: 1,
      clip_ratio_low: 0,
      clip_ratio_high: 0,
      clip_ratio_region: 0,
      ratio_mean: 1,
      grad_norm: 0,
      learning_rate: 1e-3,
      skipped: false,
      sampling_tokens_per_second: 1,
      training_tokens_per_second: 1,
      judge_seconds: 0,
      step_seconds: 1,
      update_submits: 1,
    };
    const text = await runFileJson({ name: 'r', experiment: experiment(CREDIT), metrics: [metrics], rollouts: [rollout] });
    const back = await readRunFile(text);
    expect(back.rollouts[0]).toEqual(rollout);
    expect(back.metrics[0]).toMatchObject({ unexplored_criteria: 1, suppressed_criteria: 1 });
    const bad = text.replace('"start":2', '"start":-1');
    await expect(readRunFile(bad)).rejects.toThrow(/spans/);
  });
});
