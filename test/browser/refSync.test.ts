// TRL's sync_ref_model (TR-DPO): π_ref ← α π_θ + (1 − α) π_ref after every ref_model_sync_steps
// optimizer steps, on the GPU; the drifted reference is saved with checkpoints and restored on resume.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('sync_ref_model', () => {
  it('mixes the policy into the reference at step 2, not step 1, checkpoints it, and resumes with it', async () => {
    const r = await harness.runModule('/test/harness/cases/refSync.ts', 'syncAndResume', {});
    // Step 1: not a sync point, the reference is still the starting model.
    expect(r.afterStep1.moved).toBe(0);
    expect(r.checkpoint1HasRef).toBe(false);
    // Step 2: ref = 0.6 policy + 0.4 start, to f32 rounding; the policy did move.
    expect(r.policyMoved).toBeGreaterThan(1e-4);
    expect(r.afterStep2.moved).toBeGreaterThan(1e-4);
    expect(r.afterStep2.mixError).toBeLessThan(1e-6);
    expect(r.checkpoint2HasRef).toBe(true);
    console.log('sync_ref_model case seconds', r.seconds);
    expect(r.restored).toBe(0);
    expect(r.missing).toMatch(/has no ref_model\.safetensors, but sync_ref_model had already mixed/);
  }, 240_000);
});
