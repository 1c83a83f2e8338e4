// Progress inside a GRPO step, for a page that must show the step is moving (on a software GPU a
// first step can take minutes): which stage is being worked on, how far it is (decode steps of
// max_completion_length, rollouts judged, update passes), a throttle so the worker posts at most a
// few events a second, and the ETA of the step and of the run from the measured rates.

/** The stage being worked on (the step's `Stage` names the stage last finished). */
export type WorkStage = 'sampling' | 'judging' | 'advantages' | 'updating';
export const WORK_STAGES: readonly WorkStage[] = ['sampling', 'judging', 'advantages', 'updating'];

/** What each stage counts. */
export const WORK_UNITS: Record<WorkStage, string> = {
  sampling: 'tokens',
  judging: 'rollouts judged',
  advantages: 'groups',
  updating: 'update passes',
};

export interface StepProgress {
  stage: WorkStage;
  done: number;
  total: number;
  /** While sampling: each rollout's ids so far (the trainer turns them into text). */
  partial?: readonly (readonly number[])[];
}

export type ProgressHook = (progress: StepProgress) => void;

/**
 * Lets through at most one progress event per `intervalMs`, except a stage's first and last
 * (those always go at once); a held-back event is sent when the interval has passed unless a
 * newer one replaced it first. The clock and timer are injected (tests use fake ones).
 */
export class ProgressThrottle<T extends { stage: string; done: number; total: number }> {
  private lastAt = -Infinity;
  private lastStage: string | null = null;
  private pending: T | null = null;
  private timer: unknown = null;

  constructor(
    private readonly send: (event: T) => void,
    private readonly intervalMs = 100,
    private readonly now: () => number = () => performance.now(),
    private readonly schedule: (fn: () => void, ms: number) => unknown = (fn, ms) => setTimeout(fn, ms),
    private readonly cancel: (handle: unknown) => void = (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  ) {}

  push(event: T): void {
    const t = this.now();
    const edge = event.stage !== this.lastStage || event.done === 0 || event.done >= event.total;
    if (edge || t - this.lastAt >= this.intervalMs) {
      this.emit(event, t);
      return;
    }
    this.pending = event;
    this.timer ??= this.schedule(() => {
      this.timer = null;
      const held = this.pending;
      if (held) this.emit(held, this.now());
    }, this.intervalMs - (t - this.lastAt));
  }

  /** Drops a held-back event (the step ended or was stopped). */
  clear(): void {
    this.pending = null;
    if (this.timer !== null) this.cancel(this.timer);
    this.timer = null;
  }

  private emit(event: T, t: number): void {
    this.pending = null;
    this.lastAt = t;
    this.lastStage = event.stage;
    this.send(event);
  }
}

/** Seconds left, null where there is nothing to go on yet. */
export interface Eta {
  stage: number | null;
  step: number | null;
  run: number | null;
}

interface StepTiming {
  /** Seconds spent in each stage. */
  stages: Partial<Record<WorkStage, number>>;
  /** Seconds from the step's first event to its end (its record saved, a checkpoint included). */
  total: number | null;
}

/** How many finished steps the averages look back on (a run's speed changes as completions do). */
const WINDOW = 5;

/**
 * Measures the steps of a run from their progress events (wall clock, ms) and estimates the time
 * left: the current stage from its own rate (done / elapsed), the step's later stages and the
 * remaining steps from the average of the last finished steps. Before a step has finished, only
 * the current stage has an estimate.
 */
export class EtaEstimator {
  private readonly finished: StepTiming[] = [];
  private current: { step: number; startAt: number; stage: WorkStage; stageAt: number; done: number; total: number; timing: StepTiming } | null = null;

  observe(step: number, p: { stage: WorkStage; done: number; total: number }, nowMs: number): void {
    const c = this.current;
    // A step left without finish() (stopped, paused, failed) is not measured: it would count the wait.
    if (!c || c.step !== step) {
      this.current = { step, startAt: nowMs, stage: p.stage, stageAt: nowMs, done: p.done, total: p.total, timing: { stages: {}, total: null } };
      return;
    }
    // A count going back within a stage is another round of it (dynamic sampling): its rate starts anew.
    if (p.stage !== c.stage || p.done < c.done) {
      c.timing.stages[c.stage] = (c.timing.stages[c.stage] ?? 0) + (nowMs - c.stageAt) / 1000;
      c.stage = p.stage;
      c.stageAt = nowMs;
    }
    c.done = p.done;
    c.total = p.total;
  }

  /** Step `step` ended (its record is saved): its times join the averages. */
  finish(step: number, nowMs: number): void {
    const c = this.current;
    if (!c || c.step !== step) return;
    c.timing.stages[c.stage] = (c.timing.stages[c.stage] ?? 0) + (nowMs - c.stageAt) / 1000;
    c.timing.total = (nowMs - c.startAt) / 1000;
    this.finished.push(c.timing);
    if (this.finished.length > WINDOW) this.finished.shift();
    this.current = null;
  }

  /** Forgets everything (a new run). */
  reset(): void {
    this.finished.length = 0;
    this.current = null;
  }

  private mean(of: (t: StepTiming) => number | null | undefined): number | null {
    const xs = this.finished.map(of).filter((x): x is number => typeof x === 'number');
    return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
  }

  estimate(nowMs: number, maxSteps: number): Eta {
    const c = this.current;
    if (!c) return { stage: null, step: null, run: null };
    const inStage = (nowMs - c.stageAt) / 1000;
    const past = this.mean((t) => t.stages[c.stage]);
    let stage: number | null = null;
    if (c.done > 0 && c.total > 0) stage = Math.max(0, (inStage * (c.total - c.done)) / c.done);
    else if (past !== null) stage = Math.max(0, past - inStage);
    const meanStep = this.mean((t) => t.total);
    let step: number | null = null;
    if (stage !== null && meanStep !== null) {
      const later = WORK_STAGES.slice(WORK_STAGES.indexOf(c.stage) + 1).reduce((s, w) => s + (this.mean((t) => t.stages[w]) ?? 0), 0);
      // What a step spends outside its stages (saving it, a checkpoint), as the last steps did.
      const outside = Math.max(0, meanStep - WORK_STAGES.reduce((s, w) => s + (this.mean((t) => t.stages[w]) ?? 0), 0));
      step = stage + later + outside;
    }
    const after = Math.max(0, maxSteps - c.step - 1);
    const run = step !== null && meanStep !== null ? step + after * meanStep : null;
    return { stage, step, run };
  }
}

/** "40 s", "12 min", "1 h 05 min". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
