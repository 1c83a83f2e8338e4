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

/** An allocation the GPU refused for lack of memory. */
export interface RefusedAllocation {
  /** The buffer's label (what it was for: 'logits', a weight's name, 'readback'…). */
  label: string;
  bytes: number;
  /** What the GPU said. */
  detail: string;
}

/** How a refused allocation reads: "the buffer "logits" (12.0 MiB)". */
export function describeAllocation(a: Pick<RefusedAllocation, 'label' | 'bytes'>): string {
  const size = a.bytes >= 2 ** 20 ? `${(a.bytes / 2 ** 20).toFixed(1)} MiB` : a.bytes >= 1024 ? `${(a.bytes / 1024).toFixed(1)} KiB` : `${a.bytes} bytes`;
  return `the buffer "${a.label}" (${size})`;
}

export class BufferPool {
  /**
   * The first allocation the GPU refused for lack of memory since the last takeOutOfMemory(), or
   * null. WebGPU reports it through an 'out-of-memory' error scope around createBuffer, resolved
   * before the error scope of any later submission that uses the (invalid) buffer: when that
   * submission fails, the trainer worker reads this to name the buffer (outOfMemoryMessage).
   */
  private refusedFirst: RefusedAllocation | null = null;
  /** Buffers whose allocation was refused: never handed out again. */
  private readonly refused = new WeakSet<GPUBuffer>();
  private failNext = false;
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
    // The test hook's allocation is a new one whatever the free list holds.
    const reused = this.failNext ? undefined : list?.pop();
    if (reused) {
      this.stats.reused++;
      this.stats.bytesFree -= size;
      this.stats.bytesInUse += size;
      this.owned.add(reused);
      return reused;
    }
    const buffer = this.create(size, usage, label);
    this.serials.set(buffer, this.nextSerial++);
    this.stats.created++;
    this.stats.bytesInUse += size;
    this.owned.add(buffer);
    return buffer;
  }

  /**
   * A new buffer, never one from the free list: for state kept across steps (AdamW moments
   * created at the first optimizer step). Taking a free buffer there would take one a step's
   * temporaries got back every step, so the next step would create a buffer and bind groups
   * again where it should reuse everything. Released or discarded like any other.
   */
  acquireNew(byteLength: number, usage: GPUBufferUsageFlags, label = 'pooled'): GPUBuffer {
    // Exact (256-byte multiples), not bucketed: nothing else of this size will ask for it.
    const size = Math.max(256, Math.ceil(byteLength / 256) * 256);
    if (size > this.device.limits.maxBufferSize) {
      throw new RangeError(
        `${label}: a buffer of ${byteLength} bytes exceeds this GPU's maxBufferSize (${this.device.limits.maxBufferSize} bytes)`,
      );
    }
    const buffer = this.create(size, usage, label);
    this.serials.set(buffer, this.nextSerial++);
    this.stats.created++;
    this.stats.bytesInUse += size;
    this.owned.add(buffer);
    return buffer;
  }

  /** The refused allocation, if any, reported once: the next call returns null until another is refused. */
  takeOutOfMemory(): RefusedAllocation | null {
    const refused = this.refusedFirst;
    this.refusedFirst = null;
    return refused;
  }

  /** A refused allocation not yet taken by takeOutOfMemory(), or null. */
  get outOfMemory(): RefusedAllocation | null {
    return this.refusedFirst;
  }

  /**
   * TEST HOOK: the next acquire() is refused as a GPU without enough free memory refuses it (the
   * buffer it returns is unusable and outOfMemory names it), so tests can reach the
   * out-of-memory path on any adapter.
   */
  failNextAllocation(): void {
    this.failNext = true;
  }

  /** createBuffer inside an 'out-of-memory' error scope: a refusal is recorded with the buffer's label. */
  private create(size: number, usage: GPUBufferUsageFlags, label: string): GPUBuffer {
    // Devices without error scopes (test fakes) only create.
    const scoped = typeof this.device.pushErrorScope === 'function';
    if (scoped) this.device.pushErrorScope('out-of-memory');
    const buffer = this.device.createBuffer({ size, usage, label });
    if (scoped) {
      void this.device.popErrorScope().then(
        (error) => error && this.refuse(buffer, label, size, error.message),
        () => {}, // a lost device: DeviceLossWatch reports that
      );
    }
    if (this.failNext) {
      this.failNext = false;
      buffer.destroy(); // unusable, as a refused allocation's invalid buffer is
      this.refuse(buffer, label, size, 'refused by the failNextAllocation test hook');
    }
    return buffer;
  }

  private refuse(buffer: GPUBuffer, label: string, bytes: number, detail: string): void {
    this.refused.add(buffer);
    this.refusedFirst ??= { label, bytes, detail };
  }

  release(buffer: GPUBuffer): void {
    if (!this.owned.delete(buffer)) throw new Error(`buffer "${buffer.label}" was not handed out by this pool`);
    if (this.refused.has(buffer)) {
      // An invalid buffer must not be handed out again.
      this.stats.bytesInUse -= buffer.size;
      buffer.destroy();
      return;
    }
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
