// Batched KV-cache sampling on the GPU (tiny random GPT-2 and Llama from test/golden).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/generate.ts';
// Prompts of different lengths, so the batch is left-padded.
const PROMPTS = [[5, 9, 2, 40, 17], [3], [8, 8, 1, 30, 22, 4, 11]];

describe.each(['gpt2-tiny', 'llama-tiny'])('generate on %s', (model) => {
  it('greedy decoding with the KV cache equals argmax of full forward passes', async () => {
    const r = await harness.runModule(CASES, 'greedyParity', { model, prompts: PROMPTS, steps: 6 });
    expect(r.completions).toEqual(r.reference);
    expect(r.truncated).toEqual([true, true, true]);
    // Prefill + 6 steps in chunks of 3: 1 + 2 submissions, plus the final read.
    expect(r.submits).toBe(4);
  });

  it('is reproducible for a seed, whatever the chunking, and stops at EOS', async () => {
    const cfg = { max_completion_length: 9, temperature: 1, top_k: 0, top_p: 1, seed: 1234 };
    const r = await harness.runModule(CASES, 'seeded', { model, prompts: PROMPTS, cfg, eos: 7 });
    expect(r.b.completions).toEqual(r.a.completions);
    expect(r.b.logprobs).toEqual(r.a.logprobs);
    expect(r.c.completions).not.toEqual(r.a.completions);
    r.a.completions.forEach((seq: number[], i: number) => {
      const eos = seq.indexOf(7);
      if (eos >= 0) {
        expect(eos, 'the completion ends at its first EOS').toBe(seq.length - 1);
        expect(r.a.truncated[i]).toBe(false);
      } else {
        expect(seq).toHaveLength(9);
        expect(r.a.truncated[i]).toBe(true);
      }
    });
    for (const lps of r.a.logprobs) for (const lp of lps) expect(lp).toBeLessThanOrEqual(0);
  });
});
