// Whole-model parity with PyTorch (scripts/golden/make_golden.py, float64): tiny GPT-2 and tiny
// Llama (GQA, RoPE, untied head) on a left-padded batch. Logits, loss, every parameter
// gradient, the clipped grad norm and the parameters after one AdamW step.
// Tolerances (f32 engine vs f64 reference): logits and loss 1e-4 abs; gradients 2e-5 abs +
// 1e-3 of the tensor's largest value; AdamW parameters 1e-5 abs (lr 1e-2 moves them ~1e-2),
// left out where |gradient| <= 1e-6 (the update's direction is rounding noise there).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe.each(['gpt2-tiny', 'llama-tiny'])('%s against PyTorch', (model) => {
  it('matches logits, loss, all gradients and one AdamW step, in one submission', async () => {
    const r = await harness.runModule('/test/harness/cases/model.ts', 'goldenStep', { model });
    expect(r.submits).toBe(1);
    expect(Math.abs(r.loss - r.goldenLoss)).toBeLessThan(1e-4);
    expect(Math.abs(r.gradNorm - r.goldenGradNorm) / r.goldenGradNorm).toBeLessThan(1e-4);
    expect(r.tensors).toBeGreaterThan(10);
    // Entries whose PyTorch gradient is ~0 are skipped in the AdamW comparison: few of them.
    expect(r.noiseEntries).toBeLessThan(0.02 * r.values);
    for (const e of r.errors as { name: string; maxAbsError: number; maxAbsExpected: number }[]) {
      const tol = e.name === 'logits' ? 1e-4 : e.name.startsWith('grad.') ? 2e-5 + 1e-3 * e.maxAbsExpected : 1e-5;
      expect(e.maxAbsError, `${e.name} (largest value ${e.maxAbsExpected})`).toBeLessThan(tol);
    }
  });
});
