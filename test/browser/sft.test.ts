// Learning test on the CPU/SwiftShader path: SFT of a fresh tiny byte-level GPT-2 (two layers,
// width 32) on four fixed prompt → completion pairs. Stated margin: after 20 AdamW steps at
// lr 2e-2 the completion loss is below 40% of the first step's (which starts near ln 259 ≈ 5.6;
// measured: 5.56 → 1.41 at step 20, 0.96 at step 25).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('SFT on the GPU', () => {
  it('drives the completion loss down, one submission per step', { timeout: 300_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/sft.ts', 'sftLearning', { steps: 20, learningRate: 2e-2 });
    const losses = r.steps.map((s: { loss: number }) => s.loss);
    expect(losses[0]).toBeGreaterThan(4.5);
    expect(losses[0]).toBeLessThan(6.5);
    expect(losses.at(-1)).toBeLessThan(0.4 * losses[0]);
    for (const s of r.steps) {
      expect(s.submits).toBe(1);
      expect(s.skipped).toBe(false);
      expect(Number.isFinite(s.gradNorm)).toBe(true);
    }
  });

  it('skips the update when the loss is NaN, leaving every weight bit-identical', async () => {
    const r = await harness.runModule('/test/harness/cases/sft.ts', 'nanSkips', {});
    expect(r.skipped).toBe(true);
    expect(Number.isNaN(r.loss)).toBe(true);
    expect(r.step).toBe(0);
    expect(r.changed).toBe(0);
  });

  it('resumes from a checkpoint (HF weights + AdamW moments + step) bit for bit', async () => {
    const r = await harness.runModule('/test/harness/cases/sft.ts', 'resumeExact', {});
    expect(r.files).toEqual(['config.json', 'model.safetensors', 'optimizer.safetensors', 'trainer_state.json']);
    expect(r.step).toBe(2);
    expect(r.lossAgain).toBe(r.loss);
    expect(r.gradNormAgain).toBe(r.gradNorm);
    expect(r.maxWeightDiff).toBe(0);
  });
});
