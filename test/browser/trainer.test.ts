// The GRPO loop's controls (the worker exposes the same methods to the UI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/trainer.ts';

describe('GrpoTrainer', () => {
  it('slow motion holds a step at sampled, judged and advantages until advanced', async () => {
    const r = await harness.runModule(CASES, 'slowMotion', {});
    expect(r.seen).toEqual(['sampled', 'judged', 'advantages']);
    expect(r.step).toBe(1);
    expect(r.status).toBe('paused');
    expect(r.events).toEqual(['status:running', 'stage:sampled', 'stage:judged', 'stage:advantages', 'stage:updated', 'step:0', 'status:paused']);
  });

  it('timed slow motion holds each stage for the delay, then goes on by itself', async () => {
    const r = await harness.runModule(CASES, 'timedSlowMotion', { delayMs: 400 });
    expect(r.step).toBe(1);
    expect(r.events).toEqual(['status:running', 'stage:sampled', 'stage:judged', 'stage:advantages', 'stage:updated', 'step:0', 'status:paused']);
    // Judging and the advantage kernel take well under the delay on the fixture, so the gaps are the holds.
    expect(r.times.judged - r.times.sampled).toBeGreaterThanOrEqual(390);
    expect(r.times.advantages - r.times.judged).toBeGreaterThanOrEqual(390);
    // Progress inside each stage arrives before that stage's event, never after it.
    expect(r.flow).toEqual(['progress:sampling', 'stage:sampled', 'progress:judging', 'stage:judged', 'progress:advantages', 'stage:advantages', 'progress:updating', 'stage:updated', 'step']);
    const sampling = r.counts.filter((c: { stage: string }) => c.stage === 'sampling');
    expect(sampling[0]).toEqual({ stage: 'sampling', done: 0, total: 4, partial: null });
    expect(sampling.slice(1).every((c: { partial: number | null }) => c.partial === 4)).toBe(true);
    expect(r.counts.filter((c: { stage: string }) => c.stage === 'judging').at(-1)).toEqual({ stage: 'judging', done: 4, total: 4, partial: null });
    expect(r.counts.filter((c: { stage: string }) => c.stage === 'updating').at(-1)).toEqual({ stage: 'updating', done: 1, total: 1, partial: null });
  });

  it('start() runs to max_steps, checkpointing every save_steps', async () => {
    const r = await harness.runModule(CASES, 'runToEnd', {});
    expect(r.step).toBe(3);
    expect(r.status).toBe('finished');
    expect(r.events.filter((e: string) => e.startsWith('step:'))).toEqual(['step:0', 'step:1', 'step:2']);
    expect(r.events.filter((e: string) => e.startsWith('checkpoint:'))).toEqual(['checkpoint:2']);
  });

  it('pause() finishes the running step and checkpoints; resume() continues to the end', async () => {
    const r = await harness.runModule(CASES, 'pauseResume', {});
    expect(r.pausedAt).toBe(1);
    expect(r.statusAfterPause).toBe('paused');
    expect(r.events).toContain('checkpoint:1');
    expect(r.final).toBe(3);
    expect(r.status).toBe('finished');
  });
});
