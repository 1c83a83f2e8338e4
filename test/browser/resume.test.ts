// Crash safety: kill the trainer worker mid-run, reopen the run in a new worker, and it goes on
// from its last checkpoint with the same weights and every committed step's rollouts kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('trainer worker + IndexedDB', () => {
  it('resumes a killed run at its last checkpoint with identical weights and no lost rollouts', { timeout: 600_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/resume.ts', 'killAndResume', {});
    // Training moved the weights between the two checkpoints, so equal digests mean something.
    expect(r.checkpointDigest).not.toBe(r.firstDigest);
    expect(r.resumedStep).toBeGreaterThanOrEqual(2);
    // The checkpoint announced at step 2 may have been followed by another before the kill.
    if (r.resumedStep === 2) expect(r.resumedDigest).toBe(r.checkpointDigest);
    // Committed steps survive the kill: one metrics record and 8 rollouts per committed step.
    expect(r.beforeFinish.metrics).toBeGreaterThanOrEqual(r.resumedStep);
    expect(r.beforeFinish.rollouts).toBe(8 * r.beforeFinish.metrics);
    expect(r.after.metrics).toEqual([0, 1, 2]);
    expect(r.after.rollouts).toBe(24);
    expect(r.status).toBe('finished');
    expect(r.lastStep).toBe(2);
  });

  it('the same for a LoRA run: the adapter is checkpointed, resumed and exported in PEFT format', { timeout: 600_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/resume.ts', 'killAndResume', { lora: true });
    // Trainable = the adapters only (on this 32-wide fixture, rank-4 adapters on every projection are about as big as the base).
    expect(r.trainableParameters).toBeGreaterThan(0);
    expect(r.trainableParameters).toBeLessThan(r.parameters);
    expect(r.checkpointDigest).not.toBe(r.firstDigest);
    if (r.resumedStep === 2) expect(r.resumedDigest).toBe(r.checkpointDigest);
    expect(r.after.metrics).toEqual([0, 1, 2]);
    expect(r.status).toBe('finished');
    // beta > 0 under LoRA: the KL to the adapters-off base is reported, and moves off 0.
    expect(r.metricsKl.every((kl: number | null) => kl !== null && Number.isFinite(kl))).toBe(true);
    expect(r.adapterConfig).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, lora_dropout: 0.1 });
  });
});
