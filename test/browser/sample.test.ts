// The GPU sampler against its float64 twin: greedy, seeded determinism, top-k/top-p, and the
// empirical distribution. A twin/kernel token mismatch is allowed only when the twin's draw
// lies within 1e-4 (fraction of kept mass) of an interval edge, where f32 rounding decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { NO_TOKEN, sampleRowRef } from '../../src/ops/sample.reference';
import { normal, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/sample.ts';
const f32 = (x: number[]) => Array.from(new Float32Array(x));

function softmax(row: number[], t = 1) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp((x - m) / t));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

describe('sampler kernel', () => {
  it('greedy (temperature 0) is the argmax, lowest index on ties, skipping -inf', async () => {
    const logits = [1, 3, 3, 0, /* row 2 */ -Infinity, -5, -2, -2, /* row 3 */ 0.5, 0.1, 0.7, 0.69];
    const out = await harness.runModule(CASES, 'sample', {
      logits,
      options: { rows: 3, vocab: 4, temperature: 0, topK: 0, topP: 1, seed: 1, step: 0 },
    });
    expect(out.tokens).toEqual([1, 2, 2]);
  });

  it('with temperature -> 0 it matches greedy decoding', async () => {
    const rand = rng(5);
    const vocab = 300;
    const logits = f32(normal(rand, 6 * vocab, 2));
    const base = { rows: 6, vocab, topK: 0, topP: 1, seed: 9, step: 3 };
    const greedy = await harness.runModule(CASES, 'sample', { logits, options: { ...base, temperature: 0 } });
    const cold = await harness.runModule(CASES, 'sample', { logits, options: { ...base, temperature: 1e-4 } });
    expect(cold.tokens).toEqual(greedy.tokens);
    for (const lp of cold.logprobs) expect(lp).toBeGreaterThan(-1e-3);
  });

  it('is deterministic for a seed and changes with seed and step', async () => {
    const rand = rng(6);
    const vocab = 50;
    const logits = f32(normal(rand, 64 * vocab, 0.5));
    const options = { rows: 64, vocab, temperature: 1, topK: 0, topP: 1, seed: 42, step: 7 };
    const a = await harness.runModule(CASES, 'sample', { logits, options });
    const b = await harness.runModule(CASES, 'sample', { logits, options });
    const c = await harness.runModule(CASES, 'sample', { logits, options: { ...options, seed: 43 } });
    const d = await harness.runModule(CASES, 'sample', { logits, options: { ...options, step: 8 } });
    expect(b.tokens).toEqual(a.tokens);
    expect(c.tokens).not.toEqual(a.tokens);
    expect(d.tokens).not.toEqual(a.tokens);
  });

  for (const [seed, vocab, temperature, topK, topP] of [
    [1, 2, 1, 0, 1],
    [2, 37, 0.7, 0, 1],
    [3, 257, 1, 5, 1],
    [4, 257, 1.3, 0, 0.9],
    [5, 1000, 1, 40, 0.8],
    [6, 5000, 0.9, 0, 0.5],
  ] as const) {
    it(`matches the twin: V=${vocab}, temperature ${temperature}, top_k ${topK}, top_p ${topP}`, async () => {
      const rand = rng(seed);
      const rows = 24;
      const logits = f32(normal(rand, rows * vocab, 2)).map((x, i) => (i % 11 === 3 ? -Infinity : x));
      const options = { rows, vocab, temperature, topK, topP, seed: 1000 + seed, step: seed, rowOffset: 5 };
      const out = await harness.runModule(CASES, 'sample', { logits, options });
      let mismatches = 0;
      for (let r = 0; r < rows; r++) {
        const ref = sampleRowRef(logits.slice(r * vocab, (r + 1) * vocab), 5 + r, options);
        expect(logits[r * vocab + out.tokens[r]], `row ${r} sampled a masked token`).not.toBe(-Infinity);
        if (out.tokens[r] !== ref.token) {
          mismatches++;
          expect(ref.margin, `row ${r}: kernel ${out.tokens[r]} vs twin ${ref.token}`).toBeLessThan(1e-4);
          continue;
        }
        expect(Math.abs(out.logprobs[r] - ref.logprob), `row ${r} logprob`).toBeLessThan(1e-4);
      }
      expect(mismatches).toBeLessThanOrEqual(1);
    });
  }

  it('draws from softmax(logits / temperature), truncated by top_k and top_p', async () => {
    const row = [2, 1, 0.5, 0, -1, -Infinity];
    // SwiftShader runs every barrier of every row in software: keep the row counts modest;
    // the 4-sigma bounds below scale with them.
    const rows = 1000;
    const base = { seed: 77, step: 0 };
    // Full distribution at temperature 0.8.
    const full = await harness.runModule(CASES, 'histogram', { row, rows, options: { ...base, temperature: 0.8, topK: 0, topP: 1 } });
    const p = softmax(row.slice(0, 5), 0.8);
    p.forEach((pi, i) => expect(Math.abs(full[i] / rows - pi), `token ${i}`).toBeLessThan(4 * Math.sqrt((pi * (1 - pi)) / rows) + 1e-3));
    expect(full[5]).toBe(0);
    // top_k = 2 keeps tokens 0 and 1, renormalised.
    const k2 = await harness.runModule(CASES, 'histogram', { row, rows: 400, options: { ...base, temperature: 1, topK: 2, topP: 1 } });
    const q = softmax([2, 1]);
    expect(k2.slice(2).every((c: number) => c === 0)).toBe(true);
    expect(Math.abs(k2[0] / 400 - q[0])).toBeLessThan(4 * Math.sqrt((q[0] * q[1]) / 400));
    // top_p = 0.7 at temperature 1: p = [.60, .22, .13, .08, .03] -> keeps {0, 1}.
    const p7 = await harness.runModule(CASES, 'histogram', { row, rows: 100, options: { ...base, temperature: 1, topK: 0, topP: 0.7 } });
    expect(p7.slice(2).every((c: number) => c === 0)).toBe(true);
    expect(p7[1]).toBeGreaterThan(0);
  });

  it('a row with a NaN or +inf logit, or all masked, gets NO_TOKEN and a NaN log-prob, as the twin', async () => {
    // max/min and the threshold tests skip a NaN: the kernel used to return a plausible token.
    const rows = [
      [0.3, 1.2, -0.5, 0.8, 0.1],
      [0.3, 1.2, NaN, 0.8, 0.1],
      [0.3, Infinity, -0.5, 0.8, 0.1],
      [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity],
      [NaN, -Infinity, 2, 0.8, 0.1],
      [-Infinity, 0.4, -Infinity, 0.8, 0.1], // masked entries only: a normal row
    ];
    const flagged = [false, true, true, true, true, false];
    const vocab = 5;
    const logits = rows.flat();
    for (const options of [
      { temperature: 0, topK: 0, topP: 1 },
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.7, topK: 2, topP: 0.9 },
    ]) {
      const o = { ...options, rows: rows.length, vocab, seed: 3, step: 1 };
      const out = await harness.runModule(CASES, 'sample', { logits, options: o });
      rows.forEach((row, r) => {
        const ref = sampleRowRef(row, r, o);
        const label = `row ${r}, ${JSON.stringify(options)}`;
        expect(ref.token === NO_TOKEN, `${label}: twin`).toBe(flagged[r]);
        expect(out.tokens[r], label).toBe(ref.token);
        if (flagged[r]) expect(Number.isNaN(out.logprobs[r]), label).toBe(true);
        else expect(Math.abs(out.logprobs[r] - ref.logprob), label).toBeLessThan(1e-5);
      });
    }
  });

  it('a temperature so small that logit / temperature overflows gives NO_TOKEN, not a guess', async () => {
    const row = [1e9, 0, -1e9];
    const o = { rows: 1, vocab: 3, temperature: 1e-30, topK: 0, topP: 1, seed: 0, step: 0 };
    const out = await harness.runModule(CASES, 'sample', { logits: row, options: o });
    expect(sampleRowRef(row, 0, o).token).toBe(NO_TOKEN);
    expect(out.tokens).toEqual([NO_TOKEN]);
    expect(Number.isNaN(out.logprobs[0])).toBe(true);
  });

  it('repetition_penalty and min_p match the twin; the log-prob stays unpenalised; drawn ids join the seen set', async () => {
    const vocab = 300;
    const rows = 24;
    for (const [seed, temperature, topK, topP, repetitionPenalty, minP] of [
      [11, 1, 0, 1, 1.3, 0],
      [12, 0.8, 20, 0.95, 0.7, 0.05],
      [13, 1.2, 0, 1, 2, 0.2],
    ] as const) {
      const rand = rng(seed);
      const logits = f32(normal(rand, rows * vocab, 2));
      // Each row has already produced a few dozen ids, a third of them among its most likely.
      const seen = Array.from({ length: rows }, (_, r) => {
        const row = logits.slice(r * vocab, (r + 1) * vocab);
        const top = row.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).slice(0, 6).map(([, i]) => i);
        return [...top.filter((_, j) => j % 2 === 0), ...Array.from({ length: 30 }, () => Math.floor(rand() * vocab))];
      });
      const options = { rows, vocab, temperature, topK, topP, repetitionPenalty, minP, seed, step: 2 };
      const out = await harness.runModule(CASES, 'sample', { logits, options, seen });
      const words = Math.ceil(vocab / 32);
      let mismatches = 0;
      let penalisedMatters = 0;
      for (let r = 0; r < rows; r++) {
        const row = logits.slice(r * vocab, (r + 1) * vocab);
        const ref = sampleRowRef(row, r, options, seen[r]);
        if (sampleRowRef(row, r, { ...options, repetitionPenalty: 1 }).token !== ref.token) penalisedMatters++;
        const t = out.tokens[r];
        expect((out.seen[r * words + (t >>> 5)] >>> (t & 31)) & 1, `row ${r}: drawn id ${t} not marked seen`).toBe(1);
        for (const id of seen[r]) expect((out.seen[r * words + (id >>> 5)] >>> (id & 31)) & 1, `row ${r}: id ${id} lost`).toBe(1);
        if (t !== ref.token) {
          mismatches++;
          expect(ref.margin, `row ${r}: kernel ${t} vs twin ${ref.token}`).toBeLessThan(1e-4);
          continue;
        }
        // log softmax(raw logits / T)[t]: the policy's own log-prob, what TRL recomputes.
        const raw = row.map((x) => x / temperature);
        const m = Math.max(...raw);
        const lse = m + Math.log(raw.reduce((s, x) => s + Math.exp(x - m), 0));
        expect(Math.abs(out.logprobs[r] - (raw[t] - lse)), `row ${r} logprob`).toBeLessThan(1e-4);
        expect(Math.abs(out.logprobs[r] - ref.logprob), `row ${r} logprob vs twin`).toBeLessThan(1e-4);
      }
      expect(mismatches).toBeLessThanOrEqual(1);
      // The penalty changed some draws (else this test could not tell it was applied).
      expect(penalisedMatters, `seed ${seed}`).toBeGreaterThan(0);
    }
  });

  it('greedy with repetition_penalty follows HF: a seen logit > 0 is divided, one <= 0 multiplied', async () => {
    const logits = [3, 2.5, 1, /* row 1 */ -1, -1.5, -3, /* row 2 */ 3, 2.5, 1];
    const options = { rows: 3, vocab: 3, temperature: 0, topK: 0, topP: 1, repetitionPenalty: 2, seed: 0, step: 0 };
    // Row 0: 3 / 2 = 1.5 < 2.5. Row 1: -1 × 2 = -2 < -1.5. Row 2: nothing seen.
    const out = await harness.runModule(CASES, 'sample', { logits, options, seen: [[0], [0], []] });
    expect(out.tokens).toEqual([1, 1, 0]);
    const off = await harness.runModule(CASES, 'sample', { logits, options: { ...options, repetitionPenalty: 1 }, seen: [[0], [0], []] });
    expect(off.tokens).toEqual([0, 0, 0]);
  });

  it('min_p keeps only tokens with p >= min_p × p_max', async () => {
    // p ∝ [e^2, e^1, e^0.5, 1]: p/p_max = [1, .37, .22, .14]. min_p 0.3 keeps {0, 1}.
    const row = [2, 1, 0.5, 0];
    const counts = await harness.runModule(CASES, 'histogram', { row, rows: 200, options: { seed: 5, step: 0, temperature: 1, topK: 0, topP: 1, minP: 0.3 } });
    expect(counts[2] + counts[3]).toBe(0);
    expect(counts[1]).toBeGreaterThan(20);
    const loose = await harness.runModule(CASES, 'histogram', { row, rows: 200, options: { seed: 5, step: 0, temperature: 1, topK: 0, topP: 1, minP: 0.1 } });
    expect(loose[3]).toBeGreaterThan(0);
  });

  it('rejects invalid options with the option name', async () => {
    const bad = (options: object) => harness.runModule(CASES, 'sample', { logits: [0, 1], options: { rows: 1, vocab: 2, temperature: 1, topK: 0, topP: 1, seed: 0, step: 0, ...options } });
    await expect(bad({ temperature: -1 })).rejects.toThrow(/temperature must be/);
    await expect(bad({ topP: 0 })).rejects.toThrow(/top_p must be in \(0, 1\]/);
    await expect(bad({ topK: 1.5 })).rejects.toThrow(/top_k must be an integer/);
    await expect(bad({ repetitionPenalty: 0 })).rejects.toThrow(/repetition_penalty must be/);
    await expect(bad({ minP: 1.5 })).rejects.toThrow(/min_p must be in \[0, 1\]/);
  });
});
