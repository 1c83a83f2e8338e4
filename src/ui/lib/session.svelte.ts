// One training session in the page: drives the trainer worker (open, start, single step, slow
// motion, advance, pause, stop) and turns its events into reactive state for the run view:
// status, the stage of the step in progress, metrics per step and the last steps' rollouts.
// A remote judge's API key is asked for (judgeApiKey) only when a run opens, for the origin of
// that run's judge URL (a key entered for another site is never asked for), and goes to the
// worker alone, with its origin: never into the experiment or anything stored. So do the files
// of a model picked from this computer (localFiles) and the Hub mirror of the page address
// (hubEndpoint). While a Hub model downloads, `download` follows its progress; cancelDownload()
// stops it.
import { checkpointPlace, redoneSteps } from '../../rl/checkpointPolicy';
import type { RolloutRecord, Stage, StepMetrics } from '../../rl/grpoStep';
import type { OriginBoundKey } from '../../rubric/judges/remote';
import { startTrainerWorker, type CalibrationReply, type CalibrationRequest, type OpenResult, type TrainerClient, type UiEvent } from '../../worker/trainerClient';
import { summarize, type DownloadSummary } from './downloadView';
import type { EstimateReply, EstimateRequest } from './memoryCheck.svelte';
import { LiveProgress } from './liveProgress.svelte';
import { RolloutHistory } from './rollouts';
import type { RunView } from './runs.svelte';
import { liveStatus, stoppedByFullStorage, type SessionStatus } from './statusLine';
import { ScreenWakeLock } from './wakeLock';

export type { SessionStatus };

export const DEFAULT_KEEP_STEPS = 20;

export interface SessionOptions {
  /** The API key for a remote judge at this URL, bound to its origin, read when a run opens (undefined: none entered for it). */
  judgeApiKey?: (url: string) => OriginBoundKey | undefined;
  /** The same for a black-box distillation teacher's endpoint (distillation.teacher_endpoint). */
  teacherApiKey?: (url: string) => OriginBoundKey | undefined;
  /** The picked files of a "local:" model (undefined: not picked in this page). */
  localFiles?: (modelId: string) => File[] | undefined;
  /** Where "hf:" models download from (undefined: huggingface.co). */
  hubEndpoint?: string;
}

export type DownloadStatus = 'active' | 'done' | 'cancelled' | 'failed';

/** The files of a model export: name → bytes or text. */
export type ExportedFiles = Record<string, ArrayBuffer | string>;

/** The thrown message of a cancelled download (DownloadCancelledError in src/model/hub). */
const CANCELLED = /download cancelled/;

/** The URL of an experiment's black-box teacher endpoint; null without one (the only teacher that takes a key). */
function teacherEndpointUrl(experiment: Record<string, unknown>): string | null {
  const d = (experiment.config as { distillation?: { teacher?: unknown; teacher_endpoint?: { url?: unknown } | null } } | undefined)?.distillation;
  return d?.teacher === 'black_box' && typeof d.teacher_endpoint?.url === 'string' ? d.teacher_endpoint.url : null;
}

/**
 * The URL of an experiment's remote judge (the only judge that takes a key): the run's own, or else
 * its external judge's while judge_external_fraction is on (src/rl/externalGrading.ts: a run has at
 * most one remote judge); null for any other judge.
 */
function remoteJudgeUrl(experiment: Record<string, unknown>): string | null {
  const judge = experiment.judge as { kind?: unknown; url?: unknown } | undefined;
  if (judge?.kind === 'remote') return typeof judge.url === 'string' ? judge.url : null;
  const config = (experiment.config ?? {}) as { judge_external_fraction?: unknown; judge_external?: { kind?: unknown; url?: unknown } | null };
  const external = config.judge_external;
  return typeof config.judge_external_fraction === 'number' && config.judge_external_fraction > 0 && external?.kind === 'remote' && typeof external.url === 'string' ? external.url : null;
}

export class TrainingSession {
  status = $state<SessionStatus>('idle');
  /** Why the run failed or could not load, or why it stopped by itself (storage was full). */
  error = $state<string | null>(null);
  /** Per-step problems that did not end the run (a skipped non-finite update). */
  warnings = $state<string[]>([]);
  /**
   * Set by "Free space" beside a storage-full message: the runs list opens the prune controls of
   * this run (null runId: no run was saved, pick one) and clears it.
   */
  pruneRequest = $state.raw<{ runId: string | null } | null>(null);
  /** Set by the interrupted-run banner while it shows (the run's name and step), so the status line can point to it. */
  interrupted = $state<string | null>(null);
  loaded = $state<OpenResult | null>(null);
  /** The stored run the worker has open (it saves every step there). */
  runId = $state<string | null>(null);
  /** A run shown read-only (reopened from the runs list or imported from a file); null while training. */
  viewing = $state.raw<{ name: string; runId: string | null } | null>(null);
  /** The experiment the current run trains (edits in the builder apply to the next run). */
  runExperiment = $state.raw<Record<string, unknown> | null>(null);
  /** The step in progress and the last stage it reached. */
  stage = $state<{ step: number; stage: Stage } | null>(null);
  /** Inside the stage being worked on: done / total, partial completions, ETA. */
  readonly progress = new LiveProgress();
  /** Rollouts of the step in progress, as of its last stage. */
  live = $state.raw<RolloutRecord[]>([]);
  metrics = $state.raw<StepMetrics[]>([]);
  slowMotion = $state(false);
  /** In slow motion, how long each stage is held before the step goes on by itself; null: until advance(). */
  stageDelayMs = $state<number | null>(null);
  /** In slow motion: the step is held at a stage (until advance(), or for stageDelayMs). */
  held = $state(false);
  /**
   * A request the trainer has taken but not yet carried out: pause and stop wait for the step in
   * progress, a single step runs one. The controls say so at once and reflect it.
   */
  pending = $state<'pause' | 'stop' | 'step' | null>(null);
  /** What resuming from a checkpoint redoes ("Resuming from step K: steps K–N are trained again…"), said before it starts. */
  resumeNote = $state<string | null>(null);
  lastCheckpoint = $state<number | null>(null);
  wakeLockHeld = $state(false);
  keepSteps = $state(DEFAULT_KEEP_STEPS);
  /** Bumped whenever `history` changes (it is a plain object, not reactive). */
  historyVersion = $state(0);
  readonly history = new RolloutHistory(DEFAULT_KEEP_STEPS);
  /** The model download of the latest open (null: it downloaded nothing, e.g. an embedded model). */
  download = $state.raw<DownloadSummary | null>(null);
  downloadStatus = $state<DownloadStatus | null>(null);

  private client: TrainerClient | null = null;
  private loadedKey = $state<string | null>(null);
  /** The last stored step a resume trains again (the note goes once it is replaced). */
  private redoThrough: number | null = null;
  private readonly wakeLock = new ScreenWakeLock();

  constructor(private readonly options: SessionOptions = {}) {}

  get wakeLockSupported(): boolean {
    return this.wakeLock.supported;
  }

  /** Whether `experiment` is what the loaded run trains (so Train resumes instead of restarting). */
  isLoaded(experiment: Record<string, unknown> | null): boolean {
    return experiment !== null && this.loadedKey === JSON.stringify(experiment);
  }

  /** Starts a new run of `experiment` (named `name`, else by date), or resumes the paused run of the same experiment. */
  async train(experiment: Record<string, unknown>, name?: string): Promise<void> {
    if (!(await this.prepare(experiment, name))) return;
    await this.client!.api.start();
  }

  /** One step (held at every stage in slow motion); opens a new run first when needed. */
  async singleStep(experiment: Record<string, unknown>, name?: string): Promise<void> {
    if (!(await this.prepare(experiment, name))) return;
    this.pending = 'step';
    await this.client!.api.singleStep();
  }

  /** Shows a stored or imported run's metrics and rollouts (read-only) instead of the current run's. */
  async show(view: RunView): Promise<void> {
    if (this.status === 'running') await this.pause();
    this.reset();
    this.metrics = view.metrics;
    for (const step of [...new Set(view.rollouts.map((r) => r.step))].sort((a, b) => a - b)) {
      this.history.add(step, view.rollouts.filter((r) => r.step === step));
    }
    this.historyVersion++;
    this.runExperiment = view.experiment;
    this.viewing = { name: view.name, runId: view.runId };
    this.status = 'idle';
  }

  /**
   * Resumes a stored run from its newest checkpoint and trains on. `experiment` is the run's
   * experiment as the builder holds it (so Train afterwards resumes instead of restarting);
   * `stored` are its saved metrics and rollouts, shown up to the checkpoint.
   */
  async resume(runId: string, experiment: Record<string, unknown>, stored: RunView): Promise<void> {
    if (this.status === 'running') await this.pause();
    this.status = 'loading';
    this.reset();
    // The stored steps show at once, and stay: a step trained again replaces its own record.
    this.showStored(stored);
    try {
      const client = await this.ensureClient();
      this.loaded = await client.api.open({ runId, judgeApiKey: this.judgeApiKey(experiment), teacherApiKey: this.teacherApiKey(experiment), ...this.modelSource(experiment) });
      await client.api.setSlowMotion(this.slowMotion, this.stageDelayMs);
      this.endDownload('done');
    } catch (e) {
      this.failOpen(e, `Could not resume the run "${stored.name}"`);
      return;
    }
    const from = this.loaded.step;
    const redo = redoneSteps(from, stored.metrics.map((m) => m.step));
    this.resumeNote = redo
      ? `Resuming from step ${from}: ${redo.count === 1 ? `step ${redo.from} is` : `steps ${redo.from}–${redo.through} are`} trained again (the checkpoint was saved ${checkpointPlace(from)}); the chart keeps the stored ${redo.count === 1 ? 'value' : 'values'} until ${redo.count === 1 ? 'it is' : 'each is'} replaced.`
      : `Resuming from step ${from}: the checkpoint holds every stored step, nothing is trained again.`;
    this.redoThrough = redo ? redo.through : null;
    this.runId = runId;
    this.loadedKey = JSON.stringify(experiment);
    this.runExperiment = experiment;
    this.status = 'paused';
    await this.client!.api.start();
  }

  /**
   * Whether the run that failed here, or that a full storage stopped, can be resumed (it was
   * saved; Resume reopens it from its newest checkpoint).
   */
  get canResumeFailed(): boolean {
    const ended = this.status === 'failed' || stoppedByFullStorage(this.status, this.error);
    return ended && this.runId !== null && this.runExperiment !== null && this.viewing === null;
  }

  /**
   * After a failure (the GPU device was lost, the disk was full), reopens the same run from its
   * newest checkpoint (the worker asks for a new GPU device if its own was lost) and trains on.
   * The steps shown stay; those after the checkpoint are trained again and replace theirs.
   */
  async resumeFailed(): Promise<void> {
    if (!this.canResumeFailed) return;
    const runId = this.runId!;
    const experiment = this.runExperiment!;
    const rollouts = this.history.stepNumbers().flatMap((step) => this.history.at(step));
    await this.resume(runId, experiment, { runId, name: 'this run', experiment, metrics: this.metrics, rollouts });
  }

  /** Closes the run the worker has open (before deleting it, say). */
  async closeRun(): Promise<void> {
    if (this.status === 'running') await this.pause();
    await this.client?.api.close();
    this.loadedKey = null;
    this.runId = null;
    if (this.status !== 'failed') this.status = 'idle';
  }

  async pause(): Promise<void> {
    if (this.status === 'running' && this.pending !== 'stop') this.pending = 'pause';
    await this.client?.api.pause();
  }

  async stop(): Promise<void> {
    if (!this.client || this.loadedKey === null) return;
    this.held = false;
    this.pending = 'stop';
    await this.client.api.stop();
    // A stopped run cannot go on: the next Train starts afresh.
    this.loadedKey = null;
  }

  async advance(): Promise<void> {
    this.held = false;
    await this.client?.api.advance();
  }

  /** Slow motion on or off; `stageDelayMs` (kept when omitted): null holds each stage until advance(). */
  async setSlowMotion(on: boolean, stageDelayMs: number | null = this.stageDelayMs): Promise<void> {
    if (stageDelayMs !== null && !(Number.isFinite(stageDelayMs) && stageDelayMs >= 0)) {
      throw new RangeError(`stageDelayMs must be null or a non-negative number of milliseconds, got ${stageDelayMs}`);
    }
    this.slowMotion = on;
    this.stageDelayMs = stageDelayMs;
    if (this.client && this.loadedKey !== null) await this.client.api.setSlowMotion(on, stageDelayMs);
    if (!on && this.held) await this.advance();
  }

  setKeepSteps(n: number): void {
    this.keepSteps = n;
    this.history.setKeep(n);
    this.historyVersion++;
  }

  /** Stops the model download of the open in progress (the open then fails as cancelled). */
  async cancelDownload(): Promise<void> {
    await this.client?.api.cancelOpen();
  }

  /** The GPU-memory estimate of an experiment, from the worker (which knows the adapter's limits). */
  async estimate(request: EstimateRequest): Promise<EstimateReply> {
    const client = await this.ensureClient();
    return client.api.estimate(request);
  }

  /** The per-token costs of a model's shape on this adapter (a short calibration in the worker, once per model). */
  async calibrate(request: CalibrationRequest): Promise<CalibrationReply> {
    const client = await this.ensureClient();
    return client.api.calibrate(request);
  }

  /** The open run's LoRA adapter in PEFT's format (adapter_model.safetensors, adapter_config.json). */
  async exportAdapter(): Promise<ExportedFiles> {
    if (!this.client || this.runId === null) throw new Error('no run is open in this page: train or resume one first');
    return this.client.api.exportAdapter();
  }

  /** The open run's model with any adapter merged in (model.safetensors, config.json, tokenizer files). */
  async exportMerged(): Promise<ExportedFiles> {
    if (!this.client || this.runId === null) throw new Error('no run is open in this page: train or resume one first');
    return this.client.api.exportMerged();
  }

  dispose(): void {
    this.wakeLock.dispose();
    this.client?.terminate();
    this.client = null;
  }

  /** The picked files of a "local:" model and the Hub mirror, for the worker's open(). */
  private modelSource(experiment: Record<string, unknown>): { localFiles?: File[]; hubEndpoint?: string } {
    const model = String(experiment.model);
    const localFiles = this.options.localFiles?.(model);
    return { ...(localFiles ? { localFiles } : {}), ...(this.options.hubEndpoint ? { hubEndpoint: this.options.hubEndpoint } : {}) };
  }

  /** An open that failed: a cancelled download leaves the page idle, anything else is a failure. */
  private failOpen(e: unknown, what: string): void {
    const message = (e as Error).message;
    if (CANCELLED.test(message)) {
      this.endDownload('cancelled');
      this.status = 'idle';
      this.error = `${what}: the model download was cancelled.`;
      return;
    }
    this.endDownload('failed');
    this.status = 'failed';
    this.error = `${what}: ${message}`;
  }

  private endDownload(status: DownloadStatus): void {
    if (this.download !== null) this.downloadStatus = status;
  }

  /**
   * The key for the experiment's remote judge, bound to that judge's origin; none for any other
   * judge, so a key never travels needlessly (the worker's judge refuses it for another origin too).
   */
  private judgeApiKey(experiment: Record<string, unknown>): OriginBoundKey | undefined {
    const url = remoteJudgeUrl(experiment);
    return url === null ? undefined : this.options.judgeApiKey?.(url);
  }

  /** The key for the experiment's black-box teacher endpoint, bound to its origin; none without one. */
  private teacherApiKey(experiment: Record<string, unknown>): OriginBoundKey | undefined {
    const url = teacherEndpointUrl(experiment);
    return url === null ? undefined : this.options.teacherApiKey?.(url);
  }

  /** Opens a new run of the experiment unless it is the paused run's; false when opening failed. */
  private async prepare(experiment: Record<string, unknown>, name?: string): Promise<boolean> {
    const resumable = this.isLoaded(experiment) && (this.status === 'paused' || this.status === 'running');
    if (resumable) return true;
    this.status = 'loading';
    this.reset();
    try {
      const client = await this.ensureClient();
      this.loaded = await client.api.open({ experiment, ...(name ? { name } : {}), judgeApiKey: this.judgeApiKey(experiment), teacherApiKey: this.teacherApiKey(experiment), ...this.modelSource(experiment) });
      await client.api.setSlowMotion(this.slowMotion, this.stageDelayMs);
      this.endDownload('done');
    } catch (e) {
      this.failOpen(e, `Could not load the experiment (model "${String(experiment.model)}")`);
      return false;
    }
    this.runId = this.loaded.runId;
    this.loadedKey = JSON.stringify(experiment);
    this.runExperiment = experiment;
    this.status = 'paused';
    return true;
  }

  private async ensureClient(): Promise<TrainerClient> {
    if (!this.client) {
      this.client = startTrainerWorker();
      await this.client.onEvent((event) => this.onEvent(event));
    }
    return this.client;
  }

  /** Shows a stored run's metrics and rollouts (kept in order of steps). */
  private showStored(stored: RunView): void {
    this.metrics = [...stored.metrics].sort((a, b) => a.step - b.step);
    for (const step of [...new Set(stored.rollouts.map((r) => r.step))].sort((a, b) => a - b)) {
      this.history.add(step, stored.rollouts.filter((r) => r.step === step));
    }
    this.historyVersion++;
  }

  /** Forgets the shown run (metrics, rollouts, stage, errors) before another is loaded or shown. */
  private reset(): void {
    this.error = null;
    this.warnings = [];
    this.metrics = [];
    this.live = [];
    this.stage = null;
    this.progress.reset();
    this.held = false;
    this.pending = null;
    this.resumeNote = null;
    this.lastCheckpoint = null;
    this.history.clear();
    this.historyVersion++;
    this.loadedKey = null;
    this.runId = null;
    this.viewing = null;
    this.download = null;
    this.downloadStatus = null;
  }

  private onEvent(event: UiEvent): void {
    if (event.type === 'download') {
      this.download = summarize(this.downloadStatus === 'active' ? this.download : null, event.progress);
      this.downloadStatus = 'active';
      return;
    }
    // While a run opens, the worker is closing the previous one: its last events ("stopped")
    // belong to that run, not to the one being opened.
    if (this.status === 'loading') return;
    switch (event.type) {
      case 'status':
        // A commit that did not fit stopped the run (stored 'stopped' with the reason): not a failure.
        this.status = liveStatus(event.status, event.message);
        if (event.status === 'failed') {
          this.error = event.message ?? 'the run failed';
          this.warnings = this.warnings.filter((w) => w !== event.message);
        }
        if (event.status !== 'running') {
          this.held = false;
          this.pending = null;
        }
        if (event.status !== 'running') this.progress.idle();
        void this.wakeLock.set(event.status === 'running').then(() => (this.wakeLockHeld = this.wakeLock.held));
        break;
      case 'stage':
        this.stage = { step: event.step, stage: event.stage };
        this.live = event.rollouts;
        this.progress.stageDone();
        this.held = this.slowMotion && event.stage !== 'updated';
        break;
      case 'step':
        // A step replayed after resuming from an older checkpoint replaces its first record.
        // Kept in step order: a redone step sits before the stored ones that follow it.
        this.metrics = [...this.metrics.filter((m) => m.step !== event.metrics.step), event.metrics].sort((a, b) => a.step - b.step);
        if (this.redoThrough !== null && event.metrics.step >= this.redoThrough) {
          this.resumeNote = null;
          this.redoThrough = null;
        }
        this.history.add(event.metrics.step, event.rollouts);
        this.historyVersion++;
        this.live = [];
        this.progress.stepDone(event.metrics.step);
        break;
      case 'progress':
        this.progress.progress(event);
        break;
      case 'checkpoint':
        this.lastCheckpoint = event.step;
        break;
      case 'error':
        this.warnings = [...this.warnings, event.message];
        break;
    }
  }
}
