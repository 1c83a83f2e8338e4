// Metrics (and rollouts) as CSV for spreadsheets and pandas. RFC 4180: comma-separated, CRLF line
// ends, a field quoted when it holds a comma, quote, CR or LF (or starts/ends with a space), quotes
// doubled. One row per step; nested metrics flattened into columns named as TRL logs them where
// TRL has the metric: reward, reward_std, frac_reward_zero_std, kl, entropy, clip_ratio_low,
// completions/mean_length ...; per criterion pass_rate/<id> and mean_score/<id>; the side-by-side
// aggregations as reward/<method>; the held-out rubric's, when the run has one, the same under
// held_out/ (held_out/reward, held_out/pass_rate/<id> ...). Columns for criteria are the union
// over the steps (a run whose rubric changed has them all), in first-seen order. Empty cell: no value (null); non-finite
// numbers are written NaN, Infinity, -Infinity (pandas reads all of these).
import { agreementFigures } from '../rl/externalGrading';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import type { ExploreMetrics } from '../rl/explore';
import type { DistillMetrics } from '../rl/distill';
import type { ScheduleMetrics } from '../rl/distill/schedule';
import type { CompletionMetrics, RewardMetrics } from '../rl/metrics';

export type CsvValue = string | number | boolean | null | undefined;

/** One field, quoted when needed. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  rows.forEach((r, i) => {
    if (r.length !== header.length) throw new RangeError(`row ${i} has ${r.length} fields for ${header.length} columns`);
  });
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/**
 * Text a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading "'" so it
 * shows as text. Used for model output and prompts only; the run file keeps the exact text.
 */
export function neutraliseFormula(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

// The scalar fields, listed as typed records so a new metric field is a compile error here until
// it has a column.
const STEP_FIELDS: { [K in Exclude<keyof StepMetrics, 'step' | 'rewards' | 'held_out' | 'completions' | 'judge_failures' | 'exploration' | 'optimizer_steps' | 'evidence' | 'external_grading' | 'distillation' | 'schedule' | 'irt' | 'rubric_version' | 'rubric_evolution' | 'teacher_rubric'>]: true } = {
  frac_reward_zero_std: true,
  loss: true,
  policy_loss: true,
  kl: true,
  entropy: true,
  clip_ratio_low: true,
  clip_ratio_high: true,
  clip_ratio_region: true,
  ratio_mean: true,
  grad_norm: true,
  learning_rate: true,
  skipped: true,
  sampling_tokens_per_second: true,
  training_tokens_per_second: true,
  judge_seconds: true,
  sampling_seconds: true,
  update_seconds: true,
  step_seconds: true,
  update_submits: true,
  unexplored_criteria: true,
  suppressed_criteria: true,
};
const REWARD_FIELDS: { [K in Exclude<keyof RewardMetrics, 'criterion_pass_rate' | 'criterion_mean_score' | 'aggregations'>]: true } = {
  reward: true,
  reward_std: true,
  strict_completion_rate: true,
  unscorable: true,
};
// Guided exploration and dynamic sampling (src/rl/explore/), as explore/<name>.
const EXPLORE_FIELDS: { [K in keyof ExploreMetrics]: true } = {
  generation_rounds: true,
  groups_resampled: true,
  zero_std_groups_kept: true,
  sampled_tokens: true,
  extra_sampled_tokens: true,
  extra_seconds: true,
  scaffold_prob: true,
  scaffolded: true,
  scaffold_logprob_gap: true,
  scaffold_is_ratio_mean: true,
  herl_revised: true,
  herl_improved: true,
  herl_bonus_mean: true,
  guidance_groups: true,
  guidance_kept: true,
  guidance_dropped: true,
  rise_aux_coef: true,
  guided_sampled_tokens: true,
  guided_logprob_gap: true,
  guided_skipped: true,
};
const COMPLETION_FIELDS: { [K in keyof CompletionMetrics]: true } = {
  mean_length: true,
  min_length: true,
  max_length: true,
  clipped_ratio: true,
};

function union(maps: readonly Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const m of maps) for (const k of Object.keys(m)) seen.add(k);
  return [...seen];
}

interface Column {
  name: string;
  get: (m: StepMetrics) => CsvValue;
}

const pick = (map: Record<string, number | null> | undefined, key: string): CsvValue => (map && Object.hasOwn(map, key) ? map[key] : null);

/** Reward columns of one RewardMetrics (the trained rubric's, or the held-out one's under `prefix`). */
function rewardColumns(metrics: readonly StepMetrics[], of: (m: StepMetrics) => RewardMetrics | null, prefix: string): Column[] {
  const present = metrics.map(of).filter((r): r is RewardMetrics => r !== null);
  return [
    ...(Object.keys(REWARD_FIELDS) as (keyof typeof REWARD_FIELDS)[]).map((k) => ({ name: `${prefix}${k}`, get: (m: StepMetrics) => of(m)?.[k] ?? null })),
    ...union(present.map((r) => r.criterion_pass_rate)).map((id) => ({ name: `${prefix}pass_rate/${id}`, get: (m: StepMetrics) => pick(of(m)?.criterion_pass_rate, id) })),
    ...union(present.map((r) => r.criterion_mean_score)).map((id) => ({ name: `${prefix}mean_score/${id}`, get: (m: StepMetrics) => pick(of(m)?.criterion_mean_score, id) })),
    ...union(present.map((r) => r.aggregations)).map((name) => ({ name: `${prefix}reward/${name}`, get: (m: StepMetrics) => pick(of(m)?.aggregations, name) })),
  ];
}

function columnsOf(metrics: readonly StepMetrics[]): Column[] {
  const columns: Column[] = [
    { name: 'step', get: (m) => m.step },
    ...rewardColumns(metrics, (m) => m.rewards, ''),
    ...(Object.keys(STEP_FIELDS) as (keyof typeof STEP_FIELDS)[]).map((k) => ({ name: k, get: (m: StepMetrics) => m[k] })),
    ...(Object.keys(COMPLETION_FIELDS) as (keyof CompletionMetrics)[]).map((k) => ({ name: `completions/${k}`, get: (m: StepMetrics) => m.completions[k] })),
  ];
  if (metrics.some((m) => m.held_out)) columns.push(...rewardColumns(metrics, (m) => m.held_out, 'held_out/'));
  if (metrics.some((m) => m.exploration)) {
    columns.push(...(Object.keys(EXPLORE_FIELDS) as (keyof ExploreMetrics)[]).map((k) => ({ name: `explore/${k}`, get: (m: StepMetrics) => m.exploration?.[k] ?? null })));
  }
  // Each optimizer step of a step (num_iterations × steps_per_generation > 1): opt/<j>/<field>, j in order.
  const optSteps = Math.max(0, ...metrics.map((m) => m.optimizer_steps?.length ?? 0));
  for (let j = 0; j < optSteps; j++) {
    for (const k of ['loss', 'grad_norm', 'clip_ratio_region'] as const) columns.push({ name: `opt/${j}/${k}`, get: (m) => m.optimizer_steps?.[j]?.[k] ?? null });
  }
  if (metrics.some((m) => m.judge_failures)) {
    columns.push(
      { name: 'judge/unscorable_fraction', get: (m) => m.judge_failures?.unscorable_fraction ?? null },
      { name: 'judge/failed_verdicts', get: (m) => m.judge_failures?.failed_verdicts ?? null },
      { name: 'judge/first_reason', get: (m) => (m.judge_failures?.first_reason ? neutraliseFormula(m.judge_failures.first_reason) : null) },
    );
  }
  // Evidence-required credit (src/rubric/evidenceCredit.ts): totals, then vacuous passes per criterion.
  if (metrics.some((m) => m.evidence)) {
    columns.push(...(['passes', 'withheld', 'probed', 'vacuous'] as const).map((k) => ({ name: `evidence/${k}`, get: (m: StepMetrics) => m.evidence?.[k] ?? null })));
    for (const id of union(metrics.map((m) => m.evidence?.by_criterion ?? {}))) {
      columns.push({ name: `evidence/withheld/${id}`, get: (m) => m.evidence?.by_criterion[id]?.withheld ?? null }, { name: `evidence/vacuous/${id}`, get: (m) => m.evidence?.by_criterion[id]?.vacuous ?? null });
    }
  }
  // judge_external_fraction (src/rl/externalGrading.ts): the graded share, the external calls, agreement and leniency per criterion.
  if (metrics.some((m) => m.external_grading)) {
    columns.push(...(['rollouts', 'calls', 'failed', 'replaced', 'agreement', 'leniency'] as const).map((k) => ({ name: `external/${k}`, get: (m: StepMetrics) => m.external_grading?.[k] ?? null })));
    columns.push({ name: 'external/first_failure', get: (m) => (m.external_grading?.first_failure ? neutraliseFormula(m.external_grading.first_failure) : null) });
    for (const id of union(metrics.map((m) => m.external_grading?.by_criterion ?? {}))) {
      const figures = (m: StepMetrics) => agreementFigures(m.external_grading?.by_criterion[id] ?? { n: 0, agree: 0, self_pass: 0, external_pass: 0 });
      columns.push({ name: `external/agreement/${id}`, get: (m) => figures(m).agreement }, { name: `external/leniency/${id}`, get: (m) => figures(m).leniency });
    }
  }
  // irt_ability (src/rubric/irtState.ts): the item table after each step, a and b per criterion.
  if (metrics.some((m) => m.irt)) {
    for (const id of union(metrics.map((m) => m.irt?.by_criterion ?? {}))) {
      columns.push({ name: `irt/a/${id}`, get: (m) => m.irt?.by_criterion[id]?.a ?? null }, { name: `irt/b/${id}`, get: (m) => m.irt?.by_criterion[id]?.b ?? null });
    }
  }
  // Online rubric evolution (src/rl/rubricEvolution.ts): the version judging each step, and the decision after it.
  if (metrics.some((m) => m.rubric_version || m.rubric_evolution)) {
    columns.push(
      { name: 'rubric/version', get: (m) => m.rubric_version ?? null },
      { name: 'rubric/evolution', get: (m) => m.rubric_evolution?.outcome ?? null },
      { name: 'rubric/evolved_to', get: (m) => m.rubric_evolution?.version ?? null },
      { name: 'rubric/evolution_reason', get: (m) => (m.rubric_evolution ? neutraliseFormula(m.rubric_evolution.reason) : null) },
    );
  }
  // On-policy distillation (src/rl/distill/): the first update pass's divergence and agreement.
  if (metrics.some((m) => m.distillation)) {
    columns.push(...DISTILL_FIELDS.map((k) => ({ name: `distill/${k}`, get: (m: StepMetrics) => m.distillation?.[k] ?? null })));
  }
  // The black-box teacher's rubric inductions (src/rl/distill/blackBox.ts): the outcome and the new version.
  if (metrics.some((m) => m.teacher_rubric)) {
    columns.push({ name: 'teacher_rubric/outcome', get: (m: StepMetrics) => m.teacher_rubric?.outcome ?? null }, { name: 'teacher_rubric/version', get: (m: StepMetrics) => m.teacher_rubric?.version ?? null });
  }
  // Distillation's training modes (src/rl/distill/schedule.ts): each step's phase, on-policy or teacher-sampled, RuFT's kept rollouts.
  if (metrics.some((m) => m.schedule)) {
    columns.push(...SCHEDULE_FIELDS.map((k) => ({ name: `schedule/${k}`, get: (m: StepMetrics) => m.schedule?.[k] ?? null })));
  }
  return columns;
}

const SCHEDULE_FIELDS = ['phase', 'on_policy', 'sft_kept'] as const satisfies readonly (keyof ScheduleMetrics)[];
const DISTILL_FIELDS = ['loss', 'divergence', 'top1_agreement', 'retained_tokens', 'completion_tokens', 'injected_rollouts', 'injected_criteria'] as const satisfies readonly (keyof DistillMetrics)[];

/** The column names metricsToCsv writes for these steps, in order. */
export function metricColumns(metrics: readonly StepMetrics[]): string[] {
  return columnsOf(metrics).map((c) => c.name);
}

/** One row per step (in the order given), columns from metricColumns. */
export function metricsToCsv(metrics: readonly StepMetrics[]): string {
  const columns = columnsOf(metrics);
  return toCsv(
    columns.map((c) => c.name),
    metrics.map((m) => columns.map((c) => c.get(m))),
  );
}

/**
 * One row per rollout: where it sits, the texts (formula-neutralised), how its sampling was guided
 * (guided: the strategy, e.g. "scaffold", empty for plain sampling; guidance: the added text), reward, advantage and each
 * criterion's score as score/<id> (criterion ids from the rollouts' results, first-seen order).
 */
export function rolloutsToCsv(rollouts: readonly RolloutRecord[]): string {
  const ids = union(rollouts.map((r) => Object.fromEntries(r.results.map((x) => [x.criterion_id, true]))));
  const header = ['step', 'group', 'index', 'prompt', 'completion', 'completion_tokens', 'truncated', 'guided', 'guidance', 'reward', 'advantage', ...ids.map((id) => `score/${id}`)];
  const rows = rollouts.map((r) => {
    const byId = new Map(r.results.map((x) => [x.criterion_id, x.score]));
    return [
      r.step,
      r.group,
      r.index,
      neutraliseFormula(r.prompt),
      neutraliseFormula(r.completion),
      r.completion_ids.length,
      r.truncated,
      r.guided?.kind ?? null,
      r.guided ? neutraliseFormula(r.guided.guidance) : null,
      r.reward,
      r.advantage,
      ...ids.map((id) => byId.get(id) ?? null),
    ];
  });
  return toCsv(header, rows);
}
