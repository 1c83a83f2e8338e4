// Pruning estimates: what pruneEstimate says a prune frees is what the prune then frees (rollouts
// before a step, checkpoints beyond the newest N), computed without deleting anything.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { estimatePrune, RunStore, totalBytes } from '../../../src/store';
import { checkpoint, metrics, newRun, rollouts } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(): Promise<RunStore> {
  const store = await RunStore.open({ name: `prune-${n++}`, storage: null, keepCheckpoints: 5 });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** A run of 6 committed steps (4 rollouts each), checkpoints after steps 1, 3 and 5 of growing size. */
async function seeded() {
  const store = await open();
  const run = await store.createRun(newRun());
  for (let s = 0; s < 6; s++) await store.commitStep(run.id, s, metrics(s), rollouts(s), s % 2 ? checkpoint(s, 1000 * (s + 1)) : undefined);
  return { store, id: run.id };
}

describe('prune estimates', () => {
  it('rolloutUsageByStep sums the stored rollouts per step, matching the run usage', async () => {
    const { store, id } = await seeded();
    const usage = await store.rolloutUsageByStep(id);
    expect(usage.map((u) => [u.step, u.count])).toEqual([0, 1, 2, 3, 4, 5].map((s) => [s, 4]));
    const run = (await store.getRun(id))!;
    expect(usage.reduce((a, u) => a + u.bytes, 0)).toBe(run.usage.rollouts.bytes);
    expect(usage.every((u) => u.bytes > 100)).toBe(true);
  });

  it('the estimate of dropping rollouts before a step equals what pruneRolloutsBefore frees, and deletes nothing', async () => {
    const { store, id } = await seeded();
    const before = (await store.getRun(id))!;
    const estimate = await store.pruneEstimate(id, { rolloutsBeforeStep: 4 });
    expect(estimate.rollouts.deleted).toBe(16);
    expect(estimate.checkpoints).toEqual({ deleted: 0, bytes: 0 });
    expect((await store.rollouts(id)).length).toBe(24);
    expect((await store.getRun(id))!.usage).toEqual(before.usage);

    const done = await store.pruneRolloutsBefore(id, 4);
    expect(done).toEqual(estimate.rollouts);
    const left = await store.rollouts(id);
    expect([...new Set(left.map((r) => r.step))]).toEqual([4, 5]);
    const after = (await store.getRun(id))!;
    expect(totalBytes(after.usage)).toBe(totalBytes(before.usage) - estimate.bytes);
    // Metrics stay: the charts keep every step.
    expect((await store.metrics(id)).length).toBe(6);
    // Nothing older is left: a second prune frees nothing, and step 0 is a no-op.
    expect(await store.pruneRolloutsBefore(id, 4)).toEqual({ deleted: 0, bytes: 0 });
    expect(await store.pruneRolloutsBefore(id, 0)).toEqual({ deleted: 0, bytes: 0 });
    await expect(store.pruneRolloutsBefore(id, -1)).rejects.toThrow(/step must be an integer >= 0/);
  });

  it('the estimate of keeping the newest N checkpoints equals what pruneCheckpoints frees', async () => {
    const { store, id } = await seeded();
    const run = (await store.getRun(id))!;
    expect(run.checkpoints.map((k) => k.step)).toEqual([1, 3, 5]);
    const estimate = await store.pruneEstimate(id, { keepCheckpoints: 1 });
    expect(estimate.checkpoints.deleted).toBe(2);
    expect(estimate.checkpoints.bytes).toBe(run.checkpoints[0].bytes + run.checkpoints[1].bytes);
    expect(estimate.checkpoints.bytes).toBeGreaterThan(2000 * 3 + 4000 * 3);
    expect(estimate.rollouts).toEqual({ deleted: 0, bytes: 0 });
    const done = await store.pruneCheckpoints(id, 1);
    expect(done).toEqual(estimate.checkpoints);
    expect((await store.latestCheckpoint(id))!.step).toBe(5);
  });

  it('both at once, and plans that change nothing or make no sense', async () => {
    const { store, id } = await seeded();
    const both = await store.pruneEstimate(id, { keepCheckpoints: 2, rolloutsBeforeStep: 6 });
    expect(both.rollouts.deleted).toBe(24);
    expect(both.checkpoints.deleted).toBe(1);
    expect(both.bytes).toBe(both.rollouts.bytes + both.checkpoints.bytes);
    expect((await store.pruneEstimate(id, {})).bytes).toBe(0);
    expect((await store.pruneEstimate(id, { keepCheckpoints: 10 })).checkpoints.deleted).toBe(0);
    expect(() => estimatePrune({ checkpoints: [] }, [], { keepCheckpoints: -1 })).toThrow(/keepCheckpoints/);
    expect(() => estimatePrune({ checkpoints: [] }, [], { rolloutsBeforeStep: 1.5 })).toThrow(/rolloutsBeforeStep/);
    await expect(store.pruneEstimate('no-such-run', {})).rejects.toThrow(/no run with id/);
  });
});
