// The pool hands back the same buffers to a step that repeats the requests of the step
// before, whatever order they were released in: that is what lets cached bind groups hit.
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../../src/gpu/bufferPool';

function fakeDevice() {
  let made = 0;
  return {
    limits: { maxBufferSize: 1 << 30 },
    createBuffer: ({ size, usage, label }: { size: number; usage: number; label: string }) => ({ size, usage, label: `${label}#${made++}`, destroy() {} }),
  } as unknown as GPUDevice;
}

/** One "step": acquires `n` buffers of one bucket, releases them in `order`; returns their labels in request order. */
function step(pool: BufferPool, n: number, order: (bufs: GPUBuffer[]) => GPUBuffer[]): string[] {
  const bufs = Array.from({ length: n }, () => pool.acquire(100, 1, 'u'));
  for (const b of order(bufs)) pool.release(b);
  return bufs.map((b) => b.label);
}

describe('buffer pool order', () => {
  it('gives a repeated step the same buffers in the same places, released in any order', () => {
    for (const order of [(b: GPUBuffer[]) => b, (b: GPUBuffer[]) => [...b].reverse(), (b: GPUBuffer[]) => [b[2], b[0], b[3], b[1]]]) {
      const pool = new BufferPool(fakeDevice());
      const first = step(pool, 4, order);
      expect(step(pool, 4, order)).toEqual(first);
      expect(step(pool, 4, order)).toEqual(first);
      expect(pool.snapshot().created).toBe(4);
    }
  });

  it('reuses within a step: a release before the next request hands the lowest free buffer back', () => {
    const pool = new BufferPool(fakeDevice());
    const run = () => {
      const a = pool.acquire(100, 1, 'u');
      const b = pool.acquire(100, 1, 'u');
      pool.release(b);
      pool.release(a);
      const c = pool.acquire(100, 1, 'u');
      const d = pool.acquire(100, 1, 'u');
      const e = pool.acquire(100, 1, 'u');
      pool.release(c);
      pool.release(e);
      pool.release(d);
      return [a, b, c, d, e].map((x) => x.label);
    };
    const first = run();
    expect(first).toEqual(['u#0', 'u#1', 'u#0', 'u#1', 'u#2']);
    expect(run()).toEqual(first);
  });

  it('acquireNew never takes a free buffer, so state kept across steps leaves the steps their buffers', () => {
    // A step's temporaries, then state made after them and kept (AdamW moments at the first
    // optimizer step), then the same step again: it must get every buffer back, create none.
    for (const keep of ['acquire', 'acquireNew'] as const) {
      const pool = new BufferPool(fakeDevice());
      const first = step(pool, 3, (b) => b);
      const kept = pool[keep](100, 1, 'moment');
      const created = pool.snapshot().created;
      const second = step(pool, 3, (b) => b);
      if (keep === 'acquireNew') {
        expect(kept.label).toBe('moment#3');
        expect(second).toEqual(first);
        expect(pool.snapshot().created).toBe(created);
      } else {
        // The plain acquire takes the lowest free buffer: the next step is one short.
        expect(kept.label).toBe('u#0');
        expect(second).not.toEqual(first);
        expect(pool.snapshot().created).toBe(created + 1);
      }
      pool.release(kept);
      expect(pool.snapshot().bytesInUse).toBe(0);
    }
  });

  it('keeps usages and sizes apart', () => {
    const pool = new BufferPool(fakeDevice());
    const a = pool.acquire(100, 1, 'u');
    pool.release(a);
    expect(pool.acquire(100, 2, 'v')).not.toBe(a);
    expect(pool.acquire(5000, 1, 'w')).not.toBe(a);
    expect(pool.acquire(100, 1, 'u')).toBe(a);
  });
});
