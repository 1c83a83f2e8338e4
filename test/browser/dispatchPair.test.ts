// Dispatch pairing (src/gpu/dispatchPair.ts): adjacent independent dispatches run as one pair
// kernel. Nothing may change but the dispatch count: training steps with pairing off and on
// must agree bit for bit, and a product that reads another's output must never share its dispatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

interface Differ {
  count: number;
  first: number[];
}

describe('dispatch pairing', () => {
  const runs = [
    ['gpt2', false, false, false],
    ['llama', true, false, false],
    ['gpt2', false, true, false],
    ['gpt2', false, false, true],
  ] as const;
  for (const [architecture, lora, short, gpuPlan] of runs) {
    const what = `${architecture}${lora ? ' with LoRA' : ''}${short ? ', 6 tokens (skinny products)' : ''}${gpuPlan ? ", a GPU's kernels (tiled products and attention)" : ''}`;
    it(`${what}: two train steps give the same bits with fewer dispatches`, async () => {
      const r = (await harness.runModule('/test/harness/cases/dispatchPair.ts', 'trainStepBits', { architecture, lora, short, gpuPlan })) as {
        losses: number[][];
        dispatches: number[];
        values: number;
        differ: Record<'grad' | 'value' | 'm' | 'v', Differ>;
      };
      expect(r.values).toBeGreaterThan(1000);
      expect(r.losses[1]).toEqual(r.losses[0]);
      for (const d of Object.values(r.differ)) expect(d).toEqual({ count: 0, first: [] });
      // Each layer's dX and dW products pair up (and LoRA's own backward products).
      expect(r.dispatches[1]).toBeLessThanOrEqual(r.dispatches[0] - 8);
    }, 300_000);
  }

  for (const path of ['tiled', 'small', 'auto'] as const) {
    it(`two independent ${path} products pair, bit for bit; a product reading the other's output does not`, async () => {
      for (const dependent of [false, true]) {
        const r = (await harness.runModule('/test/harness/cases/dispatchPair.ts', 'productPair', { path, dependent, m: path === 'small' ? 4 : 40, n: 40, k: 40 })) as {
          limit: number;
          dispatches: number[];
          differ: Differ;
          nonZero: boolean;
        };
        expect(r.nonZero).toBe(true);
        expect(r.differ).toEqual({ count: 0, first: [] });
        // Two tiled kernels hold 2 × 16 KiB of workgroup memory: a pair only where the device allows 32 KiB.
        const fits = path !== 'tiled' || r.limit >= 32768;
        expect(r.dispatches).toEqual(dependent || !fits ? [2, 2] : [2, 1]);
      }
    }, 300_000);
  }

  it('two products writing disjoint ranges of one buffer pair; overlapping ranges do not', async () => {
    for (const output of ['disjoint', 'overlapping'] as const) {
      const r = (await harness.runModule('/test/harness/cases/dispatchPair.ts', 'productPair', { path: 'auto', dependent: false, output, m: 40, n: 40, k: 40 })) as {
        dispatches: number[];
        differ: Differ;
        nonZero: boolean;
      };
      expect(r.nonZero).toBe(true);
      expect(r.differ).toEqual({ count: 0, first: [] });
      expect(r.dispatches, output).toEqual(output === 'disjoint' ? [2, 1] : [2, 2]);
    }
  }, 300_000);
});
