// The step in progress as the page shows it between stage events: the stage being worked on with
// its done / total, the partial completions while sampling, and the ETA of the stage, the step and
// the run (src/rl/progress.ts measures them). Fed by the session's trainer events.
import { EtaEstimator, formatDuration, WORK_UNITS, type Eta, type WorkStage } from '../../rl/progress';

export interface ProgressView {
  step: number;
  stage: WorkStage;
  done: number;
  total: number;
  /** While sampling: each rollout's completion so far. */
  partial: string[] | null;
}

export class LiveProgress {
  current = $state.raw<ProgressView | null>(null);
  /** Bumped about once a second while a step runs, so the ETA counts down between events. */
  tick = $state(0);
  private readonly eta = new EtaEstimator();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly now: () => number = () => performance.now()) {}

  progress(event: { step: number; stage: WorkStage; done: number; total: number; partial?: string[] }): void {
    this.eta.observe(event.step, event, this.now());
    const partial = event.partial ?? (this.current?.step === event.step && this.current.stage === event.stage ? this.current.partial : null);
    this.current = { step: event.step, stage: event.stage, done: event.done, total: event.total, partial };
    this.timer ??= setInterval(() => this.tick++, 1000);
  }

  /** The stage's work is done (its stage event came): nothing is in progress until the next one starts. */
  stageDone(): void {
    this.current = null;
  }

  /** Step `step` is done and saved (its metrics came). */
  stepDone(step: number): void {
    this.eta.finish(step, this.now());
    this.current = null;
  }

  /** The run stopped, paused, failed or finished. */
  idle(): void {
    this.current = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A new run: forget the measured steps too. */
  reset(): void {
    this.idle();
    this.eta.reset();
  }

  estimate(maxSteps: number): Eta {
    void this.tick; // re-read every tick
    return this.eta.estimate(this.now(), maxSteps);
  }
}

/**
 * "Step 0 (1 of 20) · sampling 12/32 tokens · ETA step 40 s, run 12 min". The step number is the
 * one the charts and the stage line show (0-based); the count in brackets is how far the run is.
 */
export function progressLine(p: ProgressView, eta: Eta, maxSteps: number): string {
  const parts = [`Step ${p.step} (${p.step + 1} of ${maxSteps})`, `${p.stage} ${p.done}/${p.total} ${WORK_UNITS[p.stage]}`];
  const etas: string[] = [];
  if (eta.step !== null) etas.push(`step ${formatDuration(eta.step)}`);
  else if (eta.stage !== null) etas.push(`${p.stage} ${formatDuration(eta.stage)}`);
  if (eta.run !== null) etas.push(`run ${formatDuration(eta.run)}`);
  if (etas.length) parts.push(`ETA ${etas.join(', ')}`);
  return parts.join(' · ');
}
