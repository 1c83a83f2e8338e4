// Batched KV-cache sampling on the GPU (tiny random GPT-2 and Llama from test/golden, both also
// with trained PEFT adapters, and a tiny Qwen3 with q/k norm from test/fixtures/hub): greedy
// decoding against full forward passes, seeds, the prefill against the training forward bit
// for bit, and every buffer sampling makes against the memory estimate.
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

  it('reports progress after each submission from the ids it reads back anyway (no extra work)', async () => {
    const cfg = { max_completion_length: 9, temperature: 1, top_k: 0, top_p: 1, seed: 99 };
    const p = await harness.runModule(CASES, 'progressChunks', { model, prompts: PROMPTS, cfg, eos: -1 });
    expect(p.withProgress).toEqual(p.plain);
    // Prefill (1 token), then chunks of 5: 6, 9.
    expect(p.chunks.map((c: { steps: number }) => c.steps)).toEqual([1, 6, 9]);
    expect(p.chunks.every((c: { max: number }) => c.max === 9)).toBe(true);
    for (const c of p.chunks) c.partial.forEach((ids: number[], i: number) => expect(ids).toEqual(p.completions[i].slice(0, c.steps)));
    expect(p.chunks.at(-1).partial).toEqual(p.completions);
  });

  it('repetition_penalty and min_p follow the float64 twin step by step, seen ids kept on the GPU', async () => {
    for (const cfg of [
      { max_completion_length: 6, temperature: 0, top_k: 0, top_p: 1, repetition_penalty: 3, min_p: null, seed: 3 },
      { max_completion_length: 6, temperature: 0.8, top_k: 0, top_p: 1, repetition_penalty: 1.6, min_p: 0.05, seed: 77 },
    ]) {
      const r = await harness.runModule(CASES, 'penalisedParity', { model, prompts: PROMPTS, cfg });
      expect(r.steps).toHaveLength(18);
      let mismatches = 0;
      for (const [i, s] of r.steps.entries()) {
        if (s.kernel !== s.twin) {
          // Only where the full forward's logits and the cache's differ in rounding at an edge.
          mismatches++;
          expect(s.margin, `step ${i}: kernel ${s.kernel} vs twin ${s.twin}`).toBeLessThan(1e-3);
          continue;
        }
        if (cfg.temperature > 0) expect(Math.abs(s.kernelLp - s.twinLp), `step ${i} log-prob`).toBeLessThan(1e-3);
      }
      expect(mismatches).toBeLessThanOrEqual(1);
      // The penalty decided some tokens, so this test sees it.
      expect(r.steps.filter((s: { twin: number; unpenalised: number }) => s.twin !== s.unpenalised).length, JSON.stringify(cfg)).toBeGreaterThan(0);
    }
  });
});

describe.each(['gpt2-tiny', 'llama-tiny', 'lora-gpt2-tiny', 'lora-llama-tiny', 'qwen3-tiny'])('prefill on %s', (model) => {
  it('gives the training forward’s logits (last or every position) and keys/values bit for bit', async () => {
    // 3 padded rows of 7 (21 rows: the head kernel of 21 rows, blocked_ragged on a software
    // adapter, tiled on a GPU, for prefill's 3 last rows too) and one row of 4 (the small-M kernel).
    for (const prompts of [PROMPTS, [[4, 1, 6, 2]]]) {
      const r = await harness.runModule(CASES, 'prefillVsForward', { model, prompts });
      expect(r.rows).toBe(prompts.length);
      expect(r.finiteLogits).toBe(true);
      expect(r.logitMismatches).toBe(0);
      expect(r.cacheNonZero).toBeGreaterThan(0);
      expect(r.cacheMismatches).toBe(0);
      expect(r.allPositionMismatches).toBe(0);
      expect(r.allPositionBuffers).toBe(r.estimatedAllPositionBuffers);
      expect(r.allPositionBytes).toBe(r.estimatedAllPositionBytes);
    }
  });
});

describe('sampling memory against the estimate', () => {
  it.each(['llama-tiny', 'lora-gpt2-tiny', 'qwen3-tiny'])('%s: every buffer generate() creates, and the prefill submission', async (model) => {
    // 8 decode steps in chunks of 3 (prefill, then 3 + 3 + 1 steps): chunks of different sizes.
    const r = await harness.runModule(CASES, 'samplingMemory', { model, prompts: PROMPTS, steps: 8, stepsPerSubmit: 3 });
    expect(r.prefillBuffers).toBe(r.estimatedPrefillBuffers);
    expect(r.prefillBytes).toBe(r.estimatedPrefillBytes);
    expect(r.createdBuffers).toBe(r.estimatedBuffers);
    expect(r.createdBytes).toBe(r.estimatedBytes);
  });
});
