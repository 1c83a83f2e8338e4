// irt_ability in GRPO steps on the GPU (page side test/harness/cases/irtStep.ts): the trainer
// carries the IRT item table across steps and rewards are Φ(EAP) under it; with irt_judge_budget 1
// the first step asks every judge question (no table yet) and the second one question per rollout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

interface IrtStepOut { rewards: (number | null)[]; expected: (number | null)[]; scored: number[]; tableSteps: number; stored: number }

describe('irt_ability steps', () => {
  it('carries the item table across steps; the judge budget halves the judge calls from the second step', async () => {
    const options = { num_generations: 4, generation_batch_size: 8, max_completion_length: 6, learning_rate: 1e-2, temperature: 1, reward_aggregation: { method: 'irt_ability', irt_judge_budget: 1 } };
    const r = await harness.runModule('/test/harness/cases/irtStep.ts', 'steps', { options, steps: 2 });
    const [first, second] = r.steps as IrtStepOut[];
    // 8 rollouts, 2 judge questions: 16 calls, then 1 question each: 8.
    expect(r.requests).toEqual([16, 8]);
    expect(first.scored).toEqual(new Array(8).fill(3));
    expect(second.scored).toEqual(new Array(8).fill(2));
    expect([first.tableSteps, second.tableSteps]).toEqual([1, 2]);
    expect([first.stored, second.stored]).toEqual([8, 16]);
    for (const s of [first, second]) {
      expect(s.rewards).toEqual(s.expected);
      for (const x of s.rewards) expect(x! > 0 && x! < 1).toBe(true);
    }
  });
});
