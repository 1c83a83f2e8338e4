// Schema migrations: a version 1 database with data opens as version 2 with every record intact
// (rollouts re-keyed and indexed by [runId, step], sizes computed); a failing upgrade changes
// nothing; a newer database is refused with a clear message.
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/database';
import { MIGRATIONS, type V1Checkpoint, type V1Metrics, type V1Rollout, type V1Run } from '../../../src/store/migrations';
import { DB_VERSION, RunStore } from '../../../src/store';
import { CONFIG, PROMPTS, RUBRIC, checkpoint, metrics, rollouts, weightsHead } from './fixtures';
import { rubricVersion } from '../../../src/rubric/version';

let n = 0;

function v1Run(id: string, lastStep: number | null, lastCheckpointStep: number | null): V1Run {
  return {
    id,
    name: `run ${id}`,
    created: 1,
    updated: 2,
    status: 'paused',
    experiment: { modelId: 'embedded-tiny', prompts: PROMPTS, rubricVersion: 'v', config: CONFIG },
    lastStep,
    lastCheckpointStep,
  };
}

/** A version 1 database as v1 code left it: two runs, one with a replayed step stored twice. */
async function writeV1(name: string): Promise<void> {
  const db = await openDatabase(name, { version: 1 });
  expect(db.version).toBe(1);
  const raw = db as unknown as import('idb').IDBPDatabase<unknown>;
  const version = await rubricVersion(RUBRIC); // not inside the transaction: only IDB awaits keep it alive
  const tx = raw.transaction(['runs', 'rubrics', 'promptSets', 'rollouts', 'metrics', 'checkpoints'], 'readwrite');
  await tx.objectStore('runs').put(v1Run('a', 2, 2));
  await tx.objectStore('runs').put(v1Run('b', 0, null));
  await tx.objectStore('rubrics').put({ version, name: RUBRIC.name, rubric: RUBRIC, created: 1 });
  await tx.objectStore('promptSets').put({ id: 'p', name: 'tea', prompts: PROMPTS, created: 1, updated: 1 });
  const put = (r: V1Rollout) => tx.objectStore('rollouts').put(r);
  for (const s of [0, 1]) for (const r of rollouts(s)) await put({ ...r, runId: 'a' });
  // Step 1 replayed after a resume: v1 appended a second copy of each record.
  for (const r of rollouts(1)) await put({ ...r, runId: 'a', completion: `replayed ${r.group}/${r.index}` });
  for (const r of rollouts(2)) await put({ ...r, runId: 'a' });
  for (const r of rollouts(0, 1)) await put({ ...r, runId: 'b' });
  for (const s of [0, 1, 2]) await tx.objectStore('metrics').put({ runId: 'a', step: s, metrics: metrics(s) } satisfies V1Metrics);
  await tx.objectStore('metrics').put({ runId: 'b', step: 0, metrics: metrics(0) } satisfies V1Metrics);
  for (const s of [1, 2]) await tx.objectStore('checkpoints').put({ runId: 'a', step: s, created: 5, files: checkpoint(s) } satisfies V1Checkpoint);
  await tx.done;
  expect(await raw.count('rollouts')).toBe(4 + 4 + 4 + 4 + 2);
  db.close();
}

describe('migrations', () => {
  it('has one step per version up to DB_VERSION', () => {
    expect(Object.keys(MIGRATIONS).map(Number)).toEqual(Array.from({ length: DB_VERSION }, (_, i) => i + 1));
  });

  it('upgrades a version 1 database with data to version 2, keeping every record', async () => {
    const name = `migrate-${n++}`;
    await writeV1(name);
    const store = await RunStore.open({ name, storage: null });

    const a = (await store.getRun('a'))!;
    expect(a).toMatchObject({ name: 'run a', status: 'paused', lastStep: 2, lastCheckpointStep: 2 });
    expect(a.checkpoints.map((k) => k.step)).toEqual([1, 2]);
    expect(a.usage.rollouts.count).toBe(12); // the replayed copies replaced the originals
    expect(a.usage.metrics.count).toBe(3);
    expect(a.usage.checkpoints.count).toBe(2);
    const b = (await store.getRun('b'))!;
    expect(b.usage.rollouts.count).toBe(2);
    expect(b.checkpoints).toEqual([]);
    expect(b.lastCheckpointStep).toBeNull();

    // Rollouts: by step through the new index, latest copy of a replayed step wins.
    const step1 = await store.rollouts('a', { step: 1 });
    expect(step1.map((r) => r.completion)).toEqual(['replayed 0/0', 'replayed 0/1', 'replayed 1/0', 'replayed 1/1']);
    const step0 = await store.rollouts('a', { step: 0 });
    expect(step0.map(({ runId, bytes, ...r }) => (expect(runId).toBe('a'), expect(bytes).toBeGreaterThan(0), r))).toEqual(rollouts(0));
    const all = await store.rollouts('a');
    expect(a.usage.rollouts.bytes).toBe(all.reduce((s, r) => s + r.bytes, 0));
    expect((await store.rollouts('b')).length).toBe(2);

    expect(await store.metrics('a')).toEqual([metrics(0), metrics(1), metrics(2)]);
    const latest = (await store.latestCheckpoint('a'))!;
    expect(latest.step).toBe(2);
    expect(weightsHead(latest.files)).toEqual(weightsHead(checkpoint(2)));
    expect(latest.files['trainer_state.json']).toBe(checkpoint(2)['trainer_state.json']);
    expect(await store.rubric(await rubricVersion(RUBRIC))).toEqual(RUBRIC);
    expect((await store.promptSet('p'))!.prompts).toEqual(PROMPTS);

    // The migrated run keeps training: step 3 commits and checkpoint pruning uses the manifest.
    const after = await store.commitStep('a', 3, metrics(3), rollouts(3), checkpoint(3), { keepCheckpoints: 2 });
    expect(after.checkpoints.map((k) => k.step)).toEqual([2, 3]);
    expect(after.usage.rollouts.count).toBe(16);
    store.close();

    // The schema itself: rollouts keyed by [runId, step, group, index], indexed by [runId, step].
    const raw = await openDB(name);
    expect(raw.version).toBe(2);
    const rs = raw.transaction('rollouts').store;
    expect(rs.keyPath).toEqual(['runId', 'step', 'group', 'index']);
    expect(Array.from(rs.indexNames)).toEqual(['byRunStep']);
    expect(rs.index('byRunStep').keyPath).toEqual(['runId', 'step']);
    raw.close();
  });

  it('a failing upgrade is rolled back whole and says why', async () => {
    const name = `migrate-bad-${n++}`;
    await writeV1(name);
    // A v1 rollout without a step cannot be re-keyed: the v2 step fails part-way.
    const v1 = await openDB(name, 1);
    await v1.put('rollouts', { ...rollouts(5)[0], runId: 'a', step: undefined });
    v1.close();
    await expect(RunStore.open({ name, storage: null })).rejects.toThrow(/upgrading database "migrate-bad-\d+" from version 1 to 2 failed, nothing was changed: .*/);
    const raw = await openDB(name);
    expect(raw.version).toBe(1);
    expect(Array.from(raw.transaction('rollouts').store.indexNames)).toEqual(['runId']);
    expect(await raw.count('rollouts')).toBe(19);
    expect((await raw.get('runs', 'a')).usage).toBeUndefined();
    raw.close();
  });

  it('refuses a database written by a newer version', async () => {
    const name = `migrate-newer-${n++}`;
    const db = await openDB(name, DB_VERSION + 1, { upgrade: (d) => void d.createObjectStore('future') });
    db.close();
    await expect(RunStore.open({ name, storage: null })).rejects.toThrow(/written by a newer version of this app .* reload the page/);
  });

  it('closes this connection when another tab upgrades, with a clear error afterwards', async () => {
    const name = `migrate-blocking-${n++}`;
    const reasons: string[] = [];
    const store = await RunStore.open({ name, storage: null, onClose: (r) => reasons.push(r) });
    const newer = await openDB(name, DB_VERSION + 1); // would be blocked forever if we kept ours open
    expect(reasons).toEqual([`another tab opened the database at version ${DB_VERSION + 1}`]);
    await expect(store.listRuns()).rejects.toThrow(/run store is closed \(another tab opened the database at version 3\); reload the page/);
    newer.close();
  });
});
