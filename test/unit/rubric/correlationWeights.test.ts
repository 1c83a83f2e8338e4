// correlation_weights (RRD-style correlation-aware weights) against hand-computed values.
import { describe, expect, it } from 'vitest';
import { weightedMean } from '../../../src/rubric/aggregate';
import { aggregateAll, aggregateGroup } from '../../../src/rubric/aggregations';
import { correlationWeights } from '../../../src/rubric/correlationWeights';
import { expectClose } from '../../helpers/compare';
import { weighted } from './fixtures';

const EXACT = { atol: 1e-12, rtol: 0 };
// c0 (w 2) and c1 (w 1) always agree; c2 (w 1) is uncorrelated with them; c3 is a pitfall (w −1)
// met exactly when c0 is not.
const R = weighted([
  [2, 'essential'],
  [1, 'important'],
  [1, 'important'],
  [-1, 'important'],
]);
const rows = [
  [1, 1, 0, 0],
  [1, 1, 1, 0],
  [0, 0, 1, 1],
  [0, 0, 0, 1],
];

describe('correlationWeights', () => {
  it('discounts the agreeing cluster, the pitfall opposed to it included (hand-computed)', () => {
    // r01 = 1, r03 = r13 = −1 (oriented +1: the pitfall avoided = c0 met), r02 = r12 = r23 = 0.
    // c = [1+1+0+1, 1+1+0+1, 1, 1+1+1+0] = [3, 3, 1, 3] → u = [2/3, 1/3, 1, −1/3]; Σ positive u = 2.
    const out = correlationWeights(R, rows);
    expectClose(out.weights, [2 / 3, 1 / 3, 1, -1 / 3], EXACT, 'weights');
    // r_i = (2/3 s0 + 1/3 s1 + s2 − 1/3 s3) / 2
    expectClose(out.rewards as number[], [1 / 2, 1, 1 / 3, -1 / 6], EXACT, 'rewards');
    // The plain weighted mean counts the cluster three times over: 3/4, 1, 0, −1/4.
    expectClose(rows.map((s) => weightedMean(R, s)!), [3 / 4, 1, 0, -1 / 4], EXACT, 'weighted mean');
  });

  it('estimates from the history when given (the trainer passes the whole batch)', () => {
    // Within the first two rows alone c0 and c1 are constant (r null), so the weights stay human.
    const alone = correlationWeights(R, rows.slice(0, 2));
    expectClose(alone.weights, [2, 1, 1, -1], EXACT, 'weights without history');
    expectClose(alone.rewards as number[], [3 / 4, 1], EXACT, 'rewards without history');
    const withHistory = correlationWeights(R, rows.slice(0, 2), { history: rows });
    expectClose(withHistory.weights, [2 / 3, 1 / 3, 1, -1 / 3], EXACT, 'weights with history');
    expectClose(withHistory.rewards as number[], [1 / 2, 1], EXACT, 'rewards with history');
    // Through the registry too.
    expect(aggregateGroup(R, rows.slice(0, 2), { method: 'correlation_weights' }, undefined, rows)).toEqual(withHistory);
  });

  it('is the weighted mean when the criteria are uncorrelated, or with fewer than 2 rows', () => {
    const two = weighted([
      [1, 'essential'],
      [3, 'important'],
    ]);
    // s0 = (1, 1, 0, 0), s1 = (0, 1, 1, 0): r = 0.
    const group = [
      [1, 0],
      [1, 1],
      [0, 1],
      [0, 0],
    ];
    const out = correlationWeights(two, group);
    expectClose(out.weights, [1, 3], EXACT, 'weights');
    expectClose(out.rewards as number[], group.map((s) => weightedMean(two, s)!), EXACT, 'rewards');
    expectClose(correlationWeights(R, [rows[2]]).rewards as number[], [weightedMean(R, rows[2])!], EXACT, 'one row');
  });

  it('partial correlation shrinks weights partly: w / (1 + r)', () => {
    const two = weighted([
      [1, 'essential'],
      [1, 'important'],
    ]);
    // s0 = (1, 1, 0, 0), s1 = (1, 0, 0, 0): Sxy = 0.375 − 0.125 + 0.125 + 0.125 = 0.5, Sxx = 1,
    // Syy = 0.75 → r = 0.5 / √0.75 = 1/√3.
    const group = [
      [1, 1],
      [1, 0],
      [0, 0],
      [0, 0],
    ];
    const u = 1 / (1 + 1 / Math.sqrt(3));
    const out = correlationWeights(two, group);
    expectClose(out.weights, [u, u], EXACT, 'weights');
    // Equal weights: the reward is the plain mean of the scores.
    expectClose(out.rewards as number[], [1, 0.5, 0, 0], EXACT, 'rewards');
  });

  it('a missing score of an active criterion gives null; a missing score elsewhere in the history only drops that pair', () => {
    const group = [
      [1, 1, 0, 0],
      [1, null, 1, 0],
    ];
    const out = correlationWeights(R, group, { history: [...rows, [1, null, 0, 0]] });
    expect(out.rewards[1]).toBeNull();
    // Pairs with c1 use the 4 full rows (as above); the others all 5: r03 = −1 still, r02 = −1/6
    // (counts 0), r23 = +1/6 (a pitfall met with a positive criterion: oriented −1/6, counts 0).
    expectClose(out.weights, [2 / 3, 1 / 3, 1, -1 / 3], EXACT, 'weights');
    expectClose([out.rewards[0]!], [1 / 2], EXACT, 'reward');
  });

  it('refuses scores outside [0, 1] and rows of the wrong length, in the group or the history', () => {
    expect(() => correlationWeights(R, [[1, 1, 2, 0]])).toThrow(/outside \[0, 1\]/);
    expect(() => correlationWeights(R, [[1, 1, 1, 0]], { history: [[1, 1]] })).toThrow(/2 entries for 4 criteria/);
  });

  it('is deterministic and listed by aggregateAll', () => {
    const a = aggregateAll(R, rows);
    const b = aggregateAll(R, rows);
    expect(a.correlation_weights).toEqual(b.correlation_weights);
    expectClose(a.correlation_weights as number[], [1 / 2, 1, 1 / 3, -1 / 6], EXACT, 'aggregateAll');
  });
});
