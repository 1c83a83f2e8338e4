// The training loop users drive: start / pause / resume / single step / slow motion through
// the sub-stages / stop, with events for progress, metrics, rollouts, checkpoints and errors.
// It owns nothing GPU-specific beyond calling grpoStep; the worker wraps it for the UI.
import { saveCheckpoint, type CheckpointFiles } from '../model/checkpoint';
import { checkpointDue, estimateCheckpointBytes } from './checkpointPolicy';
import { irtCheckpointFields } from './irtResume';
import { evolutionCheckpointFields, evolveAfterStep } from './rubricEvolution';
import { syncReferenceModel, referenceDrifted } from './refSync';
import { grpoStep, type GrpoContext, type RolloutRecord, type Stage, type StepMetrics } from './grpoStep';
import { unscorableMessage } from './judgeFailures';
import { promptsForStep, replacementPrompts } from './promptSampler';
import { ProgressThrottle, type WorkStage } from './progress';
import { inducedCheckpointFields, induceAfterStep } from './distill/blackBox';

export type TrainerStatus = 'idle' | 'running' | 'paused' | 'stopped' | 'finished' | 'failed';

export type TrainerEvent =
  | { type: 'status'; status: TrainerStatus; message?: string }
  | { type: 'stage'; step: number; stage: Stage; rollouts: RolloutRecord[] }
  /** Inside the stage being worked on (at most ~10 a second); `partial`: the completions so far, while sampling. */
  | { type: 'progress'; step: number; stage: WorkStage; done: number; total: number; partial?: string[] }
  | { type: 'step'; metrics: StepMetrics; rollouts: RolloutRecord[] }
  | { type: 'checkpoint'; step: number; files: CheckpointFiles }
  | { type: 'error'; step: number; message: string };

/** Where finished steps go (e.g. IndexedDB): awaited before the next step starts. */
export interface StepSink {
  commitStep(step: number, metrics: StepMetrics, rollouts: RolloutRecord[], checkpoint?: CheckpointFiles): Promise<void>;
}

export interface TrainerOptions {
  prompts: readonly string[];
  /** Steps already taken (when resuming from a checkpoint). */
  startStep?: number;
  onEvent?: (event: TrainerEvent) => void;
  sink?: StepSink;
}

/**
 * What a skipped step did. A step of several optimizer steps (num_iterations × steps_per_generation)
 * stops at the first non-finite one: the ones before it were applied.
 */
export function skippedMessage(step: number, metrics: Pick<StepMetrics, 'optimizer_steps'>): string {
  const applied = metrics.optimizer_steps?.filter((s) => !s.skipped).length ?? 0;
  const what = applied === 0 ? 'the update was skipped and the weights are unchanged' : `optimizer step ${applied + 1} of the step was skipped (the ${applied} before it were applied) and the step ended there`;
  return `step ${step}: NaN or Inf in the loss or gradients; ${what}`;
}

export class GrpoTrainer {
  /** Optimizer steps taken so far. */
  step: number;
  status: TrainerStatus = 'idle';
  /** When true, a running step waits at every stage until advance() is called… */
  slowMotion = false;
  /** …or, when set, until this many milliseconds have passed (the slow-motion speed). */
  stageDelayMs: number | null = null;
  private pauseRequested = false;
  private abort: AbortController | null = null;
  private stageGate: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly ctx: GrpoContext,
    private readonly options: TrainerOptions,
  ) {
    this.step = options.startStep ?? 0;
  }

  private emit(event: TrainerEvent): void {
    this.options.onEvent?.(event);
  }

  private setStatus(status: TrainerStatus, message?: string): void {
    this.status = status;
    this.emit({ type: 'status', status, message });
  }

  /** Runs steps until max_steps, pause() or stop(). Resolves when the loop ends. */
  start(): Promise<void> {
    if (this.loop) return this.loop;
    this.pauseRequested = false;
    this.loop = this.run(Infinity).finally(() => (this.loop = null));
    return this.loop;
  }

  /** Runs exactly one step (with slowMotion, stopping at each stage until advance()). */
  singleStep(): Promise<void> {
    if (this.loop) return this.loop;
    this.pauseRequested = false;
    this.loop = this.run(1).finally(() => (this.loop = null));
    return this.loop;
  }

  /** Slow motion on or off; stageDelayMs null holds each stage until advance(). */
  setSlowMotion(on: boolean, stageDelayMs: number | null = null): void {
    this.slowMotion = on;
    this.stageDelayMs = stageDelayMs;
    if (!on) this.advance();
    else this.scheduleAdvance();
  }

  /** With a stage delay, lets the stage held now go on once the delay has passed. */
  private scheduleAdvance(): void {
    const gate = this.stageGate;
    if (!gate || this.stageDelayMs === null) return;
    setTimeout(() => {
      if (this.stageGate === gate) this.advance();
    }, this.stageDelayMs);
  }

  /** Lets a step held at a stage (slow motion) go on to the next stage. */
  advance(): void {
    const gate = this.stageGate;
    this.stageGate = null;
    gate?.();
  }

  /** Finishes the current step, then pauses (and checkpoints). */
  pause(): void {
    this.pauseRequested = true;
    this.advance();
  }

  resume(): Promise<void> {
    return this.start();
  }

  /** Abandons the current step (its update is not applied if it has not started) and stops. */
  async stop(): Promise<void> {
    this.pauseRequested = true;
    this.abort?.abort();
    this.advance();
    await this.loop?.catch(() => {});
    // A finished or failed run keeps that status: there is nothing left to stop.
    if (this.status !== 'finished' && this.status !== 'failed') this.setStatus('stopped');
  }

  private async run(maxSteps: number): Promise<void> {
    const cfg = this.ctx.config;
    const perStep = cfg.generation_batch_size / cfg.num_generations;
    this.setStatus('running');
    let done = 0;
    try {
      while (done < maxSteps && this.step < cfg.max_steps && !this.pauseRequested) {
        this.abort = new AbortController();
        const step = this.step;
        const prompts = promptsForStep(this.options.prompts, perStep, step, cfg.seed);
        // Ids become text only for the events that are sent (the throttle drops the others).
        const throttle = new ProgressThrottle<{ stage: WorkStage; done: number; total: number; partial?: readonly (readonly number[])[] }>(({ partial, ...p }) =>
          this.emit({ type: 'progress', step, ...p, ...(partial ? { partial: partial.map((ids) => this.ctx.tokenizer.decode([...ids])) } : {}) }),
        );
        const result = await grpoStep(this.ctx, step, prompts, {
          signal: this.abort.signal,
          drawPrompts: (count, round) => replacementPrompts(this.options.prompts, count, step, round, cfg.seed),
          onProgress: (p) => throttle.push(p),
          onStage: async (stage, rollouts) => {
            throttle.clear(); // a held-back event of the stage just finished would arrive after it
            this.emit({ type: 'stage', step, stage, rollouts: [...rollouts] });
            if (this.slowMotion && stage !== 'updated' && !this.pauseRequested) {
              await new Promise<void>((resolve) => {
                this.stageGate = resolve;
                this.scheduleAdvance();
              });
            }
          },
        }).finally(() => throttle.clear());
        // rubric_evolution: the decision after this step (src/rl/rubricEvolution.ts); an accepted version judges from the next step.
        await evolveAfterStep(this.ctx, step, result, this.abort.signal);
        // The black-box teacher (src/rl/distill/blackBox.ts): a rubric induced from its answers against this step's samples judges from the next step.
        await induceAfterStep(this.ctx, step, result, this.abort.signal);
        if (result.metrics.skipped) {
          const message = skippedMessage(step, result.metrics);
          this.emit({ type: 'error', step, message });
          if (cfg.on_nonfinite === 'stop') {
            this.setStatus('failed', message);
            return;
          }
        } else {
          this.step++;
          // sync_ref_model: TRL's SyncRefModelCallback runs at the end of the optimizer step.
          await syncReferenceModel(this.ctx, this.step);
        }
        const due = checkpointDue(cfg.save_steps, this.step, () => this.checkpointBytes());
        const checkpoint = due || this.pauseRequested ? await this.checkpoint() : undefined;
        await this.options.sink?.commitStep(step, result.metrics, result.rollouts, checkpoint);
        this.emit({ type: 'step', metrics: result.metrics, rollouts: result.rollouts });
        if (checkpoint) this.emit({ type: 'checkpoint', step: this.step, files: checkpoint });
        done++;
        // on_unscorable "stop": a step whose judge left too many rollouts without a reward ends
        // the run as failed, after it was committed (its rollouts show what went wrong).
        const failures = result.metrics.judge_failures;
        if (failures?.over_threshold && cfg.on_unscorable === 'stop') {
          this.setStatus('failed', `${unscorableMessage(step, failures)}. The run stopped: more than ${+(cfg.max_unscorable_fraction * 100).toFixed(1)}% of rollouts had no reward and on_unscorable is "stop".`);
          return;
        }
      }
      if (this.step >= cfg.max_steps) this.setStatus('finished');
      else this.setStatus('paused');
    } catch (err) {
      if ((err as DOMException).name === 'AbortError') return;
      const message = (err as Error).message;
      this.emit({ type: 'error', step: this.step, message });
      this.setStatus('failed', message);
    } finally {
      this.abort = null;
    }
  }

  /** About how big one checkpoint is (save_steps auto decides by it). */
  checkpointBytes(): number {
    const m = this.ctx.model;
    return estimateCheckpointBytes({ parameters: m.params.totalSize, trainableParameters: m.params.size, lora: Boolean(m.lora), ema: Boolean(this.ctx.emaTeacher) });
  }

  /** The current weights, AdamW moments and step, in the Hugging Face layout. */
  checkpoint(): Promise<CheckpointFiles> {
    // Under LoRA the base is the run's starting model: only the adapter (and its moments) is saved.
    // A reference sync_ref_model has mixed into is no longer the starting model: it is saved too.
    const reference = this.ctx.reference && referenceDrifted(this.ctx.config, this.step) ? this.ctx.reference : undefined;
    // irt_ability: the item table and stored verdicts travel too, so a resume scores under the same table.
    const irt = irtCheckpointFields(this.ctx.irt, this.ctx.rubricVersion);
    // rubric_evolution: the version in use travels too, so a resume judges with it.
    const evolved = evolutionCheckpointFields(this.ctx);
    // teacher_weights "ema": the averaged teacher travels too, so a resume goes on averaging from it.
    const ema = this.ctx.emaTeacher ?? undefined;
    // The black-box teacher: its induced version (with provenance) travels too, so a resume judges with it.
    const induced = inducedCheckpointFields(this.ctx);
    return saveCheckpoint(this.ctx.model, { global_step: this.step, seed: this.ctx.config.seed, config: this.ctx.config, ...irt, ...evolved, ...induced }, { includeBase: false, reference, ema });
  }
}
