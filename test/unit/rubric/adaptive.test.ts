// POW3R-style adaptive weights against hand-computed values.
import { describe, expect, it } from 'vitest';
import { adaptiveWeights } from '../../../src/rubric/adaptive';
import { weightedMean } from '../../../src/rubric/aggregate';
import { expectClose } from '../../helpers/compare';
import { weighted } from './fixtures';

const EXACT = { atol: 1e-12, rtol: 0 };
// c0 saturated (all 1), c1 separates (1, 0, 1, 0), c2 unreachable (all 0).
const R = weighted([
  [1, 'essential'],
  [1, 'essential'],
  [1, 'important'],
]);
const group = [
  [1, 1, 0],
  [1, 0, 0],
  [1, 1, 0],
  [1, 0, 0],
];

describe('adaptiveWeights', () => {
  it('up-weights the separating criterion within its tier (floor 0.1, tier balance)', () => {
    // spread = [0, 0.5, 0]; m = [0.1, 1, 0.1]; essential tier: human Σ 2, adapted Σ 1.1
    // → u0 = 0.2/1.1 = 2/11, u1 = 2/1.1 = 20/11; important: u2 = 0.1 * 1/0.1 = 1. Σu = 3.
    const out = adaptiveWeights(R, group);
    expectClose(out.spread, [0, 0.5, 0], EXACT, 'spread');
    expectClose(out.weights, [2 / 11, 20 / 11, 1], EXACT, 'weights');
    expectClose(out.rewards as number[], [22 / 33, 2 / 33, 22 / 33, 2 / 33], EXACT, 'rewards');
    // Wider than the weighted mean's 2/3 vs 1/3.
    expectClose(group.map((s) => weightedMean(R, s)!), [2 / 3, 1 / 3, 2 / 3, 1 / 3], EXACT, 'weighted mean');
  });

  it('without tier balance: r = Σ u s / Σ u', () => {
    const out = adaptiveWeights(R, group, { tierBalance: false });
    expectClose(out.weights, [0.1, 1, 0.1], EXACT, 'weights');
    expectClose(out.rewards as number[], [1.1 / 1.2, 0.1 / 1.2, 1.1 / 1.2, 0.1 / 1.2], EXACT, 'rewards');
  });

  it('equals the weighted mean when every criterion separates equally, or with floor 1', () => {
    const even = [
      [1, 0, 1],
      [0, 1, 1],
      [1, 0, 0],
      [0, 1, 0],
    ];
    expectClose(adaptiveWeights(R, even).rewards as number[], even.map((s) => weightedMean(R, s)!), EXACT, 'even');
    expectClose(adaptiveWeights(R, group, { floor: 1 }).rewards as number[], group.map((s) => weightedMean(R, s)!), EXACT, 'floor 1');
  });

  it('balances pitfalls as one category and falls back to human weights when nothing separates', () => {
    const r = weighted([
      [2, 'essential'],
      [-1, 'optional'],
      [-1, 'important'],
    ]);
    const out = adaptiveWeights(r, [
      [1, 1, 0],
      [1, 0, 0],
    ]);
    // spread [0, 0.5, 0]; pitfalls: m = [1, 0.1], human Σ|w| 2 → u = [-2/1.1, -0.2/1.1]; c0 alone keeps 2.
    expectClose(out.weights, [2, -2 / 1.1, -0.2 / 1.1], EXACT, 'weights');
    expectClose(out.rewards as number[], [(2 - 2 / 1.1) / 2, 1], EXACT, 'rewards');
    const flat = adaptiveWeights(R, [[1, 0, 1], [1, 0, 1]], { floor: 0, tierBalance: false });
    expectClose(flat.weights, [1, 1, 1], EXACT, 'fallback');
  });

  it('gives unscorable rollouts null and leaves them out of the spread', () => {
    const out = adaptiveWeights(R, [...group, [1, null, 0]]);
    expect(out.rewards[4]).toBeNull();
    expectClose(out.spread, [0, 0.5, 0], EXACT, 'spread');
    expect(adaptiveWeights(R, [[1, 1, 1]]).spread).toEqual([0, 0, 0]); // one rollout: nothing separates
    expect(() => adaptiveWeights(R, group, { floor: 2 })).toThrow('floor must be in [0, 1], got 2');
  });
});
