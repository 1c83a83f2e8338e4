// What the open tab says about its run. A commit that did not fit in storage stops the run: the
// store keeps it as 'stopped' with the reason (src/store/statusWriter.ts), and the page that trains
// it must say the same thing — what happened, that the committed steps are whole, to free space
// and that Resume goes on — not "The run failed.". Other failures still read as failures.
import { describe, expect, it } from 'vitest';
import { StorageFullError } from '../../../src/store/errors';
import { storedStatus } from '../../../src/store/statusWriter';
import { liveStatus, statusLine, stoppedByFullStorage, type StatusLineState } from '../../../src/ui/lib/statusLine';

const fullMessage = new StorageFullError('saving step 3 of run "demo"', { usage: 1000, quota: 1000 }).message;
const base: StatusLineState = { status: 'idle', pending: null, held: false, stage: null, steps: [], interrupted: null, error: null };

describe('a run stopped by a full storage, in the tab that trains it', () => {
  it('the trainer\'s "failed" with a storage-full message leaves the page "stopped", as the store keeps it', () => {
    expect(liveStatus('failed', fullMessage)).toBe('stopped');
    expect(storedStatus('failed', fullMessage)).toBe('stopped');
    // The worker's message may be prefixed (e.g. by the trainer's "step 3: …").
    expect(liveStatus('failed', `step 3: ${fullMessage}`)).toBe('stopped');
    // Any other failure is one, and other statuses pass through.
    expect(liveStatus('failed', 'GPU device lost')).toBe('failed');
    expect(liveStatus('failed', undefined)).toBe('failed');
    for (const s of ['running', 'paused', 'stopped', 'finished', 'idle'] as const) expect(liveStatus(s, fullMessage)).toBe(s);
  });

  it('the status line says what happened, that the committed steps are whole, to free space and to resume', () => {
    const line = statusLine({ ...base, status: liveStatus('failed', fullMessage), steps: [0, 1, 2], error: fullMessage });
    expect(line).not.toMatch(/failed/i);
    expect(line).toMatch(/^Stopped: storage is full/);
    expect(line).toContain('Every step committed before it is saved whole');
    expect(line).toMatch(/Free space \(prune old rollouts or checkpoints/);
    expect(line).toMatch(/then resume: it goes on from the last checkpoint/);
  });

  it('a stop by the user, and a real failure, still read as such', () => {
    expect(statusLine({ ...base, status: 'stopped' })).toBe('Stopped. Train starts a new run.');
    expect(stoppedByFullStorage('stopped', null)).toBe(false);
    expect(statusLine({ ...base, status: 'failed', error: 'GPU device lost' })).toBe('The run failed.');
    // A storage-full message from a failed open (no run trained) is not a stop by storage.
    expect(stoppedByFullStorage('failed', fullMessage)).toBe(false);
    expect(stoppedByFullStorage('stopped', fullMessage)).toBe(true);
  });

  it('the other statuses read as before', () => {
    expect(statusLine(base)).toBe('Ready.');
    expect(statusLine({ ...base, interrupted: 'Your run "x" was interrupted at step 2.' })).toBe('Ready. Your run "x" was interrupted at step 2. Resume it from the banner above, or train a new run.');
    expect(statusLine({ ...base, status: 'loading' })).toBe('Loading the model onto the GPU…');
    expect(statusLine({ ...base, status: 'running' })).toBe('Training…');
    expect(statusLine({ ...base, status: 'running', pending: 'pause', stage: { step: 4, stage: 'sampled' } })).toBe('Pausing after this step (step 4)…');
    expect(statusLine({ ...base, status: 'running', pending: 'stop' })).toBe('Stopping: abandoning the step in progress…');
    expect(statusLine({ ...base, status: 'running', held: true })).toBe('Holding the step (slow motion).');
    expect(statusLine({ ...base, status: 'running', pending: 'step' })).toBe('Running one step…');
    expect(statusLine({ ...base, status: 'paused' })).toBe('Loaded; press Train or Step.');
    expect(statusLine({ ...base, status: 'paused', steps: [0, 1, 5] })).toBe('Paused after step 5.');
    expect(statusLine({ ...base, status: 'finished', steps: [0, 1] })).toBe('Finished: 2 steps. Train starts a new run.');
  });
});
