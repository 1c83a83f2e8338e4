// What the runs list and the top of the page say about a saved run's status: the page's live
// status for the run it has open, "interrupted" for a run stored as running that nobody holds,
// and the banner for the newest interrupted run.
import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../../src/store/schema';
import type { RunInfo, RunStatus } from '../../../src/store';
import { displayStatus, interruptedNotice, noticeText } from '../../../src/ui/lib/runStatus';

function run(id: string, status: RunStatus, over: Partial<RunInfo> = {}): RunInfo {
  return {
    id,
    name: `run ${id}`,
    created: 1,
    updated: 1,
    status,
    experiment: {} as RunInfo['experiment'],
    lastStep: 4,
    lastCheckpointStep: 3,
    checkpoints: [],
    usage: emptyUsage(),
    bytes: 0,
    ...over,
  };
}
const NOBODY = { runId: null, status: 'idle' };

describe('displayStatus', () => {
  it('a stored running run that nobody holds is interrupted; held, it is running', () => {
    expect(displayStatus(run('a', 'running'), new Set(), NOBODY)).toBe('interrupted');
    expect(displayStatus(run('a', 'running'), new Set(['a']), NOBODY)).toBe('running');
    expect(displayStatus(run('a', 'paused'), new Set(), NOBODY)).toBe('paused');
  });

  it("the page's open run shows its live status, even when the stored one lags or was refused", () => {
    // A full disk refused the 'failed' write: the store still says running, the page knows better.
    expect(displayStatus(run('a', 'running'), new Set(['a']), { runId: 'a', status: 'failed' })).toBe('failed');
    expect(displayStatus(run('a', 'paused'), new Set(['a']), { runId: 'a', status: 'running' })).toBe('running');
    // While it (re)opens, the page has no status of its own for it.
    expect(displayStatus(run('a', 'running'), new Set(), { runId: 'a', status: 'loading' })).toBe('interrupted');
    // Another run's live status says nothing about this one.
    expect(displayStatus(run('a', 'running'), new Set(), { runId: 'b', status: 'running' })).toBe('interrupted');
  });
});

describe('interruptedNotice', () => {
  it('picks the most recently updated interrupted run, skipping dismissed and live ones', () => {
    const runs = [run('old', 'running', { updated: 5 }), run('new', 'running', { updated: 9 }), run('done', 'finished', { updated: 20 })];
    expect(interruptedNotice(runs, new Set(), NOBODY)?.runId).toBe('new');
    expect(interruptedNotice(runs, new Set(), NOBODY, new Set(['new']))?.runId).toBe('old');
    expect(interruptedNotice(runs, new Set(['new']), NOBODY)?.runId).toBe('old');
    expect(interruptedNotice(runs, new Set(['new', 'old']), NOBODY)).toBeNull();
    expect(interruptedNotice(runs, null, NOBODY)).toBeNull();
  });

  it('counts the interrupted step, where Resume starts and the steps it redoes', () => {
    // Steps 0..4 committed, checkpoint stored with step 2 (the state after it): Resume starts at 3.
    const n = interruptedNotice([run('a', 'running', { name: 'tea', lastStep: 4, lastCheckpointStep: 2 })], new Set(), NOBODY)!;
    expect(n).toMatchObject({ step: 5, checkpointStep: 3, redo: 2, hasCheckpoint: true });
    expect(noticeText(n)).toBe('Your run "tea" was interrupted at step 5 (last checkpoint 3: resuming redoes 2 steps).');
  });

  it('says so when nothing is redone, and when there is no checkpoint', () => {
    const none = interruptedNotice([run('a', 'running', { name: 'x', lastStep: 2, lastCheckpointStep: 2 })], new Set(), NOBODY)!;
    expect(noticeText(none)).toBe('Your run "x" was interrupted at step 3 (last checkpoint 3: resuming loses nothing).');
    const bare = interruptedNotice([run('a', 'running', { name: 'y', lastStep: 0, lastCheckpointStep: null })], new Set(), NOBODY)!;
    expect(noticeText(bare)).toBe('Your run "y" was interrupted at step 1 (no checkpoint yet: resuming starts again from step 0 and redoes 1 step).');
    const fresh = interruptedNotice([run('a', 'running', { name: 'z', lastStep: null, lastCheckpointStep: null })], new Set(), NOBODY)!;
    expect(noticeText(fresh)).toBe('Your run "z" was interrupted at step 0 (no checkpoint yet: resuming starts again from step 0).');
  });
});
