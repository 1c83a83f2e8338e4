// Whole-model NaN guard: one weight of a tiny model set to NaN must make the SFT update step
// report a NaN loss and skip (every weight bit-identical, AdamW moments untouched, the step
// counter not advanced), and must make sampling flag its tokens (NO_TOKEN, NaN log-prob)
// rather than return plausible ones. Before the NaN audit, on SwiftShader, the tied-embedding
// row the batch never reads gave a finite loss of 89.5 (log-softmax skipped the NaN logit and
// log(NaN) came out as 89), and sampling returned token 0 (greedy argmax and the sampler's
// thresholds skip NaN logits). The attention-projection and norm-weight cases guard the
// softmax paths whose NaN handling used to rest on max() and exp(NaN), which differ between
// GPUs (SwiftShader: max(x, NaN) = x, exp(NaN) = +inf).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { NO_TOKEN } from '../../src/ops/sample.reference';

const CASES = '/test/harness/cases/nanGuard.ts';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

interface StepReport {
  skipped: boolean;
  loss: number;
  gradNorm: number;
  step: number;
  changedWeights: number;
  nonZeroMoments: number;
}

function sftStep(architecture: 'gpt2' | 'llama', poisoned: { weight: string; index: number } | null): Promise<StepReport> {
  return harness.runModule(CASES, 'sftStep', { architecture, poisoned });
}

function expectSkipped(r: StepReport): void {
  expect(Number.isNaN(r.loss), `loss ${r.loss}`).toBe(true);
  expect(Number.isFinite(r.gradNorm), `grad norm ${r.gradNorm}`).toBe(false);
  expect(r.skipped).toBe(true);
  expect(r.step).toBe(0);
  expect(r.changedWeights).toBe(0);
  expect(r.nonZeroMoments).toBe(0);
}

describe('one NaN weight: the SFT step reports NaN and skips, leaving every weight bit-identical', () => {
  it('control: the same clean step is finite and changes the weights (the checks below can fail)', async () => {
    const r = await sftStep('gpt2', null);
    expect(Number.isFinite(r.loss)).toBe(true);
    expect(r.skipped).toBe(false);
    expect(r.step).toBe(1);
    expect(r.changedWeights).toBeGreaterThan(1000);
    expect(r.nonZeroMoments).toBeGreaterThan(1000);
  });

  // GPT-2 (LayerNorm, GELU, learned positions, tied head) and Llama (RMSNorm, SwiGLU, RoPE, GQA).
  const cases: ['gpt2' | 'llama', string, number][] = [
    // Token 200 (a non-ASCII byte) never occurs in the batch: only its logit is NaN.
    ['gpt2', 'transformer.wte.weight', 200 * 32 + 5],
    ['gpt2', 'transformer.h.0.ln_1.weight', 7],
    ['gpt2', 'transformer.h.1.attn.k.weight', 40],
    ['llama', 'model.layers.0.self_attn.k_proj.weight', 9],
    ['llama', 'model.layers.1.input_layernorm.weight', 3],
    ['llama', 'model.norm.weight', 0],
  ];
  for (const [architecture, weight, index] of cases) {
    it(`${architecture}: ${weight}[${index}] = NaN`, async () => {
      expectSkipped(await sftStep(architecture, { weight, index }));
    });
  }
});

describe('one NaN weight: sampling flags its tokens instead of returning plausible ones', () => {
  for (const temperature of [0, 1]) {
    it(`temperature ${temperature}: the step that first sees the NaN and every later one give NO_TOKEN with a NaN log-prob`, async () => {
      const r = await harness.runModule(CASES, 'generateAfterNaN', { temperature, steps: 4 });
      for (let b = 0; b < 2; b++) {
        const ids: number[] = r.completions[b];
        const lps: number[] = r.logprobs[b];
        expect(ids).toHaveLength(4);
        // Step 0 comes from the clean prompt.
        expect(ids[0]).toBeLessThan(259);
        expect(Number.isFinite(lps[0])).toBe(true);
        expect(ids.slice(1)).toEqual([NO_TOKEN, NO_TOKEN, NO_TOKEN]);
        expect(lps.slice(1).every((x) => Number.isNaN(x))).toBe(true);
      }
    });
  }
});

describe('one NaN weight: a GRPO step', () => {
  it('fails with a message naming the non-finite output instead of scoring garbage', async () => {
    const r = await harness.runModule(CASES, 'grpoAfterNaN', {});
    expect(r.error).toMatch(/the model's output is not finite \(NaN or Inf logits while sampling rollout \d+\)/);
  });
});
