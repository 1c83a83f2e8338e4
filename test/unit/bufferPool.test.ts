import { describe, expect, it } from 'vitest';
import { bucketSize } from '../../src/gpu/bufferPool';

describe('buffer pool size buckets', () => {
  it('rounds small requests up to 256 bytes', () => {
    expect(bucketSize(1)).toBe(256);
    expect(bucketSize(256)).toBe(256);
  });

  it('wastes at most 12.5% and never gives less than asked', () => {
    for (let bytes = 257; bytes < 5_000_000; bytes = Math.ceil(bytes * 1.37)) {
      const size = bucketSize(bytes);
      expect(size).toBeGreaterThanOrEqual(bytes);
      expect(size).toBeLessThanOrEqual(Math.ceil(bytes * 1.125) + 16);
      expect(size % 16).toBe(0);
    }
  });

  it('maps nearby sizes to the same bucket so buffers get reused', () => {
    expect(bucketSize(1000)).toBe(bucketSize(970));
    expect(bucketSize(4096)).toBe(4096);
  });
});
