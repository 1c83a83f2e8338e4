// Learning tests of the whole GRPO loop on the CPU/SwiftShader path. Stated margin for both: the
// mean rubric reward over fixed-seed evaluation samples (drawn before and after training with the
// same seed; 32 for the embedded model, 64 for the tiny one) rises by more than 3 standard errors.
// 1. The embedded default model, trained on the "Open with The" preset exactly as the app ships
//    it (about a third of its answers open with "The" at first).
// 2. The tiny random byte model (test/fixtures/tiny-byte-gpt2), whose completions start with a
//    printable ASCII character about a third of the time, trained to do so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { OPEN_WITH_THE } from '../../src/share/presets';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const EXPERIMENT = {
  model: '/test/fixtures/tiny-byte-gpt2/',
  prompts: ['Name a color.', 'Say hello.', 'Name an animal.', 'Count to two.'],
  rubric: {
    name: 'ascii start',
    criteria: [{ id: 'ascii_start', text: 'Starts with a printable ASCII character', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[ -~]' } }],
  },
  config: { num_generations: 8, generation_batch_size: 32, max_completion_length: 2, learning_rate: 0.03, max_steps: 100, save_steps: 0, seed: 5 },
};

describe('GRPO learning', () => {
  it('the embedded default model learns the "Open with The" preset within 2 steps', { timeout: 900_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/learning.ts', 'learn', { experiment: OPEN_WITH_THE.experiment, steps: 2, evalSamplesPerPrompt: 8, evalSeed: 99 });
    const se = Math.sqrt(r.before.variance / r.before.n + r.after.variance / r.after.n);
    console.log(`embedded: before ${r.before.mean.toFixed(3)}, after ${r.after.mean.toFixed(3)}, se ${se.toFixed(3)}, train rewards ${JSON.stringify(r.trainRewards)}, seconds ${JSON.stringify(r.seconds)}; samples after: ${JSON.stringify(r.after.samples)}`);
    expect(r.status).not.toBe('failed');
    expect(r.before.n).toBe(32);
    expect(r.after.mean - r.before.mean, `before ${r.before.mean}, after ${r.after.mean}, se ${se}`).toBeGreaterThan(3 * se);
  });

  it('raises the mean rubric reward by more than 3 standard errors', { timeout: 600_000 }, async () => {
    const r = await harness.runModule('/test/harness/cases/learning.ts', 'learn', { experiment: EXPERIMENT, steps: 8, evalSamplesPerPrompt: 16, evalSeed: 99 });
    const se = Math.sqrt(r.before.variance / r.before.n + r.after.variance / r.after.n);
    console.log(`tiny: before ${r.before.mean.toFixed(3)}, after ${r.after.mean.toFixed(3)}, se ${se.toFixed(3)}, train rewards ${JSON.stringify(r.trainRewards)}, seconds ${JSON.stringify(r.seconds)}`);
    expect(r.status).not.toBe('failed');
    expect(r.before.n).toBe(64);
    expect(r.after.mean - r.before.mean, `before ${r.before.mean}, after ${r.after.mean}, se ${se}`).toBeGreaterThan(3 * se);
  });
});
