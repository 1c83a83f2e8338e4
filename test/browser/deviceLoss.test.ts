// GPU device loss mid-step: the run stops within seconds saying what happened and what to do,
// every committed step stays stored, and Resume goes on on a new device (issue 17).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

/** Generous for a loaded 2-core machine; without the fix the run never stops (it hung for minutes). */
const STOP_WITHIN_MS = 20_000;

describe('trainer worker: device loss', () => {
  it('a device destroyed mid-step fails the run with the GPU-lost message; Resume trains on on a new device', { timeout: 600_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/deviceLoss.ts', 'loseMidStep', { stopWithinMs: STOP_WITHIN_MS });
    expect(r.destroyed).toBe(true);
    // It stopped (did not stay 'running'), as failed, with the message that says what to do.
    expect(r.ended, `the run still read 'running' ${STOP_WITHIN_MS} ms after the device was destroyed`).not.toBeNull();
    expect(r.ended.status).toBe('failed');
    expect(r.ended.message).toMatch(/^The GPU device was lost \(destroyed\b.*\) during step 1\./);
    expect(r.ended.message).toContain('resume from its last checkpoint (step 1)');
    expect(r.ended.message).toContain('press Resume to continue on a new GPU device');
    // The store kept the committed step and recorded the failure with its reason.
    expect(r.afterLoss).toMatchObject({ status: 'failed', error: r.ended.message, steps: [0], rollouts: 2 });
    // Resume in the same worker gets a new device, starts at the checkpoint and commits step 1.
    expect(r.resumed.step).toBe(1);
    expect(r.resumed.end).toMatchObject({ status: 'finished' });
    expect(r.resumed.stored).toMatchObject({ status: 'finished', error: null, steps: [0, 1], rollouts: 4 });
  });
});
