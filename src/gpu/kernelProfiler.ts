// GPU time of every dispatch, for finding what a step spends its time on (bench/profile.mjs).
// While GpuRuntime.profileKernels runs, each recording puts every dispatch in a compute pass of
// its own with timestamp writes at the pass's start and end (the `timestamp-query` feature),
// resolves the queries at submit and reads them back after it. Profiling changes what it
// measures a little (a pass per dispatch), so it is a tool, never on in a normal run.

/** One profiled dispatch: its kernel (`name:entryPoint`, with override constants) and GPU time. */
export interface DispatchTiming {
  kernel: string;
  workgroups: number;
  ms: number;
}

/** WebGPU's largest query set. */
const QUERIES_PER_SET = 4096;

interface QueryBlock {
  set: GPUQuerySet;
  labels: { kernel: string; workgroups: number }[];
  resolved: GPUBuffer | null;
  staging: GPUBuffer | null;
}

/** The timestamp queries of one recording. */
export class ProfileSession {
  private readonly blocks: QueryBlock[] = [];

  constructor(private readonly device: GPUDevice) {}

  /** The timestamp writes of the next dispatch's own pass. */
  timestampWrites(kernel: string, workgroups: number): GPUComputePassTimestampWrites {
    let block = this.blocks.at(-1);
    if (!block || block.labels.length * 2 >= QUERIES_PER_SET) {
      block = { set: this.device.createQuerySet({ type: 'timestamp', count: QUERIES_PER_SET }), labels: [], resolved: null, staging: null };
      this.blocks.push(block);
    }
    const index = block.labels.length * 2;
    block.labels.push({ kernel, workgroups });
    return { querySet: block.set, beginningOfPassWriteIndex: index, endOfPassWriteIndex: index + 1 };
  }

  /** Resolves the queries into buffers the readback can map; call before finishing the encoder. */
  resolve(encoder: GPUCommandEncoder): void {
    for (const block of this.blocks) {
      const bytes = block.labels.length * 2 * 8;
      if (bytes === 0) continue;
      block.resolved = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      block.staging = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      encoder.resolveQuerySet(block.set, 0, block.labels.length * 2, block.resolved, 0);
      encoder.copyBufferToBuffer(block.resolved, 0, block.staging, 0, bytes);
    }
  }

  /** After the submission: each dispatch's time, in recording order; frees the queries. */
  async collect(): Promise<DispatchTiming[]> {
    const out: DispatchTiming[] = [];
    try {
      for (const block of this.blocks) {
        if (!block.staging) continue;
        await block.staging.mapAsync(GPUMapMode.READ);
        const stamps = new BigInt64Array(block.staging.getMappedRange().slice(0));
        block.staging.unmap();
        block.labels.forEach((label, k) => {
          // Timestamps are nanoseconds; an implementation may quantize them or, rarely, give an end before its start.
          const ns = Number(stamps[2 * k + 1] - stamps[2 * k]);
          out.push({ ...label, ms: Math.max(0, ns) / 1e6 });
        });
      }
    } finally {
      for (const block of this.blocks) {
        block.set.destroy();
        block.resolved?.destroy();
        block.staging?.destroy();
      }
      this.blocks.length = 0;
    }
    return out;
  }
}

/** Per kernel: dispatches, total and mean time, and share of the profiled time, largest first. */
export interface KernelTotal {
  kernel: string;
  dispatches: number;
  ms: number;
  share: number;
}

export function kernelTotals(timings: readonly DispatchTiming[]): KernelTotal[] {
  const by = new Map<string, { dispatches: number; ms: number }>();
  for (const t of timings) {
    const e = by.get(t.kernel) ?? { dispatches: 0, ms: 0 };
    e.dispatches++;
    e.ms += t.ms;
    by.set(t.kernel, e);
  }
  const total = timings.reduce((s, t) => s + t.ms, 0);
  return [...by]
    .map(([kernel, e]) => ({ kernel, dispatches: e.dispatches, ms: e.ms, share: total > 0 ? e.ms / total : 0 }))
    .sort((a, b) => b.ms - a.ms);
}
