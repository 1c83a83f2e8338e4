// On-policy distillation steps on the GPU (src/rl/distill/): the self_rubric teacher (the same
// weights with the rubric in the prompt) on the student's own samples, alone (no judge) and mixed
// with GRPO, in the update's single submission.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/distillStep.ts';
const BASE = { num_generations: 2, generation_batch_size: 4, max_completion_length: 6, learning_rate: 3e-2, temperature: 1 };

interface Rollout {
  reward: number | null;
  advantage: number;
  results: unknown[];
  completion_ids: number[];
  token_divergence?: (number | null)[];
}

describe('on-policy distillation with the self_rubric teacher', () => {
  it('pure: judges nothing, trains on the divergence alone and lowers it on the first step\'s samples', async () => {
    const options = { ...BASE, distillation: { teacher: 'self_rubric', teacher_weights: 'frozen', mode: 'pure', beta: 0.5 } };
    const r = await harness.runModule(CASES, 'steps', { options, steps: 3 });
    for (const step of r.steps) {
      const m = step.metrics;
      expect(m.skipped).toBe(false);
      expect(m.update_submits).toBe(1);
      expect(m.judge_failures).toBeUndefined();
      const d = m.distillation;
      expect(d.divergence).toBeGreaterThan(0);
      expect(Number.isFinite(d.divergence)).toBe(true);
      expect(d.top1_agreement).toBeGreaterThanOrEqual(0);
      expect(d.top1_agreement).toBeLessThanOrEqual(1);
      const tokens = step.rollouts.reduce((s: number, x: Rollout) => s + x.completion_ids.length, 0);
      expect(d.completion_tokens).toBe(tokens);
      expect(d.retained_tokens).toBe(tokens);
      // Every advantage is 0 (no reward), so a non-zero gradient is the teacher's.
      expect(Number.isFinite(m.grad_norm) && m.grad_norm > 0).toBe(true);
      for (const x of step.rollouts as Rollout[]) {
        expect(x.reward).toBeNull();
        expect(x.results).toEqual([]);
        expect(x.advantage).toBe(0);
        expect(x.token_divergence).toHaveLength(x.completion_ids.length);
        for (const v of x.token_divergence!) expect(v).toBeGreaterThanOrEqual(0);
      }
    }
    // The first step's completions, scored again after the three updates, are closer to the teacher.
    expect(r.after).toBeLessThan(r.before);
  });

  it('mixed with GRPO (live teacher, reverse KL on the teacher\'s top 5): rewards and divergence side by side', async () => {
    const options = { ...BASE, distillation: { teacher: 'self_rubric', teacher_weights: 'live', mode: 'mixed', weight: 0.5, beta: 1, top_k: 5 } };
    const r = await harness.runModule(CASES, 'steps', { options, steps: 1 });
    const m = r.steps[0].metrics;
    expect(m.skipped).toBe(false);
    expect(m.update_submits).toBe(1);
    expect(m.rewards.reward).not.toBeNull();
    expect(m.judge_failures.unscorable_rollouts).toBe(0);
    expect(m.distillation.divergence).toBeGreaterThan(0);
    expect(Number.isFinite(m.loss) && Number.isFinite(m.grad_norm) && m.grad_norm > 0).toBe(true);
    for (const x of r.steps[0].rollouts as Rollout[]) expect(x.reward).not.toBeNull();
  });

  it('another model with the student\'s tokenizer as the teacher (pure): the divergence to it falls', async () => {
    const options = { ...BASE, distillation: { teacher: 'model', teacher_model: 'fixture:other-seed', mode: 'pure', beta: 0 } };
    const r = await harness.runModule(CASES, 'steps', { options, steps: 2, teacherSeed: 5 });
    for (const step of r.steps) {
      expect(step.metrics.distillation.divergence).toBeGreaterThan(0);
      expect(step.metrics.grad_norm).toBeGreaterThan(0);
    }
    expect(r.after).toBeLessThan(r.before);
  });

  it('a teacher model is fetched, checked against the student\'s tokenizer and loaded by the context; another vocabulary is refused', async () => {
    const r = await harness.runModule(CASES, 'teacherModelContext', {});
    expect(r.loaded).toBe(true);
    // The fixture as its own teacher: the same weights on the same prompt.
    expect(r.divergence).toBeLessThan(1e-5);
    expect(r.agreement).toBe(1);
    expect(r.refusal).toBe(
      'distillation teacher_model "/test/fixtures/tiny-byte-gpt2/": the teacher model must use the student\'s tokenizer: the teacher\'s vocabulary has 300 entries (vocab_size), the student\'s 259',
    );
  });

  it('the criterion_injection teacher distils only the rollouts of the group where no rollout met a criterion', async () => {
    const r = await harness.runModule(CASES, 'criterionInjection', {});
    const injected = (r.rollouts as { prompt: string; unexplored: string[]; length: number; token_divergence?: (number | null)[] }[]).filter((x) => x.prompt === 'Be kind.');
    const others = r.rollouts.filter((x: { prompt: string }) => x.prompt === 'Say hi.');
    expect(injected).toHaveLength(2);
    expect(r.metrics.injected_rollouts).toBe(2);
    expect(r.metrics.injected_criteria).toBe(1);
    for (const x of injected) expect(x.unexplored).toEqual(['greets']);
    // Only the injected rows' tokens are in the loss, and there the told teacher diverges.
    expect(r.metrics.retained_tokens).toBe(injected.reduce((s, x) => s + x.length, 0));
    expect(r.metrics.retained_tokens).toBeGreaterThan(0);
    expect(r.metrics.divergence).toBeGreaterThan(0);
    for (const x of injected) for (const v of x.token_divergence!) expect(v).toBeGreaterThanOrEqual(0);
    expect(injected.flatMap((x) => x.token_divergence!).some((v) => v! > 0)).toBe(true);
    for (const x of others) {
      expect(x.unexplored).toEqual([]);
      expect(x.token_divergence!.every((v: number | null) => v === null)).toBe(true);
    }
  });

  it('aligns the teacher\'s completion rows with the student\'s: the student as its own teacher, padded differently, diverges by ~0', async () => {
    const r = await harness.runModule(CASES, 'selfAlignment', {});
    expect(r.layouts[1]).toBeGreaterThan(r.layouts[0]);
    expect(r.metrics.retained_tokens).toBe(5);
    expect(r.metrics.top1_agreement).toBe(1);
    expect(r.metrics.divergence).toBeLessThan(1e-5);
    expect(r.maxGrad).toBeLessThan(1e-4);
  });
});

describe('RuFT (schedule ruft): rejection-sampling SFT on the rubric-passing rollouts, then GRPO', () => {
  it('trains step 0 only on the rollouts whose reward reaches min_reward, and step 1 on GRPO\'s advantages', async () => {
    // A rule that splits random bytes: the completion starts with a printable ASCII character (reward 1, else 0).
    const rubric = { name: 'ascii', criteria: [{ id: 'ascii_first', text: 'Starts with a printable ASCII character', weight: 1, tier: 'essential', rule: { kind: 'regex', pattern: '^[ -~]' } }] };
    const options = { ...BASE, num_generations: 4, generation_batch_size: 8, loss_type: 'dapo', distillation: { schedule: { kind: 'ruft', sft_steps: 1, min_reward: 1 } } };
    const r = await harness.runModule(CASES, 'steps', { options, steps: 2, rubric });
    const [sft, rl] = r.steps as { metrics: Record<string, any>; rollouts: Rollout[] }[];
    // Step 0: the SFT phase. A rollout is kept (advantage 1) exactly when its reward reaches min_reward; the others get 0.
    expect(sft.metrics.schedule).toEqual({ phase: 'sft', on_policy: null, sft_kept: sft.rollouts.filter((x) => x.reward === 1).length });
    const kept = sft.rollouts.filter((x) => x.reward! >= 1);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(sft.rollouts.length);
    for (const x of sft.rollouts) expect(x.advantage).toBe(x.reward! >= 1 ? 1 : 0);
    // The loss touches only the kept rows: dapo at ratio 1 is −Σ A·ratio over tokens / all tokens = −(kept tokens) / (all tokens).
    const tokens = (xs: Rollout[]) => xs.reduce((n, x) => n + x.completion_ids.length, 0);
    expect(sft.metrics.policy_loss).toBeCloseTo(-tokens(kept) / tokens(sft.rollouts), 4);
    expect(sft.metrics.grad_norm).toBeGreaterThan(0);
    // Step 1: GRPO. Group-relative advantages (each group's sum 0, a failing rollout in a mixed group below 0), no rejection count.
    expect(rl.metrics.schedule).toEqual({ phase: 'rl', on_policy: null, sft_kept: null });
    for (let g = 0; g < 2; g++) {
      const group = rl.rollouts.slice(4 * g, 4 * g + 4);
      expect(Math.abs(group.reduce((s, x) => s + x.advantage, 0))).toBeLessThan(1e-4);
      if (new Set(group.map((x) => x.reward)).size > 1) for (const x of group) expect(Math.sign(x.advantage)).toBe(x.reward === 1 ? 1 : -1);
    }
  });
});

describe('distillation training modes (lmbda, EMA teacher, token selection)', () => {
  it('lmbda 0 trains on the EMA teacher\'s own draw; its entropy selection keeps part of the tokens; the EMA weights follow the policy', async () => {
    const r = await harness.runModule(CASES, 'trainingModes', {});
    // The step says who sampled; its batch is exactly the EMA teacher's draw from its privileged prompt.
    expect(r.schedule).toEqual({ phase: null, on_policy: false, sft_kept: null });
    expect(r.teacherDraw).toBe(true);
    const d = r.distillation;
    const tokens = (r.completions as number[][]).reduce((s, c) => s + c.length, 0);
    expect(d.completion_tokens).toBe(tokens);
    // The top half by the student's entropy (ties at the median kept): some tokens, not all.
    expect(d.retained_tokens).toBeGreaterThan(0);
    expect(d.retained_tokens).toBeLessThan(tokens);
    expect(Number.isFinite(d.divergence) && d.divergence >= 0).toBe(true);
    expect(r.gradNorm).toBeGreaterThan(0);
    // teacher ← 0.5 · teacher + 0.5 · policy after the applied step, a separate copy that moved.
    expect(r.emaSeparate).toBe(true);
    expect(r.emaMoved).toBeGreaterThan(1e-6);
    expect(r.emaError).toBeLessThan(1e-6);
  });

  it('the EMA teacher survives a checkpoint: resumed, it holds the saved averaged weights; a misshapen or missing one is refused', async () => {
    const r = await harness.runModule(CASES, 'emaResume', {});
    expect(r.hasEmaFile).toBe(true);
    // The teacher moved in the step and is not the policy's weights: equality below is the saved average's.
    expect(r.moved).toBeGreaterThan(1e-6);
    expect(r.fromPolicy).toBeGreaterThan(1e-6);
    expect(r.restoreError).toBe(0);
    expect(r.restoredValues).toEqual(r.savedValues);
    expect(r.misshapen).toMatch(/the checkpoint's ema teacher \(ema_model\.safetensors\) does not match the model: transformer\.ln_f\.weight has shape \[16\], the model's is \[32\]/);
    expect(r.missing).toMatch(/this checkpoint \(step 1\) has no ema_model\.safetensors, but the ema teacher had already averaged 1 step/);
    console.log(`emaResume: ${r.seconds.toFixed(1)} s in the page`);
  });
});
