// Parts of the app's real-model features checked in a page on their own (test/harness/cases/
// uiHub.ts): the memory check (debounced, newest estimate wins, which failures block Train)
// with a scripted estimator, and the download panel on progress states a fast local download
// passes too quickly to see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

const CASES = '/test/harness/cases/uiHub.ts';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('memory check', () => {
  it('estimates once per pause in editing, keeps the newest reply, and blocks only on "does not fit" or "cannot run"', async () => {
    const r = await harness.runModule(CASES, 'memoryCheckRules', null);
    expect(r.waitingState).toBe('waiting');
    expect(r.debounced).toEqual({ calls: ['c'], total: 3, current: true, staleForB: false });
    expect(r.repeatCalls).toBe(1);
    expect(r.newestWins).toEqual({ calls: ['slow', 'fast'], total: 20, current: true });
    expect(r.big).toEqual({ blocker: 'needs 5000 bytes', otherKey: null });
    expect(r.context).toEqual({ state: 'failed', error: "prompts exceed this model's context", blocker: "prompts exceed this model's context" });
    expect(r.offline).toEqual({ state: 'failed', error: 'config.json could not be fetched', blocker: null });
    expect(r.idle).toEqual({ state: 'idle', reply: null, blocker: null });
    expect(harness.pageErrors).toEqual([]);
  });
});

describe('download panel', () => {
  it('shows an unknown total, a file from the cache, speed and time left, then what came from where', async () => {
    const r = await harness.runModule(CASES, 'downloadPanelStates', null);
    expect(r.before.shown).toBe(false);
    expect(r.totalUnknown).toMatchObject({ heading: 'Downloading the model', valuenow: null, cancel: true });
    expect(r.totalUnknown.valuetext).toBe('700 B so far, total size not known yet');
    expect(r.fromCache).toMatchObject({ file: "tokenizer.json from this browser's cache", fromCache: true });
    expect(r.downloading).toMatchObject({ valuenow: '25', valuetext: '25%: 50.0 MiB of 200 MiB', fromCache: false, file: 'model.safetensors' });
    expect(r.downloading.amount).toBe('50.0 MiB of 200 MiB (25%) · file 4 of 4 · 2.00 MiB/s · 1 min 30 s left');
    expect(r.done).toMatchObject({ heading: 'Model files ready', valuenow: '100', cancel: false, file: null });
    expect(r.done.summary).toBe("1 file downloaded, 1 from this browser's cache; 200 MiB in all.");
    expect(harness.pageErrors).toEqual([]);
  });
});
