import { describe, expect, it } from 'vitest';
import { fracRewardZeroStd } from '../../../src/rl/metrics';

describe('frac_reward_zero_std (TRL: isclose(group std, 0), mean over groups)', () => {
  it('counts groups whose rewards all tie', () => {
    // Groups: [1, 1] tie; [0, 1] std 0.7071; [0.25, 0.25] tie; [0, 0] tie → 3 of 4.
    expect(fracRewardZeroStd([1, 1, 0, 1, 0.25, 0.25, 0, 0], 2)).toBe(0.75);
    expect(fracRewardZeroStd([0.5, 0.5, 0.5, 0.2, 0.2, 0.9], 3)).toBe(0.5);
  });

  it('uses torch.isclose tolerance (atol 1e-8): a spread of 1e-9 ties, 1e-6 does not', () => {
    // std of [a, a + d] is d / sqrt(2).
    expect(fracRewardZeroStd([0.3, 0.3 + 1e-9], 2)).toBe(1);
    expect(fracRewardZeroStd([0.3, 0.3 + 1e-6], 2)).toBe(0);
  });

  it('leaves unscorable rollouts out; a group with one scored reward has no std and does not count', () => {
    // [1, null, 1]: two scored, tie → zero. [null, 0.4, null]: one scored → torch.std is NaN → not zero.
    // [null, null, null]: nothing scored → not zero. → 1 of 3.
    expect(fracRewardZeroStd([1, null, 1, null, 0.4, null, null, null, null], 3)).toBeCloseTo(1 / 3, 15);
  });

  it('refuses rewards that do not split into groups', () => {
    expect(() => fracRewardZeroStd([1, 1, 1], 2)).toThrow(/num_generations 2/);
    expect(fracRewardZeroStd([], 4)).toBe(0);
  });
});
