// One training session in the page: drives the trainer worker (load, start, single step, slow
// motion, advance, pause, stop) and turns its events into reactive state for the run view:
// status, the stage of the step in progress, metrics per step and the last steps' rollouts.
import type { RolloutRecord, Stage, StepMetrics } from '../../rl/grpoStep';
import { startTrainerWorker, type LoadResult, type TrainerClient, type UiEvent } from '../../worker/trainerClient';
import { RolloutHistory } from './rollouts';
import { ScreenWakeLock } from './wakeLock';

export type SessionStatus = 'idle' | 'loading' | 'running' | 'paused' | 'stopped' | 'finished' | 'failed';

export const DEFAULT_KEEP_STEPS = 20;

export class TrainingSession {
  status = $state<SessionStatus>('idle');
  /** Why the run failed or could not load. */
  error = $state<string | null>(null);
  /** Per-step problems that did not end the run (a skipped non-finite update). */
  warnings = $state<string[]>([]);
  loaded = $state<LoadResult | null>(null);
  /** The experiment the current run trains (edits in the builder apply to the next run). */
  runExperiment = $state.raw<Record<string, unknown> | null>(null);
  /** The step in progress and the last stage it reached. */
  stage = $state<{ step: number; stage: Stage } | null>(null);
  /** Rollouts of the step in progress, as of its last stage. */
  live = $state.raw<RolloutRecord[]>([]);
  metrics = $state.raw<StepMetrics[]>([]);
  slowMotion = $state(false);
  /** In slow motion: the step is held at a stage until advance(). */
  held = $state(false);
  lastCheckpoint = $state<number | null>(null);
  wakeLockHeld = $state(false);
  keepSteps = $state(DEFAULT_KEEP_STEPS);
  /** Bumped whenever `history` changes (it is a plain object, not reactive). */
  historyVersion = $state(0);
  readonly history = new RolloutHistory(DEFAULT_KEEP_STEPS);

  private client: TrainerClient | null = null;
  private loadedKey = $state<string | null>(null);
  private readonly wakeLock = new ScreenWakeLock();

  get wakeLockSupported(): boolean {
    return this.wakeLock.supported;
  }

  /** Whether `experiment` is what the loaded run trains (so Train resumes instead of restarting). */
  isLoaded(experiment: Record<string, unknown> | null): boolean {
    return experiment !== null && this.loadedKey === JSON.stringify(experiment);
  }

  /** Starts a new run of `experiment`, or resumes the paused run of the same experiment. */
  async train(experiment: Record<string, unknown>): Promise<void> {
    if (!(await this.prepare(experiment))) return;
    await this.client!.api.start();
  }

  /** One step (held at every stage in slow motion); loads a new run first when needed. */
  async singleStep(experiment: Record<string, unknown>): Promise<void> {
    if (!(await this.prepare(experiment))) return;
    await this.client!.api.singleStep();
  }

  async pause(): Promise<void> {
    await this.client?.api.pause();
  }

  async stop(): Promise<void> {
    if (!this.client || this.loadedKey === null) return;
    this.held = false;
    await this.client.api.stop();
    // A stopped run cannot go on: the next Train starts afresh.
    this.loadedKey = null;
  }

  async advance(): Promise<void> {
    this.held = false;
    await this.client?.api.advance();
  }

  async setSlowMotion(on: boolean): Promise<void> {
    this.slowMotion = on;
    if (this.client && this.loadedKey !== null) await this.client.api.setSlowMotion(on);
    if (!on && this.held) await this.advance();
  }

  setKeepSteps(n: number): void {
    this.keepSteps = n;
    this.history.setKeep(n);
    this.historyVersion++;
  }

  dispose(): void {
    this.wakeLock.dispose();
    this.client?.terminate();
    this.client = null;
  }

  /** Loads the experiment unless it is the paused run's; false when loading failed. */
  private async prepare(experiment: Record<string, unknown>): Promise<boolean> {
    const resumable = this.isLoaded(experiment) && (this.status === 'paused' || this.status === 'running');
    if (resumable) return true;
    this.status = 'loading';
    this.error = null;
    this.warnings = [];
    this.metrics = [];
    this.live = [];
    this.stage = null;
    this.held = false;
    this.lastCheckpoint = null;
    this.history.clear();
    this.historyVersion++;
    this.loadedKey = null;
    try {
      if (!this.client) {
        this.client = startTrainerWorker();
        await this.client.onEvent((event) => this.onEvent(event));
      }
      this.loaded = await this.client.api.load(experiment);
      await this.client.api.setSlowMotion(this.slowMotion);
    } catch (e) {
      this.status = 'failed';
      this.error = `Could not load the experiment (model "${String(experiment.model)}"): ${(e as Error).message}`;
      return false;
    }
    this.loadedKey = JSON.stringify(experiment);
    this.runExperiment = experiment;
    this.status = 'paused';
    return true;
  }

  private onEvent(event: UiEvent): void {
    switch (event.type) {
      case 'status':
        this.status = event.status;
        if (event.status === 'failed') {
          this.error = event.message ?? 'the run failed';
          this.warnings = this.warnings.filter((w) => w !== event.message);
        }
        if (event.status !== 'running') this.held = false;
        void this.wakeLock.set(event.status === 'running').then(() => (this.wakeLockHeld = this.wakeLock.held));
        break;
      case 'stage':
        this.stage = { step: event.step, stage: event.stage };
        this.live = event.rollouts;
        this.held = this.slowMotion && event.stage !== 'updated';
        break;
      case 'step':
        this.metrics = [...this.metrics, event.metrics];
        this.history.add(event.metrics.step, event.rollouts);
        this.historyVersion++;
        this.live = [];
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
