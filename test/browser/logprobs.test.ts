// The WGSL log-prob kernel against its float64 twin, run in headless Chromium (WebGPU).
// Tolerances: f32 kernel vs f64 twin. logprob/entropy: atol 2e-5 + rtol 2e-5 for |logits| of
// order 1-10 (2e-3 abs for logits of 1e4, where one f32 ulp is ~1e-3); gradients atol 1e-6.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { logprobsBackwardRef, logprobsForwardRef } from '../../src/ops/logprobs.reference';
import { expectClose } from '../helpers/compare';
import { chunk, normal, randomInts, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const TOL = { atol: 2e-5, rtol: 2e-5 };
const GRAD_TOL = { atol: 1e-6, rtol: 1e-4 };

/** f32-rounded inputs, so kernel and twin see the same numbers. */
function f32(values: number[]): number[] {
  return Array.from(new Float32Array(values));
}

async function compare(logits: number[], tokens: number[], vocab: number, temperature: number, seed: number, withEntropyGrad = true) {
  const rows = tokens.length;
  const rand = rng(seed + 7);
  const gradLogprobs = f32(normal(rand, rows));
  const gradEntropy = withEntropyGrad ? f32(normal(rand, rows)) : undefined;
  const out = await harness.run('logprobs', {
    logits: chunk(logits, vocab),
    tokens,
    temperature,
    grad_logprobs: gradLogprobs,
    ...(gradEntropy ? { grad_entropy: gradEntropy } : {}),
  });
  const problem = { logits, tokens, rows, vocab, temperature };
  const ref = logprobsForwardRef(problem);
  return { out, ref, gradRef: logprobsBackwardRef(problem, gradLogprobs, gradEntropy) };
}

describe('logprobs kernel (WGSL) vs float64 twin', () => {
  it('reports a WebGPU adapter', () => {
    expect(harness.info.features).toBeInstanceOf(Array);
    expect(harness.info.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
  });

  for (const [seed, rows, vocab, temperature] of [
    [1, 5, 2, 1],
    [2, 7, 33, 1],
    [3, 3, 257, 0.7],
    [4, 9, 1000, 1.3],
    [5, 2, 50257, 1],
  ] as const) {
    it(`random logits: seed ${seed}, ${rows} rows x V=${vocab}, temperature ${temperature}`, async () => {
      const rand = rng(seed);
      const logits = f32(normal(rand, rows * vocab, 3));
      const tokens = randomInts(rand, rows, vocab);
      const { out, ref, gradRef } = await compare(logits, tokens, vocab, temperature, seed);
      expectClose(out.logprobs, ref.logprobs, TOL, 'logprobs');
      expectClose(out.entropy, ref.entropy, { atol: 1e-4, rtol: 2e-5 }, 'entropy');
      expectClose(out.grad_logits.flat(), gradRef, GRAD_TOL, 'grad_logits');
    });
  }

  it('Qwen-sized vocabulary V=151936 (workgroup reduction over a long row)', async () => {
    const rand = rng(11);
    const vocab = 151936;
    const logits = f32(normal(rand, 2 * vocab, 4));
    const tokens = [0, vocab - 1];
    const { out, ref, gradRef } = await compare(logits, tokens, vocab, 1, 11);
    expectClose(out.logprobs, ref.logprobs, TOL, 'logprobs');
    expectClose(out.entropy, ref.entropy, { atol: 2e-4, rtol: 2e-5 }, 'entropy');
    expectClose(out.grad_logits.flat(), gradRef, GRAD_TOL, 'grad_logits');
  });

  it('logits of +-1e4 stay finite and accurate', async () => {
    const vocab = 64;
    const rand = rng(12);
    const logits = f32(normal(rand, 3 * vocab, 1).map((x, i) => (i % 3 === 0 ? 1e4 + x : i % 3 === 1 ? -1e4 + x : x)));
    const tokens = [0, 1, 2];
    const { out, ref, gradRef } = await compare(logits, tokens, vocab, 1, 12);
    expectClose(out.logprobs, ref.logprobs, { atol: 2e-3, rtol: 1e-6 }, 'logprobs');
    expectClose(out.entropy, ref.entropy, { atol: 2e-3, rtol: 1e-6 }, 'entropy');
    expectClose(out.grad_logits.flat(), gradRef, { atol: 1e-5, rtol: 1e-3 }, 'grad_logits');
  });

  it('masked (-inf) logits: probability 0, masked chosen token gives -inf, gradients 0 there', async () => {
    const vocab = 300;
    const rand = rng(13);
    const logits = f32(normal(rand, 3 * vocab, 2)).map((x, i) => (i % 5 === 0 ? -Infinity : x));
    // Row 0 picks an unmasked token, row 1 a masked one, row 2 masks all but one entry.
    for (let i = 2 * vocab; i < 3 * vocab; i++) logits[i] = i === 2 * vocab + 7 ? 1.5 : -Infinity;
    const tokens = [1, 5, 7];
    const { out, ref, gradRef } = await compare(logits, tokens, vocab, 0.8, 13, false);
    expect(out.logprobs[1]).toBe(-Infinity);
    expect(out.logprobs[2]).toBeCloseTo(0, 6);
    expect(out.entropy[2]).toBeCloseTo(0, 6);
    expectClose(out.logprobs, ref.logprobs, TOL, 'logprobs');
    expectClose(out.entropy, ref.entropy, { atol: 1e-4, rtol: 2e-5 }, 'entropy');
    const grad = out.grad_logits.flat();
    expectClose(grad, gradRef, GRAD_TOL, 'grad_logits');
    for (let i = 0; i < logits.length; i++) if (logits[i] === -Infinity) expect(grad[i]).toBe(0);
  });

  it('a NaN or +inf logit, or an overflowing logit / temperature, makes its row NaN (forward and backward), as the twin', async () => {
    // max() drops a NaN and SwiftShader's exp(NaN) = inf, log(NaN) = 89: the kernel used to
    // return a finite, wrong log-prob for such a row.
    const vocab = 6;
    const rows = [
      [0.5, -1, 2, 0.3, -0.2, 1], // finite
      [0.5, -1, NaN, 0.3, -0.2, 1], // NaN, chosen token finite
      [0.5, Infinity, 2, 0.3, -0.2, 1], // +inf
      [-Infinity, -1, 2, 0.3, -Infinity, 1], // masked entries only: a normal row
      [NaN, -Infinity, 2, 0.3, -0.2, 1], // NaN, chosen token masked: -inf
      [3e38, -1, 2, 0.3, -0.2, 1], // 3e38 / 0.5 overflows f32
    ];
    const tokens = [2, 0, 2, 1, 1, 2];
    const rand = rng(14);
    const c = {
      logits: f32(rows.flat()),
      tokens,
      vocab,
      temperature: 0.5,
      gradLogprobs: f32(normal(rand, rows.length)),
      gradEntropy: f32(normal(rand, rows.length)),
    };
    const out = await harness.runModule('/test/harness/cases/logprobs.ts', 'logprobs', c);
    const problem = { logits: c.logits, tokens, rows: rows.length, vocab, temperature: c.temperature };
    const ref = logprobsForwardRef(problem);
    const grad = logprobsBackwardRef(problem, c.gradLogprobs, c.gradEntropy);
    expect(Array.from(ref.logprobs, (x) => (Number.isNaN(x) ? 'nan' : x === -Infinity ? '-inf' : 'ok'))).toEqual(['ok', 'nan', 'nan', 'ok', '-inf', 'nan']);
    expectClose(out.logprobs, ref.logprobs, TOL, 'logprobs');
    expectClose(out.entropy, ref.entropy, { atol: 1e-4, rtol: 2e-5 }, 'entropy');
    expectClose(out.gradLogits, grad, GRAD_TOL, 'grad_logits');
    // Every unmasked entry of a poisoned row has a NaN gradient; masked entries get 0.
    for (const r of [1, 2, 4, 5]) {
      rows[r].forEach((x, i) => expect(out.gradLogits[r * vocab + i], `row ${r} entry ${i}`).toBe(x === -Infinity ? 0 : NaN));
    }
  });

  it('accepts the JSON spellings of -inf ("-inf" and null)', async () => {
    const out = await harness.run('logprobs', { logits: [[0, '-inf', null, 0]], tokens: [0] });
    expect(out.logprobs[0]).toBeCloseTo(Math.log(0.5), 6);
  });

  it('rejects bad requests with an error naming the field', async () => {
    await expect(harness.run('logprobs', { logits: [[0, 1]], tokens: [2] })).rejects.toThrow(/tokens\[0\]/);
    await expect(harness.run('logprobs', { logits: [[0, 1]], tokens: [0], temperature: 0 })).rejects.toThrow(/temperature/);
    await expect(harness.run('logprobs', { logits: [[0, 1], [1]], tokens: [0, 0] })).rejects.toThrow(/logits\[1\]/);
    await expect(harness.run('logprobs', { logits: [[0, 1]], tokens: [0], tempreature: 1 })).rejects.toThrow(/tempreature: unknown field/);
  });
});
