// The kill/reload soak, short (the full one is `node scripts/soak.mjs --cycles 20`): the tiny
// fixture model trains in the app on one browser profile; the tab is closed while the trainer
// worker writes a checkpoint (its transaction held open), then the run is resumed and the whole
// browser is SIGKILLed right after the resumed run's first commit; after each reopen the store is
// checked raw (and the page must say "interrupted"). Nothing may be lost, duplicated or fail to
// resume. (The full suite also resumes after its last cycle; here the second cycle's commit after
// a resume shows that, and skipping it saves a model load: each cycle reopens the app.)
import { describe, expect, it } from 'vitest';
import { runSoak, soakLine } from '../../scripts/soak/runSoak.mjs';

describe('kill/reload soak', () => {
  it('a tab closed mid-checkpoint-write and a browser killed after a commit: nothing lost or duplicated, every resume works', async () => {
    const lines: string[] = [];
    const totals = await runSoak({
      schedule: [
        { method: 'close', moment: 'checkpoint', delayMs: 0 },
        { method: 'kill', moment: 'commit', delayMs: 0 },
      ],
      log: (line) => lines.push(line),
      timeoutScale: 2,
      finalResume: false,
    });
    const detail = `${soakLine(totals)}\n${lines.join('\n')}`;
    expect(totals.cycles, detail).toBe(2);
    // The kills landed where they were meant to (not on a page that had failed already).
    expect(totals.details.map((d) => d.kill?.reached), detail).toEqual(['checkpoint', 'commit', undefined]);
    expect(totals.stepsLost, detail).toBe(0);
    expect(totals.stepsDuplicated, detail).toBe(0);
    expect(totals.resumeErrors, detail).toBe(0);
    expect(totals.storeProblems, detail).toBe(0);
    // The checkpoint write that was killed was rolled back whole: step 0 stayed uncommitted (no
    // metrics, rollouts or checkpoint); the resumed run committed it, with its checkpoint.
    expect(totals.details[1].run, detail).toMatchObject({ status: 'running', lastStep: null, lastCheckpointStep: null });
    expect(totals.details[2].run, detail).toMatchObject({ status: 'running' });
    expect(totals.details[2].steps, detail).toBeGreaterThanOrEqual(1);
    expect(totals.details[2].run!.lastCheckpointStep, detail).toBe(totals.details[2].run!.lastStep);
  }, 600_000);
});
