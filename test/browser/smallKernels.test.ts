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
    it(`writes ${tokens} positions of keys and values at ${start} into [B, Hkv, Tmax, Dh] each and leaves the rest`, async () => {
      const shape = { batch: 2, numKvHeads: 3, headDim: 4, maxSeqLen: 11 };
      const rand = rng(start + 1);
      const count = shape.batch * tokens * shape.numKvHeads * shape.headDim;
      const [k, v] = [0, 1].map(() => Array.from(new Float32Array(normal(rand, count))));
      const initialKeys = Array.from({ length: kvCacheFloats(shape) }, (_, i) => -i);
      const initialValues = initialKeys.map((x) => x - 0.5);
      const [keys, values] = [new Float32Array(initialKeys), new Float32Array(initialValues)];
      kvCacheWriteRef(k, keys, shape, start, tokens);
      kvCacheWriteRef(v, values, shape, start, tokens);
      // v in the same buffer as k, 64 floats on (a stack's slots).
      const out = await harness.runModule(CASES, 'kvWrite', { shape, k, v, vAt: 64 * Math.ceil(count / 64), start, tokens, initialKeys, initialValues });
      expect(out).toEqual({ keys: Array.from(keys), values: Array.from(values) });
    });
  }

  it('rejects positions past the cache', async () => {
    const shape = { batch: 1, numKvHeads: 1, headDim: 2, maxSeqLen: 4 };
    const initial = [0, 0, 0, 0, 0, 0, 0, 0];
    await expect(harness.runModule(CASES, 'kvWrite', { shape, k: [1, 2, 3, 4], v: [5, 6, 7, 8], vAt: 64, start: 3, tokens: 2, initialKeys: initial, initialValues: initial })).rejects.toThrow(/do not fit a cache of 4 positions/);
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
