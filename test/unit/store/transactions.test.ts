// All or nothing: a write that fails part-way (quota, a value that cannot be stored) leaves the
// database exactly as before, and quota failures become StorageFullError with the usage.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RunStore, StorageFullError, isQuotaError, formatBytes, type RunRecord } from '../../../src/store';
import { RUBRIC, checkpoint, metrics, newRun, rollouts } from './fixtures';

type Write = (this: IDBObjectStore, value: unknown, key?: IDBValidKey) => IDBRequest;
const proto = IDBObjectStore.prototype as unknown as { put: Write; add: Write };
const original = { put: proto.put, add: proto.add };
function restore(): void {
  proto.put = original.put;
  proto.add = original.add;
}
afterEach(restore);

const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

/**
 * Lets `okWrites` puts/adds through, then fails the next one (only that one): 'throw' throws
 * from put() itself; 'request' fails its request asynchronously, as a browser does when the
 * disk is full (the request's error event aborts the transaction with that error).
 */
function failWriteAfter(okWrites: number, mode: 'throw' | 'request', error: () => DOMException = quota): { calls: () => number } {
  let calls = 0;
  for (const method of ['put', 'add'] as const) {
    proto[method] = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (++calls !== okWrites + 1) return original[method].call(this, value, key);
      if (mode === 'throw') throw error();
      const tx = this.transaction as unknown as { _execRequestAsync(r: { operation: () => never; source: unknown }): IDBRequest };
      return tx._execRequestAsync({ operation: () => { throw error(); }, source: this });
    };
  }
  return { calls: () => calls };
}

let n = 0;
async function setup(estimate = { usage: 123_456_789, quota: 200_000_000 }) {
  const store = await RunStore.open({ name: `tx-${n++}`, storage: { estimate: async () => estimate }, keepCheckpoints: 2 });
  const run = await store.createRun(newRun());
  await store.commitStep(run.id, 0, metrics(0), rollouts(0), checkpoint(0));
  await store.commitStep(run.id, 1, metrics(1), rollouts(1), checkpoint(1));
  return { store, run };
}

/** Everything observable about a run. */
async function snapshot(store: RunStore, id: string) {
  const latest = await store.latestCheckpoint(id);
  return {
    run: (await store.getRun(id)) as RunRecord,
    metrics: await store.metrics(id),
    rollouts: await store.rollouts(id),
    checkpoint: latest && { step: latest.step, bytes: Array.from(new Uint8Array(latest.files['model.safetensors'])) },
  };
}

describe('transactional commitStep', () => {
  // Step 2 writes 8 rollouts, its metrics, a checkpoint (pruning step 0's) and the run record: 11 puts.
  // A thrown put stops the commit there; a failed request aborts the transaction when it fails.
  it.each([
    ['throw', 0],
    ['throw', 5],
    ['throw', 10],
    ['request', 0],
    ['request', 3],
    ['request', 9],
  ] as const)('a quota failure on put %s after %i puts leaves step 1 intact', async (mode, okPuts) => {
    const { store, run } = await setup();
    const before = await snapshot(store, run.id);
    const big = rollouts(2, 4);
    const injected = failWriteAfter(okPuts, mode);
    const err = await store.commitStep(run.id, 2, metrics(2), big, checkpoint(2)).catch((e: unknown) => e);
    if (mode === 'throw') expect(injected.calls()).toBe(okPuts + 1);
    else expect(injected.calls()).toBeGreaterThan(okPuts);
    restore();
    expect(err).toBeInstanceOf(StorageFullError);
    const full = err as StorageFullError;
    expect(full.message).toMatch(/^Storage is full: saving step 2 of run ".+" failed and nothing of it was written\./);
    expect(full.message).toContain('This site uses 117.7 MiB of its 190.7 MiB quota.');
    expect(full.message).toMatch(/pruning old rollouts .* pruning old checkpoints/);
    expect(full.usage).toBe(123_456_789);
    expect(full.quota).toBe(200_000_000);
    expect(isQuotaError(full.cause)).toBe(true);
    expect(await snapshot(store, run.id)).toEqual(before);
    // The store still works afterwards, and the step can be retried.
    const ok = await store.commitStep(run.id, 2, metrics(2), big, checkpoint(2));
    expect(ok.lastStep).toBe(2);
    expect((await store.rollouts(run.id, { step: 2 })).length).toBe(8);
    expect(ok.checkpoints.map((k) => k.step)).toEqual([1, 2]);
    store.close();
  });

  it('a value that cannot be stored (DataCloneError) aborts the whole step and is rethrown as is', async () => {
    const { store, run } = await setup();
    const before = await snapshot(store, run.id);
    const bad = rollouts(2);
    (bad[3] as unknown as { completion: unknown }).completion = () => 'not data';
    const err = await store.commitStep(run.id, 2, metrics(2), bad).catch((e: unknown) => e);
    expect((err as Error).name).toBe('DataCloneError');
    expect(err).not.toBeInstanceOf(StorageFullError);
    expect(await snapshot(store, run.id)).toEqual(before);
    store.close();
  });

  it('quota failures elsewhere (pruning, deleting, creating) are mapped too and roll back', async () => {
    const { store, run } = await setup({ usage: 1536, quota: 2048 });
    failWriteAfter(0, 'request');
    const err = await store.pruneRollouts(run.id, 0).catch((e: unknown) => e);
    restore();
    expect(err).toBeInstanceOf(StorageFullError);
    expect((err as Error).message).toMatch(/pruning rollouts of run .* This site uses 1.5 KiB of its 2.0 KiB quota/);
    expect((await store.rollouts(run.id)).length).toBe(8);
    // A new rubric version is put before the run is added: the rubric must not stay behind alone.
    const rubric = { ...RUBRIC, name: 'another rubric' };
    failWriteAfter(0, 'throw');
    await expect(store.createRun(newRun({ name: 'will not fit', rubric }))).rejects.toThrow(/creating run "will not fit" failed/);
    restore();
    expect((await store.listRuns()).length).toBe(1);
    expect((await store.listRubrics()).length).toBe(1);
    failWriteAfter(1, 'request'); // the rubric goes in, the run record fails
    await expect(store.createRun(newRun({ name: 'nor this', rubric }))).rejects.toThrow(StorageFullError);
    restore();
    expect((await store.listRuns()).length).toBe(1);
    expect((await store.listRubrics()).length).toBe(1);
    store.close();
  });

  it('without navigator.storage the message says usage is unknown', async () => {
    const store = await RunStore.open({ name: `tx-${n++}`, storage: null });
    const run = await store.createRun(newRun());
    failWriteAfter(2, 'request');
    const err = (await store.commitStep(run.id, 0, metrics(0), rollouts(0)).catch((e: unknown) => e)) as StorageFullError;
    restore();
    expect(err.message).toContain('The browser does not report how much this site uses.');
    expect(err.usage).toBeNull();
    expect((await store.getRun(run.id))!.lastStep).toBeNull();
    expect(await store.rollouts(run.id)).toEqual([]);
    store.close();
  });
});

describe('quota error helpers', () => {
  it('recognises quota errors by name only', () => {
    expect(isQuotaError(quota())).toBe(true);
    expect(isQuotaError({ name: 'NS_ERROR_DOM_QUOTA_REACHED' })).toBe(true);
    expect(isQuotaError(new DOMException('x', 'AbortError'))).toBe(false);
    expect(isQuotaError(new Error('QuotaExceededError'))).toBe(false);
    expect(isQuotaError(null)).toBe(false);
  });

  it('formats byte counts', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1023)).toBe('1023 bytes');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
  });
});
