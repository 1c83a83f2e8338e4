// Guided exploration's pure parts (src/rl/explore/): the scaffold schedule and plan, the
// learnability test (against the advantage kernel's float64 reference), slot filling, the
// mismatch statistics, replacement prompts, the options' validation and their exports.
import { describe, expect, it } from 'vitest';
import { groupAdvantageRef } from '../../../src/ops/groupAdvantage.reference';
import { mulberry32 } from '../../../src/rubric/dropout';
import { parseRubric } from '../../../src/rubric';
import { parseGrpoConfig } from '../../../src/rl/config';
import { fillSlots, isLearnable, type SlotState } from '../../../src/rl/explore/dynamicSampling';
import { importanceWeights, withImportanceWeights } from '../../../src/rl/explore/importance';
import { mismatchStats } from '../../../src/rl/explore/mismatch';
import { planScaffolds, samplingPromptsBound, scaffoldGuidance, scaffoldProbability, scaffoldSlots } from '../../../src/rl/explore/scaffold';
import { promptsForStep, replacementPrompts } from '../../../src/rl/promptSampler';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { metricColumns, metricsToCsv, rolloutsToCsv } from '../../../src/share/csv';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import type { Experiment } from '../../../src/rl/experiment';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { buildCharts } from '../../../src/ui/lib/series';
import { exportToTrl } from '../../../src/share/trlExport';

const RUBRIC = parseRubric({
  name: 'r',
  criteria: [
    { id: 'a', text: 'Mentions apples', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['apple'] } },
    { id: 'b', text: 'Mentions bananas', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['banana'] } },
    { id: 'c', text: 'Swears', weight: -1, tier: 'optional', rule: { kind: 'contains', terms: ['damn'] } },
    { id: 'd', text: 'Tracked only', weight: 0, tier: 'optional', rule: { kind: 'contains', terms: ['x'] } },
  ],
});

describe('scaffold schedule', () => {
  it('decays linearly from scaffold_prob_start to 0 over scaffold_decay_steps (default max_steps)', () => {
    const cfg = parseGrpoConfig({ scaffold_fraction: 0.5, scaffold_prob_start: 0.8, scaffold_decay_steps: 10, num_generations: 4, generation_batch_size: 8 });
    expect([0, 5, 9, 10, 25].map((s) => scaffoldProbability(cfg, s))).toEqual([0.8, 0.4, 0.8 * 0.1, 0, 0].map((x) => expect.closeTo(x, 12)));
    const byMax = parseGrpoConfig({ scaffold_fraction: 0.5, max_steps: 4, num_generations: 4, generation_batch_size: 8 });
    expect(scaffoldProbability(byMax, 1)).toBeCloseTo(0.75, 12);
    expect(scaffoldProbability(parseGrpoConfig({}), 0)).toBe(0);
  });

  it('scaffolds only the first ⌊fraction · G⌋ positions, each with ⌈fraction · K⌉ weighted criteria', () => {
    const cfg = parseGrpoConfig({ scaffold_fraction: 0.5, scaffold_criteria_fraction: 0.5, num_generations: 4, generation_batch_size: 8 });
    expect(scaffoldSlots(cfg)).toBe(2);
    const plan = planScaffolds(RUBRIC, cfg, { step: 0, round: 0, group: 0 });
    expect(plan.map((p) => p !== null)).toEqual([true, true, false, false]);
    for (const p of plan.slice(0, 2)) {
      // 3 weighted criteria (d has weight 0): ⌈0.5 · 3⌉ = 2, in rubric order, never "d".
      expect(p!.criteria).toHaveLength(2);
      const ids = p!.criteria.map((c) => c.id);
      expect(ids).not.toContain('d');
      expect([...ids].sort()).toEqual(ids);
      expect(p!.guidance).toBe(scaffoldGuidance(p!.criteria));
    }
  });

  it('is seeded, varies across groups and steps, and a lower probability scaffolds a subset', () => {
    const at = (p: number, group: number, step = 3) =>
      planScaffolds(RUBRIC, parseGrpoConfig({ scaffold_fraction: 1, scaffold_prob_start: p, scaffold_decay_steps: 1000, scaffold_criteria_fraction: 0.34, num_generations: 8, generation_batch_size: 8 }), { step, round: 0, group });
    expect(at(0.6, 0)).toEqual(at(0.6, 0));
    const lo = at(0.3, 1).map((s) => s !== null);
    const hi = at(0.9, 1).map((s) => s !== null);
    lo.forEach((on, i) => on && expect(hi[i]).toBe(true));
    expect(hi.filter(Boolean).length).toBeGreaterThan(lo.filter(Boolean).length);
    const subsets = (g: number, step = 3) => at(1, g, step).map((s) => s!.criteria.map((c) => c.id).join());
    expect(new Set(subsets(0)).size).toBeGreaterThan(1); // different criteria within a group
    expect(subsets(0)).not.toEqual(subsets(1));
    expect(subsets(0, 3)).not.toEqual(subsets(0, 4));
    expect(at(0, 0).every((s) => s === null)).toBe(true);
  });

  it('bounds the sampling prompts for the memory plan: the longest prompt with the longest possible scaffold', () => {
    const prompts = ['short', 'the longest prompt here'];
    expect(samplingPromptsBound(prompts, RUBRIC, { scaffold_fraction: 0, scaffold_criteria_fraction: 0.5 })).toEqual(prompts);
    // ⌈0.5 · 3⌉ = 2 of the weighted criteria: the two longest lines ("- Mentions bananas", "- Mentions apples").
    const bound = samplingPromptsBound(prompts, RUBRIC, { scaffold_fraction: 0.5, scaffold_criteria_fraction: 0.5 });
    expect(bound.slice(0, 2)).toEqual(prompts);
    expect(bound[2]).toBe('the longest prompt here' + scaffoldGuidance([RUBRIC.criteria[1], RUBRIC.criteria[0]]));
    // No planned scaffold is longer.
    const cfg = parseGrpoConfig({ scaffold_fraction: 1, scaffold_criteria_fraction: 0.5, num_generations: 8, generation_batch_size: 8 });
    for (let g = 0; g < 20; g++) for (const s of planScaffolds(RUBRIC, cfg, { step: 0, round: 0, group: g })) expect(s!.guidance.length).toBeLessThanOrEqual(bound[2].length - prompts[1].length);
  });

  it('states pitfalls as things to avoid', () => {
    expect(scaffoldGuidance(RUBRIC.criteria.slice(0, 3))).toBe('\n\nYour answer will be checked against these criteria:\n- Mentions apples\n- Mentions bananas\n- Avoid: Swears');
  });
});

describe('learnability (dynamic sampling) agrees with the advantage kernel', () => {
  it('on hand cases', () => {
    const plain = (r: (number | null)[]) => isLearnable(r, [], { gdpo: false });
    expect(plain([1, 1, 1, 1])).toBe(false);
    expect(plain([0, 0, 0, 0])).toBe(false);
    expect(plain([1, 0, 1, 1])).toBe(true);
    expect(plain([null, 0.5, null, null])).toBe(false); // one valid member
    expect(plain([null, 0.5, null, 0.25])).toBe(true);
    const gdpo = (s: (number | null)[][], keep?: boolean[]) => isLearnable([], s, { gdpo: true, keep });
    expect(gdpo([[1, 0], [1, 1]])).toBe(true);
    expect(gdpo([[1, 0], [1, 0]])).toBe(false);
    expect(gdpo([[1, 0], [1, 1]], [true, false])).toBe(false); // the varying criterion was dropped
  });

  it('on random groups with ties and missing rewards: learnable ⇔ not counted zero-std by groupAdvantageRef', () => {
    const rand = mulberry32(7);
    const seen = { learnable: 0, flat: 0, gdpo: 0 };
    for (let trial = 0; trial < 400; trial++) {
      const G = 2 + Math.floor(rand() * 4);
      const K = 1 + Math.floor(rand() * 3);
      const gdpo = K > 1 && rand() < 0.5;
      const pick = () => (rand() < 0.2 ? null : [0, 0.5, 1][Math.floor(rand() * (rand() < 0.5 ? 1 : 3))]);
      const scores = Array.from({ length: G }, () => Array.from({ length: K }, pick));
      const rewards = gdpo ? [] : scores.map((s) => s[0]);
      const ref = groupAdvantageRef({
        rewards: gdpo ? scores.flat().map((x) => (x === null ? NaN : x)) : rewards.map((x) => (x === null ? NaN : x)),
        numCriteria: gdpo ? K : 1,
        numGenerations: G,
        scaleRewards: 'group',
        eps: 1e-4,
        multiObjectiveAggregation: gdpo ? 'normalize_then_sum' : 'sum_then_normalize',
        advantageEstimator: 'grpo',
      });
      if (ref.unscorableGroups === 1) continue; // no valid member: neither zero-std nor learnable there
      const learnable = isLearnable(rewards, scores, { gdpo });
      expect(learnable, JSON.stringify({ scores, gdpo })).toBe(ref.zeroStdGroups === 0);
      seen[learnable ? 'learnable' : 'flat']++;
      if (gdpo) seen.gdpo++;
    }
    // Both outcomes, and both modes, were exercised.
    expect(Math.min(seen.learnable, seen.flat, seen.gdpo)).toBeGreaterThan(30);
  });

  it('fills each open slot with its draw and keeps the unlearnable ones open', () => {
    const slots: SlotState<string>[] = [0, 1, 2].map(() => ({ group: null, learnable: false }));
    let open = fillSlots(slots, [0, 1, 2], [
      { group: 'a0', learnable: false },
      { group: 'b0', learnable: true },
      { group: 'c0', learnable: false },
    ]);
    expect(open).toEqual([0, 2]);
    open = fillSlots(slots, open, [
      { group: 'a1', learnable: true },
      { group: 'c1', learnable: false },
    ]);
    expect(open).toEqual([2]);
    expect(slots.map((s) => s.group)).toEqual(['a1', 'b0', 'c1']);
    expect(() => fillSlots(slots, [2], [])).toThrow(/0 draws for 1 open slots/);
  });
});

describe('scaffold mismatch statistics', () => {
  it('match hand-computed values', () => {
    // Δ = original − sampling: [-0.5, 1] and [0].
    const s = mismatchStats([[-1, -2], [-3]], [[-1.5, -1], [-3]]);
    expect(s.per_rollout[0].logprob_gap).toBeCloseTo(0.75, 12);
    expect(s.per_rollout[0].is_ratio).toBeCloseTo(Math.exp(0.25), 12);
    expect(s.per_rollout[1]).toEqual({ logprob_gap: 0, is_ratio: 1 });
    expect(s.logprob_gap).toBeCloseTo(1.5 / 3, 12);
    expect(s.is_ratio_mean).toBeCloseTo((Math.exp(-0.5) + Math.exp(1) + 1) / 3, 12);
    expect(mismatchStats([[]], [[]])).toEqual({ logprob_gap: 0, is_ratio_mean: 1, per_rollout: [{ logprob_gap: 0, is_ratio: 1 }] });
    expect(() => mismatchStats([[1]], [[1, 2]])).toThrow(/rollout 0/);
  });
});

describe('scaffold importance correction', () => {
  it('weights are min(exp(original − sampling), cap), by hand', () => {
    const w = importanceWeights([-1, -2, -3], [-1.5, -1, -3], 2);
    expect(w[0]).toBeCloseTo(Math.exp(-0.5), 12);
    expect(w[1]).toBe(2); // e^1 > 2: capped
    expect(w[2]).toBe(1);
    expect(() => importanceWeights([0], [0], 0)).toThrow(/cap must be > 0/);
  });

  it('multiply into the token-credit weights at each guided completion position only', () => {
    // N = 3 rows of T = 5, completion token j at position 2 + j.
    const layout = { tokens: { seqLen: 5 }, completionStart: 2 };
    const weights = [[0.5, 2], null, [0.25]];
    const bare = withImportanceWeights(null, weights, layout)!;
    expect(bare.needsEntropy).toBe(false);
    expect(Array.from(bare.weightsFor(0, 3, null))).toEqual([1, 1, 0.5, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0.25, 1, 1]);
    // A micro-batch [1, 3) only: rows 1 and 2, laid out from 0.
    expect(Array.from(bare.weightsFor(1, 2, null))).toEqual([1, 1, 1, 1, 1, 1, 1, 0.25, 1, 1]);
    const calls: [number, number, Float32Array | null][] = [];
    const credit = {
      needsEntropy: true,
      weightsFor(start: number, count: number, entropy: Float32Array | null) {
        calls.push([start, count, entropy]);
        return new Float32Array(count * 5).fill(3);
      },
    };
    const both = withImportanceWeights(credit, weights, layout)!;
    expect(both.needsEntropy).toBe(true);
    const e = new Float32Array(15);
    expect(Array.from(both.weightsFor(0, 3, e))).toEqual([3, 3, 1.5, 6, 3, 3, 3, 3, 3, 3, 3, 3, 0.75, 3, 3]);
    expect(calls).toEqual([[0, 3, e]]);
    expect(withImportanceWeights(credit, [null, null], layout)).toBe(credit);
    expect(withImportanceWeights(null, [null], layout)).toBeNull();
  });
});

describe('replacement prompts', () => {
  const pool = ['p0', 'p1', 'p2', 'p3', 'p4'];
  it('are drawn from the prompt set by (seed, step, round), cycling past its size', () => {
    const a = replacementPrompts(pool, 3, 2, 1, 42);
    expect(a).toEqual(replacementPrompts(pool, 3, 2, 1, 42));
    expect(new Set(a).size).toBe(3);
    a.forEach((p) => expect(pool).toContain(p));
    const rounds = [1, 2, 3, 4].map((r) => replacementPrompts(pool, 5, 2, r, 42).join());
    expect(new Set(rounds).size).toBeGreaterThan(1);
    const many = replacementPrompts(pool, 7, 0, 1, 1);
    expect(many.slice(5)).toEqual(many.slice(0, 2));
    expect(() => replacementPrompts([], 1, 0, 1, 1)).toThrow(/no prompts/);
  });
  it('leave the epoch order alone', () => {
    const before = promptsForStep(pool, 2, 3, 9);
    replacementPrompts(pool, 2, 3, 1, 9);
    expect(promptsForStep(pool, 2, 3, 9)).toEqual(before);
  });
});

describe('exploration options', () => {
  it('default to off and are validated with the option name', () => {
    const d = parseGrpoConfig({});
    expect(d).toMatchObject({ dynamic_sampling: false, max_num_gen_batches: 3, scaffold_fraction: 0, scaffold_prob_start: 1, scaffold_decay_steps: null, scaffold_criteria_fraction: 0.5, scaffold_is_cap: 2 });
    expect(parseGrpoConfig({ scaffold_is_cap: null }).scaffold_is_cap).toBeNull();
    expect(() => parseGrpoConfig({ scaffold_is_cap: 0 })).toThrow(/scaffold_is_cap/);
    expect(() => parseGrpoConfig({ num_generations: 8, scaffold_fraction: 0.1 })).toThrow(/scaffold_fraction: 0\.1 of a group of 8 is no rollout: use at least 0\.125/);
    expect(parseGrpoConfig({ num_generations: 8, scaffold_fraction: 0.125 }).scaffold_fraction).toBe(0.125);
    expect(() => parseGrpoConfig({ scaffold_fraction: 1.5 })).toThrow(/scaffold_fraction/);
    expect(() => parseGrpoConfig({ max_num_gen_batches: 0 })).toThrow(/max_num_gen_batches/);
    expect(() => parseGrpoConfig({ scaffold_decay_steps: 0 })).toThrow(/scaffold_decay_steps/);
    expect(() => parseGrpoConfig({ scaffold_criteria_fraction: 0 })).toThrow(/scaffold_criteria_fraction/);
    expect(() => parseGrpoConfig({ dynamic_sampling: 'yes' })).toThrow(/dynamic_sampling/);
  });

  it('the TRL export says it cannot express them', async () => {
    const first = FIRST_VISIT.experiment as unknown as { config: Record<string, unknown> };
    const experiment = { ...first, config: { ...first.config, dynamic_sampling: true, max_num_gen_batches: 4, scaffold_fraction: 0.5 } };
    const script = (await exportToTrl(experiment, { modelId: 'gpt2' })).files['train_grpo.py'];
    expect(script).toMatch(/# dynamic_sampling \(max_num_gen_batches 4\): TRL's GRPOConfig has no DAPO dynamic sampling/);
    expect(script).toMatch(/# scaffold_fraction 0\.5 \(RuscaRL rubric scaffolding\): TRL samples only from the dataset prompt; not applied/);
    expect(script).not.toMatch(/^\s*dynamic_sampling=/m);
    const plain = (await exportToTrl(first, { modelId: 'gpt2' })).files['train_grpo.py'];
    expect(plain).not.toMatch(/dynamic_sampling|scaffold/);
  });
});

const guidedRollout: RolloutRecord = {
  step: 0,
  group: 0,
  index: 0,
  prompt: 'Name a fruit',
  completion: 'apple',
  completion_ids: [1, 2],
  logprobs: [-1, -2],
  truncated: false,
  guided: { kind: 'scaffold', guidance: '\n\nYour answer will be checked against these criteria:\n- =Mentions apples', criteria: ['a'], logprob_gap: 0.5, is_ratio: 0.9 },
  results: [],
  scores: [],
  reward: 1,
  advantage: 0.5,
};

describe('guided rollouts and exploration metrics in exports', () => {
  it('CSV: a guided column per rollout and explore/ metric columns', () => {
    const csv = rolloutsToCsv([guidedRollout, { ...guidedRollout, index: 1, guided: undefined }]);
    const [header, first, second] = csv.split('\r\n');
    expect(header.split(',').slice(7, 9)).toEqual(['guided', 'guidance']);
    expect(first).toContain(',scaffold,"');
    expect(second.split(',').slice(7, 9)).toEqual(['', '']);
  });

  it('CSV metric columns appear only when a step has exploration metrics', () => {
    const base = { step: 0, rewards: { reward: 1, reward_std: 0, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 1, unscorable: 0, aggregations: {} }, held_out: null } as unknown as StepMetrics;
    const exploration = { generation_rounds: 2, groups_resampled: 1, zero_std_groups_kept: 0, sampled_tokens: 40, extra_sampled_tokens: 20, extra_seconds: 0.5, scaffold_prob: 0.5, scaffolded: 2, scaffold_logprob_gap: 0.3, scaffold_is_ratio_mean: null };
    const m = { ...base, completions: { mean_length: 1, min_length: 1, max_length: 1, clipped_ratio: 0 } } as StepMetrics;
    expect(metricColumns([m]).some((c) => c.startsWith('explore/'))).toBe(false);
    const withExplore = { ...m, exploration };
    const cols = metricColumns([withExplore]);
    expect(cols).toContain('explore/extra_sampled_tokens');
    const row = metricsToCsv([withExplore]).split('\r\n')[1].split(',');
    expect(row[cols.indexOf('explore/extra_sampled_tokens')]).toBe('20');
    expect(row[cols.indexOf('explore/scaffold_is_ratio_mean')]).toBe('');
  });

  it('the run file keeps the guided label and refuses an unknown kind', async () => {
    const json = await runFileJson({ name: 'run', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [], rollouts: [guidedRollout] });
    const back = await readRunFile(json);
    expect(back.rollouts[0].guided).toEqual(guidedRollout.guided);
    const bad = json.replace('"kind":"scaffold"', '"kind":"teacher"');
    expect(bad).not.toBe(json);
    await expect(readRunFile(bad)).rejects.toThrow(/guided/);
  });
});

describe('exploration options travel and show', () => {
  it('a share link carries them, and refuses a bad one with its name', () => {
    const first = FIRST_VISIT.experiment as unknown as Experiment;
    const config = { ...first.config, dynamic_sampling: true, max_num_gen_batches: 5, scaffold_fraction: 0.5, scaffold_prob_start: 0.7, scaffold_decay_steps: 20, scaffold_criteria_fraction: 0.25 };
    const back = decodeShareLink(encodeShareLink({ experiment: { ...first, config } }));
    expect(back.experiment.config).toMatchObject({ dynamic_sampling: true, max_num_gen_batches: 5, scaffold_fraction: 0.5, scaffold_prob_start: 0.7, scaffold_decay_steps: 20, scaffold_criteria_fraction: 0.25 });
    expect(() => encodeShareLink({ experiment: { ...first, config: { ...first.config, scaffold_prob_start: 2 } } })).toThrow(/scaffold_prob_start/);
  });

  it('charts of dynamic sampling and scaffolding appear only in runs that used them', () => {
    const step = (i: number, exploration?: StepMetrics['exploration']) =>
      ({
        step: i,
        rewards: { reward: 0.5, reward_std: 0.1, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 0, unscorable: 0, aggregations: {} },
        held_out: null,
        completions: { mean_length: 1, min_length: 1, max_length: 1, clipped_ratio: 0 },
        kl: null,
        exploration,
      }) as unknown as StepMetrics;
    const off = { generation_rounds: 1, groups_resampled: 0, zero_std_groups_kept: 0, sampled_tokens: 10, extra_sampled_tokens: 0, extra_seconds: 0, scaffold_prob: 0, scaffolded: 0, scaffold_logprob_gap: null, scaffold_is_ratio_mean: null };
    const ids = (m: StepMetrics[]) => buildCharts(m, [], 0).map((c) => c.id);
    expect(ids([step(0), step(1, off)])).not.toEqual(expect.arrayContaining(['dynamic-sampling']));
    expect(ids([step(0, off)]).filter((id) => id === 'scaffold' || id === 'dynamic-sampling')).toEqual([]);
    const charts = buildCharts([step(0, { ...off, generation_rounds: 2, extra_sampled_tokens: 7, sampled_tokens: 17 }), step(1, { ...off, scaffold_prob: 0.5, scaffold_logprob_gap: 0.2 })], [], 0);
    const dyn = charts.find((c) => c.id === 'dynamic-sampling')!;
    expect(dyn.ys).toEqual([[7, 0], [17, 10]]);
    const sc = charts.find((c) => c.id === 'scaffold')!;
    expect(sc.ys).toEqual([[0, 0.5], [null, 0.2]]);
  });
});
