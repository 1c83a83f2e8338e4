// RunStore on fake-indexeddb: every API, the transactional commit, pruning and the delete cascade.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { rubricVersion } from '../../../src/rubric/version';
import { RunNotFoundError, RunStore, StoreClosedError, type RunStoreOptions } from '../../../src/store';
import { CONFIG, RUBRIC, checkpoint, metrics, newRun, rollouts, weightsHead } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(options: RunStoreOptions = {}): Promise<RunStore> {
  let t = 1000;
  const store = await RunStore.open({ name: `runstore-${n++}`, storage: null, now: () => (t += 10), ...options });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** Commits steps 0..count-1, a checkpoint on every step in `checkpointAt`. */
async function commitSteps(store: RunStore, runId: string, count: number, checkpointAt: readonly number[] = []): Promise<void> {
  for (let s = 0; s < count; s++) await store.commitStep(runId, s, metrics(s), rollouts(s), checkpointAt.includes(s) ? checkpoint(s) : undefined);
}

describe('runs', () => {
  it('creates a run with its experiment and stores the rubric under its content version', async () => {
    const store = await open();
    const run = await store.createRun(newRun({ name: '  tea run  ' }));
    expect(run.name).toBe('tea run');
    expect(run.status).toBe('paused');
    expect(run.lastStep).toBeNull();
    expect(run.lastCheckpointStep).toBeNull();
    expect(run.experiment.modelId).toBe('embedded-tiny');
    expect(run.experiment.prompts).toEqual(['Ask for tea', 'Ask for the salt']);
    expect(run.experiment.config).toEqual(CONFIG);
    expect(run.experiment.rubricVersion).toBe(await rubricVersion(RUBRIC));
    expect(await store.rubric(run.experiment.rubricVersion)).toEqual(RUBRIC);
    expect(await store.getRun(run.id)).toEqual(run);
    // A second run with the same rubric shares its version record.
    const other = await store.createRun(newRun({ name: 'second' }));
    expect(other.id).not.toBe(run.id);
    expect((await store.listRubrics()).length).toBe(1);
  });

  it('stores a held-out rubric version alongside the trained one', async () => {
    const store = await open();
    const heldOut = { ...RUBRIC, name: 'held out', criteria: [RUBRIC.criteria[1]] };
    const run = await store.createRun(newRun({ heldOutRubric: heldOut }));
    expect(run.experiment.heldOutRubricVersion).toBe(await rubricVersion(heldOut));
    expect(await store.rubric(run.experiment.heldOutRubricVersion!)).toEqual(heldOut);
    expect((await store.listRubrics()).length).toBe(2);
    expect((await store.createRun(newRun())).experiment.heldOutRubricVersion).toBeUndefined();
    await expect(store.createRun(newRun({ heldOutRubric: {} as never }))).rejects.toThrow(/heldOutRubric must be a parsed Rubric object/);
  });

  it('renames and sets status; error is kept only for failed', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    const renamed = await store.renameRun(run.id, 'coffee run');
    expect(renamed.name).toBe('coffee run');
    expect(renamed.updated).toBeGreaterThan(run.updated);
    expect((await store.setStatus(run.id, 'failed', 'NaN in the loss')).error).toBe('NaN in the loss');
    const running = await store.setStatus(run.id, 'running');
    expect(running.status).toBe('running');
    expect(running.error).toBeUndefined();
    expect((await store.getRun(run.id))!.name).toBe('coffee run');
  });

  it('lists runs newest first with their sizes', async () => {
    const store = await open();
    const a = await store.createRun(newRun({ name: 'a' }));
    const b = await store.createRun(newRun({ name: 'b' }));
    await commitSteps(store, a.id, 2, [1]);
    const list = await store.listRuns();
    expect(list.map((r) => r.name)).toEqual(['a', 'b']); // a was updated last
    const [la, lb] = list;
    expect(la.usage.rollouts.count).toBe(8);
    expect(la.usage.metrics.count).toBe(2);
    expect(la.usage.checkpoints.count).toBe(1);
    expect(la.usage.checkpoints.bytes).toBeGreaterThan(3 * 4096); // weights + moments (2x)
    expect(la.bytes).toBe(la.usage.rollouts.bytes + la.usage.metrics.bytes + la.usage.checkpoints.bytes);
    expect(lb.id).toBe(b.id);
    expect(lb.bytes).toBe(0);
  });

  it('deletes a run with its rollouts, metrics and checkpoints, leaving other runs alone', async () => {
    const store = await open();
    const a = await store.createRun(newRun({ name: 'a' }));
    const b = await store.createRun(newRun({ name: 'b' }));
    await commitSteps(store, a.id, 3, [0, 2]);
    await commitSteps(store, b.id, 2, [1]);
    expect(await store.deleteRun(a.id)).toBe(true);
    expect(await store.getRun(a.id)).toBeNull();
    await expect(store.rollouts(a.id)).rejects.toThrow(RunNotFoundError);
    await expect(store.metrics(a.id)).rejects.toThrow(/no run with id/);
    await expect(store.latestCheckpoint(a.id)).rejects.toThrow(RunNotFoundError);
    // Nothing of a is left in any store, even under a re-created id.
    expect(await store.deleteRun(a.id)).toBe(false);
    expect((await store.rollouts(b.id)).length).toBe(8);
    expect((await store.metrics(b.id)).map((m) => m.step)).toEqual([0, 1]);
    expect((await store.latestCheckpoint(b.id))!.step).toBe(1);
    expect((await store.listRuns()).map((r) => r.id)).toEqual([b.id]);
    // The rubric version is shared, so it stays.
    expect(await store.rubric(b.experiment.rubricVersion)).not.toBeNull();
  });

  it('refuses bad arguments with errors naming them', async () => {
    const store = await open();
    await expect(store.createRun(newRun({ name: ' ' }))).rejects.toThrow(/name must be a non-empty string/);
    await expect(store.createRun(newRun({ prompts: [] }))).rejects.toThrow(/prompts must be a non-empty array/);
    await expect(store.createRun(newRun({ prompts: ['ok', 3 as unknown as string] }))).rejects.toThrow(/prompts\[1\] must be a string/);
    await expect(store.createRun(newRun({ modelId: '' }))).rejects.toThrow(/modelId/);
    await expect(store.createRun(newRun({ status: 'done' as never }))).rejects.toThrow(/status must be one of running, paused/);
    await expect(store.renameRun('nope', 'x')).rejects.toThrow(RunNotFoundError);
    await expect(store.setStatus('nope', 'running')).rejects.toThrow(/no run with id "nope"/);
    await expect(RunStore.open({ name: 'x', keepCheckpoints: 0 })).rejects.toThrow(/keepCheckpoints must be an integer >= 1/);
    expect(await store.listRuns()).toEqual([]);
  });
});

describe('commitStep', () => {
  it('stores metrics and rollouts of each step and advances lastStep', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    const after = await store.commitStep(run.id, 0, metrics(0), rollouts(0));
    expect(after.lastStep).toBe(0);
    await store.commitStep(run.id, 1, metrics(1), rollouts(1));
    expect((await store.metrics(run.id)).map((m) => m.loss)).toEqual([0, 0.1]);
    const all = await store.rollouts(run.id);
    expect(all.map((r) => [r.step, r.group, r.index])).toEqual([
      [0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1],
      [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1],
    ]);
    expect(all[0]).toMatchObject({ ...rollouts(0)[0], runId: run.id });
    expect(all[0].bytes).toBeGreaterThan(50);
    expect((await store.getRun(run.id))!.lastStep).toBe(1);
  });

  it('refuses a gap, mismatched steps and duplicate rollouts, writing nothing', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await expect(store.commitStep(run.id, 1, metrics(1), rollouts(1))).rejects.toThrow(/would leave a gap: the next step is 0/);
    await expect(store.commitStep(run.id, 0, metrics(3), rollouts(0))).rejects.toThrow(/metrics\.step is 3, but the commit is for step 0/);
    await expect(store.commitStep(run.id, 0, metrics(0), rollouts(1))).rejects.toThrow(/rollouts\[0\]\.step is 1/);
    const dup = [...rollouts(0), rollouts(0)[2]];
    await expect(store.commitStep(run.id, 0, metrics(0), dup)).rejects.toThrow(/rollouts\[4\] repeats group 1, index 0/);
    await expect(store.commitStep(run.id, -1, metrics(-1), [])).rejects.toThrow(/step must be an integer >= 0/);
    await expect(store.commitStep(run.id, 0, metrics(0), rollouts(0), { 'config.json': '{}' } as never)).rejects.toThrow(/checkpoint\["trainer_state.json"\] must be a string/);
    await expect(store.commitStep('missing', 0, metrics(0), rollouts(0))).rejects.toThrow(RunNotFoundError);
    expect(await store.metrics(run.id)).toEqual([]);
    expect(await store.rollouts(run.id)).toEqual([]);
    expect((await store.getRun(run.id))!.lastStep).toBeNull();
  });

  it('replays a step by replacing its records, keeping sizes exact', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await commitSteps(store, run.id, 3);
    const before = (await store.getRun(run.id))!.usage;
    // Resume from an older checkpoint: step 1 again, now with one group only.
    const replay = rollouts(1, 1).map((r) => ({ ...r, completion: 'replayed' }));
    const after = await store.commitStep(run.id, 1, { ...metrics(1), loss: 42 }, replay);
    expect(after.lastStep).toBe(2);
    const step1 = await store.rollouts(run.id, { step: 1 });
    expect(step1.map((r) => r.completion)).toEqual(['replayed', 'replayed']);
    expect((await store.metrics(run.id)).map((m) => m.loss)).toEqual([0, 42, 0.2]);
    expect(after.usage.rollouts.count).toBe(before.rollouts.count - 2);
    expect(after.usage.metrics.count).toBe(3);
    const all = await store.rollouts(run.id);
    expect(after.usage.rollouts.bytes).toBe(all.reduce((s, r) => s + r.bytes, 0));
  });
});

describe('checkpoints', () => {
  it('returns the newest checkpoint and keeps only the latest K per run', async () => {
    const store = await open({ keepCheckpoints: 2 });
    const run = await store.createRun(newRun());
    expect(await store.latestCheckpoint(run.id)).toBeNull();
    await commitSteps(store, run.id, 5, [0, 1, 2, 4]);
    const latest = await store.latestCheckpoint(run.id);
    expect(latest!.step).toBe(4);
    expect(weightsHead(latest!.files)).toEqual(weightsHead(checkpoint(4)));
    expect(new Uint8Array(latest!.files['optimizer.safetensors']!)).toEqual(new Uint8Array(checkpoint(4)['optimizer.safetensors']!));
    expect(JSON.parse(latest!.files['trainer_state.json']).global_step).toBe(5);
    const r = (await store.getRun(run.id))!;
    expect(r.checkpoints.map((k) => k.step)).toEqual([2, 4]);
    expect(r.lastCheckpointStep).toBe(4);
    expect(r.usage.checkpoints.count).toBe(2);
    // Per-call override keeps just one.
    await store.commitStep(run.id, 5, metrics(5), rollouts(5), checkpoint(5), { keepCheckpoints: 1 });
    expect((await store.getRun(run.id))!.checkpoints.map((k) => k.step)).toEqual([5]);
  });

  it('saves a checkpoint of a committed step (on pause) and refuses an uncommitted one', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await expect(store.saveCheckpoint(run.id, 0, checkpoint(0))).rejects.toThrow(/step 0 .* is not committed yet \(last committed: none\)/);
    await commitSteps(store, run.id, 3, [0]);
    await expect(store.saveCheckpoint(run.id, 3, checkpoint(3))).rejects.toThrow(/not committed yet \(last committed: 2\)/);
    const after = await store.saveCheckpoint(run.id, 2, checkpoint(2));
    expect(after.lastCheckpointStep).toBe(2);
    expect((await store.latestCheckpoint(run.id))!.step).toBe(2);
    // Saving the same step again replaces it without double counting.
    const again = await store.saveCheckpoint(run.id, 2, checkpoint(2, 100));
    expect(again.usage.checkpoints.count).toBe(2);
    expect(again.checkpoints.map((k) => k.step)).toEqual([0, 2]);
    expect(new Uint8Array((await store.latestCheckpoint(run.id))!.files['model.safetensors']).length).toBe(100);
  });

  it('pruneCheckpoints keeps the newest ones, 0 removes all', async () => {
    const store = await open({ keepCheckpoints: 5 });
    const run = await store.createRun(newRun());
    await commitSteps(store, run.id, 4, [0, 1, 2, 3]);
    const usage = (await store.getRun(run.id))!.usage.checkpoints;
    const one = await store.pruneCheckpoints(run.id, 1);
    expect(one.deleted).toBe(3);
    expect(one.bytes).toBe((usage.bytes * 3) / 4);
    expect((await store.latestCheckpoint(run.id))!.step).toBe(3);
    expect((await store.pruneCheckpoints(run.id, 0)).deleted).toBe(1);
    expect(await store.latestCheckpoint(run.id)).toBeNull();
    const r = (await store.getRun(run.id))!;
    expect(r.lastCheckpointStep).toBeNull();
    expect(r.usage.checkpoints).toEqual({ count: 0, bytes: 0 });
  });
});

describe('rollouts', () => {
  it('filters by step (the [runId, step] index) and by failed criterion', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await commitSteps(store, run.id, 3);
    const step2 = await store.rollouts(run.id, { step: 2 });
    expect(step2.map((r) => [r.step, r.group, r.index])).toEqual([[2, 0, 0], [2, 0, 1], [2, 1, 0], [2, 1, 1]]);
    expect(await store.rollouts(run.id, { step: 7 })).toEqual([]);
    // polite fails (score 0) on odd indices.
    const impolite = await store.rollouts(run.id, { failedCriterion: 'polite' });
    expect(impolite.length).toBe(6);
    expect(impolite.every((r) => r.index === 1)).toBe(true);
    // short: unscorable in group 1 (not "failed"); in group 0 'tea please N' is 12 chars (passes), 'tea now N' 9 (passes).
    expect(await store.rollouts(run.id, { failedCriterion: 'short' })).toEqual([]);
    const both = await store.rollouts(run.id, { step: 1, failedCriterion: 'polite' });
    expect(both.map((r) => [r.step, r.group, r.index])).toEqual([[1, 0, 1], [1, 1, 1]]);
    // A threshold above 1 is refused; at 1.0 a score of 1 passes, so only zeros fail.
    await expect(store.rollouts(run.id, { passThreshold: 2 })).rejects.toThrow(/passThreshold must be in \[0, 1\]/);
    expect((await store.rollouts(run.id, { failedCriterion: 'polite', passThreshold: 1 })).length).toBe(6);
    expect(await store.rollouts(run.id, { failedCriterion: 'polite', passThreshold: 0 })).toEqual([]);
  });

  it('pruneRollouts keeps the last N steps and updates the run size', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await commitSteps(store, run.id, 5);
    const before = (await store.getRun(run.id))!.usage.rollouts;
    const result = await store.pruneRollouts(run.id, 2);
    expect(result.deleted).toBe(12); // steps 0, 1, 2
    const left = await store.rollouts(run.id);
    expect([...new Set(left.map((r) => r.step))]).toEqual([3, 4]);
    const after = (await store.getRun(run.id))!.usage.rollouts;
    expect(after.count).toBe(8);
    expect(after.bytes).toBe(before.bytes - result.bytes);
    expect(after.bytes).toBe(left.reduce((s, r) => s + r.bytes, 0));
    // Metrics are kept.
    expect((await store.metrics(run.id)).length).toBe(5);
    expect((await store.pruneRollouts(run.id, 5)).deleted).toBe(0);
    expect((await store.pruneRollouts(run.id, 0)).deleted).toBe(8);
    await expect(store.pruneRollouts(run.id, -1)).rejects.toThrow(/keepLastSteps must be an integer >= 0/);
  });
});

describe('rubrics and prompt sets', () => {
  it('saves rubric versions idempotently', async () => {
    const store = await open();
    const v = await store.saveRubric(RUBRIC);
    expect(await store.saveRubric(structuredClone(RUBRIC))).toBe(v);
    const edited = { ...RUBRIC, criteria: [{ ...RUBRIC.criteria[0], weight: 3 }, RUBRIC.criteria[1]] };
    const v2 = await store.saveRubric(edited);
    expect(v2).not.toBe(v);
    expect((await store.listRubrics()).map((r) => r.version)).toEqual([v, v2]);
    expect(await store.rubric(v2)).toEqual(edited);
    expect(await store.rubric('0'.repeat(64))).toBeNull();
  });

  it('creates, updates, lists and deletes prompt sets', async () => {
    const store = await open();
    const set = await store.savePromptSet({ name: 'tea', prompts: ['a', 'b'] });
    const updated = await store.savePromptSet({ id: set.id, name: 'tea 2', prompts: ['c'] });
    expect(updated.created).toBe(set.created);
    expect(updated.updated).toBeGreaterThan(set.updated);
    const other = await store.savePromptSet({ name: 'salt', prompts: ['d'] });
    expect((await store.listPromptSets()).map((p) => p.name)).toEqual(['salt', 'tea 2']);
    const run = await store.createRun(newRun({ promptSetId: set.id, prompts: updated.prompts }));
    expect(await store.deletePromptSet(set.id)).toBe(true);
    expect(await store.deletePromptSet(set.id)).toBe(false);
    expect(await store.promptSet(set.id)).toBeNull();
    expect((await store.getRun(run.id))!.experiment).toMatchObject({ promptSetId: set.id, prompts: ['c'] });
    expect((await store.promptSet(other.id))!.prompts).toEqual(['d']);
    await expect(store.savePromptSet({ name: 'x', prompts: [] })).rejects.toThrow(/prompts must be a non-empty array/);
  });
});

describe('storage API and lifecycle', () => {
  it('reports estimate and persistence through navigator.storage, null without it', async () => {
    const calls: string[] = [];
    const store = await open({
      storage: {
        estimate: async () => ({ usage: 1234, quota: 5678 }),
        persisted: async () => (calls.push('persisted'), false),
        persist: async () => (calls.push('persist'), true),
      },
    });
    expect(await store.storageEstimate()).toEqual({ usage: 1234, quota: 5678 });
    expect(await store.requestPersistence()).toBe(true);
    expect(calls).toEqual(['persisted', 'persist']);
    const granted = await open({ storage: { persisted: async () => true, persist: async () => { throw new Error('not asked'); } } });
    expect(await granted.requestPersistence()).toBe(true);
    const bare = await open({ storage: null });
    expect(await bare.storageEstimate()).toBeNull();
    expect(await bare.requestPersistence()).toBeNull();
  });

  it('refuses work after close with a clear error; data survives reopening', async () => {
    const name = `runstore-reopen-${n++}`;
    const store = await RunStore.open({ name, storage: null });
    const run = await store.createRun(newRun());
    await commitSteps(store, run.id, 2, [1]);
    store.close();
    await expect(store.listRuns()).rejects.toThrow(StoreClosedError);
    await expect(store.commitStep(run.id, 2, metrics(2), rollouts(2))).rejects.toThrow(/run store is closed \(close\(\) was called\)/);
    const again = await open({ name });
    expect((await again.getRun(run.id))!.lastStep).toBe(1);
    expect((await again.latestCheckpoint(run.id))!.step).toBe(1);
    expect((await again.rollouts(run.id)).length).toBe(8);
  });
});
