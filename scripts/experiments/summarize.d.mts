export const METHODS: Record<string, Record<string, unknown>>;
export const DEFAULT_METHODS: string[];

export interface ExperimentJson {
  model: string;
  prompts: string[];
  rubric: { criteria: { weight: number }[] } & Record<string, unknown>;
  config: Record<string, unknown>;
}
export function methodExperiment<E extends { config: Record<string, unknown> }>(base: E, method: string, seed: number, methods?: Record<string, Record<string, unknown>>): E;
export function parseMethodList(text: string | undefined, methods?: Record<string, Record<string, unknown>>): string[];
export function parseSeeds(text: string | undefined): number[];

export interface RolloutLike {
  reward: number | null;
  scores: (number | null)[];
}
export function allCriteriaMet(rollouts: readonly RolloutLike[], criteria: readonly { weight: number }[], threshold?: number): number | null;

export interface FinalFigures {
  step: number;
  reward: number | null;
  reward_last3: number | null;
  strict_completion_last3: number | null;
  all_criteria_met: number | null;
  unexplored_per_step: number | null;
  suppressed_per_step: number | null;
  entropy: number;
  step_seconds: number;
}
export interface RunRecord {
  method: string;
  seed: number;
  status: string;
  steps: number;
  errors: string[];
  wall_seconds: number;
  reward: (number | null)[];
  criterion_pass_rate: Record<string, number | null>[];
  strict_completion: number[];
  unexplored_criteria: (number | null)[];
  suppressed_criteria: (number | null)[];
  entropy: number[];
  frac_reward_zero_std: number[];
  step_seconds: number[];
  final: FinalFigures | null;
}
export function runRecord(
  method: string,
  seed: number,
  result: { status: string; steps: number; metrics: unknown[]; rollouts: unknown[]; errors: string[] },
  criteria: readonly { weight: number }[],
  seconds: number,
): RunRecord;

export interface MeanSpread {
  mean: number;
  sd: number;
  n: number;
}
export function meanSpread(xs: readonly (number | null | undefined)[]): MeanSpread | null;

export const SUMMARY_FIELDS: string[];
export interface SummaryRow {
  method: string;
  seeds: number[];
  failed: number;
  steps: number;
  reward: MeanSpread | null;
  reward_last3: MeanSpread | null;
  strict_completion_last3: MeanSpread | null;
  all_criteria_met: MeanSpread | null;
  unexplored_per_step: MeanSpread | null;
  suppressed_per_step: MeanSpread | null;
  entropy: MeanSpread | null;
  step_seconds: MeanSpread | null;
  reward_vs_baseline: MeanSpread | null;
}
export function summarize(records: readonly RunRecord[]): SummaryRow[];
export function markdownTable(rows: readonly SummaryRow[]): string;
