// Reuses GPU buffers between steps. Sizes are rounded up to one of eight buckets per power
// of two, so a reused buffer wastes at most 12.5% while most requests hit the free list.
// A request gets the free buffer created first (lowest serial), not the last one released:
// then a step that makes the same requests as the one before gets the very same buffers back,
// whatever order they were released in, so its cached bind groups all hit (a LIFO free list
// handed them out reversed every other step and the bind group cache missed).

export interface PoolStats {
  /** Bytes in buffers currently handed out. */
  bytesInUse: number;
  /** Bytes in buffers waiting on the free list. */
  bytesFree: number;
  /** Buffers created since the pool was made (a step that reuses everything adds 0). */
  created: number;
  reused: number;
}

export class BufferPool {
  /** Free buffers per usage and size, sorted by serial, highest first (pop takes the lowest). */
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly owned = new Set<GPUBuffer>();
  private readonly serials = new WeakMap<GPUBuffer, number>();
  private nextSerial = 0;
  private readonly stats: PoolStats = { bytesInUse: 0, bytesFree: 0, created: 0, reused: 0 };

  constructor(private readonly device: GPUDevice) {}

  acquire(byteLength: number, usage: GPUBufferUsageFlags, label = 'pooled'): GPUBuffer {
    const size = bucketSize(Math.max(byteLength, 16));
    if (size > this.device.limits.maxBufferSize) {
      throw new RangeError(
        `${label}: a buffer of ${byteLength} bytes exceeds this GPU's maxBufferSize (${this.device.limits.maxBufferSize} bytes)`,
      );
    }
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    const reused = list?.pop();
    if (reused) {
      this.stats.reused++;
      this.stats.bytesFree -= size;
      this.stats.bytesInUse += size;
      this.owned.add(reused);
      return reused;
    }
    const buffer = this.device.createBuffer({ size, usage, label });
    this.serials.set(buffer, this.nextSerial++);
    this.stats.created++;
    this.stats.bytesInUse += size;
    this.owned.add(buffer);
    return buffer;
  }

  release(buffer: GPUBuffer): void {
    if (!this.owned.delete(buffer)) throw new Error(`buffer "${buffer.label}" was not handed out by this pool`);
    const key = `${buffer.usage}:${buffer.size}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    // Binary search for its place in the descending serial order.
    const serial = this.serials.get(buffer)!;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.serials.get(list[mid])! > serial) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, buffer);
    this.stats.bytesInUse -= buffer.size;
    this.stats.bytesFree += buffer.size;
  }

  /**
   * Destroys a handed-out buffer instead of keeping it for reuse: for big one-of-a-kind buffers
   * (a frozen model's gradients, a closed model's weights) that no later request would fit.
   */
  discard(buffer: GPUBuffer): void {
    if (!this.owned.delete(buffer)) throw new Error(`buffer "${buffer.label}" was not handed out by this pool`);
    this.stats.bytesInUse -= buffer.size;
    buffer.destroy();
  }

  /** Destroys the free list (keeps buffers still in use). */
  trim(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
    this.stats.bytesFree = 0;
  }

  snapshot(): PoolStats {
    return { ...this.stats };
  }
}

export function bucketSize(bytes: number): number {
  const aligned = Math.ceil(bytes / 16) * 16;
  if (aligned <= 256) return 256;
  const pow = 2 ** Math.floor(Math.log2(aligned));
  const step = pow / 8;
  return Math.ceil(aligned / step) * step;
}
