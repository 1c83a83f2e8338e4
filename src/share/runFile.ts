// A run as one file, to keep, send or reopen elsewhere: the experiment, every rubric version it
// trained on, metrics per step, rollouts and optionally a checkpoint. Two containers, one document:
//  - JSON (`.rubric-run.json`): the checkpoint's binary files inline as { "base64": ... };
//  - zip (`.rubric-run.zip`, fflate): `run.json` plus `checkpoint/<file>` entries, referenced
//    from run.json as { "zip_entry": "checkpoint/model.safetensors" }.
// The document: { format: "rubric-playground-run", version: 1, name, exported_at, experiment,
// rubric_versions: [{ version, rubric, first_step }], metrics: StepMetrics[], rollouts:
// RolloutRecord[], checkpoint?: { step, files } }. Non-finite numbers (a skipped step's NaN loss)
// are written as the strings "NaN", "Infinity", "-Infinity" and read back as numbers.
// Import checks everything before returning anything: format and version, strict schemas, each
// rubric version against its SHA-256, the checkpoint's JSON files and safetensors header, and
// size limits (zip entries by declared size; inflation never writes past it).
import { strToU8, unzipSync, zipSync } from 'fflate';
import { z } from 'zod';
import type { CheckpointFiles } from '../model/checkpoint';
import { parseExperiment, type Experiment } from '../rl/experiment';
import { experimentProblems } from '../rl/issueLabels';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import type { InductionProvenance } from '../rubric/induce';
import { MAX_SPANS, parseRubric, rubricVersion, type Rubric } from '../rubric';
import { MAX_CRITERIA } from '../rubric/schema';
import { probeSetSchema, type ProbeSet } from '../rubric/probeSet';
import { base64ToBytes, bytesToBase64, checkKeys, ShareLinkError } from './link';
import { runLabelsProblems, runLabelsSchema, type RunFileLabels } from './runLabels';

export const RUN_FILE_FORMAT = 'rubric-playground-run';
export const RUN_FILE_VERSION = 1;
/** Largest run.json accepted (bytes of UTF-8; V8 strings stop near 512 MiB). */
export const MAX_RUN_JSON_BYTES = 256 * 1024 * 1024;
/** Largest single checkpoint file accepted from a zip (declared size). */
export const MAX_CHECKPOINT_FILE_BYTES = 2 ** 31 - 1;

export class RunFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunFileError';
  }
}

export interface RubricVersionEntry {
  /** rubricVersion(parseRubric(rubric)): lowercase hex SHA-256 of the canonical parsed rubric. */
  version: string;
  rubric: unknown;
  /** The first step trained with this rubric. */
  first_step: number;
  /** An evolved version (rubric_evolution): the version it came from, the strategy and the reason. */
  parent?: string | null;
  strategy?: 'prune' | 'rare' | 'online_rubrics';
  reason?: string;
  /** A version the black-box teacher induced (src/rl/distill/blackBox.ts): which teacher, judge and prompts; its parent is provenance.base_version. */
  provenance?: InductionProvenance;
}

export interface RunCheckpoint {
  /** Optimizer steps taken when it was saved. */
  step: number;
  files: CheckpointFiles;
}

export interface RunFile {
  name: string;
  /** ISO 8601 time of export. */
  exported_at: string;
  experiment: Experiment;
  /** Oldest first; the experiment's current rubric is among them. */
  rubric_versions: RubricVersionEntry[];
  metrics: StepMetrics[];
  rollouts: RolloutRecord[];
  /** Human labels of the file's rollouts, per rubric version (src/share/runLabels.ts); absent: none. */
  labels?: RunFileLabels[];
  checkpoint?: RunCheckpoint;
  /** The probe judge that scored the run (judge kind "probe"): its weights, never in links (src/rubric/probeSet.ts). */
  probe?: ProbeSet;
}

export interface RunFileInput extends Omit<RunFile, 'exported_at' | 'rubric_versions'> {
  /** Absent: the experiment's rubric, from step 0. */
  rubric_versions?: (Omit<RubricVersionEntry, 'version'> & { version?: string })[];
  exported_at?: string;
}

// ---- schemas ----

function isRubric(value: unknown): boolean {
  try {
    parseRubric(value);
    return true;
  } catch {
    return false;
  }
}

/** A number, or its non-finite spelling from the writer. */
const num = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity']).transform(Number)]);
const count = z.number().int().min(0);

const rewardMetricsSchema = z.strictObject({
  reward: num.nullable(),
  reward_std: num.nullable(),
  criterion_pass_rate: z.record(z.string(), num.nullable()),
  criterion_mean_score: z.record(z.string(), num.nullable()),
  strict_completion_rate: num,
  unscorable: count,
  aggregations: z.record(z.string(), num.nullable()),
});

/** The update's scalars: a step's (its last pass) and each of its optimizer steps'. */
const updateScalars = {
  loss: num,
  policy_loss: num,
  kl: num.nullable(),
  entropy: num,
  clip_ratio_low: num,
  clip_ratio_high: num,
  clip_ratio_region: num,
  ratio_mean: num,
  grad_norm: num,
};

/** Where a teacher-induced rubric version came from (src/rubric/induce.ts InductionProvenance): never a key. */
const provenanceSchema = z.strictObject({
  kind: z.literal('teacher_contrast'),
  teacher: z.string().max(2000),
  judge: z.string().max(2000),
  base_version: z.string().regex(/^[0-9a-f]{64}$/),
  prompts: z.array(z.string().max(100_000)).max(10_000),
  criteria: z.array(z.string().max(200)).max(1000),
  step: count.nullable(),
});

const stepMetricsSchema: z.ZodType<StepMetrics> = z.strictObject({
  step: count,
  rewards: rewardMetricsSchema,
  held_out: rewardMetricsSchema.nullable(),
  completions: z.strictObject({ mean_length: num, min_length: num, max_length: num, clipped_ratio: num }),
  frac_reward_zero_std: num,
  ...updateScalars,
  learning_rate: num,
  skipped: z.boolean(),
  sampling_tokens_per_second: num,
  training_tokens_per_second: num,
  judge_seconds: num,
  sampling_seconds: num.optional(),
  update_seconds: num.optional(),
  step_seconds: num,
  update_submits: count,
  unexplored_criteria: count.optional(),
  suppressed_criteria: count.optional(),
  // num_iterations × steps_per_generation optimizer steps of the step (absent when one, and in older runs).
  optimizer_steps: z
    .array(
      z.strictObject({
        iteration: count,
        slice: count,
        ...updateScalars,
        skipped: z.boolean(),
      }),
    )
    .max(1024)
    .optional(),
  exploration: z
    .strictObject({
      generation_rounds: count,
      groups_resampled: count,
      zero_std_groups_kept: count,
      sampled_tokens: count,
      extra_sampled_tokens: count,
      extra_seconds: num,
      scaffold_prob: num,
      scaffolded: count,
      scaffold_logprob_gap: num.nullable(),
      scaffold_is_ratio_mean: num.nullable(),
      // Hindsight revision and guidance on demand (src/rl/explore/guided.ts); absent in older runs.
      herl_revised: count.optional(),
      herl_improved: count.optional(),
      herl_bonus_mean: num.nullable().optional(),
      guidance_groups: count.optional(),
      guidance_kept: count.optional(),
      guidance_dropped: count.optional(),
      rise_aux_coef: num.optional(),
      guided_sampled_tokens: count.optional(),
      guided_logprob_gap: num.nullable().optional(),
      guided_skipped: count.optional(),
    })
    .optional(),
  judge_failures: z
    .strictObject({
      rollouts: count,
      unscorable_rollouts: count,
      unscorable_fraction: num,
      verdicts: count,
      failed_verdicts: count,
      first_reason: z.string().max(2000).nullable(),
      over_threshold: z.boolean(),
    })
    .optional(),
  // On-policy distillation (src/rl/distill/align.ts DistillMetrics); absent when off.
  distillation: z
    .strictObject({
      divergence: num.nullable(),
      top1_agreement: num.nullable(),
      retained_tokens: count,
      completion_tokens: count,
      loss: num,
      injected_rollouts: count.optional(),
      injected_criteria: count.optional(),
    })
    .optional(),
  // Distillation's training modes (src/rl/distill/schedule.ts ScheduleMetrics); absent with neither a teacher nor a schedule.
  schedule: z
    .strictObject({
      phase: z.enum(['distill', 'sft', 'rl']).nullable(),
      on_policy: z.boolean().nullable(),
      sft_kept: count.nullable(),
    })
    .optional(),
  // Evidence-required credit (src/rubric/evidenceCredit.ts): per criterion, passes quoted, withheld, probed and flagged.
  evidence: z
    .strictObject({
      by_criterion: z.record(
        z.string().max(200),
        z.strictObject({ passes: count, quoted: count, withheld: count, probed: count, vacuous: count, fell: count }),
      ),
      passes: count,
      withheld: count,
      probed: count,
      vacuous: count,
    })
    .optional(),
  // judge_external_fraction (src/rl/externalGrading.ts): the graded share, the external calls, and per criterion the counts behind agreement and leniency.
  external_grading: z
    .strictObject({
      judge: z.string().max(2000),
      fraction: z.number().min(0).max(1),
      groups: count,
      rollouts: count,
      calls: count,
      failed: count,
      first_failure: z.string().max(2000).nullable(),
      replaced: count,
      seconds: num,
      agreement: num.nullable(),
      leniency: num.nullable(),
      by_criterion: z.record(z.string().max(200), z.strictObject({ n: count, agree: count, self_pass: count, external_pass: count })),
    })
    .optional(),
  // Online rubric evolution (src/rl/rubricEvolution.ts): the version judging the step, the decision after it.
  rubric_version: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  rubric_evolution: z
    .strictObject({
      step: count,
      strategy: z.enum(['prune', 'rare', 'online_rubrics']),
      outcome: z.enum(['accepted', 'rejected', 'unchanged']),
      parent: z.string().regex(/^[0-9a-f]{64}$/),
      version: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
      reason: z.string().max(20_000),
      removed: z.array(z.string().max(200)).max(1000),
      added: z.array(z.string().max(200)).max(1000),
      checks: z
        .array(z.strictObject({ criterion: z.string().max(200), within_group_variance: num.nullable(), met_rate: num.nullable(), flag: z.enum(['discriminative', 'saturated', 'unreachable', 'unscored']), passed: z.boolean() }))
        .max(1000)
        .optional(),
      // The accepted rubric: checked against its version (and rubric_versions) when the file is read.
      rubric: z.custom<Rubric>(isRubric, 'is not a valid rubric').transform((v) => parseRubric(v)).optional(),
    })
    .optional(),
  // irt_ability (src/rubric/irtState.ts IrtMetrics): the item table after the step, a and b per criterion id.
  irt: z
    .strictObject({
      steps: count,
      patterns: count,
      by_criterion: z.record(z.string().max(200), z.strictObject({ a: num, b: num.nullable() })),
    })
    .optional(),
  // The black-box teacher's rubric induction (src/rl/distill/blackBox.ts): the new version, its provenance (no key), the rubric.
  teacher_rubric: z
    .strictObject({
      step: count,
      outcome: z.enum(['induced', 'failed']),
      version: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
      provenance: provenanceSchema.nullable(),
      error: z.string().max(20_000).optional(),
      rubric: z.custom<Rubric>(isRubric, 'is not a valid rubric').transform((v) => parseRubric(v)).optional(),
    })
    .optional(),
});

const criterionResultSchema = z.union([
  z.strictObject({
    criterion_id: z.string(),
    status: z.literal('ok'),
    score: z.number().min(0).max(1),
    reason: z.string(),
    // Evidence spans (src/rubric/evidence.ts): UTF-16 offsets, shown and credited only where they overlap the text.
    spans: z.array(z.strictObject({ start: count, end: count })).max(MAX_SPANS).optional(),
    // The bias sandbox (src/rubric/bias.ts) changed this verdict (experiment.judge_bias).
    biased: z.literal(true).optional(),
    // Evidence-required credit (src/rubric/evidenceCredit.ts): quoted or withheld, and the vacuous-credit probe's outcome.
    evidence: z.enum(['quoted', 'withheld']).optional(),
    probe: z.enum(['survived', 'fell', 'unscorable']).optional(),
    // judge_external_fraction (src/rl/externalGrading.ts): the external judge's verdict, or the self verdict kept when it failed.
    external: z.enum(['graded', 'failed']).optional(),
    // judge_verdict "pairwise" (src/rubric/pairwiseJudge.ts): the model's verdicts of the pairs with this rollout in the first slot.
    pairwise: z.array(z.strictObject({ vs: count, winner: z.enum(['first', 'second', 'tie']), margin: z.number().finite() })).max(1000).optional(),
  }),
  z.strictObject({ criterion_id: z.string(), status: z.enum(['unscorable', 'needs_model']), score: z.null(), reason: z.string() }),
]);

const rolloutSchema: z.ZodType<RolloutRecord> = z.strictObject({
  step: count,
  group: count,
  index: count,
  prompt: z.string(),
  completion: z.string(),
  completion_ids: z.array(count),
  logprobs: z.array(num),
  tokens: z.array(z.string()).optional(),
  token_entropy: z.array(num).optional(),
  token_ratio: z.array(num).optional(),
  token_weight: z.array(num).optional(),
  token_span_credit: z.array(num).optional(),
  token_entropy_pivot: z.array(num).optional(),
  token_cort_contrast: z.array(num).optional(),
  token_divergence: z.array(num.nullable()).optional(),
  suppressed_criteria: z.array(z.string().max(64)).max(MAX_CRITERIA).optional(),
  unexplored_criteria: z.array(z.string().max(64)).max(MAX_CRITERIA).optional(),
  truncated: z.boolean(),
  guided: z
    .strictObject({
      kind: z.enum(['scaffold', 'hindsight', 'on_demand']),
      guidance: z.string().max(100_000),
      criteria: z.array(z.string().max(64)).max(1000),
      logprob_gap: num.optional(),
      is_ratio: num.optional(),
      revises: count.optional(),
      bonus: num.optional(),
      natural_mean: num.optional(),
    })
    .optional(),
  results: z.array(criterionResultSchema),
  scores: z.array(z.number().min(0).max(1).nullable()),
  reward: num.nullable(),
  advantage: num,
});

const binarySchema = z.union([z.strictObject({ base64: z.string() }), z.strictObject({ zip_entry: z.string().regex(/^checkpoint\/[a-z_.]+$/) })]);
type BinaryRef = z.output<typeof binarySchema>;

const documentSchema = z.strictObject({
  format: z.literal(RUN_FILE_FORMAT),
  version: z.literal(RUN_FILE_VERSION),
  name: z.string().max(500),
  exported_at: z.string().max(100),
  experiment: z.unknown(),
  rubric_versions: z
    .array(
      z.strictObject({
        version: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256'),
        rubric: z.unknown(),
        first_step: count,
        // Lineage of an evolved rubric (src/rubric/evolve.ts): the version it came from, by which strategy and why.
        parent: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256').nullable().optional(),
        strategy: z.enum(['prune', 'rare', 'online_rubrics']).optional(),
        reason: z.string().max(20_000).optional(),
        // A version the black-box teacher induced: its provenance (its parent is the base version it was induced from).
        provenance: provenanceSchema.optional(),
      }),
    )
    .min(1),
  metrics: z.array(stepMetricsSchema),
  rollouts: z.array(rolloutSchema),
  labels: runLabelsSchema.optional(),
  probe: probeSetSchema.optional(),
  checkpoint: z
    .strictObject({
      step: count,
      files: z.strictObject({
        'config.json': z.string(),
        'trainer_state.json': z.string(),
        'model.safetensors': binarySchema,
        'optimizer.safetensors': binarySchema.optional(),
        // LoRA runs: the adapter in PEFT's format (model.safetensors then holds the frozen base).
        'adapter_model.safetensors': binarySchema.optional(),
        // sync_ref_model runs: the reference the policy was mixed into (resuming needs it).
        'ref_model.safetensors': binarySchema.optional(),
        // teacher_weights "ema" runs: the ema distillation teacher's weights (resuming goes on averaging from them).
        'ema_model.safetensors': binarySchema.optional(),
        'adapter_config.json': z.string().optional(),
      }),
    })
    .optional(),
});
type RunDocument = z.output<typeof documentSchema>;

// ---- writing ----

const BINARY_FILES = ['model.safetensors', 'optimizer.safetensors', 'adapter_model.safetensors', 'ref_model.safetensors', 'ema_model.safetensors'] as const;

function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
}

async function versionsOf(run: RunFileInput): Promise<RubricVersionEntry[]> {
  const entries = run.rubric_versions ?? [{ rubric: run.experiment.rubric, first_step: 0 }];
  return Promise.all(
    entries.map(async (e): Promise<RubricVersionEntry> => ({
      version: await rubricVersion(parseRubric(e.rubric)),
      rubric: e.rubric,
      first_step: e.first_step,
      ...('parent' in e && e.parent !== undefined ? { parent: e.parent } : {}),
      ...('strategy' in e && e.strategy !== undefined ? { strategy: e.strategy } : {}),
      ...('reason' in e && e.reason !== undefined ? { reason: e.reason } : {}),
      ...('provenance' in e && e.provenance !== undefined ? { provenance: e.provenance } : {}),
    })),
  );
}

/**
 * A run's rubric versions with their lineage: the experiment's rubric from step 0, then every
 * version rubric_evolution accepted and every version the black-box teacher induced (each from
 * the step after its decision; an induced one with its provenance, its parent the version it was
 * induced from). Undefined for a run whose rubric never changed (the writer's default: the
 * experiment's rubric alone).
 */
export function evolvedRubricVersions(experimentRubric: unknown, metrics: readonly StepMetrics[]): RunFileInput['rubric_versions'] {
  const changes = [...metrics]
    .sort((a, b) => a.step - b.step)
    .flatMap((m): NonNullable<RunFileInput['rubric_versions']> => {
      const e = m.rubric_evolution;
      if (e?.outcome === 'accepted' && e.rubric) return [{ rubric: e.rubric, first_step: e.step + 1, parent: e.parent, strategy: e.strategy, reason: e.reason }];
      const t = m.teacher_rubric;
      if (t?.outcome === 'induced' && t.rubric && t.provenance) return [{ rubric: t.rubric, first_step: t.step + 1, parent: t.provenance.base_version, provenance: t.provenance }];
      return [];
    });
  if (changes.length === 0) return undefined;
  return [{ rubric: experimentRubric, first_step: 0 }, ...changes];
}

/** The document without binaries; `binary` says how each checkpoint binary is written. */
async function documentOf(run: RunFileInput, binary: (name: (typeof BINARY_FILES)[number], data: ArrayBuffer) => BinaryRef): Promise<string> {
  parseExperiment(run.experiment);
  const doc: Record<string, unknown> = {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    name: run.name,
    exported_at: run.exported_at ?? new Date().toISOString(),
    experiment: run.experiment,
    rubric_versions: await versionsOf(run),
    metrics: run.metrics,
    rollouts: run.rollouts,
  };
  if (run.labels?.length) doc.labels = run.labels;
  if (run.probe) doc.probe = run.probe;
  if (run.checkpoint) {
    const f = run.checkpoint.files;
    const files: Record<string, unknown> = { 'config.json': f['config.json'], 'trainer_state.json': f['trainer_state.json'] };
    if (f['adapter_config.json'] !== undefined) files['adapter_config.json'] = f['adapter_config.json'];
    for (const name of BINARY_FILES) {
      const data = f[name];
      if (data !== undefined) files[name] = binary(name, data);
    }
    doc.checkpoint = { step: run.checkpoint.step, files };
  }
  return JSON.stringify(doc, replacer);
}

/** The run as one JSON text (checkpoint binaries in base64). */
export async function runFileJson(run: RunFileInput): Promise<string> {
  return documentOf(run, (_name, data) => ({ base64: bytesToBase64(new Uint8Array(data)) }));
}

/** The run as a zip: run.json and the checkpoint files as entries. */
export async function runFileZip(run: RunFileInput): Promise<Uint8Array> {
  const entries: Record<string, [Uint8Array, { level: 0 | 1 | 6 }]> = {};
  const text = await documentOf(run, (name, data) => {
    const entry = `checkpoint/${name}`;
    entries[entry] = [new Uint8Array(data), { level: 1 }];
    return { zip_entry: entry };
  });
  if (run.checkpoint) {
    entries['checkpoint/config.json'] = [strToU8(run.checkpoint.files['config.json']), { level: 6 }];
    entries['checkpoint/trainer_state.json'] = [strToU8(run.checkpoint.files['trainer_state.json']), { level: 6 }];
    const adapterConfig = run.checkpoint.files['adapter_config.json'];
    if (adapterConfig !== undefined) entries['checkpoint/adapter_config.json'] = [strToU8(adapterConfig), { level: 6 }];
  }
  return zipSync({ 'run.json': [strToU8(text), { level: 6 }], ...entries });
}

/** A file name for the run: its name reduced to [a-z0-9-], then ".rubric-run.json" or ".zip". */
export function runFileName(name: string, kind: 'json' | 'zip'): string {
  const base =
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'run';
  return `${base}.rubric-run.${kind}`;
}

// ---- reading ----

function issuesOf(error: z.ZodError, prefix = ''): string {
  const lines = error.issues.slice(0, 10).map((i) => {
    const where = prefix + i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    const what = i.code === 'unrecognized_keys' ? `unknown field(s) ${i.keys.join(', ')}` : i.message;
    return `${where.replace(/^\./, '') || 'run'}: ${what}`;
  });
  if (error.issues.length > 10) lines.push(`… and ${error.issues.length - 10} more problems`);
  return lines.join('\n');
}

/** Checks a safetensors file's header (length, JSON, offsets inside the file) without reading tensors. */
function checkSafetensors(bytes: Uint8Array, name: string): void {
  const fail = (why: string) => {
    throw new RunFileError(`checkpoint ${name} is not a valid safetensors file: ${why}`);
  };
  if (bytes.length < 8) fail('shorter than its 8-byte header length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > 100 * 1024 * 1024 || 8 + n > bytes.length) fail(`its header length ${n} does not fit the file (${bytes.length} bytes)`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch {
    fail('its header is not JSON');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('its header is not a JSON object');
  const dataBytes = bytes.length - 8 - n;
  for (const [key, entry] of Object.entries(header as Record<string, unknown>)) {
    if (key === '__metadata__') continue;
    const offsets = (entry as { data_offsets?: unknown })?.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) || offsets[0] > offsets[1] || offsets[1] > dataBytes) {
      fail(`tensor ${JSON.stringify(key)} has data_offsets ${JSON.stringify(offsets)} outside the file`);
    }
  }
}

function checkJsonFile(text: string, name: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new RunFileError(`checkpoint ${name} is not valid JSON (${(e as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RunFileError(`checkpoint ${name} is not a JSON object`);
  return value as Record<string, unknown>;
}

function parseDocument(text: string): RunDocument {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new RunFileError(`not a run file: the content is not JSON (${(e as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RunFileError('not a run file: the content is not a JSON object');
  const head = raw as { format?: unknown; version?: unknown };
  if (head.format !== RUN_FILE_FORMAT) {
    throw new RunFileError(`not a Rubric Playground run file (format is ${JSON.stringify(head.format ?? null)}, expected "${RUN_FILE_FORMAT}")`);
  }
  if (typeof head.version !== 'number' || !Number.isInteger(head.version) || head.version < 1) {
    throw new RunFileError(`the run file's version ${JSON.stringify(head.version ?? null)} is not a positive integer`);
  }
  if (head.version > RUN_FILE_VERSION) {
    throw new RunFileError(`this run file was made by a newer version of Rubric Playground (format ${head.version}; this page reads up to ${RUN_FILE_VERSION}): reload the page to get the latest version`);
  }
  try {
    checkKeys(raw, [], { secrets: false });
  } catch (e) {
    throw new RunFileError((e as ShareLinkError).message.replace(/ in a link$/, ' in a run file'));
  }
  const parsed = documentSchema.safeParse(raw);
  if (!parsed.success) throw new RunFileError(`the run file is invalid:\n${issuesOf(parsed.error)}`);
  return parsed.data;
}

type BinaryReader = (ref: BinaryRef, name: string) => Uint8Array;

async function finish(doc: RunDocument, readBinary: BinaryReader): Promise<RunFile> {
  let experiment: Experiment;
  try {
    experiment = parseExperiment(doc.experiment).experiment;
  } catch (e) {
    // In the page's words ("Setting num_generations: ..."), as for a link.
    const problems = experimentProblems(e, doc.experiment);
    throw new RunFileError(`the run file's experiment is invalid:\n${problems ? problems.join('\n') : (e as Error).message}`);
  }
  const versions: string[] = [];
  for (const [i, entry] of doc.rubric_versions.entries()) {
    let actual: string;
    try {
      actual = await rubricVersion(parseRubric(entry.rubric));
    } catch (e) {
      const problems = experimentProblems(e, { rubric: entry.rubric });
      throw new RunFileError(`rubric_versions[${i}] is not a valid rubric:\n${problems ? problems.join('\n') : (e as Error).message}`);
    }
    if (actual !== entry.version) {
      throw new RunFileError(`rubric_versions[${i}]: its version ${entry.version.slice(0, 12)}… does not match its rubric (${actual.slice(0, 12)}…): the file was edited or damaged`);
    }
    if (entry.parent && !versions.includes(entry.parent)) {
      throw new RunFileError(`rubric_versions[${i}]: its parent ${entry.parent.slice(0, 12)}… is not an earlier version in the file: the lineage is broken`);
    }
    // A teacher-induced version: induced from its parent, holding the criteria its provenance names.
    if (entry.provenance) {
      const p = entry.provenance;
      if (entry.parent !== p.base_version) {
        throw new RunFileError(`rubric_versions[${i}]: it was induced from version ${p.base_version.slice(0, 12)}…, but its parent is ${entry.parent ? `${entry.parent.slice(0, 12)}…` : 'missing'}: the lineage is broken`);
      }
      const ids = new Set(parseRubric(entry.rubric).criteria.map((c) => c.id));
      const missing = p.criteria.filter((id) => !ids.has(id));
      if (missing.length) throw new RunFileError(`rubric_versions[${i}]: its provenance names induced criteria it does not hold (${missing.join(', ')}): the file was edited or damaged`);
    }
    versions.push(actual);
  }
  // An accepted evolution names a version the file must hold (its rubric is among rubric_versions).
  for (const m of doc.metrics) {
    const e = m.rubric_evolution;
    if (e?.outcome === 'accepted' && (e.version === null || !versions.includes(e.version))) {
      throw new RunFileError(`metrics: step ${m.step}'s accepted rubric version ${String(e.version).slice(0, 12)}… is not among rubric_versions: the file was edited or damaged`);
    }
    if (e?.rubric && (await rubricVersion(e.rubric)) !== e.version) {
      throw new RunFileError(`metrics: step ${m.step}'s evolved rubric does not match its version ${String(e.version).slice(0, 12)}…: the file was edited or damaged`);
    }
    // The same for a version the black-box teacher induced (written with its provenance since it came to run files).
    const t = m.teacher_rubric;
    if (t?.outcome === 'induced' && t.rubric && (t.version === null || !versions.includes(t.version))) {
      throw new RunFileError(`metrics: step ${m.step}'s teacher-induced rubric version ${String(t.version).slice(0, 12)}… is not among rubric_versions: the file was edited or damaged`);
    }
    if (t?.rubric && (await rubricVersion(t.rubric)) !== t.version) {
      throw new RunFileError(`metrics: step ${m.step}'s teacher-induced rubric does not match its version ${String(t.version).slice(0, 12)}…: the file was edited or damaged`);
    }
  }
  // The page keys steps by number and rollouts by (step, group, index): a file repeating one is damaged.
  const steps = new Set<number>();
  for (const m of doc.metrics) {
    if (steps.has(m.step)) throw new RunFileError(`metrics: step ${m.step} appears twice: the file was edited or damaged`);
    steps.add(m.step);
  }
  const rollouts = new Set<string>();
  for (const r of doc.rollouts) {
    const key = `${r.step}:${r.group}:${r.index}`;
    if (rollouts.has(key)) throw new RunFileError(`rollouts: step ${r.step}, group ${r.group}, index ${r.index} appears twice: the file was edited or damaged`);
    rollouts.add(key);
  }
  const current = await rubricVersion(parseRubric(experiment.rubric));
  if (!versions.includes(current)) throw new RunFileError("the experiment's rubric is not among rubric_versions");
  const run: RunFile = {
    name: doc.name,
    exported_at: doc.exported_at,
    experiment,
    rubric_versions: doc.rubric_versions,
    metrics: doc.metrics,
    rollouts: doc.rollouts,
  };
  if (doc.labels) {
    const criteriaOf = new Map(doc.rubric_versions.map((e, i) => [versions[i], parseRubric(e.rubric).criteria.map((c) => c.id)] as const));
    const problems = runLabelsProblems(doc.labels, criteriaOf, doc.rollouts);
    if (problems.length) throw new RunFileError(`the run file's labels do not match its rollouts and rubric versions:\n${problems.join('\n')}`);
    run.labels = doc.labels;
  }
  if (doc.probe) run.probe = doc.probe;
  if (doc.checkpoint) {
    const f = doc.checkpoint.files;
    const state = checkJsonFile(f['trainer_state.json'], 'trainer_state.json');
    if (!Number.isSafeInteger(state.global_step) || (state.global_step as number) < 0) {
      throw new RunFileError('checkpoint trainer_state.json has no non-negative integer global_step');
    }
    checkJsonFile(f['config.json'], 'config.json');
    const files: CheckpointFiles = {
      'config.json': f['config.json'],
      'trainer_state.json': f['trainer_state.json'],
      'model.safetensors': new ArrayBuffer(0),
    };
    if (f['adapter_config.json'] !== undefined) {
      checkJsonFile(f['adapter_config.json'], 'adapter_config.json');
      files['adapter_config.json'] = f['adapter_config.json'];
    }
    for (const name of BINARY_FILES) {
      const ref = f[name];
      if (ref === undefined) continue;
      const bytes = readBinary(ref, name);
      checkSafetensors(bytes, name);
      files[name] = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    }
    run.checkpoint = { step: doc.checkpoint.step, files };
  }
  return run;
}

function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

function unzipOne(bytes: Uint8Array, name: string, limit: number): Uint8Array | undefined {
  let tooBig: number | null = null;
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, {
      filter: (f) => {
        if (f.name !== name) return false;
        if (f.originalSize > limit) tooBig = f.originalSize;
        return tooBig === null;
      },
    });
  } catch (e) {
    throw new RunFileError(`the zip file is damaged (${(e as Error).message})`);
  }
  if (tooBig !== null) throw new RunFileError(`zip entry ${name} is ${tooBig} bytes, above the limit of ${limit}`);
  return files[name];
}

/**
 * Reads a run file (JSON text, or the bytes of a JSON or zip file). Throws RunFileError with a
 * message for the user; nothing is returned unless the whole file is valid.
 */
export async function readRunFile(data: string | Uint8Array | ArrayBuffer): Promise<RunFile> {
  if (typeof data === 'string') {
    if (data.length > MAX_RUN_JSON_BYTES) throw new RunFileError(`the run file is ${data.length} characters long, above the limit of ${MAX_RUN_JSON_BYTES}`);
    return finish(parseDocument(data), (ref, name) => {
      if (!('base64' in ref)) throw new RunFileError(`checkpoint ${name} refers to a zip entry, but this is a JSON file`);
      try {
        return base64ToBytes(ref.base64);
      } catch (e) {
        throw new RunFileError(`checkpoint ${name}: bad base64 (${(e as Error).message})`);
      }
    });
  }
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (!isZip(bytes)) {
    if (bytes.length > MAX_RUN_JSON_BYTES) throw new RunFileError(`the run file is ${bytes.length} bytes, above the limit of ${MAX_RUN_JSON_BYTES}`);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new RunFileError('not a run file: neither a zip nor UTF-8 JSON text');
    }
    return readRunFile(text);
  }
  const json = unzipOne(bytes, 'run.json', MAX_RUN_JSON_BYTES);
  if (!json) throw new RunFileError('the zip has no run.json: it is not a Rubric Playground run file');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json);
  } catch {
    throw new RunFileError('run.json in the zip is not UTF-8 text');
  }
  return finish(parseDocument(text), (ref, name) => {
    if (!('zip_entry' in ref)) {
      try {
        return base64ToBytes(ref.base64);
      } catch (e) {
        throw new RunFileError(`checkpoint ${name}: bad base64 (${(e as Error).message})`);
      }
    }
    const entry = unzipOne(bytes, ref.zip_entry, MAX_CHECKPOINT_FILE_BYTES);
    if (!entry) throw new RunFileError(`checkpoint ${name}: the zip has no entry ${ref.zip_entry}`);
    return entry;
  });
}
