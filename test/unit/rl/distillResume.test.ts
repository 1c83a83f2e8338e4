// Resuming and keeping distillation state (issue 11): the black-box teacher's induced rubric
// version travels in checkpoints (a resumed run judges with it and does not induce again before
// induce_every says so) and in run files' rubric_versions with its provenance (a broken lineage
// is refused on read); the ema teacher's weights travel in checkpoints (shapes checked against
// the model before anything is loaded), count in the checkpoint size and the store's usage, and
// go through run files. The GPU side (saved values read back after a resume) is the browser case
// "ema teacher survives a checkpoint" in test/browser/distillStep.test.ts.
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkpointEmaFiles, type CheckpointFiles } from '../../../src/model/checkpoint';
import { configFromHf } from '../../../src/model/config';
import { writeSafetensors, type Tensor } from '../../../src/model/safetensors';
import { hfParameterShapes } from '../../../src/model/weights';
import { estimateCheckpointBytes } from '../../../src/rl/checkpointPolicy';
import { parseGrpoConfig } from '../../../src/rl/config';
import { blackBoxState, inducedCheckpointFields, induceAfterStep, resumedInducedRubric, type TeacherRubricEvent } from '../../../src/rl/distill/blackBox';
import type { GrpoContext, StepMetrics, StepResult } from '../../../src/rl/grpoStep';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import type { GenerationMessages } from '../../../src/rubric/generate';
import { evolvedRubricVersions, readRunFile, runFileJson, runFileZip, RunFileError, type RunFileInput } from '../../../src/share/runFile';
import { FIRST_VISIT } from '../../../src/share/presets';
import { RunStore } from '../../../src/store';
import { metrics as stepMetrics, newRun, rollouts } from '../store/fixtures';

const BASE = parseRubric({ name: 'base', criteria: [{ id: 'short', text: 'At most 30 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 30 } }] });
const RESPONSES = [
  { prompt: 'Sky?', response: 'Blue, from Rayleigh scattering.' },
  { prompt: 'Sea?', response: 'Salty: dissolved minerals.' },
];
const config = (distillation: Record<string, unknown> = {}) =>
  parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, distillation: { teacher: 'black_box', teacher_responses: RESPONSES, ...distillation } });

const criteriaJson = (id: string, text: string) => JSON.stringify({ criteria: [{ id, text, weight: 2, tier: 'important', judge_question: `${text}?` }] });
/** A rubric writer: one criterion per prompt; counts its calls. */
function writer() {
  const calls = { n: 0 };
  const complete = async (m: GenerationMessages) => {
    calls.n++;
    return m.user.includes('<prompt>\nSky?\n</prompt>') ? criteriaJson('names_cause', 'Names the physical cause') : criteriaJson('explains', 'Explains why');
  };
  return { complete, calls };
}
const stepResult = (step: number): StepResult =>
  ({
    metrics: { step },
    rollouts: [
      { prompt: 'Sky?', completion: 'Blue.' },
      { prompt: 'Sky?', completion: 'Nice day.' },
      { prompt: 'Sea?', completion: 'Wet.' },
      { prompt: 'Sea?', completion: 'Big.' },
    ],
  }) as unknown as StepResult;

/** Just what induceAfterStep and the checkpoint fields read of a context. */
function context(cfg: ReturnType<typeof config>, version: string, complete: (m: GenerationMessages) => Promise<string>, resumed: Awaited<ReturnType<typeof resumedInducedRubric>> = null) {
  return {
    config: cfg,
    rubric: resumed?.rubric ?? BASE,
    rubricVersion: resumed?.version ?? version,
    rubricGenerator: complete,
    modelJudge: { name: 'remote:judge', judge: async () => [] },
    blackBox: blackBoxState(cfg, { rubric: BASE, version }, undefined, resumed),
  } as unknown as GrpoContext;
}
const checkpointOf = (state: Record<string, unknown>) => ({ 'trainer_state.json': JSON.stringify({ global_step: 1, seed: 1, ...state }) }) as CheckpointFiles;

/** A run that induced after step 0: its context and the step's event. */
async function inducedRun(cfg = config()) {
  const version = await rubricVersion(BASE);
  const w = writer();
  const ctx = context(cfg, version, w.complete);
  const result = stepResult(0);
  await induceAfterStep(ctx, 0, result);
  return { ctx, version, event: result.metrics.teacher_rubric!, w };
}

describe('the black-box teacher\'s induced version in checkpoints', () => {
  it('is saved with its provenance and restored on resume: the run judges with it and does not induce again', async () => {
    const { ctx, version, event } = await inducedRun();
    expect(event.outcome).toBe('induced');
    const fields = inducedCheckpointFields(ctx);
    expect(fields.induced_rubric).toEqual({ version: event.version, rubric: event.rubric, provenance: event.provenance });
    const restored = await resumedInducedRubric(checkpointOf(fields), { version });
    expect(restored).toEqual({ version: event.version, rubric: ctx.rubric, provenance: event.provenance });
    // The resumed context judges with the induced version, not the base rubric …
    const w2 = writer();
    const resumed = context(config(), version, w2.complete, restored);
    expect(resumed.rubricVersion).toBe(event.version);
    expect(resumed.rubric.criteria.map((c) => c.id)).toEqual(['short', 'names_cause', 'explains']);
    // … and (induce_every null: once per run) induces nothing after its first step.
    const next = stepResult(1);
    await induceAfterStep(resumed, 1, next);
    expect(next.metrics.teacher_rubric).toBeUndefined();
    expect(w2.calls.n).toBe(0);
    // Its next checkpoint still carries it.
    expect(inducedCheckpointFields(resumed)).toEqual(fields);
  });

  it('a run that has not induced adds nothing, and its resume induces after the first step it trains', async () => {
    const version = await rubricVersion(BASE);
    const w = writer();
    const ctx = context(config(), version, w.complete);
    expect(inducedCheckpointFields(ctx)).toEqual({});
    expect(inducedCheckpointFields({ blackBox: null } as unknown as GrpoContext)).toEqual({});
    expect(await resumedInducedRubric(checkpointOf({}), { version })).toBeNull();
    expect(await resumedInducedRubric(undefined, { version })).toBeNull();
    const result = stepResult(3);
    await induceAfterStep(ctx, 3, result);
    expect(result.metrics.teacher_rubric?.outcome).toBe('induced');
  });

  it('with induce_every, a re-induction replaces the saved version', async () => {
    const { ctx, event } = await inducedRun(config({ induce_every: 2 }));
    const later = stepResult(1);
    await induceAfterStep(ctx, 1, later); // (1 + 1) % 2 === 0: due
    expect(later.metrics.teacher_rubric?.outcome).toBe('induced');
    expect(inducedCheckpointFields(ctx).induced_rubric!.provenance.step).toBe(1);
    expect(event.provenance!.step).toBe(0);
  });

  it('refuses an edited checkpoint, a missing provenance and another rubric\'s lineage, saying which', async () => {
    const { ctx, version } = await inducedRun();
    const saved = inducedCheckpointFields(ctx).induced_rubric!;
    const edited = structuredClone(saved);
    edited.rubric.criteria[1].weight = 7;
    await expect(resumedInducedRubric(checkpointOf({ induced_rubric: edited }), { version })).rejects.toThrow(/teacher-induced rubric does not match its version .*: the checkpoint was edited or damaged/);
    await expect(resumedInducedRubric(checkpointOf({ induced_rubric: { ...saved, provenance: undefined } }), { version })).rejects.toThrow(/has no provenance/);
    await expect(resumedInducedRubric(checkpointOf({ induced_rubric: { ...saved, rubric: { name: 'x' } } }), { version })).rejects.toThrow(/is not a valid rubric/);
    await expect(resumedInducedRubric(checkpointOf({ induced_rubric: saved }), { version: 'e'.repeat(64) })).rejects.toThrow(
      /was induced from rubric version [0-9a-f]{12}…, but this run's rubric is version eeeeeeeeeeee…: the lineage is broken/,
    );
    const renamed = { ...saved, provenance: { ...saved.provenance, criteria: ['names_cause', 'gone'] } };
    await expect(resumedInducedRubric(checkpointOf({ induced_rubric: renamed }), { version })).rejects.toThrow(/names induced criteria it does not hold \(gone\)/);
  });
});

describe('the induced version in run files', () => {
  const experiment = { ...structuredClone(FIRST_VISIT.experiment), rubric: BASE, config: { ...FIRST_VISIT.experiment.config, distillation: { teacher: 'black_box', teacher_responses: RESPONSES } } };
  async function runInput(): Promise<{ input: RunFileInput; version: string; event: TeacherRubricEvent }> {
    const { version, event } = await inducedRun();
    const steps: StepMetrics[] = [{ ...stepMetrics(0), teacher_rubric: event }, stepMetrics(1), stepMetrics(2)];
    const input: RunFileInput = { name: 'distilled', exported_at: '2026-01-01T00:00:00.000Z', experiment: experiment as RunFileInput['experiment'], metrics: steps, rollouts: [] };
    input.rubric_versions = evolvedRubricVersions(experiment.rubric, steps);
    return { input, version, event };
  }

  it('lists it after the experiment\'s rubric, from the step after its induction, with its parent and provenance, and reads it back', async () => {
    const { input, version, event } = await runInput();
    for (const text of [await runFileJson(input), await runFileZip(input)]) {
      const back = await readRunFile(text);
      expect(back.rubric_versions.map((v) => [v.version, v.first_step, v.parent ?? null])).toEqual([
        [version, 0, null],
        [event.version, 1, version],
      ]);
      expect(back.rubric_versions[1].provenance).toEqual(event.provenance);
      expect(back.rubric_versions[1].provenance).toMatchObject({ teacher: 'stored responses (2 for 2 prompts)', judge: 'remote:judge', prompts: ['Sky?', 'Sea?'], criteria: ['names_cause', 'explains'] });
      expect(back.metrics[0].teacher_rubric).toEqual(event);
    }
    // A failed induction adds no version.
    expect(evolvedRubricVersions(BASE, [{ ...stepMetrics(0), teacher_rubric: { step: 0, outcome: 'failed', version: null, provenance: null, error: 'no' } }])).toBeUndefined();
  });

  it('refuses a broken lineage, edited provenance and an induced version the file does not hold', async () => {
    const { input } = await runInput();
    const doc = JSON.parse(await runFileJson(input));
    const orphan = structuredClone(doc);
    orphan.rubric_versions[1].parent = 'f'.repeat(64);
    await expect(readRunFile(JSON.stringify(orphan))).rejects.toThrow(/parent ffffffffffff… is not an earlier version in the file: the lineage is broken/);
    const noParent = structuredClone(doc);
    delete noParent.rubric_versions[1].parent;
    await expect(readRunFile(JSON.stringify(noParent))).rejects.toThrow(/rubric_versions\[1\]: it was induced from version [0-9a-f]{12}…, but its parent is missing: the lineage is broken/);
    const otherBase = structuredClone(doc);
    otherBase.rubric_versions[1].provenance.base_version = 'a'.repeat(64);
    await expect(readRunFile(JSON.stringify(otherBase))).rejects.toThrow(/it was induced from version aaaaaaaaaaaa…, but its parent is [0-9a-f]{12}…: the lineage is broken/);
    const renamed = structuredClone(doc);
    renamed.rubric_versions[1].provenance.criteria = ['names_cause', 'gone'];
    await expect(readRunFile(JSON.stringify(renamed))).rejects.toThrow(/its provenance names induced criteria it does not hold \(gone\)/);
    const withKey = structuredClone(doc);
    withKey.rubric_versions[1].provenance.api_key = 'sk-1';
    await expect(readRunFile(JSON.stringify(withKey))).rejects.toThrow(RunFileError);
    const missing = structuredClone(doc);
    missing.rubric_versions.pop();
    await expect(readRunFile(JSON.stringify(missing))).rejects.toThrow(/step 0's teacher-induced rubric version [0-9a-f]{12}… is not among rubric_versions/);
    const edited = structuredClone(doc);
    edited.metrics[0].teacher_rubric.rubric.criteria[1].weight = 5;
    await expect(readRunFile(JSON.stringify(edited))).rejects.toThrow(/step 0's teacher-induced rubric does not match its version/);
  });
});

// ---- the ema teacher's weights ----

const FIXTURE_CONFIG = JSON.parse(readFileSync(new URL('../../fixtures/tiny-byte-gpt2/config.json', import.meta.url), 'utf8'));

/** An ema_model.safetensors for the fixture's config, each tensor filled with `fill` (one shape replaced when asked). */
function emaFile(fill: number, wrong?: { name: string; shape: number[] }, drop?: string): ArrayBuffer {
  const tensors = new Map<string, Tensor>();
  for (const [name, shape] of hfParameterShapes(configFromHf(FIXTURE_CONFIG))) {
    if (name === drop) continue;
    const s = wrong?.name === name ? wrong.shape : shape;
    tensors.set(name, { shape: s, data: new Float32Array(s.reduce((a, b) => a * b, 1)).fill(fill) });
  }
  return writeSafetensors(tensors, { metadata: { format: 'pt' } });
}
const emaCheckpoint = (ema: ArrayBuffer | undefined, step = 1): CheckpointFiles => ({
  'config.json': JSON.stringify(FIXTURE_CONFIG),
  'model.safetensors': emaFile(0.5),
  'trainer_state.json': JSON.stringify({ global_step: step, seed: 1 }),
  ...(ema ? { 'ema_model.safetensors': ema } : {}),
});

describe('the ema teacher\'s weights in checkpoints', () => {
  it('are found with their shapes checked against the model; a mismatch or a missing tensor is refused, naming it', () => {
    const good = emaFile(0.25);
    expect(checkpointEmaFiles(emaCheckpoint(good))!.weights).toBe(good);
    expect(checkpointEmaFiles(emaCheckpoint(good))!.optimizer).toBeUndefined();
    expect(checkpointEmaFiles(emaCheckpoint(undefined))).toBeNull();
    expect(() => checkpointEmaFiles(emaCheckpoint(emaFile(0, { name: 'transformer.h.1.mlp.c_fc.weight', shape: [32, 48] })))).toThrow(
      "the checkpoint's ema teacher (ema_model.safetensors) does not match the model: transformer.h.1.mlp.c_fc.weight has shape [32,48], the model's is [32,64]",
    );
    expect(() => checkpointEmaFiles(emaCheckpoint(emaFile(0, undefined, 'transformer.h.0.attn.c_attn.weight')))).toThrow(
      /ema_model\.safetensors\) has no tensor transformer\.h\.0\.attn\.c_attn\.weight: it was not saved from this model/,
    );
    expect(() => checkpointEmaFiles(emaCheckpoint(new Uint8Array(4).buffer))).toThrow(/the checkpoint's ema teacher is damaged: .*too short/);
  });

  it('count in the checkpoint size (save_steps auto) as a full float32 copy', () => {
    expect(estimateCheckpointBytes({ parameters: 1000, trainableParameters: 1000, lora: false, ema: true })).toBe(16_000);
    expect(estimateCheckpointBytes({ parameters: 1000, trainableParameters: 1000, lora: false })).toBe(12_000);
  });

  it('are kept by the store, counted in its usage, and refused when not binary', async () => {
    const store = await RunStore.open({ name: 'ema-checkpoint', storage: null });
    try {
      const run = await store.createRun(newRun());
      const ema = emaFile(0.125);
      const withEma = emaCheckpoint(ema);
      await store.commitStep(run.id, 0, stepMetrics(0), rollouts(0), emaCheckpoint(undefined));
      const without = (await store.getRun(run.id))!.usage.checkpoints.bytes;
      await store.commitStep(run.id, 0, stepMetrics(0), rollouts(0), withEma);
      const usage = (await store.getRun(run.id))!.usage.checkpoints;
      expect(usage.count).toBe(1);
      expect(usage.bytes - without).toBeGreaterThanOrEqual(ema.byteLength);
      const back = (await store.latestCheckpoint(run.id))!.files['ema_model.safetensors']!;
      expect(new Uint8Array(back)).toEqual(new Uint8Array(ema));
      await expect(store.saveCheckpoint(run.id, 0, { ...withEma, 'ema_model.safetensors': 'weights' as unknown as ArrayBuffer })).rejects.toThrow(
        /files\["ema_model.safetensors"\] must be an ArrayBuffer when present/,
      );
    } finally {
      store.close();
    }
  });

  it('travel in run files (JSON and zip) and come back byte for byte', async () => {
    const ema = emaFile(0.75);
    const input: RunFileInput = {
      name: 'ema',
      experiment: structuredClone(FIRST_VISIT.experiment) as RunFileInput['experiment'],
      metrics: [stepMetrics(0)],
      rollouts: [],
      checkpoint: { step: 1, files: emaCheckpoint(ema) },
    };
    for (const file of [await runFileJson(input), await runFileZip(input)]) {
      const back = await readRunFile(file);
      expect(new Uint8Array(back.checkpoint!.files['ema_model.safetensors']!)).toEqual(new Uint8Array(ema));
      expect(checkpointEmaFiles(back.checkpoint!.files)).not.toBeNull();
    }
  });
});
