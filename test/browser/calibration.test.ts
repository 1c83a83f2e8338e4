// The calibration before Train (src/rl/calibration.ts) on a fresh device: it compiles only a
// handful of small kernels (the decode step's, which the run reuses, and a trivial one), never
// the model's training kernels, and gives finite positive costs; the commands it counts without
// running are the ones the engine records when it runs. No check depends on the machine's speed.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

const hf = JSON.parse(readFileSync('public/models/tiny-gpt2-byte/config.json', 'utf8')) as Record<string, unknown>;
let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

interface Run {
  result: {
    decodeOverhead: number;
    decodePerRow: number;
    trainOverhead: number;
    trainPerToken: number;
    optimizerStep: number;
    kernelsCompiled: number;
    kernelsLeft: number;
    seconds: number;
    speed: Record<string, number>;
    parts: Record<string, number>;
  };
  wallSeconds: number;
  counters: { pipelinesCreated: number; pipelinesWarmed: number; submits: number };
}

describe('calibration', () => {
  it('compiles a few small kernels, not the model, and gives finite positive costs; a second run compiles nothing', async () => {
    const [cold, warm] = (await harness.runModule('/test/harness/cases/calibration.ts', 'calibrateConfig', { hf, runs: 2 })) as Run[];
    for (const run of [cold, warm]) {
      const r = run.result;
      for (const k of ['decodePerRow', 'trainPerToken', 'optimizerStep'] as const) {
        expect(Number.isFinite(r[k]) && r[k] > 0, k).toBe(true);
      }
      for (const k of ['decodeOverhead', 'trainOverhead'] as const) expect(Number.isFinite(r[k]) && r[k] >= 0, k).toBe(true);
      for (const [k, v] of Object.entries(r.speed)) expect(Number.isFinite(v) && v >= 0, k).toBe(true);
      expect(r.speed.flopsPerSecond).toBeGreaterThan(0);
      // Nothing compiled on demand inside a timed submission.
      expect(run.counters.pipelinesCreated).toBe(0);
      expect(r.seconds).toBeGreaterThan(0);
      expect(r.seconds).toBeLessThanOrEqual(run.wallSeconds + 1e-3);
      // A step's other kernels (training pass, optimizer, sampler) are left to the run.
      expect(r.kernelsLeft).toBeGreaterThan(10);
    }
    // The decode step's kernels but the sampler, and the trivial kernel: a handful, never the ~40 of a step.
    expect(cold.counters.pipelinesWarmed).toBe(cold.result.kernelsCompiled);
    expect(cold.result.kernelsCompiled).toBeGreaterThan(3);
    expect(cold.result.kernelsCompiled).toBeLessThanOrEqual(12);
    expect(warm.counters.pipelinesWarmed).toBe(0);
    // A few submissions: the dispatch costs, the FLOP rate and the decode steps.
    expect(cold.counters.submits).toBeLessThanOrEqual(20);
    console.log(`calibration: cold ${cold.result.seconds.toFixed(2)} s (${JSON.stringify(cold.result.parts)}), warm ${warm.result.seconds.toFixed(2)} s`);
  }, 240_000);

  it('counts the dispatches a decode step records when it runs', async () => {
    for (const rows of [1, 8]) {
      const r = (await harness.runModule('/test/harness/cases/calibration.ts', 'countedAsRun', { hf, rows })) as { counted: { dispatches: number }; ran: { dispatches: number }; finite: boolean };
      expect(r.finite).toBe(true);
      expect(r.counted.dispatches).toBeGreaterThan(10);
      expect(r.counted.dispatches).toBe(r.ran.dispatches);
    }
  }, 240_000);
});
