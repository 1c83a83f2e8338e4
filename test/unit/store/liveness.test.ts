// A run stored as 'running' whose lock nobody holds (its page died, or a full disk refused the
// status write) reads as interrupted; the status writer keeps statuses in order and retries a
// refused write. fake-indexeddb, the in-memory locks and a faked navigator.locks.query().
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLocks, RunStore, StorageFullError, withRunLock, type RunStatus } from '../../../src/store';
import { heldRunIds, shownStatus } from '../../../src/store/liveness';
import { StatusWriter } from '../../../src/store/statusWriter';
import { newRun } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(): Promise<RunStore> {
  const store = await RunStore.open({ name: `liveness-${n++}`, storage: null });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

describe('heldRunIds', () => {
  it("reads the run ids out of the held 'run:<id>' locks, ignoring other locks", async () => {
    const held = await heldRunIds({ query: async () => ({ held: [{ name: 'run:a' }, { name: 'other' }, { name: 'run:b:c' }, {}] }) });
    expect(held).toEqual(new Set(['a', 'b:c']));
  });

  it('is null (unknown) without a lock query, or when the query fails', async () => {
    expect(await heldRunIds(null)).toBeNull();
    expect(await heldRunIds({ query: () => Promise.reject(new Error('denied')) })).toBeNull();
    // Node has no navigator.locks: the default cannot tell.
    expect(await heldRunIds()).toBeNull();
  });
});

describe('shownStatus', () => {
  const run = (status: RunStatus) => ({ id: 'r', status });

  it("shows 'running' with no lock holder as interrupted", () => {
    expect(shownStatus(run('running'), new Set())).toBe('interrupted');
    expect(shownStatus(run('running'), new Set(['other']))).toBe('interrupted');
  });

  it("keeps 'running' while someone holds the lock, and every other status as stored", () => {
    expect(shownStatus(run('running'), new Set(['r']))).toBe('running');
    for (const s of ['paused', 'stopped', 'finished', 'failed'] as const) expect(shownStatus(run(s), new Set())).toBe(s);
  });

  it('shows the stored status when the browser cannot tell who holds locks', () => {
    expect(shownStatus(run('running'), null)).toBe('running');
  });

  it('a stored run: running while its lock is held, interrupted once the holder is gone', async () => {
    const store = await open();
    const created = await store.createRun(newRun());
    let duringTraining: string | null = null;
    await withRunLock(created.id, async () => {
      await store.setStatus(created.id, 'running');
      duringTraining = shownStatus((await store.getRun(created.id))!, await heldRunIds(memoryLocks));
      // The holder dies here without writing another status.
    }, { locks: memoryLocks });
    expect(duringTraining).toBe('running');
    const after = (await store.listRuns())[0];
    expect(after.status).toBe('running');
    expect(shownStatus(after, await heldRunIds(memoryLocks))).toBe('interrupted');
  });
});

describe('StatusWriter', () => {
  /** A target that refuses the first `failures` writes with a storage-full error. */
  function target(failures: number) {
    const written: [string, RunStatus, string | undefined][] = [];
    let refused = 0;
    return {
      written,
      setStatus: async (id: string, status: RunStatus, error?: string) => {
        await new Promise((r) => setTimeout(r, 1));
        if (refused < failures) {
          refused++;
          throw new StorageFullError(`setting the status of run "${id}"`, null);
        }
        written.push([id, status, error]);
      },
    };
  }

  it('writes statuses in the order they were given', async () => {
    const t = target(0);
    const w = new StatusWriter(t, 0);
    w.save('r', 'running');
    w.save('r', 'failed', 'Storage is full');
    w.save('q', 'paused');
    expect(await w.flush()).toBe(true);
    expect(t.written).toEqual([['r', 'running', undefined], ['r', 'failed', 'Storage is full'], ['q', 'paused', undefined]]);
  });

  it('retries a refused write (a full disk), so the stop and its reason are recorded', async () => {
    const t = target(1);
    const w = new StatusWriter(t, 0);
    w.save('r', 'failed', 'Storage is full: saving step 3 failed');
    expect(await w.flush()).toBe(true);
    // A full storage stops the run (storageFullStop.test.ts): stored as stopped, with the reason.
    expect(t.written).toEqual([['r', 'stopped', 'Storage is full: saving step 3 failed']]);
  });

  it('keeps a status refused twice and writes it at flush(); reports when it still cannot', async () => {
    const t = target(2);
    const w = new StatusWriter(t, 0);
    w.save('r', 'failed', 'why');
    expect(await w.flush()).toBe(true); // the third try, at flush
    expect(t.written).toEqual([['r', 'failed', 'why']]);

    const never = target(Infinity);
    const v = new StatusWriter(never, 0);
    v.save('r', 'failed', 'why');
    expect(await v.flush()).toBe(false);
    expect(v.lastError).toMatch(/^Storage is full/);
  });

  it('a newer saved status supersedes an older unsaved one', async () => {
    const t = target(2);
    const w = new StatusWriter(t, 0);
    w.save('r', 'running');
    w.save('r', 'failed', 'why');
    expect(await w.flush()).toBe(true);
    expect(t.written).toEqual([['r', 'failed', 'why']]);
  });
});
