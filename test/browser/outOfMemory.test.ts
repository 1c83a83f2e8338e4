// An allocation that does not fit on the GPU, the device still working (issue 15): the run stops
// with a message that names the buffer and says what to do, the committed step and the last
// checkpoint are intact, and Resume trains on. The trainer worker's test hook refuses the next
// allocation as a full GPU does (WebGPU's 'out-of-memory' error scope), since SwiftShader rarely runs out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('trainer worker: GPU out of memory', () => {
  it('a refused allocation fails the run naming the buffer; the checkpoint is intact; Resume finishes', { timeout: 600_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/outOfMemory.ts', 'refuseMidRun', {});
    expect(r.hooked).toBe(true);
    expect(r.before).toMatchObject({ status: 'paused', steps: [0], checkpoint: { step: 0, globalStep: 1 } });
    expect(r.ended?.status).toBe('failed');
    expect(r.ended.message).toMatch(/^The GPU ran out of memory: the buffer "[^"]+" \((\d+\.\d (KiB|MiB)|\d+ bytes)\) did not fit during step 1, so the run stopped\./);
    expect(r.ended.message).toContain('the last checkpoint (step 1) is intact');
    expect(r.ended.message).toContain('then press Resume');
    // Stored: failed with that reason, step 0 and its checkpoint untouched.
    expect(r.afterFailure).toEqual({ ...r.before, status: 'failed', error: r.ended.message });
    // Resume in the same worker (the device was never lost) starts at the checkpoint and finishes.
    expect(r.resumed.step).toBe(1);
    expect(r.resumed.end).toMatchObject({ status: 'finished' });
    expect(r.resumed.stored).toMatchObject({ status: 'finished', error: null, steps: [0, 1], checkpoint: { step: 1, globalStep: 2 } });
  });
});
