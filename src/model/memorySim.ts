// The bookkeeping behind the memory estimate (memory.ts): the buffer pool's size buckets, lists
// of the buffers a submission acquires, a recording scratch's reuse, and the pool itself —
// what it creates and what it hands out again from its free lists. Pure: no GPU import.

export interface BufferEstimate {
  label: string;
  /** Bytes requested. */
  bytes: number;
  /** Bytes the pool allocates for it (its size bucket). */
  allocated: number;
}

/** The buffer pool's size buckets (bufferPool.ts bucketSize): 8 per power of two, 256 B minimum. */
export function poolBucket(bytes: number): number {
  const aligned = Math.ceil(Math.max(bytes, 16) / 16) * 16;
  if (aligned <= 256) return 256;
  const pow = 2 ** Math.floor(Math.log2(aligned));
  const step = pow / 8;
  return Math.ceil(aligned / step) * step;
}

/** Buffers acquired from the pool, in order. */
export class Tally {
  readonly buffers: BufferEstimate[] = [];
  add(label: string, bytes: number, copies = 1): void {
    for (let i = 0; i < copies; i++) this.buffers.push({ label, bytes, allocated: poolBucket(bytes) });
  }
  get total(): number {
    return this.buffers.reduce((s, b) => s + b.allocated, 0);
  }
}

/**
 * Mirrors scratch.ts RecordingScratch: take() reuses a dead buffer of the same size bucket
 * before acquiring one; alloc() always acquires (an op's own output from the pool). Every
 * acquisition is tallied.
 */
export class ScratchSim {
  private readonly free = new Map<number, number>();
  constructor(readonly tally: Tally) {}
  alloc(label: string, bytes: number): number {
    this.tally.add(label, bytes);
    return poolBucket(bytes);
  }
  take(label: string, bytes: number): number {
    const bucket = poolBucket(bytes);
    const n = this.free.get(bucket) ?? 0;
    if (n > 0) {
      this.free.set(bucket, n - 1);
      return bucket;
    }
    return this.alloc(label, bytes);
  }
  done(...buckets: number[]): void {
    for (const b of buckets) this.free.set(b, (this.free.get(b) ?? 0) + 1);
  }
}

/**
 * Mirrors bufferPool.ts for storage buffers (they all share one usage): a released buffer goes
 * on its bucket's free list and the next acquire of that bucket takes it; otherwise the pool
 * creates one. `created` is what the pool holds for good (it never frees unless trimmed).
 */
export class PoolSim {
  private readonly free = new Map<number, number>();
  readonly created: BufferEstimate[] = [];

  acquire(buffers: readonly BufferEstimate[]): void {
    for (const b of buffers) {
      const n = this.free.get(b.allocated) ?? 0;
      if (n > 0) this.free.set(b.allocated, n - 1);
      else this.created.push(b);
    }
  }

  release(buffers: readonly BufferEstimate[]): void {
    for (const b of buffers) this.free.set(b.allocated, (this.free.get(b.allocated) ?? 0) + 1);
  }

  /** One recording: everything it acquires is released after its submission. */
  submission(buffers: readonly BufferEstimate[]): void {
    this.acquire(buffers);
    this.release(buffers);
  }

  get bytes(): number {
    return this.created.reduce((s, b) => s + b.allocated, 0);
  }
}

/** A buffer list's bytes as the pool allocates them. */
export function allocatedBytes(buffers: readonly BufferEstimate[]): number {
  return buffers.reduce((s, b) => s + b.allocated, 0);
}
