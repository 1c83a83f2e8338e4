// Page side of test/browser/store.test.ts: the run store on Chromium's real IndexedDB, Web Locks
// and navigator.storage. Each export takes (runtime, input) and returns plain JSON.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { RunStore, RunLockedError, defaultLocks, memoryLocks, withRunLock } from '../../../src/store';
import { openDatabase } from '../../../src/store/database';
import type { V1Rollout } from '../../../src/store/migrations';
import { checkpoint, metrics, newRun, rollouts, weightsHead } from '../../unit/store/fixtures';

const errorOf = (e: unknown) => ({ name: (e as Error).name, message: (e as Error).message });

/** Create → commit 3 steps (checkpoints kept: 2) → a failing commit → read back → prune → reopen → delete. */
export async function smoke(_rt: GpuRuntime, input: { name: string }) {
  const store = await RunStore.open({ name: input.name, keepCheckpoints: 2 });
  const run = await store.createRun(newRun({ name: 'browser run' }));
  for (let s = 0; s < 3; s++) await store.commitStep(run.id, s, metrics(s), rollouts(s), checkpoint(s, 64 * 1024));
  // A rollout the browser cannot clone, in the middle of step 3: the whole step must vanish.
  const bad = rollouts(3);
  (bad[2] as unknown as { completion: unknown }).completion = Symbol('not data');
  const failed = await store.commitStep(run.id, 3, metrics(3), bad, checkpoint(3)).then(() => null, errorOf);
  const afterFailure = {
    lastStep: (await store.getRun(run.id))!.lastStep,
    step3: (await store.rollouts(run.id, { step: 3 })).length,
    metricSteps: (await store.metrics(run.id)).map((m) => m.step),
    latest: (await store.latestCheckpoint(run.id))!.step,
  };
  const latest = (await store.latestCheckpoint(run.id))!;
  const listed = (await store.listRuns())[0];
  const impolite = await store.rollouts(run.id, { failedCriterion: 'polite' });
  const pruned = await store.pruneRollouts(run.id, 1);
  const estimate = await store.storageEstimate();
  const persisted = await store.requestPersistence();
  store.close();

  const reopened = await RunStore.open({ name: input.name });
  const survived = {
    lastStep: (await reopened.getRun(run.id))!.lastStep,
    rollouts: (await reopened.rollouts(run.id)).map((r) => r.step),
    checkpoints: (await reopened.getRun(run.id))!.checkpoints.map((k) => k.step),
    weights: weightsHead((await reopened.latestCheckpoint(run.id))!.files),
    optimizerBytes: (await reopened.latestCheckpoint(run.id))!.files['optimizer.safetensors']!.byteLength,
  };
  const deleted = await reopened.deleteRun(run.id);
  const afterDelete = { runs: (await reopened.listRuns()).length, rollouts: await reopened.rollouts(run.id).then(() => 'found', errorOf) };
  reopened.close();
  return {
    failed,
    afterFailure,
    latest: { step: latest.step, weights: weightsHead(latest.files), expected: weightsHead(checkpoint(2)) },
    listed: { bytes: listed.bytes, usage: listed.usage, checkpoints: listed.checkpoints.map((k) => k.step) },
    impolite: impolite.map((r) => [r.step, r.group, r.index]),
    pruned,
    estimate,
    persisted,
    survived,
    deleted,
    afterDelete,
  };
}

/** A version 1 database written in this browser, upgraded by RunStore.open. */
export async function migrateV1(_rt: GpuRuntime, input: { name: string }) {
  const db = await openDatabase(input.name, { version: 1 });
  const spec = newRun();
  const run = { name: spec.name, experiment: { modelId: spec.modelId, prompts: spec.prompts, rubricVersion: 'v', config: spec.config } };
  const tx = db.transaction(['runs', 'rollouts', 'checkpoints'], 'readwrite') as unknown as import('idb').IDBPTransaction<unknown, string[], 'readwrite'>;
  await tx.objectStore('runs').put({ id: 'old', created: 1, updated: 1, status: 'stopped', lastStep: 1, lastCheckpointStep: 1, ...run });
  for (const s of [0, 1]) for (const r of rollouts(s)) await tx.objectStore('rollouts').put({ ...r, runId: 'old' } satisfies V1Rollout);
  await tx.objectStore('checkpoints').put({ runId: 'old', step: 1, created: 1, files: checkpoint(1) });
  await tx.done;
  db.close();
  const store = await RunStore.open({ name: input.name });
  const migrated = (await store.getRun('old'))!;
  const result = {
    usage: migrated.usage,
    lastCheckpointStep: migrated.lastCheckpointStep,
    step1: (await store.rollouts('old', { step: 1 })).map((r) => [r.group, r.index, r.completion]),
    weights: weightsHead((await store.latestCheckpoint('old'))!.files),
    expected: weightsHead(checkpoint(1)),
  };
  store.close();
  return result;
}

/** Two concurrent requests for one run's lock in this page, through the real Web Locks API. */
export async function concurrentLocks(_rt: GpuRuntime, input: { runId: string }) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const order: string[] = [];
  const first = withRunLock(input.runId, async () => {
    order.push('first acquired');
    await gate;
    order.push('first done');
    return 'first';
  });
  await new Promise((r) => setTimeout(r, 0));
  const second = await withRunLock(input.runId, () => order.push('second ran')).then(() => null, (e) => ({ ...errorOf(e), locked: e instanceof RunLockedError }));
  release();
  const firstResult = await first;
  const third = await withRunLock(input.runId, () => 'third');
  return { usesWebLocks: defaultLocks() !== memoryLocks, order, second, firstResult, third };
}

declare global {
  interface Window {
    storeLockRelease?: () => void;
  }
}

/** Takes the run's lock and keeps it until releaseLock() (for the two-tab test). */
export async function holdLock(_rt: GpuRuntime, input: { runId: string }) {
  let acquired!: () => void;
  const ready = new Promise<void>((r) => (acquired = r));
  const held = withRunLock(input.runId, () => new Promise<void>((release) => {
    window.storeLockRelease = release;
    acquired();
  }));
  held.catch(() => {});
  await Promise.race([ready, held]);
  return { holding: typeof window.storeLockRelease === 'function' };
}

export async function releaseLock() {
  const release = window.storeLockRelease;
  window.storeLockRelease = undefined;
  release?.();
  return { released: Boolean(release) };
}

/** Tries the run's lock once; reports whether the work ran or which error came back. */
export async function tryLock(_rt: GpuRuntime, input: { runId: string }) {
  return withRunLock(input.runId, () => ({ ran: true })).catch((e) => ({ ran: false, ...errorOf(e), locked: e instanceof RunLockedError }));
}
