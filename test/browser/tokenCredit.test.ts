// Token credit on the GPU, one method per case, on a fresh tiny byte-level GPT-2: each step is
// compared with the same step under uniform credit (same seed, same rollouts). The per-token
// weights reach the loss kernel (the gradient moves; the policy loss keeps its value when the
// total advantage is conserved, and changes when CriPO flips a sign).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { cortWeights } from '../../src/rl/credit/cort';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/tokenCredit.ts';
const BASE = { num_generations: 4, generation_batch_size: 8, max_completion_length: 8, learning_rate: 1e-2, temperature: 1 };

interface R {
  advantage: number;
  reward: number | null;
  completion: string;
  n: number;
  token_weight: number[];
  token_span_credit: number[] | null;
  token_entropy_pivot: number[] | null;
  token_cort_contrast: number[] | null;
  suppressed: string[];
  unexplored: string[];
}
interface Step {
  submits: number;
  metrics: { policy_loss: number; grad_norm: number; loss: number; suppressed_criteria: number; unexplored_criteria: number; skipped: boolean };
  rollouts: R[];
}

const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / Math.max(x.length, 1);

async function run(options: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ uniform: Step; credited: Step }> {
  const r = await harness.runModule(CASES, 'creditStep', { base: { ...BASE, ...extra }, options });
  // Same seed, same rollouts: only the credit differs.
  expect(r.credited.rollouts.map((x: R) => x.completion)).toEqual(r.uniform.rollouts.map((x: R) => x.completion));
  expect(r.credited.metrics.skipped).toBe(false);
  return r;
}

describe('token credit (GPU step)', () => {
  it('span_credit: weights of mean 1 on every completion reach the kernel; the loss value is conserved, the gradient moves', async () => {
    const { uniform, credited } = await run({ span_credit: 1 });
    expect(uniform.rollouts.every((x) => x.token_span_credit === null)).toBe(true);
    let localised = 0;
    for (const x of credited.rollouts) {
      expect(x.token_span_credit).toHaveLength(x.n);
      expect(mean(x.token_span_credit!)).toBeCloseTo(1, 5);
      expect(Math.min(...x.token_span_credit!)).toBeGreaterThanOrEqual(0);
      if (Math.max(...x.token_span_credit!) > 1 + 1e-6) localised++;
      // No other source: the loss weight is the span credit (max_completion_length cuts, no masking).
      x.token_weight.forEach((w, j) => expect(w).toBeCloseTo(x.token_span_credit![j], 5));
    }
    expect(localised).toBeGreaterThan(0);
    expect(credited.metrics.policy_loss).toBeCloseTo(uniform.metrics.policy_loss, 5);
    expect(Math.abs(credited.metrics.grad_norm - uniform.metrics.grad_norm)).toBeGreaterThan(1e-6 * uniform.metrics.grad_norm);
  });

  it('cripo_flip: negative rollouts flip the tokens of the criteria they meet; diagnostics count them', async () => {
    const { uniform, credited } = await run({ cripo_flip: true });
    const negative = credited.rollouts.filter((x) => x.reward !== null && x.advantage < 0);
    expect(negative.length).toBeGreaterThan(0);
    for (const x of credited.rollouts) {
      const flipped = x.token_weight.filter((w) => w < 0).length;
      if (x.advantage < 0 && x.n > 0) {
        expect(x.suppressed).toContain('any');
        expect(flipped).toBeGreaterThan(0);
        expect(x.token_weight[0]).toBe(-1); // "any" points at the first character
      } else expect(flipped).toBe(0);
    }
    expect(credited.metrics.suppressed_criteria).toBeGreaterThan(0);
    expect(uniform.metrics.suppressed_criteria).toBe(credited.metrics.suppressed_criteria); // diagnostics do not need the option
    // Flipped tokens push the other way: the policy term changes.
    expect(Math.abs(credited.metrics.policy_loss - uniform.metrics.policy_loss)).toBeGreaterThan(1e-6);
  });

  it('entropy pivots compose with top_entropy_quantile: pivot weight × TRL mask', async () => {
    const { uniform, credited } = await run({ entropy_pivot_quantile: 0.25, entropy_pivot_boost: 3 }, { top_entropy_quantile: 0.5 });
    for (const [i, x] of credited.rollouts.entries()) {
      expect(x.token_entropy_pivot).toHaveLength(x.n);
      expect(mean(x.token_entropy_pivot!)).toBeCloseTo(1, 5);
      const mask = uniform.rollouts[i].token_weight; // TRL's mask alone (same entropies)
      x.token_weight.forEach((w, j) => expect(w).toBeCloseTo(mask[j] * x.token_entropy_pivot![j], 5));
    }
    expect(credited.rollouts.some((x) => x.token_entropy_pivot!.some((g) => g > 1 + 1e-6))).toBe(true);
    expect(credited.rollouts.some((x) => x.token_weight.some((w) => w === 0))).toBe(true);
  });

  it('credit_schedule mixes toward uniform: halfway (step 5 of 10), m = (s + 1) / 2', async () => {
    const half = await harness.runModule(CASES, 'creditStep', { base: BASE, options: { span_credit: 1, credit_schedule: 'linear', credit_schedule_steps: 10 }, step: 5, withUniform: false });
    const rollouts = half.credited.rollouts as R[];
    expect(rollouts.some((x) => x.token_span_credit!.some((s) => Math.abs(s - 1) > 1e-3))).toBe(true);
    for (const x of rollouts) x.token_weight.forEach((w, j) => expect(w).toBeCloseTo((x.token_span_credit![j] + 1) / 2, 5));
  });

  it('cort_credit: the two scoring passes in one submission per micro-batch; bounded mean-1 weights from their contrast', async () => {
    // Micro-batches of 4 of the 8 sequences: two CoRT submissions, and the update takes each micro-batch's weights.
    const { uniform, credited } = await run({ cort_credit: true, cort_weight_min: 0.5, cort_weight_max: 2 }, { per_device_train_batch_size: 4 });
    expect(credited.submits).toBe(uniform.submits + 2);
    let moved = 0;
    for (const x of credited.rollouts) {
      expect(x.token_cort_contrast).toHaveLength(x.n);
      for (const c of x.token_cort_contrast!) expect(Number.isFinite(c)).toBe(true);
      if (x.token_cort_contrast!.some((c) => Math.abs(c) > 1e-4)) moved++;
      // The weights the kernel got are the float64 mapping of the GPU's contrasts.
      const k = cortWeights(x.token_cort_contrast!, 0.5, 2);
      x.token_weight.forEach((w, j) => expect(w).toBeCloseTo(k[j], 5));
      expect(mean(x.token_weight)).toBeCloseTo(1, 5);
    }
    expect(moved).toBeGreaterThan(0); // the rubric in the prompt changes the policy's log-probs
    expect(credited.metrics.policy_loss).toBeCloseTo(uniform.metrics.policy_loss, 5);
  });

  it('the inspector marks Unexplored and Suppressed criteria and shows each credit source, text only', async () => {
    const r = await harness.runModule(CASES, 'inspectorMarks', {});
    expect(r.span.unexplored).toEqual(['Unexplored: deep']);
    expect(r.span.suppressed).toEqual(['suppressed: ascii_start, any']);
    expect(r.span.options).toEqual(expect.arrayContaining(['span', 'pivot', 'cort', 'advantage']));
    expect(r.span.values).toEqual(['3', '0', '0', '3', '0', '0']);
    // Final weight × advantage: the flipped token is pushed up, and marked as flipped.
    expect(r.advantage.values).toEqual(['3', '0', '0', '3', '0', '0']);
    expect(r.advantage.flipped).toEqual([true, false, false, false, false, false]);
    expect(r.advantage.titles[0]).toContain('advantage sign flipped: CriPO');
    expect(r.span.bold).toBe(0); // "<b" is a token's text, not markup
    expect(harness.pageErrors).toEqual([]);
  });
});

