// The GPU runtime every op launcher uses: one device, a pipeline cache, a buffer pool and
// counters of submissions and readbacks (benchmarks report them per training step).
import { BindGroupCache } from './bindGroupCache';
import { acquireGpu, type AcquireOptions, type AcquiredGpu, type GpuInfo } from './device';
import { BufferPool } from './bufferPool';
import { DispatchPairing } from './dispatchPair';
import { DeviceLossWatch } from './deviceLoss';
import { PipelineCache, type KernelSpec, type KernelPipeline } from './pipelineCache';
import { Recorder, type CapturedDispatch, type SubmitCounters } from './recorder';
import { ProfileSession, type DispatchTiming } from './kernelProfiler';

/** Usage of every storage buffer we hand out: kernels read/write it, copies go both ways. */
function storageUsage(): GPUBufferUsageFlags {
  return GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
}

/**
 * Everything a step costs in setup and commands, as running totals: benchmarks print the
 * difference over a step, and a test asserts the deterministic ones (a steady-state step
 * creates no bind groups, pipelines or buffers).
 */
export interface EngineCounters {
  submits: number;
  dispatches: number;
  readbacks: number;
  bytesRead: number;
  bindGroupsCreated: number;
  bindGroupsReused: number;
  /** Pipelines compiled on demand, when a dispatch first needed them (warm-up avoids these). */
  pipelinesCreated: number;
  /** Pipelines compiled ahead of use by warmPipelines (createComputePipelineAsync). */
  pipelinesWarmed: number;
  /** GPU buffers the pool had to create (a step that reuses everything adds 0). */
  buffersCreated: number;
}

export class GpuRuntime {
  readonly pipelines: PipelineCache;
  readonly pool: BufferPool;
  /** Bind groups reused across recordings (stats: created vs reused). */
  readonly bindGroups: BindGroupCache;
  readonly counters: SubmitCounters = { submits: 0, dispatches: 0, readbacks: 0, bytesRead: 0 };
  /** Every recorder races its awaits against this: a lost device never settles them. */
  readonly loss: DeviceLossWatch;
  /**
   * Whether recordings run adjacent independent dispatches as one (src/gpu/dispatchPair.ts).
   * On by default; tests that inspect which kernels an op chose, and before/after measurements,
   * turn it off.
   */
  pairDispatches = true;
  private readonly pairing: DispatchPairing;

  /** `record`'s result with pairing off while it runs: the dispatches each op makes on its own. */
  unpaired<T>(record: () => T): T {
    const was = this.pairDispatches;
    this.pairDispatches = false;
    try {
      return record();
    } finally {
      this.pairDispatches = was;
    }
  }

  private constructor(
    readonly device: GPUDevice,
    readonly info: GpuInfo,
    readonly lost: Promise<GPUDeviceLostInfo>,
  ) {
    this.pipelines = new PipelineCache(device);
    this.pool = new BufferPool(device);
    this.bindGroups = new BindGroupCache(device);
    this.loss = new DeviceLossWatch(lost);
    this.pairing = new DispatchPairing(device.limits, (spec) => this.pipeline(spec));
  }

  /** The running totals now; subtract with countersSince. */
  snapshotCounters(): EngineCounters {
    return {
      ...this.counters,
      bindGroupsCreated: this.bindGroups.stats.created,
      bindGroupsReused: this.bindGroups.stats.reused,
      pipelinesCreated: this.pipelines.compiled,
      pipelinesWarmed: this.pipelines.warmed,
      buffersCreated: this.pool.snapshot().created,
    };
  }

  /** What happened since `before` (a snapshotCounters result). */
  countersSince(before: EngineCounters): EngineCounters {
    const now = this.snapshotCounters();
    const out = { ...now };
    for (const k of Object.keys(now) as (keyof EngineCounters)[]) out[k] = now[k] - before[k];
    return out;
  }

  static async create(options?: AcquireOptions): Promise<GpuRuntime> {
    const gpu: AcquiredGpu = await acquireGpu(options);
    return new GpuRuntime(gpu.device, gpu.info, gpu.lost);
  }

  /** Null while the device works; the loss reason once it is gone. */
  get lostMessage(): string | null {
    const lost = this.loss.lost;
    return lost ? `${lost.reason}: ${lost.detail}` : null;
  }

  pipeline(spec: KernelSpec): KernelPipeline {
    if (this.loss.lost) throw this.loss.lost;
    if (this.capture) {
      this.capture.specs.add(spec);
      return { spec, pipeline: null as unknown as GPUComputePipeline, layout: null as unknown as GPUBindGroupLayout, key: '', buildError: Promise.resolve(null) };
    }
    return this.pipelines.get(spec);
  }

  recorder(label?: string): Recorder {
    if (this.loss.lost) throw this.loss.lost;
    const profiling = this.profiling && this.capture === null ? this.profiling : null;
    const rec = new Recorder(this.device, this.pool, this.counters, label, this.bindGroups, this.loss, this.capture !== null, profiling && new ProfileSession(this.device), profiling && ((t) => profiling.push(...t)), this.pairDispatches ? this.pairing : null);
    this.capture?.recorders.push(rec);
    return rec;
  }

  private capture: { specs: Set<KernelSpec>; recorders: Recorder[] } | null = null;
  /** While profileKernels runs: the timings of the recordings submitted so far. */
  private profiling: DispatchTiming[] | null = null;

  /**
   * Runs `run` with every recording it makes profiled (src/gpu/kernelProfiler.ts: a pass per
   * dispatch with GPU timestamps) and returns each submitted dispatch's kernel and GPU time, in
   * order. Needs the adapter's `timestamp-query` feature. A measuring tool (bench/profile.mjs).
   */
  async profileKernels<T>(run: () => Promise<T>): Promise<{ result: T; timings: DispatchTiming[] }> {
    if (!this.device.features.has('timestamp-query')) throw new Error("kernel profiling needs the adapter's timestamp-query feature, which this one lacks");
    if (this.profiling) throw new Error('kernel profiles do not nest');
    const timings: DispatchTiming[] = [];
    this.profiling = timings;
    try {
      const result = await run();
      return { result, timings };
    } finally {
      this.profiling = null;
    }
  }

  /**
   * Runs `record` (synchronous recording code, e.g. a model's forward and backward) without
   * compiling, encoding or submitting anything, and returns the kernels it would use: the list
   * warmPipelines compiles ahead of the first real step. Recorders made meanwhile are
   * discarded; `record` releases the buffers it acquires, as it would after a submission.
   */
  captureKernels(record: () => void): KernelSpec[] {
    return [...this.captured(record).specs];
  }

  /**
   * Like captureKernels, but returns every dispatch `record` would make (kernel and workgroups),
   * in order: what a step costs in commands, counted without compiling or running anything.
   */
  captureDispatches(record: () => void): CapturedDispatch[] {
    return this.captured(record).recorders.flatMap((rec) => rec.captured);
  }

  /** Runs `record` in capture mode (nothing compiled, encoded or submitted); its recorders are discarded after. */
  private captured(record: () => void): { specs: Set<KernelSpec>; recorders: Recorder[] } {
    if (this.capture) throw new Error('kernel or dispatch captures do not nest');
    const capture = (this.capture = { specs: new Set<KernelSpec>(), recorders: [] as Recorder[] });
    try {
      record();
    } finally {
      this.capture = null;
      for (const rec of capture.recorders) rec.discard();
    }
    return capture;
  }

  /**
   * Compiles `specs` with createComputePipelineAsync (off the queue, while the page is read)
   * and caches them, so the first step that dispatches them compiles nothing. Resolves once all
   * are built; a spec that fails to build is left to the first dispatch, which reports it.
   */
  warmPipelines(specs: readonly KernelSpec[]): Promise<void> {
    if (this.loss.lost) throw this.loss.lost;
    return this.pipelines.warm(specs);
  }

  /** A pooled storage buffer filled with `data` (the caller releases it to the pool). */
  upload(data: ArrayBufferView, label = 'upload'): GPUBuffer {
    const buffer = this.pool.acquire(data.byteLength, storageUsage(), label);
    this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return buffer;
  }

  /** A pooled storage buffer of at least `byteLength` bytes, contents undefined. */
  storage(byteLength: number, label = 'storage'): GPUBuffer {
    return this.pool.acquire(byteLength, storageUsage(), label);
  }

  /**
   * Like storage(), but always a new buffer, never one from the free list: for state a run keeps
   * across steps, so it never takes a buffer the steps' temporaries get back every step.
   */
  persistentStorage(byteLength: number, label = 'storage'): GPUBuffer {
    return this.pool.acquireNew(byteLength, storageUsage(), label);
  }

  release(...buffers: GPUBuffer[]): void {
    for (const b of buffers) this.pool.release(b);
  }

  /** Splits `count` workgroups into an (x, y) grid within the per-dimension limit. */
  grid(count: number): [number, number] {
    const max = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (count <= max) return [Math.max(count, 1), 1];
    const y = Math.ceil(count / max);
    return [Math.ceil(count / y), y];
  }

  destroy(): void {
    this.pool.trim();
    this.device.destroy();
  }
}
