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
const EVIDENCE_CASES = '/test/harness/cases/evidenceStep.ts';
interface EvidenceVerdict { criterion_id: string; score: number | null; evidence?: string; probe?: string }
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
    // The time split (bench/grpo.mjs prints it): sampling, judging and the update are parts of the step.
    for (const part of [m.sampling_seconds, m.judge_seconds, m.update_seconds]) expect(part).toBeGreaterThanOrEqual(0);
    expect(m.sampling_seconds).toBeGreaterThan(0);
    expect(m.update_seconds).toBeGreaterThan(0);
    expect(m.sampling_seconds + m.judge_seconds + m.update_seconds).toBeLessThanOrEqual(m.step_seconds);
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

  // TRL's entropy bonus (src/rl/entropyBonus.ts): −entropy_coef × the token mean of the entropy
  // over the tokens the loss trains (completion tokens kept by the top-entropy mask), whatever the
  // loss_type (grpo here, whose policy term is a per-sequence mean); the mask is recomputed at
  // every pass, which takes one more submission per pass.
  it('the entropy bonus is a token mean over the masked tokens, and the mask is recomputed each pass', async () => {
    const coef = 0.5;
    // Two passes at a learning rate too small to move the policy: the last pass's entropies (which
    // the loss uses) are the first pass's (which the rollouts report).
    const options = { ...BASE, learning_rate: 1e-9, loss_type: 'grpo', top_entropy_quantile: 0.5, entropy_coef: coef, num_iterations: 2 };
    const one = await harness.runModule(CASES, 'steps', { options, steps: 1 });
    const m = one.steps[0].metrics;
    let sum = 0;
    let kept = 0;
    let tokens = 0;
    for (const r of one.steps[0].rollouts as { token_entropy: number[]; token_weight: number[] }[]) {
      r.token_entropy.forEach((h, j) => {
        sum += h * r.token_weight[j];
        kept += r.token_weight[j];
        tokens++;
      });
    }
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(tokens);
    expect((m.policy_loss - m.loss) / coef).toBeCloseTo(sum / kept, 3);
    // Each pass reads its entropies back before its loss: two submissions a pass.
    expect(m.update_submits).toBe(4);
  });

  // steps_per_generation (issue 16): 8 rollouts in two slices of one group, one optimizer step
  // each. π_old is the sampling policy's, computed before the first step (one submission per
  // slice): the first slice trains before any update (ratio 1), the second after one (it moves;
  // the entropy bonus makes the first step's gradient non-zero even if its group's rewards tie).
  it('steps_per_generation 2: one optimizer step per slice, the second one off-policy', async () => {
    const r = await harness.runModule(CASES, 'steps', { options: { ...BASE, steps_per_generation: 2, loss_type: 'grpo', entropy_coef: 0.1 }, steps: 1 });
    const { metrics: m, rollouts } = r.steps[0];
    expect(m.optimizer_steps.map((s: { iteration: number; slice: number }) => [s.iteration, s.slice])).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(m.update_submits).toBe(4);
    const ratios = (g: number) => rollouts.filter((x: { group: number }) => x.group === g).flatMap((x: { token_ratio: number[] }) => x.token_ratio);
    for (const x of ratios(0)) expect(x).toBeCloseTo(1, 6);
    expect(Math.max(...ratios(1).map((x: number) => Math.abs(x - 1)))).toBeGreaterThan(1e-4);
    expect(m.optimizer_steps[0].clip_ratio_region).toBe(0);
    for (const s of m.optimizer_steps) expect(Number.isFinite(s.loss) && s.grad_norm > 0).toBe(true);
  });

  // Micro-batching (per_device_train_batch_size) is gradient accumulation: for grpo, dapo,
  // dr_grpo and cispo (normalised by num_items_in_batch as dapo; sapo shares grpo's scaling, see
  // test/unit/rl/update.test.ts) the accumulated gradient equals the one-submission gradient up to
  // f32 summation
  // order. Tolerance: 1e-5 of the largest gradient entry. TRL's entropy bonus is a token mean per
  // micro-batch divided by their number, the whole batch's mean only when the micro-batches hold
  // as many tokens: here every completion runs to max_completion_length, so they do.
  it.each(['grpo', 'dapo', 'dr_grpo', 'cispo'] as const)('micro-batches of 2 sequences give the same %s step as one submission', async (lossType) => {
    const r = await harness.runModule(CASES, 'microBatchParity', { options: { ...BASE, loss_type: lossType, beta: 0.05, entropy_coef: 0.01 }, microBatch: 2 });
    expect(r.sameRewards).toBe(true);
    expect(r.whole.completions.min_length).toBe(BASE.max_completion_length);
    expect(r.maxGrad).toBeGreaterThan(1e-4);
    expect(r.maxDiff).toBeLessThan(1e-5 * r.maxGrad);
    expect(r.split.update_submits).toBe(r.whole.update_submits * (BASE.generation_batch_size / 2));
    expect(r.split.loss).toBeCloseTo(r.whole.loss, 5);
    expect(r.split.clip_ratio_region).toBeCloseTo(r.whole.clip_ratio_region, 6);
    expect(r.split.kl).toBeCloseTo(r.whole.kl, 6);
  });
});

// Guided exploration in real GRPO steps (src/rl/explore/), on a tiny model with a 256-token
// context so a scaffolded prompt fits: dynamic sampling resamples zero-variance groups with new
// prompts and reports its cost; rubric scaffolding labels its rollouts, trains them under the
// original prompt and measures the log-prob mismatch with an inference pass that agrees with the
// sampler. In this file to share its page's warm-up (shader compilation).
const EXPLORE = '/test/harness/cases/explore.ts';
const EXPLORE_BASE = { num_generations: 4, generation_batch_size: 8, max_completion_length: 4, learning_rate: 1e-9, temperature: 1 };

describe('guided exploration: dynamic sampling (DAPO)', () => {
  it('resamples a zero-variance group with a new prompt, judges once per round and reports the extra cost', async () => {
    const r = await harness.runModule(EXPLORE, 'dynamic', { options: { ...EXPLORE_BASE, dynamic_sampling: true, max_num_gen_batches: 3 }, prompts: ['dead a', 'live b'], replacement: 'live' });
    const e = r.metrics.exploration;
    expect(e.generation_rounds).toBe(2);
    expect(e.groups_resampled).toBe(1);
    expect(e.zero_std_groups_kept).toBe(0);
    expect(r.drawn).toEqual([{ count: 1, round: 1 }]);
    // Group 0's slot now holds the replacement prompt; group 1 kept its own.
    expect(r.rollouts.filter((x: { group: number }) => x.group === 0).every((x: { prompt: string }) => x.prompt === 'live r1 0')).toBe(true);
    expect(r.rollouts.filter((x: { group: number }) => x.group === 1).every((x: { prompt: string }) => x.prompt === 'live b')).toBe(true);
    expect(r.metrics.frac_reward_zero_std).toBe(0);
    // One judge call per round: the step did not judge its rollouts a second time.
    expect(r.judgeCalls).toBe(2);
    expect(e.extra_sampled_tokens).toBeGreaterThan(0);
    expect(e.sampled_tokens).toBeGreaterThan(e.extra_sampled_tokens);
    expect(e.extra_seconds).toBeGreaterThan(0);
  });

  it('stops after max_num_gen_batches and trains the zero-variance groups left', async () => {
    const r = await harness.runModule(EXPLORE, 'dynamic', { options: { ...EXPLORE_BASE, dynamic_sampling: true, max_num_gen_batches: 2 }, prompts: ['dead a', 'dead b'], replacement: 'dead' });
    const e = r.metrics.exploration;
    expect(e.generation_rounds).toBe(2);
    expect(e.groups_resampled).toBe(2);
    expect(e.zero_std_groups_kept).toBe(2);
    expect(r.judgeCalls).toBe(2);
    expect(r.metrics.frac_reward_zero_std).toBe(1);
    expect(r.rollouts.every((x: { prompt: string }) => x.prompt.startsWith('dead r1'))).toBe(true);
    expect(r.rollouts.every((x: { guided: unknown }) => x.guided === null)).toBe(true);
  });
});

describe('guided exploration: off', () => {
  it('samples once, judges once and adds no exploration metrics or labels', async () => {
    const r = await harness.runModule(EXPLORE, 'dynamic', { options: EXPLORE_BASE, prompts: ['dead a', 'live b'], replacement: 'x' });
    expect(r.metrics.exploration).toBeUndefined();
    expect(r.drawn).toEqual([]);
    expect(r.judgeCalls).toBe(1);
    expect(r.rollouts.every((x: { guided: unknown }) => x.guided === null)).toBe(true);
    expect(r.metrics.frac_reward_zero_std).toBe(0.5);
  });
});

describe('guided exploration: rubric scaffolding (RuscaRL)', () => {
  const SCAFFOLD = { ...EXPLORE_BASE, scaffold_fraction: 0.5, scaffold_prob_start: 1, scaffold_decay_steps: 10 };

  it('labels the scaffolded rollouts, keeps their original prompt and reports the mismatch', async () => {
    const r = await harness.runModule(EXPLORE, 'scaffold', { options: SCAFFOLD, step: 0 });
    const guided = r.rollouts.filter((x: { guided: unknown }) => x.guided);
    // ⌊0.5 · 4⌋ = 2 per group at p = 1: positions 0 and 1.
    expect(guided.map((x: { group: number; index: number }) => `${x.group}:${x.index}`)).toEqual(['0:0', '0:1', '1:0', '1:1']);
    for (const x of guided) {
      expect(x.guided.kind).toBe('scaffold');
      expect(x.guided.guidance).toMatch(/checked against these criteria:\n- Contains the letter/);
      expect(x.prompt).toMatch(/^Say word \d\.$/);
      expect(x.guided.logprob_gap).toBeGreaterThan(0);
      expect(Number.isFinite(x.guided.is_ratio)).toBe(true);
    }
    const e = r.metrics.exploration;
    expect(e).toMatchObject({ scaffold_prob: 1, scaffolded: 4 });
    expect(e.scaffold_logprob_gap).toBeGreaterThan(0);
    expect(e.scaffold_logprob_gap).toBeCloseTo(r.recomputedGap, 3);
    // The re-scoring pass agrees with the sampler under the scaffolded prompt, and the
    // per-rollout gap with a float64 recomputation from it under the original prompt.
    expect(r.samplerDiff).toBeLessThan(2e-3);
    expect(r.gapDiff).toBeLessThan(2e-3);
    // Importance correction (scaffold_is_cap 2, the default): guided tokens carry their weights.
    expect(r.weightDiff).toBeLessThan(2e-3);
    expect(r.guidedWeightsNotAllOne).toBe(true);
    expect(r.plainWeightsAllOne).toBe(true);
    expect(r.metrics.skipped).toBe(false);
  });
});

describe('guided exploration: the inspector', () => {
  it('badges a guided rollout, shows its guidance as text and leaves plain rollouts unmarked', async () => {
    const guidance = '\n\nYour answer will be checked against these criteria:\n- <img src=x onerror="window.__explorePwned=true">';
    const r = await harness.runModule(EXPLORE, 'inspector', { guidance });
    expect(r.badges).toEqual(['guided: scaffold', null, 'guided: hindsight', 'guided: on_demand']);
    expect(r.guidance[0]).toBe(guidance.trim());
    // HeRL: which failed completion it revises (1-based) and its bonus; on demand: the mean it beat.
    expect(r.revises).toBe('revises #2, bonus 0.25');
    expect(r.kept).toBe('beat group mean 0.125');
    expect(r.gapShown).toBe(true);
    expect(r.images).toBe(0);
    expect(r.alerted).toBe(false);
  });
});

describe('guided exploration: hindsight revision (HeRL) and guidance on demand (RISE-RL)', () => {
  it('samples revisions and on-demand rollouts, labels them guided, keeps those above the natural mean and trains them', async () => {
    const options = { ...EXPLORE_BASE, herl_fraction: 0.5, herl_bonus: 0.5, guidance_on_demand: true, guidance_num_generations: 4, rise_aux_coef: 0.5, rise_aux_decay_steps: 10 };
    const r = await harness.runModule(EXPLORE, 'guided', { options });
    const e = r.metrics.exploration;
    // Natural judging, then one call for the extra rollouts.
    expect(r.judgeCalls).toBe(2);
    expect(r.naturalRewards.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(r.natural.every((x: { guided: unknown }) => x.guided === null)).toBe(true);
    // The dead group failed as a whole: 4 on-demand rollouts, kept only above its natural mean 0.
    expect(e.guidance_groups).toBe(1);
    expect(e.guidance_kept + e.guidance_dropped).toBe(4);
    expect(e.guidance_kept).toBeGreaterThan(0);
    expect(e.rise_aux_coef).toBeCloseTo(0.5, 12);
    const onDemand = r.extra.filter((x: { guided: { kind: string } }) => x.guided.kind === 'on_demand');
    expect(onDemand).toHaveLength(e.guidance_kept);
    for (const x of onDemand) {
      expect(x.group).toBe(0);
      expect(x.reward).toBeGreaterThan(0);
      expect(x.advantage).toBeCloseTo(x.reward, 6); // r − μ_nat, μ_nat = 0
      expect(x.guided.guidance).toMatch(/checked against these criteria:\n- A good answer/);
    }
    // Revisions: ⌊0.5 · 4⌋ = 2 of the dead group's failed rollouts, plus the live group's failures.
    const revisions = r.extra.filter((x: { guided: { kind: string } }) => x.guided.kind === 'hindsight');
    expect(revisions.length).toBe(e.herl_revised);
    expect(revisions.filter((x: { group: number }) => x.group === 0).length).toBe(2);
    expect(revisions.every((x: { guided: { revises: number; guidance: string } }) => x.guided.revises >= 0 && /A previous answer: "/.test(x.guided.guidance))).toBe(true);
    // Every extra row: after its group's G natural rollouts, under the original prompt, trained (entropy and token weights from the update).
    for (const x of r.extra) {
      expect(x.index).toBeGreaterThanOrEqual(4);
      expect(['dead a', 'live b']).toContain(x.prompt);
      expect(x.entropy).toBe(x.tokens);
      expect(x.weighted).toBe(x.tokens);
      expect(Number.isFinite(x.guided.logprob_gap)).toBe(true);
    }
    // Token weights: the truncated importance weight times the row's loss-term scale.
    expect(r.weightDiff).toBeLessThan(2e-3);
    expect(r.natural.every((x: { weights: number[] }) => x.weights.every((w) => Math.abs(w - r.mainScale) < 1e-5))).toBe(true);
    expect(Number.isFinite(r.metrics.loss)).toBe(true);
    expect(r.metrics.skipped).toBe(false);
  });

  // Evidence-required credit (issue 13; page side test/harness/cases/evidenceStep.ts, a fake quoting judge).
  it('evidence-required credit: withholds unquoted passes, probes quoted ones, counts them; the held-out rubric gets the bare judge', async () => {
    const r = await harness.runModule(EVIDENCE_CASES, 'step', { options: { ...BASE, max_completion_length: 12, judge_evidence_required: true, vacuous_credit_probe: true } });
    const verdicts: EvidenceVerdict[] = r.rollouts.map((x: { results: EvidenceVerdict[] }) => x.results.find((v) => v.criterion_id === 'says_something')!);
    expect(verdicts).toHaveLength(8);
    const quoted = verdicts.filter((v) => v.evidence === 'quoted');
    const withheld = verdicts.filter((v) => v.evidence === 'withheld');
    expect(quoted.length + withheld.length).toBe(8);
    expect(quoted.length).toBeGreaterThan(0); // 12 random bytes nearly always hold a letter or digit
    for (const v of withheld) expect(v.score).toBe(0);
    // The fake judge passes whatever is left: every quoted pass survives deleting its quote.
    for (const v of quoted) expect(v).toMatchObject({ score: 1, probe: 'survived' });
    expect(r.metrics.evidence).toMatchObject({ passes: 8, withheld: withheld.length, probed: quoted.length, vacuous: quoted.length });
    expect(r.metrics.evidence.by_criterion.says_something).toMatchObject({ quoted: quoted.length, withheld: withheld.length });
    // The rule criterion never needs a quote.
    expect(r.metrics.evidence.by_criterion.has_a).toBeUndefined();
    expect(r.metrics.rewards.criterion_pass_rate.says_something).toBeCloseTo(quoted.length / 8, 12);
    // Held out: the bare judge passes every rollout, without being asked for a quote.
    expect(r.metrics.held_out.criterion_pass_rate.says_something).toBe(1);
    const asked = r.requests.filter((q: { requireQuote?: boolean }) => q.requireQuote).length;
    expect(asked).toBe(8 + quoted.length); // the verdicts and the probes
    expect(r.requests.length - asked).toBe(8); // the held-out verdicts
  });
});
