// A new run's status while its model loads. Train creates the run, then loads the model (seconds
// to minutes for a Hub model): a page killed in that time must leave a run that reads
// "interrupted" after reopening, like one killed mid-step, not "paused" as if someone had paused
// it. So the run is created 'running', its lock taken before it exists (while the page lives,
// the page shows its own status; once the lock is free, 'running' reads as interrupted, see
// ./liveness.ts). A load that fails stores why; a run closed before it trained is 'paused'.
import type { NewRun, RunStore } from './runStore';
import type { RunRecord } from './schema';
import type { StatusWriter } from './statusWriter';

/**
 * Creates the run of a Train that still has its model to load: stored 'running' (see the file
 * comment). `lock` takes the run's lock first, under the id the run will have: a page listing the
 * runs never sees it 'running' without its lock (it would read "interrupted" while it loads).
 */
export async function createLoadingRun(store: Pick<RunStore, 'createRun'>, spec: Omit<NewRun, 'status' | 'id'>, lock: (id: string) => Promise<void>): Promise<RunRecord> {
  const id = newRunId();
  await lock(id);
  return store.createRun({ ...spec, id, status: 'running' });
}

function newRunId(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  return Array.from(c.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Stores why the model of a run created by createLoadingRun did not load: cancelled (stopped) or failed, with the reason. */
export function saveLoadFailure(statuses: Pick<StatusWriter, 'save'>, runId: string, message: string, cancelled: boolean): void {
  statuses.save(runId, cancelled ? 'stopped' : 'failed', cancelled ? `The model download was cancelled before the run trained: ${message}` : message);
}

/** Stores a run created by createLoadingRun that loaded but was closed before it trained as paused (nothing was interrupted). */
export function saveClosedUntrained(statuses: Pick<StatusWriter, 'save'>, runId: string): void {
  statuses.save(runId, 'paused');
}
