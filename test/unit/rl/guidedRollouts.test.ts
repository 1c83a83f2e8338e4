// Hindsight revision (HeRL) and guidance on demand (RISE-RL), the pure parts (src/rl/explore/
// hindsight.ts, onDemand.ts, auxTerm.ts): which rollouts get guidance, the kept/dropped rule, the
// bonus, the advantages, the auxiliary coefficient's schedule and the auxiliary term's scaling
// (checked against the policy loss's float64 reference), the options' validation and exports.
import { describe, expect, it } from 'vitest';
import { policyLossRef } from '../../../src/ops/policyLoss.reference';
import { parseRubric, type Scores } from '../../../src/rubric';
import { parseGrpoConfig } from '../../../src/rl/config';
import { rowScales, withRowScales, type Term } from '../../../src/rl/explore/auxTerm';
import { fitGuidance } from '../../../src/rl/explore/guidedBounds';
import { scaffoldGuidance } from '../../../src/rl/explore/scaffold';
import { augmentedAdvantages, herlBonus, herlSlots, planRevisions, revisionGuidance, unmetCriteria } from '../../../src/rl/explore/hindsight';
import { auxCoefficient, groupFailed, keepGuided, missedCriteria, naturalMean } from '../../../src/rl/explore/onDemand';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import type { Experiment } from '../../../src/rl/experiment';
import { metricColumns, rolloutsToCsv } from '../../../src/share/csv';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';
import { buildCharts } from '../../../src/ui/lib/series';

const RUBRIC = parseRubric({
  name: 'r',
  criteria: [
    { id: 'a', text: 'Mentions apples', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['apple'] } },
    { id: 'b', text: 'Mentions bananas', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['banana'] } },
    { id: 'c', text: 'Swears', weight: -1, tier: 'optional', rule: { kind: 'contains', terms: ['damn'] } },
    { id: 'd', text: 'Tracked only', weight: 0, tier: 'optional', rule: { kind: 'contains', terms: ['x'] } },
  ],
});
const C = RUBRIC.criteria;
const ids = (cs: readonly { id: string }[]) => cs.map((c) => c.id);

describe('HeRL: which rollouts are revised, with what guidance', () => {
  it('unmet criteria: positive below the pass threshold, pitfalls detected; unscored and tracked left out', () => {
    expect(ids(unmetCriteria(C, [1, 0, 0, 0], 0.5))).toEqual(['b']);
    expect(ids(unmetCriteria(C, [0.4, 0.5, 0.5, 0], 0.5))).toEqual(['a', 'c']);
    expect(ids(unmetCriteria(C, [null, 1, null, 0], 0.5))).toEqual([]);
  });

  it('revises the failed rollouts, lowest reward first (ties: lower index), at most ⌊herl_fraction · G⌋', () => {
    expect(herlSlots({ herl_fraction: 0.5, num_generations: 4 })).toBe(2);
    expect(herlSlots({ herl_fraction: 0.3, num_generations: 4 })).toBe(1);
    const scores: Scores[] = [
      [1, 1, 0, 0], // meets everything: not failed
      [0, 1, 0, 0], // misses a
      [1, 0, 0, 0], // misses b
      [0, 0, 1, 0], // misses a, b and swears
      [0, 0, 0, 0], // unscorable reward below: skipped
    ];
    const rewards = [1, 1 / 3, 2 / 3, 0, null];
    const completions = ['apple banana', 'banana', 'apple', 'damn', '?'];
    const plans = planRevisions(C, { rewards, scores, completions }, 2, 0.5);
    expect(plans.map((p) => p.source)).toEqual([3, 1]);
    expect(ids(plans[0].unmet)).toEqual(['a', 'b', 'c']);
    expect(plans[0].guidance).toBe(revisionGuidance('damn', plans[0].unmet));
    expect(plans[0].guidance).toBe('\n\nA previous answer: "damn"\nIt missed:\n- Mentions apples\n- Mentions bananas\n- Avoid: Swears\nWrite a better answer.');
    // Ties: equal rewards go by index; more slots than failures gives every failure once.
    expect(planRevisions(C, { rewards: [0, 0, 0], scores: [scores[3], scores[3], scores[3]], completions: ['x', 'y', 'z'] }, 2, 0.5).map((p) => p.source)).toEqual([0, 1]);
    expect(planRevisions(C, { rewards, scores, completions }, 8, 0.5).map((p) => p.source)).toEqual([3, 1, 2]);
  });

  it('bonus b = herl_bonus · max(0, r\' − r)', () => {
    expect(herlBonus(0.75, 0.25, 0.5)).toBeCloseTo(0.25, 15);
    expect(herlBonus(0.25, 0.75, 0.5)).toBe(0);
    expect(herlBonus(null, 0.25, 0.5)).toBe(0);
    expect(herlBonus(1, null, 0.5)).toBe(0);
  });

  it('advantages against the augmented group (hand-computed), 0 without variance or reward', () => {
    // Natural [0, 0, 0.5, 1] plus a revision at 1.25: mean 0.55, unbiased variance 1.3 / 4 = 0.325.
    const [a] = augmentedAdvantages([0, 0, 0.5, 1], [1.25], 'group');
    expect(a).toBeCloseTo(0.7 / (Math.sqrt(0.325) + 1e-4), 12);
    expect(augmentedAdvantages([0, 0, 0.5, 1], [1.25], 'none')[0]).toBeCloseTo(0.7, 12);
    expect(augmentedAdvantages([0, 0, null, 0], [0, null], 'group')).toEqual([0, 0]);
    // A revision beating an all-zero group: mean 0.2, std sqrt(0.2) over [0, 0, 0, 0, 1].
    expect(augmentedAdvantages([0, 0, 0, 0], [1, null], 'group')).toEqual([expect.closeTo(0.8 / (Math.sqrt(0.2) + 1e-4), 12), 0]);
  });
});

describe('guidance fitted to the context', () => {
  // One token per character, as a byte tokenizer without a template.
  const format = (text: string) => Array.from(text, (ch) => ch.charCodeAt(0));
  const unmet = [C[0], C[1], C[2]];

  it('a revision: the quoted answer is cut first (marked …), then criteria from the last', () => {
    const answer = 'a'.repeat(40);
    const full = 'Q' + revisionGuidance(answer, unmet);
    const plan = { kind: 'hindsight' as const, guidance: revisionGuidance(answer, unmet), criteria: unmet };
    expect(fitGuidance(format, full.length, 'Q', { ...plan }, answer)).toEqual(format(full));
    const shorter = { ...plan };
    const ids = fitGuidance(format, full.length - 9, 'Q', shorter, answer)!;
    expect(ids.length).toBe(full.length - 9);
    expect(shorter.guidance).toBe(revisionGuidance('a'.repeat(30) + '…', unmet)); // 40 → 30 characters
    expect(shorter.criteria).toEqual(unmet);
    // With the answer gone, criteria go from the last: room for the first one only.
    const one = { ...plan };
    const room = ('Q' + revisionGuidance('…', [C[0]])).length;
    expect(fitGuidance(format, room, 'Q', one, answer)).toEqual(format('Q' + revisionGuidance('…', [C[0]])));
    expect(one.criteria).toEqual([C[0]]);
    expect(fitGuidance(format, room - 1, 'Q', { ...plan }, answer)).toBeNull();
  });

  it('on-demand guidance loses criteria from the last, and is skipped when one does not fit', () => {
    const plan = () => ({ kind: 'on_demand' as const, guidance: scaffoldGuidance(unmet), criteria: unmet });
    const two = plan();
    expect(fitGuidance(format, ('Q' + scaffoldGuidance(unmet.slice(0, 2))).length, 'Q', two, null)).toEqual(format('Q' + scaffoldGuidance(unmet.slice(0, 2))));
    expect(two.guidance).toBe(scaffoldGuidance(unmet.slice(0, 2)));
    expect(fitGuidance(format, ('Q' + scaffoldGuidance([C[0]])).length - 1, 'Q', plan(), null)).toBeNull();
  });
});

describe('RISE-RL guidance on demand: which groups, what is kept', () => {
  it('a group fails when every scored reward is at or below the threshold', () => {
    expect(groupFailed([0, 0, null, 0], 0)).toBe(true);
    expect(groupFailed([0, 0.1, 0, 0], 0)).toBe(false);
    expect(groupFailed([0.1, 0.2], 0.2)).toBe(true);
    expect(groupFailed([null, null], 0)).toBe(false);
  });

  it('guidance names the criteria the whole group missed, else every weighted one', () => {
    expect(ids(missedCriteria(C, [[0, 1, 1, 0], [0, 0, 1, 1]], 0.5))).toEqual(['a', 'c']);
    expect(ids(missedCriteria(C, [[1, 0, 0, 0], [0, 1, 0, 0]], 0.5))).toEqual(['a', 'b', 'c']);
  });

  it('keeps a guided rollout only when it beats the natural mean (strictly)', () => {
    const mean = naturalMean([0, 0.5, null, 0.25]);
    expect(mean).toBeCloseTo(0.25, 15);
    expect(keepGuided(0.3, mean)).toBe(true);
    expect(keepGuided(0.25, mean)).toBe(false);
    expect(keepGuided(0, mean)).toBe(false);
    expect(keepGuided(null, mean)).toBe(false);
    expect(keepGuided(1, naturalMean([null]))).toBe(false);
  });

  it('the auxiliary coefficient decays linearly to 0 over rise_aux_decay_steps (default max_steps)', () => {
    const cfg = { guidance_on_demand: true, rise_aux_coef: 0.8, rise_aux_decay_steps: 10, max_steps: 100 };
    expect([0, 5, 9, 10, 30].map((t) => auxCoefficient(cfg, t))).toEqual([0.8, 0.4, 0.8 * 0.1, 0, 0].map((x) => expect.closeTo(x, 12)));
    expect(auxCoefficient({ ...cfg, rise_aux_decay_steps: null, max_steps: 4 }, 1)).toBeCloseTo(0.6, 12);
    expect(auxCoefficient({ ...cfg, guidance_on_demand: false }, 0)).toBe(0);
  });
});

describe('the auxiliary term L_main + c · L_aux', () => {
  // Three sequences of 4 tokens: two main rows (3 and 1 active tokens), one aux row (2).
  const T = 4;
  const mask = [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0];
  const terms: Term[] = ['main', 'main', 'aux'];
  const logprobs = [-1, -0.5, -2, 0, -0.3, 0, 0, 0, -1.5, -0.7, 0, 0];
  const advantages = [0.5, -1, 0.8];
  const c = 0.5;

  it('scales: tokens for dapo (M_all / M_main, c · M_all / M_aux), sequences for grpo', () => {
    expect(rowScales('dapo', mask, T, terms, c)).toEqual([1.5, 1.5, 1.5]); // 6/4, 0.5·6/2
    expect(rowScales('grpo', mask, T, terms, c)).toEqual([1.5, 1.5, 1.5]); // 3/2, 0.5·3/1
    expect(rowScales('dr_grpo', mask, T, ['main', 'aux', 'aux'], 0.2)).toEqual([3, expect.closeTo(0.3, 15), expect.closeTo(0.3, 15)]);
    expect(rowScales('dapo', mask, T, ['main', 'main', 'main'], c)).toEqual([1, 1, 1]);
  });

  it.each(['dapo', 'grpo', 'dr_grpo', 'bnpo', 'cispo', 'sapo'] as const)('%s: the joint batch with the scales is the two terms normalised apart', (lossType) => {
    const scales = rowScales(lossType, mask, T, terms, c);
    const weights = mask.map((_, k) => scales[Math.floor(k / T)]);
    const options = { lossType, maxCompletionLength: T };
    const joint = policyLossRef({ n: 3, l: T, logprobs, oldLogprobs: logprobs.map((x) => x + 0.05), mask, advantages, tokenWeights: weights, options });
    const part = (rows: number[]) =>
      policyLossRef({
        n: rows.length,
        l: T,
        logprobs: rows.flatMap((b) => logprobs.slice(b * T, (b + 1) * T)),
        oldLogprobs: rows.flatMap((b) => logprobs.slice(b * T, (b + 1) * T).map((x) => x + 0.05)),
        mask: rows.flatMap((b) => mask.slice(b * T, (b + 1) * T)),
        advantages: rows.map((b) => advantages[b]),
        options,
      }).loss;
    expect(joint.loss).toBeCloseTo(part([0, 1]) + c * part([2]), 12);
  });

  it('extends the token credit of the natural rows to the extra rows and scales each row', () => {
    const source = { needsEntropy: true, weightsFor: (start: number, n: number, e: Float32Array | null) => Float32Array.from({ length: n * 2 }, (_, i) => 10 * (start + Math.floor(i / 2)) + (e ? e[i] : 0)) };
    const w = withRowScales(source, 2, [1, 2, 3], { tokens: { seqLen: 2 } })!;
    expect(w.needsEntropy).toBe(true);
    // A micro-batch of rows 1 and 2: row 1 from the source (×2), row 2 (extra) 1 × 3.
    expect(Array.from(w.weightsFor(1, 2, Float32Array.from([1, 2, 5, 5])))).toEqual([22, 24, 3, 3]);
    expect(withRowScales(source, 2, [1, 1], { tokens: { seqLen: 2 } })).toBe(source);
    expect(withRowScales(null, 2, [1, 1, 1], { tokens: { seqLen: 2 } })).toBeNull();
  });
});

describe('hindsight and on-demand options', () => {
  it('default to off and are validated with the option name', () => {
    expect(parseGrpoConfig({})).toMatchObject({ herl_fraction: 0, herl_bonus: 0.5, guidance_on_demand: false, guidance_fail_threshold: 0, guidance_num_generations: 2, rise_aux_coef: 1, rise_aux_decay_steps: null, guided_is_cap: 2 });
    expect(() => parseGrpoConfig({ num_generations: 8, herl_fraction: 0.1 })).toThrow(/herl_fraction: 0\.1 of a group of 8 is no rollout: use at least 0\.125/);
    expect(() => parseGrpoConfig({ guidance_on_demand: true, num_generations: 4, generation_batch_size: 8, guidance_num_generations: 5 })).toThrow(/guidance_num_generations: must be at most num_generations \(4\), got 5/);
    expect(() => parseGrpoConfig({ herl_fraction: 0.5, per_device_train_batch_size: 8 })).toThrow(/herl_fraction: needs per_device_train_batch_size empty/);
    expect(() => parseGrpoConfig({ guidance_on_demand: true, per_device_train_batch_size: 8 })).toThrow(/guidance_on_demand: needs per_device_train_batch_size empty/);
    expect(() => parseGrpoConfig({ herl_fraction: 0.5, steps_per_generation: 2 })).toThrow(/herl_fraction: needs steps_per_generation = 1, got 2/);
    expect(() => parseGrpoConfig({ herl_bonus: -1 })).toThrow(/herl_bonus/);
    expect(() => parseGrpoConfig({ rise_aux_decay_steps: 0 })).toThrow(/rise_aux_decay_steps/);
    expect(() => parseGrpoConfig({ guided_is_cap: 0 })).toThrow(/guided_is_cap/);
    expect(() => parseGrpoConfig({ guidance_on_demand: 'yes' })).toThrow(/guidance_on_demand/);
  });

  it('a share link carries them; the TRL export says it cannot express them', async () => {
    const first = FIRST_VISIT.experiment as unknown as Experiment;
    const options = { herl_fraction: 0.5, herl_bonus: 0.25, guidance_on_demand: true, guidance_fail_threshold: 0.1, rise_aux_coef: 0.5, rise_aux_decay_steps: 20, guided_is_cap: null };
    const experiment = { ...first, config: { ...first.config, ...options } };
    expect(decodeShareLink(encodeShareLink({ experiment })).experiment.config).toMatchObject(options);
    expect(() => encodeShareLink({ experiment: { ...first, config: { ...first.config, rise_aux_coef: -1 } } })).toThrow(/rise_aux_coef/);
    const script = (await exportToTrl(experiment, { modelId: 'gpt2' })).files['train_grpo.py'];
    expect(script).toMatch(/# herl_fraction 0\.5 \(HeRL hindsight revision, herl_bonus 0\.25\): TRL .*; not applied/);
    expect(script).toMatch(/# guidance_on_demand \(RISE-RL selective internalization.*\): TRL has no guided rollouts for failed groups nor an auxiliary loss term; not applied/);
    const plain = (await exportToTrl(first, { modelId: 'gpt2' })).files['train_grpo.py'];
    expect(plain).not.toMatch(/herl|guidance_on_demand/);
  });
});

describe('hindsight and on-demand rollouts in run files, CSV and charts', () => {
  const base: RolloutRecord = { step: 0, group: 0, index: 4, prompt: 'Name a fruit', completion: 'apple', completion_ids: [1], logprobs: [-1], truncated: false, results: [], scores: [], reward: 1, advantage: 0.5 };
  const revised: RolloutRecord = { ...base, guided: { kind: 'hindsight', guidance: revisionGuidance('pear', [C[0]]), criteria: ['a'], revises: 2, bonus: 0.25, logprob_gap: 0.1, is_ratio: 1.1 } };
  const onDemand: RolloutRecord = { ...base, index: 5, guided: { kind: 'on_demand', guidance: '\n\n- Mentions apples', criteria: ['a'], natural_mean: 0 } };
  const exploration = { generation_rounds: 1, groups_resampled: 0, zero_std_groups_kept: 0, sampled_tokens: 8, extra_sampled_tokens: 0, extra_seconds: 0, scaffold_prob: 0, scaffolded: 0, scaffold_logprob_gap: null, scaffold_is_ratio_mean: null, herl_revised: 1, herl_improved: 1, herl_bonus_mean: 0.25, guidance_groups: 1, guidance_kept: 1, guidance_dropped: 1, rise_aux_coef: 0.5, guided_sampled_tokens: 6, guided_logprob_gap: 0.1 };

  it('the run file keeps both labels and the new metrics', async () => {
    const metrics = { step: 0, rewards: { reward: 1, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 1, unscorable: 0, aggregations: {} }, held_out: null, completions: { mean_length: 1, min_length: 1, max_length: 1, clipped_ratio: 0 }, exploration, frac_reward_zero_std: 0, loss: 0, policy_loss: 0, kl: null, entropy: 0, clip_ratio_low: 0, clip_ratio_high: 0, clip_ratio_region: 0, ratio_mean: 1, grad_norm: 0, learning_rate: 0, skipped: false, sampling_tokens_per_second: 0, training_tokens_per_second: 0, judge_seconds: 0, step_seconds: 0, update_submits: 1 } as StepMetrics;
    const json = await runFileJson({ name: 'run', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [metrics], rollouts: [revised, onDemand] });
    const back = await readRunFile(json);
    expect(back.rollouts.map((r) => r.guided)).toEqual([revised.guided, onDemand.guided]);
    expect(back.metrics[0].exploration).toMatchObject({ herl_revised: 1, guidance_kept: 1, guidance_dropped: 1, rise_aux_coef: 0.5 });
  });

  it('CSV: the kind per rollout and explore/ columns; a chart of the counts', () => {
    const rows = rolloutsToCsv([revised, onDemand]).split('\r\n');
    expect(rows[1]).toContain(',hindsight,"');
    expect(rows[2]).toContain(',on_demand,"');
    const m = { step: 0, rewards: { reward: 1, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 1, unscorable: 0, aggregations: {} }, held_out: null, completions: { mean_length: 1, min_length: 1, max_length: 1, clipped_ratio: 0 }, kl: null, exploration } as unknown as StepMetrics;
    expect(metricColumns([m])).toEqual(expect.arrayContaining(['explore/herl_revised', 'explore/guidance_kept', 'explore/guidance_dropped', 'explore/rise_aux_coef']));
    const chart = buildCharts([m], [], 0).find((c) => c.id === 'guided-rollouts')!;
    expect(chart.ys).toEqual([[1], [1], [1], [1]]);
    const plain = { ...m, exploration: { ...exploration, herl_revised: undefined, herl_improved: undefined, herl_bonus_mean: undefined, guidance_groups: undefined, guidance_kept: undefined, guidance_dropped: undefined, rise_aux_coef: undefined, guided_sampled_tokens: undefined, guided_logprob_gap: undefined } };
    expect(buildCharts([plain], [], 0).some((c) => c.id === 'guided-rollouts')).toBe(false);
  });
});
