// Replaying a recorded run: its steps in order with their own rollouts, and the timing of a
// replay (one more step per tick at the chosen speed, all at once, pause, speed changes, again).
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { firstSteps, Replayer, replaySteps, REPLAY_SPEEDS, speedById, type Clock } from '../../../src/ui/lib/replay';

const metric = (step: number) => ({ step, rewards: { reward: step / 10 } }) as unknown as StepMetrics;
const rollout = (step: number, index: number) => ({ step, group: 0, index, completion: `s${step}r${index}` }) as unknown as RolloutRecord;

/** A clock that runs only when told: advance(ms) fires the timers due by then, in order. */
class FakeClock implements Clock {
  now = 0;
  private timers: { at: number; id: number; callback: () => void }[] = [];
  private next = 1;
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.push({ at: this.now + ms, id, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  get pending(): number {
    return this.timers.length;
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.now = due.at;
      due.callback();
    }
    this.now = end;
  }
}

function replay(total: number) {
  const clock = new FakeClock();
  const shown: number[] = [];
  let ended = 0;
  const r = new Replayer(total, (n) => shown.push(n), () => ended++, clock);
  return { clock, shown, r, ended: () => ended };
}

describe('replaySteps', () => {
  it('orders the steps and gives each its own rollouts', () => {
    const steps = replaySteps({ metrics: [metric(2), metric(0), metric(1)], rollouts: [rollout(1, 0), rollout(0, 0), rollout(1, 1), rollout(2, 0)] });
    expect(steps.map((s) => s.metrics.step)).toEqual([0, 1, 2]);
    expect(steps.map((s) => s.rollouts.map((r) => r.completion))).toEqual([['s0r0'], ['s1r0', 's1r1'], ['s2r0']]);
  });

  it('a step without stored rollouts has none; firstSteps is what the run view shows', () => {
    const steps = replaySteps({ metrics: [metric(0), metric(1)], rollouts: [rollout(1, 0)] });
    expect(steps[0].rollouts).toEqual([]);
    const view = firstSteps(steps, 1);
    expect(view.metrics.map((m) => m.step)).toEqual([0]);
    expect(view.rollouts).toEqual([]);
    expect(firstSteps(steps, 2).rollouts.map((r) => r.completion)).toEqual(['s1r0']);
  });
});

describe('Replayer', () => {
  it('at 1 step/s shows the first step at once, then one more each second, and ends', () => {
    const { clock, shown, r, ended } = replay(3);
    r.play(speedById('1'));
    expect(shown).toEqual([1]);
    clock.advance(999);
    expect(shown).toEqual([1]);
    clock.advance(1);
    expect(shown).toEqual([1, 2]);
    clock.advance(1000);
    expect(shown).toEqual([1, 2, 3]);
    expect(ended()).toBe(1);
    expect(r.playing).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it('4 steps/s ticks every 250 ms', () => {
    const { clock, shown, r } = replay(4);
    r.play(speedById('4'));
    clock.advance(750);
    expect(shown).toEqual([1, 2, 3, 4]);
    expect(r.finished).toBe(true);
  });

  it('all at once shows every step in one go', () => {
    const { clock, shown, r, ended } = replay(5);
    r.play(speedById('all'));
    expect(shown).toEqual([5]);
    expect(ended()).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('pause holds the step shown; play goes on from it', () => {
    const { clock, shown, r } = replay(3);
    r.play(speedById('1'));
    r.pause();
    clock.advance(5000);
    expect(shown).toEqual([1]);
    expect(r.playing).toBe(false);
    r.play();
    expect(shown).toEqual([1, 2]);
  });

  it('a new speed applies from the next step; all at once finishes at once', () => {
    const { clock, shown, r } = replay(6);
    r.play(speedById('1'));
    r.setSpeed(speedById('4'));
    clock.advance(250);
    expect(shown).toEqual([1, 2]);
    r.setSpeed(speedById('all'));
    expect(shown).toEqual([1, 2, 6]);
    expect(clock.pending).toBe(0);
  });

  it('a speed chosen while paused does not start it', () => {
    const { clock, shown, r } = replay(3);
    r.setSpeed(speedById('all'));
    clock.advance(5000);
    expect(shown).toEqual([]);
    r.play();
    expect(shown).toEqual([3]);
  });

  it('play after the end starts again from the first step', () => {
    const { shown, r } = replay(2);
    r.play(speedById('all'));
    r.play(speedById('1'));
    expect(shown).toEqual([2, 1]);
  });

  it('refuses an empty recording and an unknown speed', () => {
    expect(() => new Replayer(0, () => {})).toThrow(/at least one step/);
    expect(() => speedById('10')).toThrow(/unknown replay speed "10"/);
    expect(REPLAY_SPEEDS.map((s) => s.label)).toEqual(['1 step/s', '4 steps/s', 'all at once']);
  });
});
