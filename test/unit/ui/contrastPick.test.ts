// The best and worst rollouts for contrastive generation.
import { describe, expect, it } from 'vitest';
import type { RolloutRecord } from '../../../src/rl/grpoStep';
import { bestAndWorst } from '../../../src/ui/lib/contrastPick';

const r = (group: number, index: number, reward: number | null, prompt = `p${group}`): RolloutRecord =>
  ({ step: 3, group, index, prompt, completion: `g${group}i${index}`, reward }) as unknown as RolloutRecord;

describe('bestAndWorst', () => {
  it('takes the group with the widest reward spread, its best and worst', () => {
    const pick = bestAndWorst([r(0, 0, 0.5), r(0, 1, 0.6), r(1, 0, 0.1), r(1, 1, null), r(1, 2, 0.9), r(1, 3, 0.9)]);
    expect(pick).toEqual({ prompt: 'p1', good: 'g1i2', bad: 'g1i0', step: 3, group: 1, best: 0.9, worst: 0.1 });
  });
  it('null when no group has two different rewards', () => {
    expect(bestAndWorst([r(0, 0, 0.5), r(0, 1, 0.5), r(1, 0, null), r(1, 1, 1)])).toBeNull();
    expect(bestAndWorst([])).toBeNull();
  });
});
