// Small kernels against their twins: the KV-cache write (exact: a copy) and the weighted sum
// (f32 vs f64: rtol 1e-5). Masked entries with -inf values must not turn the sum into NaN.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { kvCacheFloats, kvCacheWriteRef } from '../../src/ops/kvCache';
import { weightedSumRef } from '../../src/ops/reduce';
import { normal, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/smallKernels.ts';

describe('KV-cache write', () => {
  for (const [start, tokens] of [[0, 5], [5, 1], [8, 3]] as const) {
    it(`writes ${tokens} positions at ${start} into [B, Hkv, Tmax, Dh] and leaves the rest`, async () => {
      const shape = { batch: 2, numKvHeads: 3, headDim: 4, maxSeqLen: 11 };
      const rand = rng(start + 1);
      const src = Array.from(new Float32Array(normal(rand, shape.batch * tokens * shape.numKvHeads * shape.headDim)));
      const initial = Array.from({ length: kvCacheFloats(shape) }, (_, i) => -i);
      const expected = new Float32Array(initial);
      kvCacheWriteRef(src, expected, shape, start, tokens);
      const out = await harness.runModule(CASES, 'kvWrite', { shape, src, start, tokens, initial });
      expect(out).toEqual(Array.from(expected));
    });
  }

  it('rejects positions past the cache', async () => {
    const shape = { batch: 1, numKvHeads: 1, headDim: 2, maxSeqLen: 4 };
    await expect(harness.runModule(CASES, 'kvWrite', { shape, src: [1, 2, 3, 4], start: 3, tokens: 2, initial: [0, 0, 0, 0, 0, 0, 0, 0] })).rejects.toThrow(/do not fit a cache of 4 positions/);
  });
});

describe('weighted sum', () => {
  it('matches the twin on 10,000 values and skips zero weights over -inf', async () => {
    const rand = rng(3);
    const x = Array.from(new Float32Array(normal(rand, 10_000)));
    const w = x.map((_, i) => (i % 7 === 0 ? 0 : Math.fround(0.5 - (i % 3) * 0.25)));
    x[14] = -Infinity; // w[14] = 0
    const got = await harness.runModule(CASES, 'weightedSum', { x, w });
    const want = weightedSumRef(x, w);
    expect(Math.abs(got - want)).toBeLessThan(1e-5 * x.length ** 0.5 + 1e-5 * Math.abs(want));
  });
});
