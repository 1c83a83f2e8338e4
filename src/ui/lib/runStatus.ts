// What the page says about a saved run's status. A run the page has open shows the page's own
// live status (the worker's status write may lag, or a full disk may have refused it); any other
// run shows its stored status, 'running' with nobody holding its lock being "interrupted"
// (src/store/liveness.ts). The newest interrupted run gets a banner offering Resume.
import type { RunInfo, RunStatus } from '../../store';
import { shownStatus, type ShownStatus } from '../../store/liveness';

/** The page's open run and its live status (the TrainingSession's runId and status). */
export interface LiveRun {
  runId: string | null;
  status: string;
}

/** Session statuses that are also run statuses: 'idle' and 'loading' say nothing about the stored run. */
const LIVE: readonly string[] = ['running', 'paused', 'stopped', 'finished', 'failed'] satisfies RunStatus[];

export function displayStatus(run: Pick<RunInfo, 'id' | 'status'>, held: ReadonlySet<string> | null, live: LiveRun): ShownStatus {
  if (live.runId === run.id && LIVE.includes(live.status)) return live.status as RunStatus;
  return shownStatus(run, held);
}

export interface InterruptedNotice {
  runId: string;
  name: string;
  /** The step that was in progress: the count of committed steps. */
  step: number;
  /** The step Resume starts from (its newest checkpoint's); 0 without a checkpoint. */
  checkpointStep: number;
  hasCheckpoint: boolean;
  /** Committed steps Resume trains again (those after the checkpoint). */
  redo: number;
}

/** The most recently updated interrupted run that was not dismissed, or null. */
export function interruptedNotice(
  runs: readonly RunInfo[],
  held: ReadonlySet<string> | null,
  live: LiveRun,
  dismissed: ReadonlySet<string> = new Set(),
): InterruptedNotice | null {
  const run = runs
    .filter((r) => !dismissed.has(r.id) && displayStatus(r, held, live) === 'interrupted')
    .reduce<RunInfo | null>((newest, r) => (newest === null || r.updated > newest.updated ? r : newest), null);
  if (!run) return null;
  const step = run.lastStep === null ? 0 : run.lastStep + 1;
  // A checkpoint stored with step s holds the state after step s: Resume starts at s + 1.
  const checkpointStep = run.lastCheckpointStep === null ? 0 : run.lastCheckpointStep + 1;
  return { runId: run.id, name: run.name, step, checkpointStep, hasCheckpoint: run.lastCheckpointStep !== null, redo: Math.max(0, step - checkpointStep) };
}

const steps = (n: number) => (n === 1 ? '1 step' : `${n} steps`);

/** "Your run "X" was interrupted at step 5 (last checkpoint 4: resuming redoes 1 step)." */
export function noticeText(n: InterruptedNotice): string {
  const redo = n.redo === 0 ? 'resuming loses nothing' : `resuming redoes ${steps(n.redo)}`;
  const from = n.hasCheckpoint ? `last checkpoint ${n.checkpointStep}: ${redo}` : `no checkpoint yet: resuming starts again from step 0${n.redo ? ` and redoes ${steps(n.redo)}` : ''}`;
  return `Your run "${n.name}" was interrupted at step ${n.step} (${from}).`;
}
