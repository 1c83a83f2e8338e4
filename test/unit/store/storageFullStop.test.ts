// A run stopped by a full storage is not a failed run and not a running one after a reload: the
// trainer worker reports the failed commit as a failure with the StorageFullError's message, the
// status writer stores it as 'stopped' with that reason (so the list reads "stopped" and why, and
// Resume goes on once space is freed), and where the disk refuses even that write ("full
// forever") the run stays stored 'running', which reads "interrupted" once its lock is free.
// fake-indexeddb with put() failing as a full disk does; the in-memory Web Locks.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLocks, RunStore, StorageFullError, withRunLock } from '../../../src/store';
import { heldRunIds, shownStatus } from '../../../src/store/liveness';
import { StatusWriter, storedStatus } from '../../../src/store/statusWriter';
import { checkpoint, metrics, newRun, rollouts } from './fixtures';

type Write = (this: IDBObjectStore, value: unknown, key?: IDBValidKey) => IDBRequest;
const proto = IDBObjectStore.prototype as unknown as { put: Write; add: Write };
const original = { put: proto.put, add: proto.add };
/** Which object stores refuse writes with QuotaExceededError (none: the disk has room). */
let full: (store: string) => boolean = () => false;
for (const method of ['put', 'add'] as const) {
  proto[method] = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    if (full(this.name)) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    return original[method].call(this, value, key);
  };
}

let n = 0;
const opened: RunStore[] = [];
afterEach(() => {
  full = () => false;
  for (const s of opened.splice(0)) s.close();
});

/** A run with step 0 committed (and checkpointed), trained under its lock until `whileFull` returns; the lock is then released. */
async function trainUntilFull(whileFull: (store: RunStore, id: string, writer: StatusWriter) => Promise<void>) {
  const store = await RunStore.open({ name: `full-${n++}`, storage: { estimate: async () => ({ usage: 1000, quota: 1000 }) } });
  opened.push(store);
  const run = await store.createRun(newRun());
  const writer = new StatusWriter(store, 0);
  await withRunLock(run.id, async () => {
    writer.save(run.id, 'running');
    await store.commitStep(run.id, 0, metrics(0), rollouts(0), checkpoint(0));
    await whileFull(store, run.id, writer);
    // What the trainer worker does before it lets go of the lock (close()).
    await writer.flush();
  }, { locks: memoryLocks });
  // A reload: nobody holds the lock any more.
  const after = (await store.getRun(run.id))!;
  return { store, id: run.id, after, shown: shownStatus(after, await heldRunIds(memoryLocks)) };
}

/** Step 1's commit hits the quota; the trainer reports the failure with the error's message. */
async function commitFails(store: RunStore, id: string, writer: StatusWriter): Promise<string> {
  const err = await store.commitStep(id, 1, metrics(1), rollouts(1), checkpoint(1)).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(StorageFullError);
  const message = (err as Error).message;
  writer.save(id, 'failed', message);
  return message;
}

describe('a run stopped because storage is full', () => {
  it('is stored "stopped" with the reason (not failed, not running); step 0 is whole; it resumes once space is freed', async () => {
    let message = '';
    const { store, id, after, shown } = await trainUntilFull(async (s, runId, writer) => {
      // Only the big records are refused: the run record's small status write still fits.
      full = (name) => name !== 'runs';
      message = await commitFails(s, runId, writer);
    });
    expect(message).toMatch(/^Storage is full: saving step 1 of run "[^"]+" failed and nothing of it was written/);
    expect(after).toMatchObject({ status: 'stopped', error: message, lastStep: 0, lastCheckpointStep: 0 });
    expect(shown).toBe('stopped');
    expect((await store.metrics(id)).map((m) => m.step)).toEqual([0]);
    expect(await store.rollouts(id)).toHaveLength(4);
    // Space freed: Resume commits step 1 and the reason goes with the next status.
    full = () => false;
    await withRunLock(id, async () => {
      await store.setStatus(id, 'running');
      await store.commitStep(id, 1, metrics(1), rollouts(1), checkpoint(1));
      await store.setStatus(id, 'paused');
    }, { locks: memoryLocks });
    expect(await store.getRun(id)).toMatchObject({ status: 'paused', lastStep: 1 });
    expect((await store.getRun(id))!.error).toBeUndefined();
  });

  it('full forever (even the status write is refused): stored "running", it reads "interrupted" after the reload', async () => {
    let flushed: boolean | null = null;
    const { store, id, after, shown } = await trainUntilFull(async (s, runId, writer) => {
      await writer.flush(); // 'running' was written while there was room
      full = () => true;
      await commitFails(s, runId, writer);
      flushed = await writer.flush();
      expect(writer.lastError).toMatch(/^Storage is full: setting the status of run/);
    });
    expect(flushed).toBe(false);
    expect(after).toMatchObject({ status: 'running', lastStep: 0, lastCheckpointStep: 0 });
    expect(shown).toBe('interrupted');
    full = () => false;
    expect((await store.metrics(id)).map((m) => m.step)).toEqual([0]);
  });

  it('only a full storage turns a failure into a stop', () => {
    expect(storedStatus('failed', 'Could not save: Storage is full: saving step 3 failed')).toBe('stopped');
    expect(storedStatus('failed', 'the GPU device was lost')).toBe('failed');
    expect(storedStatus('failed')).toBe('failed');
    expect(storedStatus('paused', 'Storage is full: x')).toBe('paused');
  });
});
