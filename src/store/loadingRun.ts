// A new run's status while its model loads. Train creates the run, then loads the model (seconds
// to minutes for a Hub model): a page killed in that time must leave a run that reads
// "interrupted" after reopening, like one killed mid-step, not "paused" as if someone had paused
// it. So the run is created 'running' (its trainer worker takes the run's lock at once: while
// the page lives it shows its own status; once the lock is free, 'running' reads as interrupted,
// see ./liveness.ts). A load that fails stores why; a run closed before it trained is 'paused'.
import type { NewRun, RunStore } from './runStore';
import type { RunRecord } from './schema';
import type { StatusWriter } from './statusWriter';

/** Creates the run of a Train that still has its model to load: stored 'running' (see the file comment). */
export function createLoadingRun(store: Pick<RunStore, 'createRun'>, spec: Omit<NewRun, 'status'>): Promise<RunRecord> {
  return store.createRun({ ...spec, status: 'running' });
}

/** Stores why the model of a run created by createLoadingRun did not load: cancelled (stopped) or failed, with the reason. */
export function saveLoadFailure(statuses: Pick<StatusWriter, 'save'>, runId: string, message: string, cancelled: boolean): void {
  statuses.save(runId, cancelled ? 'stopped' : 'failed', cancelled ? `The model download was cancelled before the run trained: ${message}` : message);
}

/** Stores a run created by createLoadingRun that loaded but was closed before it trained as paused (nothing was interrupted). */
export function saveClosedUntrained(statuses: Pick<StatusWriter, 'save'>, runId: string): void {
  statuses.save(runId, 'paused');
}
