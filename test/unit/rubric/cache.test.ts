// The judge-result LRU: recency order, size limits, only successes stored, statistics.
import { describe, expect, it } from 'vitest';
import { JudgeCache } from '../../../src/rubric/cache';
import type { CriterionResult } from '../../../src/rubric/judge';

const key = (completion: string, criterionId = 'c', rubricVersion = 'v') => ({ rubricVersion, criterionId, prompt: 'p', completion });
const ok = (score: number): CriterionResult => ({ criterion_id: 'c', status: 'ok', score, reason: '' });

describe('JudgeCache', () => {
  it('evicts the least recently used entry', () => {
    const cache = new JudgeCache(2);
    cache.set(key('a'), ok(0.1));
    cache.set(key('b'), ok(0.2));
    expect(cache.get(key('a'))?.score).toBe(0.1); // a is now the most recent
    cache.set(key('c'), ok(0.3));
    expect(cache.get(key('b'))).toBeUndefined();
    expect(cache.get(key('a'))?.score).toBe(0.1);
    expect(cache.get(key('c'))?.score).toBe(0.3);
    expect(cache.stats()).toEqual({ hits: 3, misses: 1, size: 2 });
  });

  it('keys on every part: version, criterion, prompt, completion', () => {
    const cache = new JudgeCache();
    cache.set(key('a'), ok(1));
    expect(cache.get(key('a', 'd'))).toBeUndefined();
    expect(cache.get(key('a', 'c', 'v2'))).toBeUndefined();
    expect(cache.get({ ...key('a'), prompt: 'q' })).toBeUndefined();
    expect(cache.get(key('a'))).toBeDefined();
  });

  it('bounds the characters held', () => {
    const cache = new JudgeCache(100, 60);
    cache.set(key('x'.repeat(20)), ok(1));
    cache.set(key('y'.repeat(20)), ok(1)); // two keys of ~37 characters exceed 60
    expect(cache.stats().size).toBe(1);
    expect(cache.get(key('y'.repeat(20)))).toBeDefined();
    cache.set(key('z'.repeat(100)), ok(1)); // larger than the whole cache: not stored
    expect(cache.get(key('z'.repeat(100)))).toBeUndefined();
  });

  it('stores only ok results, and clears', () => {
    const cache = new JudgeCache();
    cache.set(key('a'), { criterion_id: 'c', status: 'unscorable', score: null, reason: 'timeout' });
    cache.set(key('b'), { criterion_id: 'c', status: 'needs_model', score: null, reason: '' });
    expect(cache.stats().size).toBe(0);
    cache.set(key('c'), ok(1));
    cache.clear();
    expect(cache.stats()).toEqual({ hits: 0, misses: 0, size: 0 });
  });

  it('rejects bad sizes', () => {
    expect(() => new JudgeCache(0)).toThrow(RangeError);
    expect(() => new JudgeCache(10, 0)).toThrow(RangeError);
  });
});
