// GRPO steps end to end on the GPU (sample → judge → advantages → update) with a rule rubric.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/grpo.ts';
const BASE = { num_generations: 4, generation_batch_size: 8, max_completion_length: 8, learning_rate: 1e-2, temperature: 1 };

describe('grpoStep', () => {
  it('runs the stages in order, scores every rollout and updates in one submission', async () => {
    const r = await harness.runModule(CASES, 'steps', { options: BASE, steps: 1, stages: true });
    expect(r.stages).toEqual(['sampled', 'judged', 'advantages', 'updated']);
    const [step] = r.steps;
    expect(step.rollouts).toHaveLength(8);
    for (const x of step.rollouts) {
      expect(x.reward).not.toBeNull();
      expect(x.scores).toHaveLength(3);
      expect(Number.isFinite(x.advantage)).toBe(true);
    }
    // Advantages are centred within each group.
    for (const g of [0, 1]) {
      const a = step.rollouts.filter((x: { group: number }) => x.group === g).map((x: { advantage: number }) => x.advantage);
      expect(Math.abs(a.reduce((s: number, v: number) => s + v, 0))).toBeLessThan(1e-4);
    }
    const m = step.metrics;
    expect(m.update_submits).toBe(1);
    expect(m.skipped).toBe(false);
    expect(Number.isFinite(m.loss)).toBe(true);
    expect(m.grad_norm).toBeGreaterThanOrEqual(0);
    expect(m.rewards.reward).toBeGreaterThanOrEqual(0);
    expect(Object.keys(m.rewards.criterion_pass_rate)).toEqual(['has_a', 'has_e', 'short']);
    expect(m.completions.max_length).toBeLessThanOrEqual(8);
    expect(m.frac_reward_zero_std).toBeGreaterThanOrEqual(0);
    expect(m.kl).toBeNull();
    expect(m.held_out).toBeNull();
  });

  it('scores a held-out rubric on the same rollouts without training on it', async () => {
    const heldOut = { name: 'clean', criteria: [{ id: 'has_z', text: 'Contains z', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['z'] } }] };
    const r = await harness.runModule(CASES, 'steps', { options: BASE, steps: 1, heldOut });
    const m = r.steps[0].metrics;
    expect(Object.keys(m.held_out.criterion_pass_rate)).toEqual(['has_z']);
    expect(m.held_out.reward).toBeGreaterThanOrEqual(0);
    expect(Object.keys(m.rewards.criterion_pass_rate)).toEqual(['has_a', 'has_e', 'short']);
  });

  it('with beta > 0, num_iterations = 2 and GDPO: KL is reported, one submission per iteration', async () => {
    const r = await harness.runModule(CASES, 'steps', {
      options: { ...BASE, beta: 0.1, num_iterations: 2, multi_objective_aggregation: 'normalize_then_sum', epsilon_high: 0.28, loss_type: 'grpo' },
      steps: 2,
    });
    for (const step of r.steps) {
      expect(step.metrics.update_submits).toBe(2);
      expect(step.metrics.kl).not.toBeNull();
      expect(step.metrics.kl).toBeGreaterThanOrEqual(0);
    }
    // The second step's KL to the frozen start is positive once the policy has moved.
    expect(r.steps[1].metrics.kl).toBeGreaterThan(0);
  });

  // Micro-batching (per_device_train_batch_size) is gradient accumulation: for grpo, dapo and
  // dr_grpo the accumulated gradient equals the one-submission gradient up to f32 summation
  // order. Tolerance: 1e-5 of the largest gradient entry.
  it.each(['grpo', 'dapo', 'dr_grpo'] as const)('micro-batches of 2 sequences give the same %s step as one submission', async (lossType) => {
    const r = await harness.runModule(CASES, 'microBatchParity', { options: { ...BASE, loss_type: lossType, beta: 0.05, entropy_coef: 0.01 }, microBatch: 2 });
    expect(r.sameRewards).toBe(true);
    expect(r.maxGrad).toBeGreaterThan(1e-4);
    expect(r.maxDiff).toBeLessThan(1e-5 * r.maxGrad);
    expect(r.split.update_submits).toBe(r.whole.update_submits * (BASE.generation_batch_size / 2));
    expect(r.split.loss).toBeCloseTo(r.whole.loss, 5);
    expect(r.split.clip_ratio_region).toBeCloseTo(r.whole.clip_ratio_region, 6);
    expect(r.split.kl).toBeCloseTo(r.whole.kl, 6);
  });
});
