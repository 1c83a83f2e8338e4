import { describe, expect, it } from 'vitest';
import { calibrationShape } from '../../../src/rl/calibration';
import { configFromHf } from '../../../src/model/config';
import { estimateStepTime, smallerSetting, stepCountsIn, type StepCosts, type StepShape } from '../../../src/rl/stepTime';

const COSTS: StepCosts = { decodeOverhead: 0.05, decodePerRow: 0.01, trainOverhead: 0.2, trainPerToken: 0.001 };
const SHAPE: StepShape = {
  generation_batch_size: 32,
  num_generations: 8,
  max_completion_length: 48,
  num_iterations: 1,
  per_device_train_batch_size: null,
  beta: 0,
  max_steps: 200,
};

describe('estimateStepTime', () => {
  it('adds prefill, decode steps and the update passes by hand', () => {
    const e = estimateStepTime(COSTS, SHAPE, 20);
    const prefill = (0.2 + 0.001 * 32 * 20) / 3;
    const decode = 47 * (0.05 + 0.01 * 32);
    const update = 0.2 + 0.001 * 32 * 68;
    expect(e.sampling).toBeCloseTo(prefill + decode, 9);
    expect(e.update).toBeCloseTo(update, 9);
    expect(e.step).toBeCloseTo(prefill + decode + update, 9);
    expect(e.run).toBeCloseTo(200 * e.step, 6);
  });

  it('grows with num_iterations, micro-batches and a KL reference, shrinks with fewer rollouts', () => {
    const base = estimateStepTime(COSTS, SHAPE, 20);
    expect(estimateStepTime(COSTS, { ...SHAPE, num_iterations: 2 }, 20).update).toBeCloseTo(2 * base.update, 9);
    // Four micro-batches of 8: the same tokens, three more fixed costs.
    expect(estimateStepTime(COSTS, { ...SHAPE, per_device_train_batch_size: 8 }, 20).update).toBeCloseTo(base.update + 3 * 0.2, 9);
    expect(estimateStepTime(COSTS, { ...SHAPE, beta: 0.04 }, 20).update).toBeCloseTo(base.update * (4 / 3), 9);
    expect(estimateStepTime(COSTS, { ...SHAPE, generation_batch_size: 8 }, 20).step).toBeLessThan(base.step / 2);
    expect(estimateStepTime(COSTS, { ...SHAPE, max_completion_length: 1 }, 20).sampling).toBeCloseTo((0.2 + 0.001 * 32 * 20) / 3, 9);
  });
});

describe('smallerSetting', () => {
  it('offers nothing when a step already fits the target', () => {
    expect(smallerSetting(COSTS, SHAPE, 20, 1e6)).toEqual([]);
  });

  it('halves prompts per step, then completions, then groups, until the step fits', () => {
    const changes = smallerSetting(COSTS, SHAPE, 20, 5);
    const shape = { ...SHAPE } as Record<string, unknown>;
    for (const c of changes) {
      expect(c.from).toBe(SHAPE[c.key]);
      shape[c.key] = c.to;
    }
    expect(estimateStepTime(COSTS, shape as unknown as StepShape, 20).step).toBeLessThanOrEqual(5);
    expect(changes.map((c) => c.key)).toContain('generation_batch_size');
    expect(shape.generation_batch_size as number).toBeLessThan(32);
    expect((shape.generation_batch_size as number) % (shape.num_generations as number)).toBe(0);
  });

  it('stops at one group of 4 rollouts of 16 tokens when nothing smaller is sensible', () => {
    const slow: StepCosts = { ...COSTS, decodeOverhead: 100 };
    const changes = Object.fromEntries(smallerSetting(slow, { ...SHAPE, per_device_train_batch_size: 16 }, 20, 1).map((c) => [c.key, c.to]));
    expect(changes).toEqual({ generation_batch_size: 4, num_generations: 4, max_completion_length: 16, per_device_train_batch_size: null });
  });
});

describe('stepCountsIn', () => {
  it('finds each step count once', () => {
    expect(stepCountsIn('Train for 50 steps. Then 20 more steps, and 50 steps again; step 3 is not a count. 1 step.')).toEqual([50, 20, 1]);
    expect(stepCountsIn('No counts here.')).toEqual([]);
  });
});

describe('calibrationShape', () => {
  it("keeps the model's width on one (or two) layers, and caps a big vocabulary", () => {
    const tiny = configFromHf({ model_type: 'gpt2', vocab_size: 259, n_embd: 128, n_layer: 4, n_head: 4, n_positions: 256 });
    expect(calibrationShape(tiny).numLayers).toBe(1);
    expect(calibrationShape(tiny, 2).numLayers).toBe(2);
    expect(calibrationShape(tiny).vocabSize).toBe(259);
    expect(calibrationShape(tiny).maxPositions).toBe(64);
    expect(calibrationShape({ ...tiny, maxPositions: 40 }).maxPositions).toBe(40);
    const one = configFromHf({ model_type: 'gpt2', vocab_size: 259, n_embd: 128, n_layer: 1, n_head: 4, n_positions: 256 });
    expect(calibrationShape(one, 2).numLayers).toBe(1);
    const big = configFromHf({ model_type: 'gpt2', vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024 });
    const cut = calibrationShape(big);
    expect(cut.numLayers).toBe(1);
    expect(cut.vocabSize).toBeLessThan(50257);
    expect(cut.vocabSize).toBeGreaterThanOrEqual(256);
    expect(cut.hiddenSize).toBe(768);
  });
});
