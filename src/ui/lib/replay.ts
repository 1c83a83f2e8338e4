// Replaying a recorded run step by step: the steps of a run file in order (each with its
// rollouts), the speeds offered, and the timing (a Replayer shows one more step per tick, or all
// at once). Pure apart from the clock, which tests replace.
import type { RolloutRecord, StepMetrics } from '../../rl/grpoStep';

export interface ReplaySpeed {
  id: string;
  label: string;
  /** null: every step at once. */
  stepsPerSecond: number | null;
}

export const REPLAY_SPEEDS: readonly ReplaySpeed[] = [
  { id: '1', label: '1 step/s', stepsPerSecond: 1 },
  { id: '4', label: '4 steps/s', stepsPerSecond: 4 },
  { id: 'all', label: 'all at once', stepsPerSecond: null },
];

export function speedById(id: string): ReplaySpeed {
  const speed = REPLAY_SPEEDS.find((s) => s.id === id);
  if (!speed) throw new RangeError(`unknown replay speed "${id}" (expected ${REPLAY_SPEEDS.map((s) => s.id).join(', ')})`);
  return speed;
}

export interface ReplayStep {
  metrics: StepMetrics;
  rollouts: RolloutRecord[];
}

/** The run's steps in order, each with its own rollouts (a step without stored rollouts has none). */
export function replaySteps(run: { metrics: readonly StepMetrics[]; rollouts: readonly RolloutRecord[] }): ReplayStep[] {
  const byStep = new Map<number, RolloutRecord[]>();
  for (const r of run.rollouts) byStep.set(r.step, [...(byStep.get(r.step) ?? []), r]);
  return [...run.metrics].sort((a, b) => a.step - b.step).map((metrics) => ({ metrics, rollouts: byStep.get(metrics.step) ?? [] }));
}

/** The first `count` steps as a run view holds them (metrics and rollouts). */
export function firstSteps(steps: readonly ReplayStep[], count: number): { metrics: StepMetrics[]; rollouts: RolloutRecord[] } {
  const shown = steps.slice(0, Math.max(0, count));
  return { metrics: shown.map((s) => s.metrics), rollouts: shown.flatMap((s) => s.rollouts) };
}

export interface Clock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Shows `total` steps one tick at a time: show(n) is called with the number of steps to show
 * (1, 2, …, total), the first at once, the next each 1/stepsPerSecond seconds; `end()` after the
 * last. Play after the end starts again from the first step.
 */
export class Replayer {
  /** Steps shown so far. */
  shown = 0;
  private timer: unknown = null;
  private speed: ReplaySpeed = REPLAY_SPEEDS[1];

  constructor(
    readonly total: number,
    private readonly show: (count: number) => void,
    private readonly end: () => void = () => {},
    private readonly clock: Clock = realClock,
  ) {
    if (!Number.isInteger(total) || total < 1) throw new RangeError(`a replay needs at least one step, got ${total}`);
  }

  get playing(): boolean {
    return this.timer !== null;
  }

  get finished(): boolean {
    return this.shown === this.total;
  }

  play(speed: ReplaySpeed = this.speed): void {
    this.cancel();
    this.speed = speed;
    if (this.finished) this.shown = 0;
    this.tick();
  }

  /** A new speed; a replay in progress goes on at it from the next step. */
  setSpeed(speed: ReplaySpeed): void {
    const wasPlaying = this.playing;
    this.speed = speed;
    if (!wasPlaying) return;
    this.cancel();
    if (speed.stepsPerSecond === null) this.tick();
    else this.schedule();
  }

  pause(): void {
    this.cancel();
  }

  private tick(): void {
    this.timer = null;
    this.shown = this.speed.stepsPerSecond === null ? this.total : this.shown + 1;
    this.show(this.shown);
    if (this.finished) this.end();
    else this.schedule();
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => this.tick(), 1000 / this.speed.stepsPerSecond!);
  }

  private cancel(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
