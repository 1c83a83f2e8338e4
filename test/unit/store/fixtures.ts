// Builders for store tests (Node with fake-indexeddb, and the browser harness case): a parsed
// rubric and config, and deterministic rollouts, metrics and checkpoints for a step.
import type { CheckpointFiles } from '../../../src/model/checkpoint';
import { parseGrpoConfig } from '../../../src/rl/config';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { parseRubric } from '../../../src/rubric/schema';
import type { NewRun } from '../../../src/store';

export const RUBRIC = parseRubric({
  name: 'polite and short',
  criteria: [
    { id: 'polite', text: 'Says please', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['please'] } },
    { id: 'short', text: 'At most 12 characters', weight: 1, tier: 'optional', rule: { kind: 'length', unit: 'characters', max: 12 } },
  ],
});

export const CONFIG = parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_steps: 20, learning_rate: 1e-3 });

export const PROMPTS = ['Ask for tea', 'Ask for the salt'];

export function newRun(overrides: Partial<NewRun> = {}): NewRun {
  return { name: 'tea run', modelId: 'embedded-tiny', prompts: PROMPTS, rubric: RUBRIC, config: CONFIG, ...overrides };
}

/** `groups` x `perGroup` rollouts of `step`. polite fails on odd indices; short is unscorable in group 1. */
export function rollouts(step: number, groups = 2, perGroup = 2): RolloutRecord[] {
  const out: RolloutRecord[] = [];
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < perGroup; i++) {
      const polite = i % 2 === 0 ? 1 : 0;
      const completion = polite ? `tea please ${step}` : `tea now ${step}`;
      const short = g === 1 ? null : completion.length <= 12 ? 1 : 0;
      out.push({
        step,
        group: g,
        index: i,
        prompt: PROMPTS[g % PROMPTS.length],
        completion,
        completion_ids: Array.from(completion, (ch) => ch.charCodeAt(0)),
        logprobs: Array.from(completion, (_, k) => -0.5 - k / 100),
        truncated: false,
        results: [
          { criterion_id: 'polite', status: 'ok', score: polite, reason: polite ? 'found "please"' : 'no "please"' },
          short === null
            ? { criterion_id: 'short', status: 'unscorable', score: null, reason: 'judge timed out' }
            : { criterion_id: 'short', status: 'ok', score: short, reason: `${completion.length} characters` },
        ],
        scores: [polite, short],
        reward: short === null ? null : (2 * polite + short) / 3,
        advantage: polite ? 0.7 : -0.7,
      });
    }
  }
  return out;
}

export function metrics(step: number): StepMetrics {
  return {
    step,
    rewards: {
      reward: 0.5 + step / 100,
      reward_std: 0.25,
      criterion_pass_rate: { polite: 0.5, short: 0.25 },
      criterion_mean_score: { polite: 0.5, short: 0.25 },
      strict_completion_rate: 0.25,
      unscorable: 2,
      aggregations: { weighted_mean: 0.5, healthbench_points: 0.4 },
    },
    held_out: null,
    completions: { mean_length: 11.5, min_length: 10, max_length: 13, clipped_ratio: 0 },
    frac_reward_zero_std: 0,
    loss: 0.1 * step,
    policy_loss: 0.1 * step,
    kl: null,
    entropy: 2.5,
    clip_ratio_low: 0,
    clip_ratio_high: 0,
    clip_ratio_region: 0,
    ratio_mean: 1,
    grad_norm: 0.3,
    learning_rate: 1e-3,
    skipped: false,
    sampling_tokens_per_second: 100,
    training_tokens_per_second: 200,
    judge_seconds: 0.01,
    step_seconds: 0.5,
    update_submits: 1,
  };
}

/** A checkpoint whose weights are `bytes` bytes of a pattern that depends on `step`. */
export function checkpoint(step: number, bytes = 4096): CheckpointFiles {
  const weights = new Uint8Array(bytes).map((_, k) => (k * 7 + step * 13) & 0xff);
  const moments = new Uint8Array(bytes * 2).map((_, k) => (k + step) & 0xff);
  return {
    'config.json': JSON.stringify({ model_type: 'gpt2', n_embd: 32 }),
    'model.safetensors': weights.buffer,
    'optimizer.safetensors': moments.buffer,
    'trainer_state.json': JSON.stringify({ global_step: step + 1, seed: 42 }),
  };
}

/** First bytes of a checkpoint's weights, to tell checkpoints apart. */
export function weightsHead(files: CheckpointFiles, n = 8): number[] {
  return Array.from(new Uint8Array(files['model.safetensors'], 0, n));
}
