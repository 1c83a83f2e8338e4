import { describe, expect, it } from 'vitest';
import { EtaEstimator, formatDuration, ProgressThrottle, type WorkStage } from '../../../src/rl/progress';
import { progressLine } from '../../../src/ui/lib/liveProgress.svelte';

type Ev = { stage: WorkStage; done: number; total: number };

/** A throttle on a fake clock: `advance(ms)` moves time and fires due timers. */
function fakeThrottle(intervalMs = 100) {
  let now = 0;
  const sent: Ev[] = [];
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let ids = 0;
  const throttle = new ProgressThrottle<Ev>(
    (e) => sent.push({ ...e }),
    intervalMs,
    () => now,
    (fn, ms) => {
      const id = ++ids;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    (id) => (timers = timers.filter((t) => t.id !== id)),
  );
  const advance = (ms: number) => {
    now += ms;
    const due = timers.filter((t) => t.at <= now);
    timers = timers.filter((t) => t.at > now);
    due.forEach((t) => t.fn());
  };
  return { throttle, sent, advance, pendingTimers: () => timers.length };
}

describe('ProgressThrottle', () => {
  it('sends a stage’s first and last events at once and at most one per interval between', () => {
    const { throttle, sent, advance } = fakeThrottle(100);
    throttle.push({ stage: 'sampling', done: 0, total: 64 });
    for (let d = 1; d < 64; d++) {
      throttle.push({ stage: 'sampling', done: d, total: 64 });
      advance(10); // 100 events a second offered
    }
    throttle.push({ stage: 'sampling', done: 64, total: 64 });
    expect(sent[0]).toEqual({ stage: 'sampling', done: 0, total: 64 });
    expect(sent.at(-1)).toEqual({ stage: 'sampling', done: 64, total: 64 });
    // 630 ms of events at 100/s: about 7 through, never two within 100 ms of each other.
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.length).toBeLessThanOrEqual(9);
    const dones = sent.map((e) => e.done);
    expect([...dones].sort((a, b) => a - b)).toEqual(dones); // in order
  });

  it('sends a held-back event when the interval has passed, and the newest one only', () => {
    const { throttle, sent, advance } = fakeThrottle(100);
    throttle.push({ stage: 'sampling', done: 1, total: 10 });
    throttle.push({ stage: 'sampling', done: 2, total: 10 });
    throttle.push({ stage: 'sampling', done: 3, total: 10 });
    expect(sent.map((e) => e.done)).toEqual([1]);
    advance(99);
    expect(sent.map((e) => e.done)).toEqual([1]);
    advance(1);
    expect(sent.map((e) => e.done)).toEqual([1, 3]);
  });

  it('a new stage goes at once; clear() drops what was held back', () => {
    const { throttle, sent, advance, pendingTimers } = fakeThrottle(100);
    throttle.push({ stage: 'sampling', done: 1, total: 10 });
    throttle.push({ stage: 'sampling', done: 5, total: 10 });
    throttle.push({ stage: 'judging', done: 0, total: 4 });
    expect(sent.map((e) => e.stage)).toEqual(['sampling', 'judging']);
    advance(200); // the held 5/10 was replaced by the judging event: not sent late
    expect(sent.length).toBe(2);
    throttle.push({ stage: 'judging', done: 1, total: 4 }); // 200 ms after the last: goes at once
    throttle.push({ stage: 'judging', done: 2, total: 4 }); // held back
    expect(sent.map((e) => e.done)).toEqual([1, 0, 1]);
    expect(pendingTimers()).toBe(1);
    throttle.clear();
    expect(pendingTimers()).toBe(0);
    advance(200);
    expect(sent.length).toBe(3);
  });
});

describe('EtaEstimator', () => {
  it('has only the current stage’s estimate in the first step, from its own rate', () => {
    const eta = new EtaEstimator();
    eta.observe(0, { stage: 'sampling', done: 0, total: 64 }, 0);
    expect(eta.estimate(0, 10)).toEqual({ stage: null, step: null, run: null });
    eta.observe(0, { stage: 'sampling', done: 16, total: 64 }, 8000);
    // 16 tokens in 8 s: 48 left take 24 s.
    expect(eta.estimate(8000, 10)).toEqual({ stage: 24, step: null, run: null });
  });

  it('estimates the step and the run from the last steps once one has finished', () => {
    const eta = new EtaEstimator();
    // Step 0: sampling 20 s, judging 5 s, advantages 1 s, updating 10 s, next step starts at 40 s.
    eta.observe(0, { stage: 'sampling', done: 0, total: 10 }, 0);
    eta.observe(0, { stage: 'judging', done: 0, total: 4 }, 20_000);
    eta.observe(0, { stage: 'advantages', done: 0, total: 1 }, 25_000);
    eta.observe(0, { stage: 'updating', done: 0, total: 1 }, 26_000);
    eta.finish(0, 40_000);
    eta.observe(1, { stage: 'sampling', done: 0, total: 10 }, 40_000);
    // updating took 40 − 26 = 14 s (saving included), so nothing is outside the stages.
    // Step 1, halfway through sampling after 10 s: 10 s of sampling + 5 + 1 + 14 = 30 s left in the step.
    eta.observe(1, { stage: 'sampling', done: 5, total: 10 }, 50_000);
    const e = eta.estimate(50_000, 5);
    expect(e.stage).toBeCloseTo(10);
    expect(e.step).toBeCloseTo(30);
    // 3 steps after this one, 40 s each.
    expect(e.run).toBeCloseTo(30 + 3 * 40);
  });

  it('a stage without progress yet uses the last steps’ time for it, less the time spent', () => {
    const eta = new EtaEstimator();
    eta.observe(0, { stage: 'sampling', done: 0, total: 10 }, 0);
    eta.observe(0, { stage: 'judging', done: 0, total: 4 }, 20_000);
    eta.finish(0, 30_000);
    eta.observe(1, { stage: 'sampling', done: 0, total: 10 }, 30_000);
    eta.observe(1, { stage: 'sampling', done: 0, total: 10 }, 35_000);
    const e = eta.estimate(35_000, 2);
    expect(e.stage).toBeCloseTo(15);
    expect(e.step).toBeCloseTo(15 + 10); // judging took 10 s in step 0
    expect(e.run).toBeCloseTo(25); // the last step
  });

  it('a second round of a stage (dynamic sampling) measures its rate anew, and both rounds count as the stage’s time', () => {
    const eta = new EtaEstimator();
    eta.observe(0, { stage: 'sampling', done: 0, total: 10 }, 0);
    eta.observe(0, { stage: 'sampling', done: 10, total: 10 }, 10_000);
    eta.observe(0, { stage: 'sampling', done: 0, total: 10 }, 10_000); // round 2
    eta.observe(0, { stage: 'sampling', done: 2, total: 10 }, 14_000);
    expect(eta.estimate(14_000, 2).stage).toBeCloseTo(16); // 2 tokens in 4 s, not 12 in 14 s
    eta.finish(0, 20_000);
    eta.observe(1, { stage: 'sampling', done: 0, total: 10 }, 20_000);
    expect(eta.estimate(20_000, 2).stage).toBeCloseTo(20); // both rounds: 20 s of sampling
  });

  it('counts only finished steps: not one left unfinished (paused, stopped) nor the wait after it', () => {
    const eta = new EtaEstimator();
    eta.observe(3, { stage: 'sampling', done: 0, total: 10 }, 0);
    eta.observe(4, { stage: 'sampling', done: 0, total: 10 }, 1_000_000); // step 3 never finished
    eta.observe(4, { stage: 'sampling', done: 5, total: 10 }, 1_005_000);
    expect(eta.estimate(1_005_000, 10).step).toBeNull();
    eta.finish(4, 1_020_000);
    eta.finish(4, 1_030_000); // a second finish of the same step changes nothing
    eta.observe(5, { stage: 'sampling', done: 5, total: 10 }, 9_000_000); // after a long pause
    eta.observe(5, { stage: 'sampling', done: 5, total: 10 }, 9_000_010);
    // Step 4 took 20 s; 4 steps after step 5.
    expect(eta.estimate(9_000_010, 10).run).toBeCloseTo(0.01 + 4 * 20, 1);
  });
});

describe('progress text', () => {
  it('formats durations', () => {
    expect(formatDuration(40.2)).toBe('40 s');
    expect(formatDuration(720)).toBe('12 min');
    expect(formatDuration(3900)).toBe('1 h 05 min');
  });

  it('says the step, the stage with its count, and the ETAs it has', () => {
    const p = { step: 0, stage: 'sampling' as const, done: 12, total: 32, partial: null };
    expect(progressLine(p, { stage: 40, step: null, run: null }, 20)).toBe('Step 0 (1 of 20) · sampling 12/32 tokens · ETA sampling 40 s');
    expect(progressLine(p, { stage: 10, step: 40, run: 720 }, 20)).toBe('Step 0 (1 of 20) · sampling 12/32 tokens · ETA step 40 s, run 12 min');
  });
});
