// What the IndexedDB database `rubric-playground` holds, as types. The object stores and their
// keys are created by the migration ladder (./migrations.ts); this file is the current (v2)
// shape that the rest of src/store reads and writes.
import type { DBSchema } from 'idb';
import type { CheckpointFiles } from '../model/checkpoint';
import type { GrpoConfig } from '../rl/config';
import type { JudgeChoice } from '../rl/judgeChoice';
import type { JudgeBiasChoice } from '../rl/judgeBias';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import type { Rubric, InductionProvenance } from '../rubric';
import type { ProbeSet } from '../rubric';

export const DB_NAME = 'rubric-playground';
/** The schema version this code writes; migrations.ts upgrades every older one to it. */
export const DB_VERSION = 2;

export const RUN_STATUSES = ['running', 'paused', 'stopped', 'finished', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Everything needed to rerun an experiment: the model, the prompts, the rubric version, the GRPO options. */
export interface RunExperiment {
  modelId: string;
  prompts: string[];
  /** The prompt set the prompts were copied from, if any (the copy is what the run uses). */
  promptSetId?: string;
  /** Content hash of the rubric (rubricVersion); the rubric itself is in the `rubrics` store. */
  rubricVersion: string;
  /** Version of the held-out rubric (scored alongside, never trained on), if the experiment has one. */
  heldOutRubricVersion?: string;
  /** Who answers judge questions (no key, ever); absent: rules only. */
  judge?: JudgeChoice;
  /** The bias sandbox's declared bias (src/rubric/bias.ts); absent: off. */
  judgeBias?: JudgeBiasChoice;
  config: GrpoConfig;
}

/** Records and approximate bytes one kind of a run's data takes. */
export interface UsageCount {
  count: number;
  bytes: number;
}

export interface RunUsage {
  rollouts: UsageCount;
  metrics: UsageCount;
  checkpoints: UsageCount;
}

export interface RunRecord {
  id: string;
  name: string;
  /** Milliseconds since the epoch. */
  created: number;
  updated: number;
  status: RunStatus;
  /** Why the run failed (status 'failed'), or why a fault stopped it (status 'stopped': storage was full). */
  error?: string;
  experiment: RunExperiment;
  /** The last committed step; null before the first commit. */
  lastStep: number | null;
  /** Step of the newest stored checkpoint; null when the run has none. */
  lastCheckpointStep: number | null;
  /** Stored checkpoints, oldest first: lets pruning and sizes work without reading the weights. */
  checkpoints: { step: number; bytes: number }[];
  usage: RunUsage;
}

export interface RubricRecord {
  /** rubricVersion(rubric): lowercase hex SHA-256 of its canonical JSON. */
  version: string;
  name: string;
  rubric: Rubric;
  created: number;
  /** Human labels of rollouts judged with this version (src/rubric/labels.ts); absent: none yet. */
  labels?: RubricLabels;
  /** Where an induced version came from (the black-box teacher's contrasts, src/rubric/induce.ts); absent: written or generated in the page. */
  provenance?: InductionProvenance;
  /** The probe judge last trained from these labels (src/rubric/probeSet.ts); absent: none. */
  probe?: ProbeSet;
}

/** A rollout as labels name it: "runId/step/group/index". */
export type LabelRolloutKey = string;

export interface RubricLabels {
  /** Rollouts a user marked better or worse; `group` ("runId/step/group") pairs them within a group. */
  marks: { rollout: LabelRolloutKey; group: string; label: 'better' | 'worse' }[];
  /** Judge verdicts a user marked right or wrong, with the score the judge gave. */
  verdicts: { rollout: LabelRolloutKey; criterion: string; score: number; correct: boolean }[];
}

export interface PromptSetRecord {
  id: string;
  name: string;
  prompts: string[];
  created: number;
  updated: number;
}

export interface StoredRollout extends RolloutRecord {
  runId: string;
  /** Approximate stored size (see ./size.ts). */
  bytes: number;
}

export interface MetricsRecord {
  runId: string;
  step: number;
  metrics: StepMetrics;
  bytes: number;
}

export interface CheckpointRecord {
  runId: string;
  step: number;
  created: number;
  files: CheckpointFiles;
}

export type RolloutKey = [runId: string, step: number, group: number, index: number];
export type StepKey = [runId: string, step: number];

export interface StoreSchema extends DBSchema {
  runs: { key: string; value: RunRecord };
  rubrics: { key: string; value: RubricRecord };
  promptSets: { key: string; value: PromptSetRecord };
  rollouts: { key: RolloutKey; value: StoredRollout; indexes: { byRunStep: StepKey } };
  metrics: { key: StepKey; value: MetricsRecord };
  checkpoints: { key: StepKey; value: CheckpointRecord };
}

export const STORE_NAMES = ['runs', 'rubrics', 'promptSets', 'rollouts', 'metrics', 'checkpoints'] as const;

export function emptyUsage(): RunUsage {
  return { rollouts: { count: 0, bytes: 0 }, metrics: { count: 0, bytes: 0 }, checkpoints: { count: 0, bytes: 0 } };
}

export function totalBytes(usage: RunUsage): number {
  return usage.rollouts.bytes + usage.metrics.bytes + usage.checkpoints.bytes;
}
