// What the run controls' status line says about the page's open run, and which status a trainer
// event leaves the page in. A run that ended because storage was full did not fail: its stored
// status is 'stopped' with the reason (src/store/statusWriter.ts), every committed step is whole,
// and it resumes once space is freed; the open tab says the same, not "The run failed.".
import { isStorageFullMessage } from '../../store/errors';
import type { Stage } from '../../rl/grpoStep';

export type SessionStatus = 'idle' | 'loading' | 'running' | 'paused' | 'stopped' | 'finished' | 'failed';

/** The page's status after the trainer reported `status` (with `message` for a failure): a full storage stops the run. */
export function liveStatus(status: SessionStatus, message?: string | null): SessionStatus {
  return status === 'failed' && isStorageFullMessage(message) ? 'stopped' : status;
}

/** Whether the open run was stopped by a full storage (its reason is the session's error). */
export function stoppedByFullStorage(status: SessionStatus, error: string | null): boolean {
  return status === 'stopped' && isStorageFullMessage(error);
}

/** What the status line reads from (the TrainingSession's fields). */
export interface StatusLineState {
  status: SessionStatus;
  pending: 'pause' | 'stop' | 'step' | null;
  held: boolean;
  stage: { step: number; stage: Stage } | null;
  /** The step numbers shown (stored and trained), in order. */
  steps: readonly number[];
  /** The interrupted-run banner's note, while it shows. */
  interrupted: string | null;
  /** Why the run failed or stopped by itself. */
  error: string | null;
}

export const STORAGE_FULL_LINE =
  'Stopped: storage is full, so the step in progress could not be saved. Every step committed before it is saved whole. ' +
  'Free space (prune old rollouts or checkpoints with “Free space…”), then resume: it goes on from the last checkpoint.';

export function statusLine(s: StatusLineState): string {
  switch (s.status) {
    case 'idle':
      return s.interrupted ? `Ready. ${s.interrupted} Resume it from the banner above, or train a new run.` : 'Ready.';
    case 'loading':
      return 'Loading the model onto the GPU…';
    case 'running':
      // A request the trainer took: said at once, carried out when the step allows.
      if (s.pending === 'stop') return 'Stopping: abandoning the step in progress…';
      if (s.pending === 'pause') return s.stage ? `Pausing after this step (step ${s.stage.step})…` : 'Pausing after this step…';
      if (s.held) return 'Holding the step (slow motion).';
      return s.pending === 'step' ? 'Running one step…' : 'Training…';
    case 'paused':
      return s.steps.length ? `Paused after step ${s.steps.at(-1)}.` : 'Loaded; press Train or Step.';
    case 'stopped':
      return stoppedByFullStorage(s.status, s.error) ? STORAGE_FULL_LINE : 'Stopped. Train starts a new run.';
    case 'finished':
      return `Finished: ${s.steps.length} steps. Train starts a new run.`;
    case 'failed':
      return 'The run failed.';
  }
}
