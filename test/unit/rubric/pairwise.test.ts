import { describe, expect, it } from 'vitest';
import { applyBias, describeBias, type JudgeBias } from '../../../src/rubric/bias';
import { mulberry32 } from '../../../src/rubric/dropout';
import type { CriterionResult } from '../../../src/rubric/judge';
import { positionBias } from '../../../src/rubric/judgeMeta';
import { compareScores, pairwiseComparisons, type PairGroup } from '../../../src/rubric/pairwise';
import { parseRubric } from '../../../src/rubric/schema';
import { judgeBiasSchema } from '../../../src/rl/judgeBias';

const ok = (criterion_id: string, score: number): CriterionResult => ({ criterion_id, status: 'ok', score, reason: 'r' });

/** `groups` groups of `size` rollouts with seeded scores on criteria a (continuous) and b (0/1: many ties). */
function synthetic(seed: number, groups: number, size: number): PairGroup[] {
  const rand = mulberry32(seed);
  return Array.from({ length: groups }, (_, g) => ({
    group: `0/${g}`,
    step: 0,
    results: Array.from({ length: size }, () => [ok('a', rand()), ok('b', rand() < 0.5 ? 1 : 0)]),
  }));
}

const position = (strength: number, extra: Partial<JudgeBias> = {}): JudgeBias => ({ kind: 'position', strength, ...extra });

describe('pairwise mode', () => {
  it('compares scores order-free and asks every pair in both orders', () => {
    expect([compareScores(1, 0), compareScores(0, 1), compareScores(0.5, 0.5)]).toEqual(['first', 'second', 'tie']);
    const groups: PairGroup[] = [{ group: 'g', step: 0, results: [[ok('a', 1)], [ok('a', 0)], [{ criterion_id: 'a', status: 'unscorable', score: null, reason: 'x' }]] }];
    const c = pairwiseComparisons(['a'], groups, null, { seed: 1 });
    // The unscored rollout is in no comparison.
    expect(c).toEqual([
      { criterion_id: 'a', group: 'g', first: 0, second: 1, winner: 'first' },
      { criterion_id: 'a', group: 'g', first: 1, second: 0, winner: 'second' },
    ]);
  });

  it('position bias is seeded and deterministic; strength 0 changes nothing', () => {
    const groups = synthetic(3, 10, 4);
    const plain = pairwiseComparisons(['a', 'b'], groups, null, { seed: 7 });
    expect(pairwiseComparisons(['a', 'b'], groups, position(0), { seed: 7 })).toEqual(plain);
    const once = pairwiseComparisons(['a', 'b'], groups, position(0.5), { seed: 7 });
    expect(pairwiseComparisons(['a', 'b'], groups, position(0.5), { seed: 7 })).toEqual(once);
    // The bias's own seed overrides the run's; another seed draws other comparisons.
    expect(pairwiseComparisons(['a', 'b'], groups, position(0.5, { seed: 7 }), { seed: 99 })).toEqual(once);
    const other = pairwiseComparisons(['a', 'b'], groups, position(0.5), { seed: 8 });
    expect(other.map((c) => c.biased ?? false)).not.toEqual(once.map((c) => c.biased ?? false));
    // A biased comparison goes to the favoured slot; the others are the order-free verdict.
    once.forEach((c, i) => expect(c.winner).toBe(c.biased ? 'first' : plain[i].winner));
    const second = pairwiseComparisons(['a', 'b'], groups, position(1, { slot: 'second' }), { seed: 7 });
    expect(second.every((c) => c.winner === 'second' && c.biased)).toBe(true);
    // Other bias kinds leave the pairwise mode alone; the criteria filter limits the bias.
    expect(pairwiseComparisons(['a', 'b'], groups, { kind: 'leniency', strength: 1 }, { seed: 7 })).toEqual(plain);
    const onlyB = pairwiseComparisons(['a', 'b'], groups, position(1, { criteria: ['b'] }), { seed: 7 });
    expect(onlyB.filter((c) => c.criterion_id === 'a')).toEqual(plain.filter((c) => c.criterion_id === 'a'));
  });

  it('never changes pointwise verdicts (the reward GRPO trains on)', () => {
    const rubric = parseRubric({ name: 'r', criteria: [{ id: 'a', text: 'A', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['x'] } }] });
    const results = [[ok('a', 0)], [ok('a', 1)]];
    expect(applyBias(rubric, results, ['short', 'long text'], position(1), { seed: 1, step: 0 })).toEqual(results);
    expect(describeBias(position(0.3, { slot: 'second' }))).toBe('position (second slot, pairwise mode) ×0.3');
  });

  it('the schema takes a position bias with a slot, and refuses another slot', () => {
    expect(judgeBiasSchema.parse({ kind: 'position', strength: 0.2, slot: 'second' })).toEqual({ kind: 'position', strength: 0.2, slot: 'second' });
    expect(judgeBiasSchema.safeParse({ kind: 'position', strength: 0.2, slot: 'third' }).success).toBe(false);
    expect(judgeBiasSchema.safeParse({ kind: 'position', strength: 0.2, words: ['x'] }).success).toBe(false);
  });
});

describe('positionBias (judge meta-evaluation)', () => {
  const groups = synthetic(11, 200, 4);

  it('is exactly 0 for an order-free judge, every group in the middle bin', () => {
    const m = positionBias(pairwiseComparisons(['a', 'b'], groups, null, { seed: 1 }));
    expect(m.map((x) => x.criterion_id)).toEqual(['a', 'b']);
    for (const x of m) {
      expect(x.index).toBe(0);
      expect(x.n).toBe(200 * 12);
      expect(x.histogram.map((h) => h.groups)).toEqual([0, 0, 200, 0, 0]);
    }
    expect(m[0].first_win_rate).toBeCloseTo(0.5, 12); // continuous scores: no ties
    expect(m[1].ties).toBeGreaterThan(0);
  });

  it('recovers a known injected bias for either slot, on continuous and tied scores', () => {
    for (const [strength, slot, expected] of [
      [0.3, 'first', 0.3],
      [0.6, 'second', -0.6],
      [1, 'first', 1],
    ] as const) {
      const m = positionBias(pairwiseComparisons(['a', 'b'], groups, position(strength, { slot }), { seed: 5 }));
      for (const x of m) {
        // 2400 comparisons per criterion: the binomial noise on the index is about 0.02.
        expect(Math.abs(x.index! - expected), `${slot} ×${strength} on ${x.criterion_id}: ${x.index}`).toBeLessThan(0.06);
      }
      // The histogram moves with it: most groups leave the middle bin at strength 0.6 and above.
      if (Math.abs(expected) >= 0.6) expect(m[0].histogram[2].groups).toBeLessThan(100);
    }
    const full = positionBias(pairwiseComparisons(['a'], groups, position(1), { seed: 5 }))[0];
    expect(full).toMatchObject({ first_win_rate: 1, index: 1, second_wins: 0, ties: 0 });
    expect(full.histogram.map((h) => h.groups)).toEqual([0, 0, 0, 0, 200]);
  });
});

describe('positionBiasView (the judge meta panel)', () => {
  it('groups kept rollouts by step and group, in index order, and applies the run bias', async () => {
    const { positionBiasView } = await import('../../../src/ui/lib/positionBiasView');
    // Two groups of step 3, listed out of order; index order decides the slots.
    const rollouts = [
      { step: 3, group: 0, index: 1, results: [ok('a', 0)] },
      { step: 3, group: 1, index: 0, results: [ok('a', 0.5)] },
      { step: 3, group: 0, index: 0, results: [ok('a', 1)] },
      { step: 3, group: 1, index: 1, results: [ok('a', 0.5)] },
    ];
    const plain = positionBiasView(['a'], rollouts, null, 1);
    expect(plain).toEqual([expect.objectContaining({ criterion_id: 'a', n: 4, first_wins: 1, second_wins: 1, ties: 2, index: 0 })]);
    const biased = positionBiasView(['a'], rollouts, position(1), 1);
    expect(biased[0]).toMatchObject({ n: 4, first_wins: 4, index: 1 });
  });
});
