// A page killed while a new run's model loads, before any step, must leave a run that reads
// "interrupted" after reopening (with the banner's "no checkpoint yet"), not "paused". A load
// that fails stores why, a cancelled download stores 'stopped', and a run closed before it trained
// is 'paused'. These are the trainer worker's steps (src/worker/trainer.worker.ts open()/close()),
// with fake-indexeddb and the in-memory Web Locks; "killed" = the lock is freed with no write.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLocks, RunStore, withRunLock } from '../../../src/store';
import { heldRunIds, shownStatus } from '../../../src/store/liveness';
import { createLoadingRun, saveClosedUntrained, saveLoadFailure } from '../../../src/store/loadingRun';
import { StatusWriter } from '../../../src/store/statusWriter';
import { interruptedNotice, noticeText } from '../../../src/ui/lib/runStatus';
import { newRun } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(): Promise<RunStore> {
  const store = await RunStore.open({ name: `loading-${n++}`, storage: null });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

const NOBODY = { runId: null, status: 'idle' };

type Create = (store: RunStore, lock: (id: string) => Promise<void>) => Promise<{ id: string }>;

/**
 * Creates a run the way `create` does (the trainer worker's lock: taken through `lock`, or here
 * after the run exists), holds it through `whileLoading` (the model load), then lets go (the
 * page is killed); returns what the page read while it loaded and what a reopened page reads.
 */
async function loadThen(create: Create, whileLoading: (store: RunStore, id: string, writer: StatusWriter) => Promise<void> = async () => {}) {
  const store = await open();
  const writer = new StatusWriter(store, 0);
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  let locked: Promise<unknown> | null = null;
  /** Takes the run's lock until release(), as the worker's holdRunLock; records what a listing page saw before. */
  let seenBeforeLock: string[] = [];
  const lock = async (id: string) => {
    seenBeforeLock = (await store.listRuns()).map((r) => r.id);
    await new Promise<void>((taken) => {
      locked = withRunLock(id, () => (taken(), held), { locks: memoryLocks });
    });
  };
  const run = await create(store, lock);
  if (!locked) await lock(run.id);
  const whileHeld = shownStatus((await store.getRun(run.id))!, await heldRunIds(memoryLocks));
  await whileLoading(store, run.id, writer);
  await writer.flush();
  release();
  await locked;
  const heldNow = await heldRunIds(memoryLocks);
  const after = (await store.getRun(run.id))!;
  const listed = await store.listRuns();
  return { whileHeld, seenBeforeLock, after, shown: shownStatus(after, heldNow), notice: interruptedNotice(listed, heldNow, NOBODY) };
}

describe('a new run whose page dies while its model loads', () => {
  it('reads "interrupted" after reopening, with no step lost and the banner saying there is no checkpoint yet', async () => {
    const { whileHeld, seenBeforeLock, after, shown, notice } = await loadThen((s, lock) => createLoadingRun(s, newRun({ name: 'loading run' }), lock));
    // Its lock is taken before the run exists (a page listing runs never sees it unlocked), and
    // while its worker holds it, the run is being trained: another tab sees "running".
    expect(seenBeforeLock).toEqual([]);
    expect(whileHeld).toBe('running');
    expect(after).toMatchObject({ status: 'running', lastStep: null, lastCheckpointStep: null });
    expect(shown).toBe('interrupted');
    expect(notice).toMatchObject({ name: 'loading run', step: 0, hasCheckpoint: false, redo: 0 });
    expect(noticeText(notice!)).toBe('Your run "loading run" was interrupted at step 0 (no checkpoint yet: resuming starts again from step 0).');
  });

  it('(the old way, a run created "paused" before its load, reads "paused" and gets no banner: what this fixes)', async () => {
    const { shown, notice } = await loadThen((s) => s.createRun(newRun()));
    expect(shown).toBe('paused');
    expect(notice).toBeNull();
  });
});

describe('a new run whose model did not load, or that closed before it trained', () => {
  it('a failed load is stored "failed" with the reason', async () => {
    const { after, shown, notice } = await loadThen(
      (s, lock) => createLoadingRun(s, newRun(), lock),
      async (_s, id, writer) => saveLoadFailure(writer, id, 'the run does not fit this GPU: 3.2 GiB needed', false),
    );
    expect(after).toMatchObject({ status: 'failed', error: 'the run does not fit this GPU: 3.2 GiB needed' });
    expect(shown).toBe('failed');
    expect(notice).toBeNull();
  });

  it('a cancelled download is stored "stopped", saying so', async () => {
    const { after, shown } = await loadThen(
      (s, lock) => createLoadingRun(s, newRun(), lock),
      async (_s, id, writer) => saveLoadFailure(writer, id, 'download cancelled', true),
    );
    expect(after.status).toBe('stopped');
    expect(after.error).toMatch(/^The model download was cancelled before the run trained/);
    expect(shown).toBe('stopped');
  });

  it('a run that loaded and was closed before it trained is "paused" (nothing was interrupted)', async () => {
    const { after, shown, notice } = await loadThen(
      (s, lock) => createLoadingRun(s, newRun(), lock),
      async (_s, id, writer) => saveClosedUntrained(writer, id),
    );
    expect(after).toMatchObject({ status: 'paused', lastStep: null });
    expect(shown).toBe('paused');
    expect(notice).toBeNull();
  });
});
