// RunStore: the app's one door to IndexedDB. Every write is one transaction, so it lands whole
// or not at all: a crash, a closed tab or a full disk in the middle of commitStep leaves the
// previous step exactly as it was. Quota failures become StorageFullError (with the usage and
// an offer to prune). Cross-tab safety is withRunLock's job (./locks.ts): hold the run's lock
// while writing to it.
import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type { CheckpointFiles } from '../model/checkpoint';
import type { GrpoConfig } from '../rl/config';
import { judgeChoiceSchema, type JudgeChoice } from '../rl/judgeChoice';
import { judgeBiasSchema, type JudgeBiasChoice } from '../rl/judgeBias';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import type { Rubric, InductionProvenance } from '../rubric';
import type { ProbeSet } from '../rubric';
import { DEFAULT_PASS_THRESHOLD } from '../rubric/aggregate';
import { rubricVersion } from '../rubric/version';
import { openDatabase } from './database';
import { isQuotaError, RunNotFoundError, StorageFullError, StoreClosedError, type StorageUsage } from './errors';
import {
  DB_NAME,
  emptyUsage,
  totalBytes,
  type CheckpointRecord,
  type LabelRolloutKey,
  type PromptSetRecord,
  type RubricLabels,
  type RubricRecord,
  type RunRecord,
  type RunStatus,
  type StepKey,
  type StoredRollout,
  type StoreSchema,
} from './schema';
import { estimatePrune, type PruneEstimate, type PrunePlan, type RolloutStepUsage } from './prune';
import { approxBytes } from './size';
import { checkCheckpoint, checkCount, checkId, checkMetrics, checkName, checkPrompts, checkRollouts, checkStatus } from './validate';

/** The part of navigator.storage used here. */
export interface StorageManagerLike {
  estimate?: () => Promise<{ usage?: number; quota?: number }>;
  persist?: () => Promise<boolean>;
  persisted?: () => Promise<boolean>;
}

export interface RunStoreOptions {
  /** Database name; default 'rubric-playground'. */
  name?: string;
  /** Checkpoints kept per run when a new one is saved (newest by step); default 3, at least 1. */
  keepCheckpoints?: number;
  /** Default navigator.storage (null: behave as if the browser had none). */
  storage?: StorageManagerLike | null;
  /** Called when the connection closes for another tab's upgrade or by the browser. */
  onClose?: (reason: string) => void;
  /** Called while a tab with an older version open delays the upgrade (ask the user to close it). */
  onBlocked?: () => void;
  /** Clock for created/updated (ms since the epoch); default Date.now. */
  now?: () => number;
}

export const DEFAULT_KEEP_CHECKPOINTS = 3;

export interface NewRun {
  name: string;
  modelId: string;
  prompts: readonly string[];
  promptSetId?: string;
  /** A parsed rubric (parseRubric); stored under its content version. */
  rubric: Rubric;
  /** A parsed held-out rubric (scored, never trained on); stored under its content version too. */
  heldOutRubric?: Rubric;
  /** A parsed GRPO config (parseGrpoConfig). */
  config: GrpoConfig;
  /** Who answers judge questions (parsed; never holds a key). Absent: rules only. */
  judge?: JudgeChoice;
  /** The bias sandbox's declared bias (parsed). Absent: off. */
  judgeBias?: JudgeBiasChoice;
  /** Default 'paused': created, not yet training. */
  status?: RunStatus;
  /** The run's id, chosen by the caller (one that locks the run before it exists); default: a new one. */
  id?: string;
}

export interface RunInfo extends RunRecord {
  /** Approximate bytes of the run's rollouts, metrics and checkpoints. */
  bytes: number;
}

export interface RolloutQuery {
  /** Only this step's rollouts. */
  step?: number;
  /** Only rollouts scored below passThreshold on this criterion (unscored ones are not "failed"). */
  failedCriterion?: string;
  /** Default 0.5, the rubric layer's DEFAULT_PASS_THRESHOLD. */
  passThreshold?: number;
}

export interface PruneResult {
  deleted: number;
  /** Approximate bytes freed. */
  bytes: number;
}

export interface StoredCheckpoint {
  step: number;
  created: number;
  files: CheckpointFiles;
}

type Track = <P>(request: Promise<P>) => Promise<P>;
type WriteTx<S extends StoreNames<StoreSchema>> = IDBPTransaction<StoreSchema, S[], 'readwrite'>;
/** The writes checkpoint bookkeeping needs, from any readwrite transaction that includes 'checkpoints'. */
interface CheckpointWrites {
  put(record: CheckpointRecord): Promise<unknown>;
  delete(key: StepKey): Promise<unknown>;
}

/** Keys [runId, ...anything]: arrays sort after numbers and strings, so [runId, []] is above every key of the run. */
const runRange = (runId: string): IDBKeyRange => IDBKeyRange.bound([runId], [runId, []]);
/** Keys [runId, step, ...] with step <= last. */
const stepsUpTo = (runId: string, last: number): IDBKeyRange => IDBKeyRange.bound([runId], [runId, last, []]);
const oneStep = (runId: string, step: number): IDBKeyRange => IDBKeyRange.bound([runId, step], [runId, step, []]);

function newId(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  return Array.from(c.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export class RunStore {
  private closedReason: string | null = null;

  private constructor(
    private readonly db: IDBPDatabase<StoreSchema>,
    private readonly keepCheckpoints: number,
    private readonly storage: StorageManagerLike | null,
    private readonly now: () => number,
  ) {}

  /** Opens (creating or upgrading) the database. */
  static async open(options: RunStoreOptions = {}): Promise<RunStore> {
    const keep = options.keepCheckpoints ?? DEFAULT_KEEP_CHECKPOINTS;
    checkCount(keep, 'keepCheckpoints', 1);
    const name = options.name ?? DB_NAME;
    checkId(name, 'name');
    const storage =
      options.storage !== undefined ? options.storage : ((globalThis as { navigator?: { storage?: StorageManagerLike } }).navigator?.storage ?? null);
    let store: RunStore | null = null;
    let earlyClose: string | null = null;
    const db = await openDatabase(name, {
      onBlocked: options.onBlocked,
      onClose: (reason) => {
        if (store) store.closedReason = reason;
        else earlyClose = reason;
        options.onClose?.(reason);
      },
    });
    store = new RunStore(db, keep, storage, options.now ?? Date.now);
    store.closedReason = earlyClose;
    return store;
  }

  close(): void {
    if (this.closedReason) return;
    this.closedReason = 'close() was called';
    this.db.close();
  }

  // ---------------------------------------------------------------- rubrics and prompt sets

  /** Stores a parsed rubric under its content version (idempotent) and returns the version; an induced one keeps its provenance. */
  async saveRubric(rubric: Rubric, provenance?: InductionProvenance): Promise<string> {
    const version = await rubricVersion(rubric);
    await this.write(['rubrics'], `saving rubric "${rubric.name}"`, async (tx) => {
      await this.putRubric(tx.objectStore('rubrics'), rubric, version, provenance);
    });
    return version;
  }

  async rubric(version: string): Promise<Rubric | null> {
    checkId(version, 'version');
    this.ensureOpen();
    return (await this.db.get('rubrics', version))?.rubric ?? null;
  }

  /** The human labels stored with a rubric version (empty lists when none). */
  async labels(version: string): Promise<RubricLabels> {
    checkId(version, 'version');
    this.ensureOpen();
    const labels = (await this.db.get('rubrics', version))?.labels;
    return { marks: [...(labels?.marks ?? [])], verdicts: [...(labels?.verdicts ?? [])] };
  }

  /** Marks a rollout better or worse under a rubric version (null clears the mark). */
  async markRollout(version: string, mark: { rollout: LabelRolloutKey; group: string }, label: 'better' | 'worse' | null): Promise<RubricLabels> {
    return this.editLabels(version, (l) => {
      l.marks = l.marks.filter((m) => m.rollout !== mark.rollout);
      if (label !== null) l.marks.push({ rollout: mark.rollout, group: mark.group, label });
    });
  }

  /** Marks a judge verdict right or wrong under a rubric version (null clears it). */
  async labelVerdict(version: string, verdict: { rollout: LabelRolloutKey; criterion: string; score: number }, correct: boolean | null): Promise<RubricLabels> {
    if (!(verdict.score >= 0 && verdict.score <= 1)) throw new RangeError(`score must be in [0, 1], got ${verdict.score}`);
    return this.editLabels(version, (l) => {
      l.verdicts = l.verdicts.filter((v) => !(v.rollout === verdict.rollout && v.criterion === verdict.criterion));
      if (correct !== null) l.verdicts.push({ rollout: verdict.rollout, criterion: verdict.criterion, score: verdict.score, correct });
    });
  }

  /** The probe judge last trained from a rubric version's labels, or null. */
  async probe(version: string): Promise<ProbeSet | null> {
    checkId(version, 'version');
    this.ensureOpen();
    return (await this.db.get('rubrics', version))?.probe ?? null;
  }

  /** Keeps a trained probe judge with its rubric version (replacing the last one). */
  async saveProbe(version: string, probe: ProbeSet): Promise<void> {
    checkId(version, 'version');
    await this.write(['rubrics'], 'saving the probe judge', async (tx) => {
      const store = tx.objectStore('rubrics');
      const record = await store.get(version);
      if (!record) throw new Error(`rubric version ${version.slice(0, 12)} is not stored`);
      await store.put({ ...record, probe });
    });
  }

  private async editLabels(version: string, change: (labels: RubricLabels) => void): Promise<RubricLabels> {
    checkId(version, 'version');
    return this.write(['rubrics'], 'saving a label', async (tx) => {
      const store = tx.objectStore('rubrics');
      const record = await store.get(version);
      if (!record) throw new Error(`rubric version ${version.slice(0, 12)} is not stored`);
      const labels: RubricLabels = { marks: [...(record.labels?.marks ?? [])], verdicts: [...(record.labels?.verdicts ?? [])] };
      change(labels);
      await store.put({ ...record, labels });
      return labels;
    });
  }

  /** All stored rubric versions, oldest first. */
  async listRubrics(): Promise<RubricRecord[]> {
    this.ensureOpen();
    return (await this.db.getAll('rubrics')).sort((a, b) => a.created - b.created);
  }

  /** Creates (no id) or replaces (id) a prompt set. */
  async savePromptSet(input: { id?: string; name: string; prompts: readonly string[] }): Promise<PromptSetRecord> {
    const name = checkName(input.name, 'name');
    const prompts = checkPrompts(input.prompts, 'prompts');
    if (input.id !== undefined) checkId(input.id, 'id');
    const id = input.id ?? newId();
    return this.write(['promptSets'], `saving prompt set "${name}"`, async (tx) => {
      const store = tx.objectStore('promptSets');
      const t = this.now();
      const record: PromptSetRecord = { id, name, prompts, created: (await store.get(id))?.created ?? t, updated: t };
      await store.put(record);
      return record;
    });
  }

  async promptSet(id: string): Promise<PromptSetRecord | null> {
    checkId(id, 'id');
    this.ensureOpen();
    return (await this.db.get('promptSets', id)) ?? null;
  }

  async listPromptSets(): Promise<PromptSetRecord[]> {
    this.ensureOpen();
    return (await this.db.getAll('promptSets')).sort((a, b) => b.updated - a.updated);
  }

  /** Runs keep their own copy of the prompts, so deleting a set never changes a run. */
  async deletePromptSet(id: string): Promise<boolean> {
    checkId(id, 'id');
    return this.write(['promptSets'], `deleting prompt set "${id}"`, async (tx) => {
      const store = tx.objectStore('promptSets');
      if (!(await store.getKey(id))) return false;
      await store.delete(id);
      return true;
    });
  }

  // ---------------------------------------------------------------- runs

  /** Creates a run (and stores its rubric versions) in one transaction. */
  async createRun(spec: NewRun): Promise<RunRecord> {
    const name = checkName(spec.name, 'name');
    checkId(spec.modelId, 'modelId');
    const prompts = checkPrompts(spec.prompts, 'prompts');
    if (spec.promptSetId !== undefined) checkId(spec.promptSetId, 'promptSetId');
    if (typeof spec.config !== 'object' || spec.config === null) throw new RangeError('config must be a parsed GrpoConfig object');
    for (const [arg, r] of [['rubric', spec.rubric], ['heldOutRubric', spec.heldOutRubric]] as const) {
      if (arg === 'heldOutRubric' && r === undefined) continue;
      if (typeof r !== 'object' || r === null || !Array.isArray(r.criteria)) throw new RangeError(`${arg} must be a parsed Rubric object`);
    }
    const status = spec.status ?? 'paused';
    checkStatus(status);
    if (spec.id !== undefined) checkId(spec.id, 'id');
    const version = await rubricVersion(spec.rubric);
    const heldOutVersion = spec.heldOutRubric ? await rubricVersion(spec.heldOutRubric) : undefined;
    const t = this.now();
    const run: RunRecord = {
      id: spec.id ?? newId(),
      name,
      created: t,
      updated: t,
      status,
      experiment: {
        modelId: spec.modelId,
        prompts,
        ...(spec.promptSetId !== undefined ? { promptSetId: spec.promptSetId } : {}),
        rubricVersion: version,
        ...(heldOutVersion !== undefined ? { heldOutRubricVersion: heldOutVersion } : {}),
        ...(spec.judge !== undefined ? { judge: judgeChoiceSchema.parse(spec.judge) } : {}),
        ...(spec.judgeBias !== undefined ? { judgeBias: judgeBiasSchema.parse(spec.judgeBias) } : {}),
        config: spec.config,
      },
      lastStep: null,
      lastCheckpointStep: null,
      checkpoints: [],
      usage: emptyUsage(),
    };
    await this.write(['runs', 'rubrics'], `creating run "${name}"`, async (tx, track) => {
      await this.putRubric(tx.objectStore('rubrics'), spec.rubric, version);
      if (spec.heldOutRubric && heldOutVersion !== undefined) await this.putRubric(tx.objectStore('rubrics'), spec.heldOutRubric, heldOutVersion);
      await track(tx.objectStore('runs').add(run));
    });
    return run;
  }

  async getRun(id: string): Promise<RunRecord | null> {
    checkId(id, 'runId');
    this.ensureOpen();
    return (await this.db.get('runs', id)) ?? null;
  }

  /** Every run with its approximate size, most recently updated first. */
  async listRuns(): Promise<RunInfo[]> {
    this.ensureOpen();
    const runs = await this.db.getAll('runs');
    return runs
      .map((r) => ({ ...r, bytes: totalBytes(r.usage) }))
      .sort((a, b) => b.updated - a.updated || b.created - a.created || (a.id < b.id ? -1 : 1));
  }

  async renameRun(id: string, name: string): Promise<RunRecord> {
    const clean = checkName(name, 'name');
    return this.updateRun(id, `renaming run "${id}"`, (run) => {
      run.name = clean;
    });
  }

  /** Sets the status; `error` is kept only with 'failed', or with 'stopped' (why a fault stopped the run). */
  async setStatus(id: string, status: RunStatus, error?: string): Promise<RunRecord> {
    checkStatus(status);
    if (error !== undefined && typeof error !== 'string') throw new RangeError('error must be a string');
    return this.updateRun(id, `setting the status of run "${id}"`, (run) => {
      run.status = status;
      // A failure's reason, or why a fault (a full storage) stopped the run.
      if ((status === 'failed' || status === 'stopped') && error) run.error = error;
      else delete run.error;
    });
  }

  /** Deletes the run with its rollouts, metrics and checkpoints (its rubric version stays: runs share them). */
  async deleteRun(id: string): Promise<boolean> {
    checkId(id, 'runId');
    return this.write(['runs', 'rollouts', 'metrics', 'checkpoints'], `deleting run "${id}"`, async (tx, track) => {
      const existed = (await tx.objectStore('runs').getKey(id)) !== undefined;
      track(tx.objectStore('runs').delete(id));
      track(tx.objectStore('rollouts').delete(runRange(id)));
      track(tx.objectStore('metrics').delete(runRange(id)));
      track(tx.objectStore('checkpoints').delete(runRange(id)));
      return existed;
    });
  }

  // ---------------------------------------------------------------- steps

  /**
   * Commits one training step: its metrics, its rollouts and optionally a checkpoint (the state
   * after this step), with the run's lastStep, in ONE transaction. `step` may be at most
   * lastStep + 1; committing a step again (a replay after resuming from an older checkpoint)
   * replaces that step's records. Saving a checkpoint prunes the run's older ones beyond
   * `keepCheckpoints`.
   */
  async commitStep(
    runId: string,
    step: number,
    metrics: StepMetrics,
    rollouts: readonly RolloutRecord[],
    checkpoint?: CheckpointFiles,
    options: { keepCheckpoints?: number } = {},
  ): Promise<RunRecord> {
    checkId(runId, 'runId');
    checkCount(step, 'step', 0);
    checkMetrics(metrics, step);
    checkRollouts(rollouts, step);
    if (checkpoint !== undefined) checkCheckpoint(checkpoint, 'checkpoint');
    const keep = options.keepCheckpoints ?? this.keepCheckpoints;
    checkCount(keep, 'keepCheckpoints', 1);

    const what = `saving step ${step} of run "${runId}"`;
    return this.write(['runs', 'rollouts', 'metrics', 'checkpoints'], what, async (tx, track) => {
      const run = await tx.objectStore('runs').get(runId);
      if (!run) throw new RunNotFoundError(runId);
      const next = (run.lastStep ?? -1) + 1;
      if (step > next) throw new RangeError(`step ${step} of run "${runId}" would leave a gap: the next step is ${next}`);

      // What a replay of this step replaces.
      const rolloutStore = tx.objectStore('rollouts');
      for (let c = await rolloutStore.openCursor(oneStep(runId, step)); c; c = await c.continue()) {
        run.usage.rollouts.count--;
        run.usage.rollouts.bytes -= c.value.bytes;
        track(c.delete());
      }
      const metricsStore = tx.objectStore('metrics');
      const previous = await metricsStore.get([runId, step]);
      if (previous) {
        run.usage.metrics.count--;
        run.usage.metrics.bytes -= previous.bytes;
      }

      for (const r of rollouts) {
        const bytes = approxBytes(r);
        run.usage.rollouts.count++;
        run.usage.rollouts.bytes += bytes;
        track(rolloutStore.put({ ...r, runId, bytes }));
      }
      const metricsBytes = approxBytes(metrics);
      run.usage.metrics.count++;
      run.usage.metrics.bytes += metricsBytes;
      track(metricsStore.put({ runId, step, metrics, bytes: metricsBytes }));

      if (checkpoint) this.putCheckpoint(tx.objectStore('checkpoints'), track, run, step, checkpoint, keep);
      run.lastStep = Math.max(run.lastStep ?? -1, step);
      run.updated = this.now();
      track(tx.objectStore('runs').put(run));
      return run;
    });
  }

  /** Saves a checkpoint of an already committed step (e.g. on pause) and prunes older ones. */
  async saveCheckpoint(runId: string, step: number, files: CheckpointFiles, options: { keepCheckpoints?: number } = {}): Promise<RunRecord> {
    checkId(runId, 'runId');
    checkCount(step, 'step', 0);
    checkCheckpoint(files, 'files');
    const keep = options.keepCheckpoints ?? this.keepCheckpoints;
    checkCount(keep, 'keepCheckpoints', 1);
    return this.write(['runs', 'checkpoints'], `saving the step ${step} checkpoint of run "${runId}"`, async (tx, track) => {
      const run = await tx.objectStore('runs').get(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (run.lastStep === null || step > run.lastStep) {
        throw new RangeError(`step ${step} of run "${runId}" is not committed yet (last committed: ${run.lastStep ?? 'none'}); commit it first`);
      }
      this.putCheckpoint(tx.objectStore('checkpoints'), track, run, step, files, keep);
      run.updated = this.now();
      track(tx.objectStore('runs').put(run));
      return run;
    });
  }

  /** The newest checkpoint (highest step) of the run, or null when it has none. */
  async latestCheckpoint(runId: string): Promise<StoredCheckpoint | null> {
    checkId(runId, 'runId');
    return this.read(['runs', 'checkpoints'], runId, async (tx) => {
      const c = await tx.objectStore('checkpoints').openCursor(runRange(runId), 'prev');
      return c ? { step: c.value.step, created: c.value.created, files: c.value.files } : null;
    });
  }

  /** The run's step metrics, by step. */
  async metrics(runId: string): Promise<StepMetrics[]> {
    checkId(runId, 'runId');
    return this.read(['runs', 'metrics'], runId, async (tx) => (await tx.objectStore('metrics').getAll(runRange(runId))).map((m) => m.metrics));
  }

  /** The run's rollouts by (step, group, index), optionally one step and/or those failing one criterion. */
  async rollouts(runId: string, query: RolloutQuery = {}): Promise<StoredRollout[]> {
    checkId(runId, 'runId');
    if (query.step !== undefined) checkCount(query.step, 'step', 0);
    if (query.failedCriterion !== undefined) checkId(query.failedCriterion, 'failedCriterion');
    const threshold = query.passThreshold ?? DEFAULT_PASS_THRESHOLD;
    if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`passThreshold must be in [0, 1], got ${threshold}`);
    const all = await this.read(['runs', 'rollouts'], runId, async (tx) => {
      const store = tx.objectStore('rollouts');
      return query.step === undefined ? store.getAll(runRange(runId)) : store.index('byRunStep').getAll([runId, query.step]);
    });
    const id = query.failedCriterion;
    if (id === undefined) return all;
    return all.filter((r) => r.results.some((x) => x.criterion_id === id && x.status === 'ok' && x.score < threshold));
  }

  /** Deletes rollouts of all but the last `keepLastSteps` steps (counted back from lastStep). */
  async pruneRollouts(runId: string, keepLastSteps: number): Promise<PruneResult> {
    checkCount(keepLastSteps, 'keepLastSteps', 0);
    return this.pruneRolloutsUpTo(runId, (run) => (run.lastStep ?? -1) - keepLastSteps);
  }

  /** Deletes the rollouts of every step before `step` (the run's metrics and checkpoints stay). */
  async pruneRolloutsBefore(runId: string, step: number): Promise<PruneResult> {
    checkCount(step, 'step', 0);
    return this.pruneRolloutsUpTo(runId, () => step - 1);
  }

  /** Per step, the run's stored rollouts and their approximate bytes, by step. */
  async rolloutUsageByStep(runId: string): Promise<RolloutStepUsage[]> {
    checkId(runId, 'runId');
    return this.read(['runs', 'rollouts'], runId, async (tx) => {
      const steps = new Map<number, RolloutStepUsage>();
      for (let c = await tx.objectStore('rollouts').openCursor(runRange(runId)); c; c = await c.continue()) {
        const s = steps.get(c.value.step) ?? { step: c.value.step, count: 0, bytes: 0 };
        s.count++;
        s.bytes += c.value.bytes;
        steps.set(s.step, s);
      }
      return [...steps.values()].sort((a, b) => a.step - b.step);
    });
  }

  /** What pruneCheckpoints(keepCheckpoints) and pruneRolloutsBefore(rolloutsBeforeStep) would free, deleting nothing. */
  async pruneEstimate(runId: string, plan: PrunePlan): Promise<PruneEstimate> {
    checkId(runId, 'runId');
    const run = await this.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return estimatePrune(run, await this.rolloutUsageByStep(runId), plan);
  }

  /** Deletes the run's rollouts of steps <= cutoff(run) in one transaction and updates its usage. */
  private async pruneRolloutsUpTo(runId: string, cutoffOf: (run: RunRecord) => number): Promise<PruneResult> {
    checkId(runId, 'runId');
    return this.write(['runs', 'rollouts'], `pruning rollouts of run "${runId}"`, async (tx, track) => {
      const run = await tx.objectStore('runs').get(runId);
      if (!run) throw new RunNotFoundError(runId);
      const result: PruneResult = { deleted: 0, bytes: 0 };
      const cutoff = cutoffOf(run);
      if (cutoff < 0) return result;
      const store = tx.objectStore('rollouts');
      for (let c = await store.openCursor(stepsUpTo(runId, cutoff)); c; c = await c.continue()) {
        result.deleted++;
        result.bytes += c.value.bytes;
        track(c.delete());
      }
      run.usage.rollouts.count -= result.deleted;
      run.usage.rollouts.bytes -= result.bytes;
      run.updated = this.now();
      track(tx.objectStore('runs').put(run));
      return result;
    });
  }

  /** Keeps only the newest `keep` checkpoints of the run (0 deletes them all). */
  async pruneCheckpoints(runId: string, keep: number): Promise<PruneResult> {
    checkId(runId, 'runId');
    checkCount(keep, 'keep', 0);
    return this.write(['runs', 'checkpoints'], `pruning checkpoints of run "${runId}"`, async (tx, track) => {
      const run = await tx.objectStore('runs').get(runId);
      if (!run) throw new RunNotFoundError(runId);
      const result = this.pruneManifest(tx.objectStore('checkpoints'), track, run, keep);
      run.updated = this.now();
      track(tx.objectStore('runs').put(run));
      return result;
    });
  }

  // ---------------------------------------------------------------- storage

  /** What the browser reports for this origin, or null without navigator.storage.estimate. */
  async storageEstimate(): Promise<StorageUsage | null> {
    if (!this.storage?.estimate) return null;
    try {
      const e = await this.storage.estimate();
      return { usage: e.usage ?? 0, quota: e.quota ?? 0 };
    } catch {
      return null;
    }
  }

  /**
   * Asks the browser not to evict this origin's data under storage pressure. True when granted
   * (or already granted), false when refused, null where the browser has no such API.
   */
  async requestPersistence(): Promise<boolean | null> {
    if (!this.storage?.persist) return null;
    if (this.storage.persisted && (await this.storage.persisted())) return true;
    return this.storage.persist();
  }

  // ---------------------------------------------------------------- internals

  private ensureOpen(): void {
    if (this.closedReason) throw new StoreClosedError(this.closedReason);
  }

  /**
   * Runs `body` in one readwrite transaction. `track` registers requests that are not awaited
   * one by one. On any error the transaction is aborted (nothing of it is written) and the error
   * rethrown, quota errors as StorageFullError.
   */
  private async write<S extends StoreNames<StoreSchema>, T>(stores: S[], what: string, body: (tx: WriteTx<S>, track: Track) => Promise<T>): Promise<T> {
    this.ensureOpen();
    const tx = this.db.transaction(stores, 'readwrite');
    const pending: Promise<unknown>[] = [];
    const track: Track = (request) => {
      pending.push(request);
      return request;
    };
    try {
      const result = await body(tx, track);
      await Promise.all(pending);
      await tx.done;
      return result;
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already aborted or committed
      }
      await Promise.allSettled([tx.done, ...pending]);
      const txError = (tx as unknown as { error: unknown }).error;
      const quota = isQuotaError(err) ? err : isQuotaError(txError) ? txError : null;
      if (quota) throw new StorageFullError(what, await this.storageEstimate(), { cause: quota });
      throw err;
    }
  }

  /** A readonly snapshot over the run and one of its stores; throws RunNotFoundError for an unknown run. */
  private async read<S extends 'rollouts' | 'metrics' | 'checkpoints', T>(
    stores: ['runs', S],
    runId: string,
    body: (tx: IDBPTransaction<StoreSchema, ['runs', S], 'readonly'>) => Promise<T>,
  ): Promise<T> {
    this.ensureOpen();
    const tx = this.db.transaction(stores, 'readonly');
    try {
      if ((await tx.objectStore('runs').getKey(runId)) === undefined) throw new RunNotFoundError(runId);
      const result = await body(tx);
      await tx.done;
      return result;
    } catch (err) {
      await tx.done.catch(() => {});
      throw err;
    }
  }

  private async updateRun(id: string, what: string, change: (run: RunRecord) => void): Promise<RunRecord> {
    checkId(id, 'runId');
    return this.write(['runs'], what, async (tx) => {
      const store = tx.objectStore('runs');
      const run = await store.get(id);
      if (!run) throw new RunNotFoundError(id);
      change(run);
      run.updated = this.now();
      await store.put(run);
      return run;
    });
  }

  private async putRubric(store: ReturnType<WriteTx<'rubrics'>['objectStore']>, rubric: Rubric, version: string, provenance?: InductionProvenance): Promise<void> {
    // Content-addressed: an existing version is the same rubric, so it is left as it was.
    if ((await store.getKey(version)) !== undefined) return;
    await store.put({ version, name: rubric.name, rubric, created: this.now(), ...(provenance ? { provenance } : {}) });
  }

  private putCheckpoint(store: CheckpointWrites, track: Track, run: RunRecord, step: number, files: CheckpointFiles, keep: number): void {
    const record: CheckpointRecord = { runId: run.id, step, created: this.now(), files };
    const bytes = approxBytes(files);
    const replaced = run.checkpoints.find((k) => k.step === step);
    if (replaced) {
      run.usage.checkpoints.count--;
      run.usage.checkpoints.bytes -= replaced.bytes;
    }
    run.checkpoints = [...run.checkpoints.filter((k) => k.step !== step), { step, bytes }].sort((a, b) => a.step - b.step);
    run.usage.checkpoints.count++;
    run.usage.checkpoints.bytes += bytes;
    track(store.put(record));
    this.pruneManifest(store, track, run, keep);
  }

  /** Deletes all but the newest `keep` checkpoints of the run and updates its manifest and usage. */
  private pruneManifest(store: CheckpointWrites, track: Track, run: RunRecord, keep: number): PruneResult {
    const drop = run.checkpoints.slice(0, Math.max(0, run.checkpoints.length - keep));
    for (const k of drop) track(store.delete([run.id, k.step]));
    const bytes = drop.reduce((s, k) => s + k.bytes, 0);
    run.checkpoints = run.checkpoints.slice(drop.length);
    run.usage.checkpoints.count -= drop.length;
    run.usage.checkpoints.bytes -= bytes;
    run.lastCheckpointStep = run.checkpoints.length ? run.checkpoints[run.checkpoints.length - 1].step : null;
    return { deleted: drop.length, bytes };
  }
}
