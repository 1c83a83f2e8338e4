// Online rubric evolution's lineage outside the trainer: run files (versions with parent, strategy
// and reason; each step's decision), share links (pin / allow and the lineage), the TRL export
// (the final rubric, and a note that the rubric evolved), the reward chart's markers and CSV.
import { describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS, parseGrpoConfig } from '../../../src/rl/config';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { parseRubric, rubricVersion, type Rubric } from '../../../src/rubric';
import { evolveRubric, newEvolutionHistory, recordEvolutionStep, rubricLineage, type RubricEvolutionEvent } from '../../../src/rubric/evolve';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { evolvedRubricVersions, readRunFile, runFileJson, RunFileError, type RunFileInput } from '../../../src/share/runFile';
import { exportToTrl, finalRubricExperiment } from '../../../src/share/trlExport';
import { buildCharts, rubricEvolutionMarkers } from '../../../src/ui/lib/series';

const START = {
  name: 'evolving',
  criteria: [
    { id: 'short', text: 'At most 30 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 30 } },
    { id: 'moon', text: 'Mentions the moon', weight: 2, tier: 'essential', rule: { kind: 'contains', terms: ['moon'] } },
  ],
};
const experiment = (config: Record<string, unknown> = {}) => ({
  ...structuredClone(FIRST_VISIT.experiment),
  rubric: START,
  config: { ...FIRST_VISIT.experiment.config, rubric_evolution: 'prune', rubric_evolution_every: 1, rubric_evolution_window: 1, ...config },
});

/** A real accepted prune decision: 'short' is met by every rollout, 'moon' splits the group. */
async function prunedEvent(): Promise<{ start: string; event: RubricEvolutionEvent }> {
  const rubric = parseRubric(START);
  const start = await rubricVersion(rubric);
  const h = newEvolutionHistory(rubric, start);
  recordEvolutionStep(h, 0, [0, 1, 2, 3].map((i) => ({ step: 0, group: 0, prompt: 'p', completion: `c${i}`, scores: [1, i % 2] })), 1);
  const event = await evolveRubric({ history: h, step: 0, options: { strategy: 'prune', every: 1, lookback: 1, maxNew: 2, threshold: 0.5 }, scoreNew: async () => [] });
  return { start, event };
}

function metrics(step: number, over: Partial<StepMetrics> = {}): StepMetrics {
  return {
    step,
    rewards: { reward: 0.5, reward_std: 0.25, criterion_pass_rate: { short: 1, moon: 0.5 }, criterion_mean_score: { short: 1, moon: 0.5 }, strict_completion_rate: 0.5, unscorable: 0, aggregations: {} },
    held_out: null,
    completions: { mean_length: 4, min_length: 2, max_length: 6, clipped_ratio: 0 },
    frac_reward_zero_std: 0,
    loss: 0,
    policy_loss: 0,
    kl: null,
    entropy: 1,
    clip_ratio_low: 0,
    clip_ratio_high: 0,
    clip_ratio_region: 0,
    ratio_mean: 1,
    grad_norm: 0.5,
    learning_rate: 1e-4,
    skipped: false,
    sampling_tokens_per_second: 1,
    training_tokens_per_second: 1,
    judge_seconds: 0,
    step_seconds: 1,
    update_submits: 1,
    ...over,
  };
}

async function evolvedRun(): Promise<{ input: RunFileInput; start: string; event: RubricEvolutionEvent }> {
  const { start, event } = await prunedEvent();
  const steps = [metrics(0, { rubric_version: start, rubric_evolution: event }), metrics(1, { rubric_version: event.version! }), metrics(2, { rubric_version: event.version! })];
  const exp = experiment();
  const input: RunFileInput = { name: 'evolved', exported_at: '2026-01-01T00:00:00.000Z', experiment: exp as RunFileInput['experiment'], metrics: steps, rollouts: [] };
  input.rubric_versions = evolvedRubricVersions(exp.rubric, steps);
  return { input, start, event };
}

describe('the config option', () => {
  it('defaults to off, names its strategies, and refuses irt_ability', () => {
    expect([GRPO_DEFAULTS.rubric_evolution, GRPO_DEFAULTS.rubric_evolution_every, GRPO_DEFAULTS.rubric_evolution_window]).toEqual(['off', 5, 3]);
    expect(() => parseGrpoConfig({ rubric_evolution: 'grow' })).toThrow(/rubric_evolution/);
    expect(() => parseGrpoConfig({ rubric_evolution: 'prune', reward_aggregation: { method: 'irt_ability' } })).toThrow(/rubric_evolution: cannot be combined with reward_aggregation "irt_ability"/);
  });
});

describe('run files', () => {
  it('carry every version with its parent, strategy and reason, and each step\'s decision', async () => {
    const { input, start, event } = await evolvedRun();
    const back = await readRunFile(await runFileJson(input));
    expect(back.rubric_versions.map((v) => [v.version, v.first_step, v.parent ?? null, v.strategy ?? null])).toEqual([
      [start, 0, null, null],
      [event.version, 1, start, 'prune'],
    ]);
    expect(back.rubric_versions[1].reason).toBe(event.reason);
    expect(back.metrics[0].rubric_evolution).toEqual(event);
    expect(back.metrics[2].rubric_version).toBe(event.version);
    expect(rubricLineage(start, back.metrics.map((m) => m.rubric_evolution))).toEqual([
      { version: start, parent: null, first_step: 0, strategy: null, reason: null },
      { version: event.version, parent: start, first_step: 1, strategy: 'prune', reason: event.reason },
    ]);
  });
  it('refuse a broken lineage and an accepted version the file does not hold', async () => {
    const { input } = await evolvedRun();
    const doc = JSON.parse(await runFileJson(input));
    const orphan = structuredClone(doc);
    orphan.rubric_versions[1].parent = 'f'.repeat(64);
    await expect(readRunFile(JSON.stringify(orphan))).rejects.toThrow(/parent ffffffffffff… is not an earlier version in the file/);
    const missing = structuredClone(doc);
    missing.rubric_versions.pop();
    await expect(readRunFile(JSON.stringify(missing))).rejects.toThrow(RunFileError);
    await expect(readRunFile(JSON.stringify(missing))).rejects.toThrow(/accepted rubric version .* is not among rubric_versions/);
    const edited = structuredClone(doc);
    edited.metrics[0].rubric_evolution.rubric.criteria[0].weight = 5;
    await expect(readRunFile(JSON.stringify(edited))).rejects.toThrow(/evolved rubric does not match its version/);
  });
  it('a run that never evolved writes the experiment\'s rubric alone', () => {
    expect(evolvedRubricVersions(START, [metrics(0), metrics(1, { rubric_evolution: { step: 1, strategy: 'prune', outcome: 'unchanged', parent: 'a'.repeat(64), version: null, reason: 'nothing', removed: [], added: [] } })])).toBeUndefined();
  });
});

describe('share links', () => {
  it('allow keeps the experiment\'s evolution and carries the lineage; pin opens with evolution off', async () => {
    const { start, event } = await prunedEvent();
    const versions = rubricLineage(start, [event]);
    const allow: Shared = { experiment: experiment() as Shared['experiment'], rubric_lineage: { mode: 'allow', versions } };
    const a = decodeShareLink(encodeShareLink(allow));
    expect(a.rubric_lineage).toEqual({ mode: 'allow', versions });
    expect(a.experiment.config.rubric_evolution).toBe('prune');
    const p = decodeShareLink(encodeShareLink({ ...allow, rubric_lineage: { mode: 'pin' } }));
    expect(p.rubric_lineage).toEqual({ mode: 'pin' });
    expect(p.experiment.config.rubric_evolution).toBe('off');
  });
  it('refuse a malformed lineage in the page\'s words', () => {
    const bad = { experiment: experiment(), rubric_lineage: { mode: 'freeze' } } as unknown as Shared;
    expect(() => encodeShareLink(bad)).toThrow(/\nRubric lineage mode: /);
  });
});

describe('the TRL export', () => {
  it('writes the final rubric and says the run\'s rubric evolved', async () => {
    const { input, event } = await evolvedRun();
    const out = await exportToTrl(input.experiment, { rubricEvolution: input.metrics.map((m) => m.rubric_evolution) });
    expect(out.notes[0]).toMatch(/the run's rubric evolved \(rubric_evolution "prune"\): 1 new version\(s\), from step 1 \(prune/);
    expect(out.notes[0]).toContain(`final version ${event.version!.slice(0, 12)}`);
    expect(out.files['rubric_reward.py']).toContain(event.version);
    expect(out.files['rubric_reward.py']).not.toContain('"short"');
    expect(out.files['README.md']).toContain("the run's rubric evolved");
  });
  it('without an accepted version it keeps the experiment\'s (pinned) rubric and says evolution is not applied', async () => {
    const exp = experiment();
    const { note } = finalRubricExperiment(exp, parseGrpoConfig(exp.config), []);
    expect(note).toMatch(/the run's rubric did not evolve, so rubric_reward.py holds the experiment's rubric; evolution not applied/);
    expect(finalRubricExperiment(exp, parseGrpoConfig({}), []).note).toBeNull();
    const out = await exportToTrl(exp);
    expect(out.files['rubric_reward.py']).toContain(await rubricVersion(parseRubric(START) as Rubric));
  });
});

describe('charts and CSV', () => {
  it('mark each accepted version on the reward chart at the first step it judged', async () => {
    const { input, event } = await evolvedRun();
    expect(rubricEvolutionMarkers(input.metrics)).toEqual([{ x: 1, label: `rubric version ${event.version!.slice(0, 8)} after step 1 (prune: −short)` }]);
    const reward = buildCharts(input.metrics, ['short', 'moon'], 0).find((c) => c.id === 'reward')!;
    expect(reward.markers).toEqual([{ x: 1, label: expect.stringContaining('prune: −short') }]);
    expect(buildCharts([metrics(0)], [], 0).find((c) => c.id === 'reward')!.markers).toBeUndefined();
  });
  it('CSV has the version and decision per step', async () => {
    const { input, start, event } = await evolvedRun();
    expect(metricColumns(input.metrics)).toEqual(expect.arrayContaining(['rubric/version', 'rubric/evolution', 'rubric/evolved_to', 'rubric/evolution_reason']));
    const lines = metricsToCsv(input.metrics).split('\r\n');
    expect(lines[1]).toContain(start);
    expect(lines[1]).toContain(`accepted,${event.version}`);
  });
});
