// approxBytes: the size estimate behind run sizes and pruning figures.
import { describe, expect, it } from 'vitest';
import { approxBytes } from '../../../src/store';

describe('approxBytes', () => {
  it('counts binary data at its byte length', () => {
    expect(approxBytes(new ArrayBuffer(1000))).toBe(1002);
    expect(approxBytes(new Float32Array(10))).toBe(42);
  });

  it('counts Latin-1 text one byte a character, wider text two', () => {
    expect(approxBytes('hello')).toBe(7);
    expect(approxBytes('héllo')).toBe(7);
    expect(approxBytes('h€llo')).toBe(12);
  });

  it('adds up objects (keys too) and arrays', () => {
    expect(approxBytes({ a: 1, bb: 'xy' })).toBe(2 + (1 + 10) + (2 + 4));
    expect(approxBytes([1, null, true])).toBe(2 + 10 + 2 + 2);
    expect(approxBytes({ w: new ArrayBuffer(4096) })).toBeGreaterThan(4096);
  });
});
