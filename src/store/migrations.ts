// The schema ladder: migration v runs when a database older than v is opened, in order, inside
// the one versionchange transaction (so an upgrade is all or nothing). Never edit a shipped
// step; add the next one and bump DB_VERSION in ./schema.ts.
//
// v1: runs, rubrics, promptSets, metrics and checkpoints keyed by [runId, step]; rollouts under
//     an auto-increment key with only a 'runId' index, so finding one step meant reading the
//     whole run, and a replayed step was stored twice.
// v2: rollouts keyed by [runId, step, group, index] with a 'byRunStep' index ([runId, step]);
//     a replayed step overwrites itself. Rollout and metrics records carry their approximate
//     size, and each run a `usage` summary and a checkpoint manifest, so listing runs with
//     their sizes and pruning checkpoints need not read any weights.
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { CheckpointFiles } from '../model/checkpoint';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import type { RunExperiment, RunRecord, RunStatus } from './schema';
import { emptyUsage } from './schema';
import { approxBytes } from './size';

export type AnyDatabase = IDBPDatabase<unknown>;
export type UpgradeTransaction = IDBPTransaction<unknown, string[], 'versionchange'>;

/** Version 1 records, as v1 wrote them. */
export interface V1Run {
  id: string;
  name: string;
  created: number;
  updated: number;
  status: RunStatus;
  error?: string;
  experiment: RunExperiment;
  lastStep: number | null;
  lastCheckpointStep: number | null;
}
export interface V1Rollout extends RolloutRecord {
  runId: string;
}
export interface V1Metrics {
  runId: string;
  step: number;
  metrics: StepMetrics;
}
export interface V1Checkpoint {
  runId: string;
  step: number;
  created: number;
  files: CheckpointFiles;
}

type Migration = (db: AnyDatabase, tx: UpgradeTransaction) => Promise<void>;

async function createV1(db: AnyDatabase): Promise<void> {
  db.createObjectStore('runs', { keyPath: 'id' });
  db.createObjectStore('rubrics', { keyPath: 'version' });
  db.createObjectStore('promptSets', { keyPath: 'id' });
  db.createObjectStore('rollouts', { autoIncrement: true }).createIndex('runId', 'runId');
  db.createObjectStore('metrics', { keyPath: ['runId', 'step'] });
  db.createObjectStore('checkpoints', { keyPath: ['runId', 'step'] });
}

async function v1ToV2(db: AnyDatabase, tx: UpgradeTransaction): Promise<void> {
  const usage = new Map<string, ReturnType<typeof emptyUsage>>();
  const usageOf = (runId: string) => {
    let u = usage.get(runId);
    if (!u) usage.set(runId, (u = emptyUsage()));
    return u;
  };

  // Rollouts: re-key. Reading in key order (= write order) makes a replayed step's last copy win.
  const old = (await tx.objectStore('rollouts').getAll()) as V1Rollout[];
  db.deleteObjectStore('rollouts');
  const rollouts = db.createObjectStore('rollouts', { keyPath: ['runId', 'step', 'group', 'index'] });
  rollouts.createIndex('byRunStep', ['runId', 'step']);
  const latest = new Map<string, V1Rollout>();
  for (const r of old) latest.set(JSON.stringify([r.runId, r.step, r.group, r.index]), r);
  for (const r of latest.values()) {
    const bytes = approxBytes(r);
    const u = usageOf(r.runId).rollouts;
    u.count++;
    u.bytes += bytes;
    await rollouts.put({ ...r, bytes });
  }

  for (let c = await tx.objectStore('metrics').openCursor(); c; c = await c.continue()) {
    const m = c.value as V1Metrics;
    const bytes = approxBytes(m.metrics);
    const u = usageOf(m.runId).metrics;
    u.count++;
    u.bytes += bytes;
    await c.update({ ...m, bytes });
  }

  // Checkpoint records keep their v1 shape; the manifest lives in the run.
  const manifests = new Map<string, { step: number; bytes: number }[]>();
  for (let c = await tx.objectStore('checkpoints').openCursor(); c; c = await c.continue()) {
    const k = c.value as V1Checkpoint;
    const bytes = approxBytes(k.files);
    if (!manifests.has(k.runId)) manifests.set(k.runId, []);
    manifests.get(k.runId)!.push({ step: k.step, bytes }); // key order: ascending step per run
    const u = usageOf(k.runId).checkpoints;
    u.count++;
    u.bytes += bytes;
  }

  for (let c = await tx.objectStore('runs').openCursor(); c; c = await c.continue()) {
    const run = c.value as V1Run;
    const checkpoints = manifests.get(run.id) ?? [];
    const next: RunRecord = {
      ...run,
      checkpoints,
      lastCheckpointStep: checkpoints.length ? checkpoints[checkpoints.length - 1].step : null,
      usage: usage.get(run.id) ?? emptyUsage(),
    };
    await c.update(next);
  }
}

/** MIGRATIONS[v] turns a version v-1 database into version v. */
export const MIGRATIONS: Readonly<Record<number, Migration>> = { 1: createV1, 2: v1ToV2 };

/** Runs the steps oldVersion+1 .. newVersion in order. */
export async function migrate(db: AnyDatabase, oldVersion: number, newVersion: number, tx: UpgradeTransaction): Promise<void> {
  for (let v = oldVersion + 1; v <= newVersion; v++) {
    const step = MIGRATIONS[v];
    if (!step) throw new RangeError(`no migration to database version ${v}`);
    await step(db, tx);
  }
}
