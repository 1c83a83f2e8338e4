// steps_per_generation (issue 16): one generation batch split into slices, one optimizer step
// each, replayed num_iterations times in TRL's order (GRPOTrainer._prepare_inputs:
// `_buffered_inputs[_step % steps_per_generation]`, a new generation every steps_per_generation × μ
// steps). Expectations are worked out by hand in the comments.
import { describe, expect, it } from 'vitest';
import { POLICY_LOSS_SCALARS } from '../../../src/ops/policyLoss';
import { GRPO_DEFAULTS, parseGrpoConfig } from '../../../src/rl/config';
import { adamStep, generationPlan, optimizerStepMetrics, optimizerStepsPerGeneration, samplingsOver, sliceSize, trlAccumulation } from '../../../src/rl/generationSlices';
import { isSyncStep, optimizerSteps } from '../../../src/rl/refSync';
import { combineSlices, type LossScalars } from '../../../src/rl/update';
import { skippedMessage } from '../../../src/rl/trainer';

const named = (v: Partial<LossScalars>): LossScalars => Object.fromEntries(POLICY_LOSS_SCALARS.map((k) => [k, v[k] ?? 0])) as LossScalars;

describe('which slice each optimizer step trains on', () => {
  it('default: one optimizer step on the whole batch per generation (TRL\'s default behaviour)', () => {
    expect(GRPO_DEFAULTS.steps_per_generation).toBe(1);
    expect(generationPlan({ generation_batch_size: 32, num_iterations: 1, steps_per_generation: 1 })).toEqual([{ iteration: 0, slice: 0, start: 0, end: 32 }]);
  });

  it('S = 4 over 16 rollouts: slices of 4, in order', () => {
    const plan = generationPlan({ generation_batch_size: 16, num_iterations: 1, steps_per_generation: 4 });
    expect(plan.map((p) => [p.slice, p.start, p.end])).toEqual([
      [0, 0, 4],
      [1, 4, 8],
      [2, 8, 12],
      [3, 12, 16],
    ]);
  });

  it('with num_iterations 2 the buffered batch is replayed: slices 0 1 2 0 1 2 (not 0 0 1 1 2 2)', () => {
    // TRL: _step 0..5 → _buffered_inputs[_step % 3] = 0, 1, 2, 0, 1, 2; generate at _step % 6 == 0.
    const plan = generationPlan({ generation_batch_size: 12, num_iterations: 2, steps_per_generation: 3 });
    expect(plan.map((p) => `${p.iteration}:${p.slice}`)).toEqual(['0:0', '0:1', '0:2', '1:0', '1:1', '1:2']);
    expect(plan[4]).toEqual({ iteration: 1, slice: 1, start: 4, end: 8 });
  });

  it('a slice size that does not divide the batch is refused', () => {
    expect(sliceSize(16, 4)).toBe(4);
    expect(() => sliceSize(16, 3)).toThrow(/steps_per_generation \(3\) must divide the generation batch \(16 rollouts\)/);
  });
});

describe('how many samplings over K optimizer steps', () => {
  it('one per μ × S optimizer steps', () => {
    expect(optimizerStepsPerGeneration({ num_iterations: 1, steps_per_generation: 1 })).toBe(1);
    expect(optimizerStepsPerGeneration({ num_iterations: 2, steps_per_generation: 3 })).toBe(6);
    // 10 optimizer steps, S = 4: generations at steps 0, 4, 8 → 3.
    expect(samplingsOver({ num_iterations: 1, steps_per_generation: 4 }, 10)).toBe(3);
    // 8 optimizer steps, μ = 2, S = 2: generations at 0 and 4 → 2.
    expect(samplingsOver({ num_iterations: 2, steps_per_generation: 2 }, 8)).toBe(2);
    // The default samples before every optimizer step.
    expect(samplingsOver({ num_iterations: 1, steps_per_generation: 1 }, 5)).toBe(5);
  });

  it('AdamW counts optimizer steps, not generations', () => {
    const cfg = { num_iterations: 2, steps_per_generation: 4 };
    // Page step 3 starts after 3 × 8 = 24 optimizer steps: t = 25 … 32.
    expect(adamStep(cfg, 3, 0)).toBe(25);
    expect(adamStep(cfg, 3, 7)).toBe(32);
    expect(adamStep({ num_iterations: 1, steps_per_generation: 1 }, 0, 0)).toBe(1);
  });

  it('the TR-DPO sync counts the same optimizer steps', () => {
    const cfg = { sync_ref_model: true, ref_model_mixup_alpha: 0.5, ref_model_sync_steps: 6, num_iterations: 1, steps_per_generation: 3 };
    expect(optimizerSteps(cfg, 2)).toBe(6);
    expect([1, 2, 3, 4].map((p) => isSyncStep(cfg, p))).toEqual([false, true, false, true]);
  });
});

describe('validation', () => {
  it('accepts a divisor into whole groups', () => {
    const c = parseGrpoConfig({ num_generations: 4, generation_batch_size: 16, steps_per_generation: 4, per_device_train_batch_size: 2 });
    expect(c.steps_per_generation).toBe(4);
  });

  it('says what is wrong, on the option at fault', () => {
    expect(() => parseGrpoConfig({ num_generations: 4, generation_batch_size: 16, steps_per_generation: 3 })).toThrow(
      /steps_per_generation: must divide generation_batch_size \(16\) into equal slices, one per optimizer step, got 3/,
    );
    expect(() => parseGrpoConfig({ num_generations: 8, generation_batch_size: 16, steps_per_generation: 4 })).toThrow(
      /steps_per_generation: each slice \(generation_batch_size \/ steps_per_generation = 4\) must hold whole groups of num_generations \(8\), got 4/,
    );
    expect(() => parseGrpoConfig({ num_generations: 4, generation_batch_size: 16, steps_per_generation: 2, per_device_train_batch_size: 16 })).toThrow(
      /per_device_train_batch_size: must divide generation_batch_size \/ steps_per_generation \(8, the sequences of one optimizer step\), got 16/,
    );
    expect(() => parseGrpoConfig({ steps_per_generation: 0 })).toThrow(/steps_per_generation/);
    // With one slice the message is the one it always was.
    expect(() => parseGrpoConfig({ num_generations: 4, generation_batch_size: 16, per_device_train_batch_size: 3 })).toThrow(/per_device_train_batch_size: must divide generation_batch_size \(16\), got 3/);
    expect(() => parseGrpoConfig({ sync_ref_model: true, beta: 0.04, num_generations: 4, generation_batch_size: 16, steps_per_generation: 2, num_iterations: 2, ref_model_sync_steps: 6 })).toThrow(
      /ref_model_sync_steps: must be a multiple of num_iterations × steps_per_generation \(4\)/,
    );
    expect(() => parseGrpoConfig({ num_generations: 4, generation_batch_size: 16, steps_per_generation: 2, cripo_flip: true })).toThrow(/cripo_flip: needs steps_per_generation = 1, got 2/);
  });
});

describe('metrics per optimizer step', () => {
  it('the step\'s loss is the mean of its last pass\'s optimizer steps, ratios token-weighted', () => {
    const c = combineSlices([named({ loss: 1, policyLoss: 0.5, clipRatioRegion: 0.1, maskSum: 30 }), named({ loss: 3, policyLoss: 1.5, clipRatioRegion: 0.5, maskSum: 10 })]);
    expect(c.loss).toBe(2);
    expect(c.policyLoss).toBe(1);
    expect(c.maskSum).toBe(40);
    // (0.1·30 + 0.5·10) / 40 = 0.2
    expect(c.clipRatioRegion).toBeCloseTo(0.2, 12);
    const one = named({ loss: 7, maskSum: 3 });
    expect(combineSlices([one])).toBe(one);
  });

  it('lists each optimizer step, and none when there was only one', () => {
    const step = (iteration: number, slice: number, loss: number) => ({ iteration, slice, t: 1, gradNorm: loss * 10, skipped: false, scalars: named({ loss, policyLoss: loss, klMean: 0.01, entropyMean: 2 }) });
    expect(optimizerStepMetrics([step(0, 0, 1)], 0)).toBeUndefined();
    const m = optimizerStepMetrics([step(0, 0, 1), step(0, 1, 2)], 0)!;
    expect(m.map((s) => [s.iteration, s.slice, s.loss, s.grad_norm, s.kl])).toEqual([
      [0, 0, 1, 10, null],
      [0, 1, 2, 20, null],
    ]);
    expect(optimizerStepMetrics([step(0, 0, 1), step(1, 0, 2)], 0.04)![1].kl).toBeCloseTo(0.01, 6);
  });
});

describe('a skipped optimizer step', () => {
  it('says whether earlier optimizer steps of the step were applied', () => {
    expect(skippedMessage(3, {})).toBe('step 3: NaN or Inf in the loss or gradients; the update was skipped and the weights are unchanged');
    const opt = (slice: number, skipped: boolean) => ({ iteration: 0, slice, skipped, loss: 0, policy_loss: 0, kl: null, entropy: 0, clip_ratio_low: 0, clip_ratio_high: 0, clip_ratio_region: 0, ratio_mean: 1, grad_norm: 0 });
    expect(skippedMessage(3, { optimizer_steps: [opt(0, true)] })).toMatch(/the update was skipped and the weights are unchanged/);
    expect(skippedMessage(3, { optimizer_steps: [opt(0, false), opt(1, false), opt(2, true)] })).toBe(
      'step 3: NaN or Inf in the loss or gradients; optimizer step 3 of the step was skipped (the 2 before it were applied) and the step ended there',
    );
  });
});

describe('the TRL equivalent', () => {
  it('gradient accumulation and TRL\'s steps_per_generation (in accumulation steps)', () => {
    // G 32, S 4: an optimizer step is 8 sequences; micro-batches of 2 → 4 accumulation steps;
    // TRL's steps_per_generation = 32 / 2 = 16 = 4 × 4.
    expect(trlAccumulation({ generation_batch_size: 32, num_iterations: 1, steps_per_generation: 4, per_device_train_batch_size: 2 })).toEqual({ perDeviceBatch: 2, gradientAccumulationSteps: 4, trlStepsPerGeneration: 16 });
    // Empty per_device_train_batch_size: a whole slice per micro-batch; TRL's = S.
    expect(trlAccumulation({ generation_batch_size: 32, num_iterations: 1, steps_per_generation: 4, per_device_train_batch_size: null })).toEqual({ perDeviceBatch: 8, gradientAccumulationSteps: 1, trlStepsPerGeneration: 4 });
  });
});
