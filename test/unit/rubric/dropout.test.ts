// Rubric Dropout: seeded, group-shared masks that never drop every positive criterion;
// evaluation on the full rubric.
import { describe, expect, it } from 'vitest';
import { dropoutMask, fnv1a32, mulberry32, rubricDropout } from '../../../src/rubric/dropout';
import { weightedMean } from '../../../src/rubric/aggregate';
import { rng } from '../../helpers/random';
import { weighted } from './fixtures';

const R = weighted([
  [3, 'essential'],
  [2, 'important'],
  [1, 'optional'],
  [-2, 'important'],
  [-1, 'optional'],
]);

describe('dropout RNG', () => {
  it('uses FNV-1a 32 and mulberry32 (so exports can reproduce masks)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    const ours = mulberry32(12345);
    const reference = rng(12345); // the test helper's independent copy
    for (let i = 0; i < 5; i++) expect(ours()).toBe(reference());
  });

  it('follows the documented recipe exactly', () => {
    const rand = mulberry32(fnv1a32('42:3:prompt-7'));
    const expected = R.criteria.map(() => rand() >= 0.4);
    if (!expected.slice(0, 3).some(Boolean)) expected[[0, 1, 2][Math.floor(rand() * 3)]] = true;
    expect(dropoutMask(R, { p: 0.4, seed: 42, step: 3, group: 'prompt-7' })).toEqual(expected);
  });
});

describe('dropoutMask', () => {
  it('is deterministic, and changes with seed, step and group', () => {
    const big = weighted(Array.from({ length: 40 }, () => [1, 'important'] as [number, 'important']));
    const mask = (seed: number, step: number, group: string | number) => dropoutMask(big, { p: 0.5, seed, step, group }).join();
    expect(mask(1, 2, 'g')).toBe(mask(1, 2, 'g'));
    expect(mask(1, 2, 'g')).not.toBe(mask(2, 2, 'g'));
    expect(mask(1, 2, 'g')).not.toBe(mask(1, 3, 'g'));
    expect(mask(1, 2, 'g')).not.toBe(mask(1, 2, 'h'));
  });

  it('never drops every positive criterion, even at p = 0.99', () => {
    let restored = 0;
    for (let step = 0; step < 2000; step++) {
      const keep = dropoutMask(R, { p: 0.99, seed: 9, step, group: 0 });
      expect(keep.slice(0, 3).some(Boolean)).toBe(true);
      if (keep.slice(0, 3).filter(Boolean).length === 1) restored++;
    }
    expect(restored).toBeGreaterThan(1900);
  });

  it('drops each criterion with probability p', () => {
    const big = weighted(Array.from({ length: 50 }, () => [1, 'important'] as [number, 'important']));
    let dropped = 0;
    for (let step = 0; step < 400; step++) dropped += dropoutMask(big, { p: 0.3, seed: 5, step, group: 'x' }).filter((k) => !k).length;
    // 20,000 Bernoulli(0.3) draws: std of the fraction is about 0.0032; allow 5 sigma.
    expect(Math.abs(dropped / 20000 - 0.3)).toBeLessThan(0.016);
  });

  it('p = 0 keeps everything; bad options are RangeErrors', () => {
    expect(dropoutMask(R, { p: 0, seed: 1, step: 0, group: 'g' }).every(Boolean)).toBe(true);
    expect(() => dropoutMask(R, { p: 1, seed: 1, step: 0, group: 'g' })).toThrow('dropout p must be in [0, 1), got 1');
    expect(() => dropoutMask(R, { p: 0.3, seed: 1.5, step: 0, group: 'g' })).toThrow('dropout seed must be an integer');
    expect(() => dropoutMask(R, { p: 0.3, seed: 1, step: -1, group: 'g' })).toThrow('dropout step must be a non-negative integer');
  });
});

describe('rubricDropout', () => {
  it('shares one mask across the group and aggregates the kept criteria; evaluation uses the full rubric', () => {
    const group = [
      [1, 0, 1, 1, 0],
      [0, 1, 0, 0, 1],
      [1, 1, 1, 0, 0],
    ];
    const options = { p: 0.5, seed: 11, step: 4, group: 'q1' };
    const { rewards, keep } = rubricDropout(R, group, options);
    expect(keep).toEqual(dropoutMask(R, options));
    expect(keep.some((k) => !k)).toBe(true); // this seed drops something, so the test means something
    group.forEach((scores, i) => expect(rewards[i]).toBeCloseTo(weightedMean(R, scores, { keep })!, 12));
    expect(rewards).not.toEqual(group.map((s) => weightedMean(R, s)));
  });

  it('uses another base aggregation when asked', () => {
    const out = rubricDropout(R, [[1, 1, 1, 0, 0]], { p: 0.5, seed: 11, step: 4, group: 'q1', aggregation: 'strict_all_required' });
    expect(out.rewards).toEqual([1]);
  });
});
