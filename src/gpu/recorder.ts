// Records many dispatches, copies and readbacks into one command buffer and one queue
// submission. Reads resolve only after submit(): record everything a step needs, submit
// once, then await the few scalars you asked for.
import type { BindGroupCache } from './bindGroupCache';
import type { BufferPool } from './bufferPool';
import type { DispatchPairing, PendingDispatch } from './dispatchPair';
import type { DeviceLossWatch } from './deviceLoss';
import type { KernelPipeline, KernelSpec } from './pipelineCache';
import type { DispatchTiming, ProfileSession } from './kernelProfiler';

export type Binding = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

export interface SubmitCounters {
  submits: number;
  dispatches: number;
  readbacks: number;
  bytesRead: number;
}

/** A dispatch a capture recording saw: its kernel (`name:entryPoint`, spec) and workgroup count. */
export interface CapturedDispatch {
  kernel: string;
  spec: KernelSpec;
  workgroups: number;
}

/** Bytes of one buffer of uniform slots (a recording fills as many as its dispatches need). */
const UNIFORM_CHUNK = 64 * 1024;

/** A buffer of uniform slots being filled: written to the GPU once, when the recording is submitted. */
interface UniformChunk {
  buffer: GPUBuffer;
  data: Uint8Array;
  used: number;
}

interface PendingRead {
  staging: GPUBuffer;
  byteLength: number;
  resolve: (data: ArrayBuffer) => void;
  reject: (err: Error) => void;
}

export class Recorder {
  private readonly encoder: GPUCommandEncoder;
  private pass: GPUComputePassEncoder | null = null;
  private readonly reads: PendingRead[] = [];
  private readonly temporaries: GPUBuffer[] = [];
  private readonly uniformChunks: UniformChunk[] = [];
  private submitted = false;
  private readonly kernels = new Set<KernelPipeline>();
  /** The last dispatch, held back until the next shows whether the two run as one (pairing). */
  private waiting: PendingDispatch | null = null;
  /** A capture recording's dispatches (kernel and workgroups), for a cost model: none of them ran. */
  readonly captured: CapturedDispatch[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly pool: BufferPool,
    private readonly counters: SubmitCounters,
    label = 'step',
    private readonly bindGroups: BindGroupCache | null = null,
    /** Races every await of submit() against the device's loss (null: await plainly). */
    private readonly loss: DeviceLossWatch | null = null,
    /**
     * A capture recording (GpuRuntime.captureKernels): calls are checked as usual but nothing
     * is encoded, written or counted; it is discarded, never submitted.
     */
    readonly dry = false,
    /** A profiled recording (GpuRuntime.profileKernels): a pass per dispatch, with timestamps. */
    private readonly profile: ProfileSession | null = null,
    /** Receives the profiled recording's timings once it has run. */
    private readonly onTimings: ((timings: DispatchTiming[]) => void) | null = null,
    /** Runs adjacent independent dispatches as one (src/gpu/dispatchPair.ts); null: each alone. */
    private readonly pairing: DispatchPairing | null = null,
  ) {
    this.encoder = device.createCommandEncoder({ label });
  }

  /** A lost device may never settle a map, an error scope or a work-done promise: fail instead of hanging. */
  private untilLost<T>(promise: Promise<T>): Promise<T> {
    return this.loss ? this.loss.race(promise) : promise;
  }

  /**
   * A uniform binding holding `data`: a slot of a pooled buffer of slots that the recording
   * fills in order and writes to the GPU with one writeBuffer at submit, instead of a buffer and
   * a writeBuffer per dispatch. A step that records the same dispatches as the one before gets
   * the same buffers and offsets back, so its bind groups still hit the cache.
   */
  uniform(data: ArrayBufferView): Binding {
    const align = this.device.limits.minUniformBufferOffsetAlignment;
    // The binding covers the whole slot (at least 256 bytes, as a pooled buffer of its own did).
    const slot = Math.ceil(Math.max(data.byteLength, 16) / align) * align;
    if (slot > UNIFORM_CHUNK) {
      const buffer = this.pool.acquire(data.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, 'uniform');
      if (!this.dry) this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      this.temporaries.push(buffer);
      return buffer;
    }
    let chunk = this.uniformChunks.at(-1);
    if (!chunk || chunk.used + slot > UNIFORM_CHUNK) {
      const buffer = this.pool.acquire(UNIFORM_CHUNK, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, 'uniforms');
      this.temporaries.push(buffer);
      chunk = { buffer, data: new Uint8Array(UNIFORM_CHUNK), used: 0 };
      this.uniformChunks.push(chunk);
    }
    const offset = chunk.used;
    chunk.data.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), offset);
    chunk.used += slot;
    return { buffer: chunk.buffer, offset, size: slot };
  }

  /** A storage buffer that lives until this recording is submitted (intermediate results). */
  scratch(byteLength: number, label = 'scratch'): GPUBuffer {
    const buffer = this.pool.acquire(
      byteLength,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      label,
    );
    this.temporaries.push(buffer);
    return buffer;
  }

  /**
   * Returns pooled buffers to the pool once this recording has run. Use it for intermediates
   * that recorded commands still read: releasing them earlier could hand them to an upload
   * (queue.writeBuffer) that lands before those commands execute.
   */
  releaseAfterSubmit(...buffers: GPUBuffer[]): void {
    this.assertOpen();
    this.temporaries.push(...buffers);
  }

  dispatch(kernel: KernelPipeline, bindings: readonly Binding[], x: number, y = 1, z = 1): void {
    this.assertOpen();
    if (bindings.length !== kernel.spec.bindings.length) {
      throw new Error(
        `${kernel.spec.name}:${kernel.spec.entryPoint} takes ${kernel.spec.bindings.length} bindings, got ${bindings.length}`,
      );
    }
    if (x === 0 || y === 0 || z === 0) return;
    const max = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (x > max || y > max || z > max) {
      throw new RangeError(`${kernel.spec.name}: dispatch (${x}, ${y}, ${z}) exceeds ${max} workgroups per dimension`);
    }
    const next: PendingDispatch = { kernel, bindings, grid: [x, y, z] };
    if (!this.pairing) return this.encode(next);
    const waiting = this.waiting;
    this.waiting = next;
    if (!waiting) return;
    const pair = this.pairing.pair(waiting, next, (data) => this.uniform(data));
    if (pair) this.waiting = null;
    this.encode(pair ?? waiting);
  }

  /** Encodes the held-back dispatch, if any: before anything that must follow it. */
  private flush(): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting) this.encode(waiting);
  }

  private encode({ kernel, bindings, grid: [x, y, z] }: PendingDispatch): void {
    if (this.dry) {
      this.captured.push({ kernel: `${kernel.spec.name}:${kernel.spec.entryPoint}`, spec: kernel.spec, workgroups: x * y * z });
      return;
    }
    const bindGroup = this.bindGroups
      ? this.bindGroups.get(kernel.layout, bindings)
      : this.device.createBindGroup({
          layout: kernel.layout,
          entries: bindings.map((b, binding) => ({ binding, resource: 'buffer' in b ? b : { buffer: b } })),
        });
    if (this.profile) {
      this.endPass();
      const name = `${kernel.spec.name}:${kernel.spec.entryPoint}${kernel.spec.constants ? ` ${JSON.stringify(kernel.spec.constants)}` : ''}`;
      this.pass = this.encoder.beginComputePass({ label: name, timestampWrites: this.profile.timestampWrites(name, x * y * z) });
    }
    this.pass ??= this.encoder.beginComputePass({ label: 'compute' });
    this.pass.setPipeline(kernel.pipeline);
    this.kernels.add(kernel);
    this.pass.setBindGroup(0, bindGroup);
    this.pass.dispatchWorkgroups(x, y, z);
    this.counters.dispatches++;
    if (this.profile) this.endPass();
  }

  copy(src: GPUBuffer, dst: GPUBuffer, byteLength: number, srcOffset = 0, dstOffset = 0): void {
    this.assertOpen();
    this.flush();
    if (this.dry) return;
    this.endPass();
    this.encoder.copyBufferToBuffer(src, srcOffset, dst, dstOffset, byteLength);
  }

  /** Zeroes a buffer (or a 4-byte-aligned range of it) without a dispatch. */
  clear(buffer: GPUBuffer, offset = 0, size?: number): void {
    this.assertOpen();
    this.flush();
    if (this.dry) return;
    this.endPass();
    this.encoder.clearBuffer(buffer, offset, size);
  }

  /** Schedules a readback of `byteLength` bytes; resolves after submit(). */
  read(buffer: GPUBuffer, byteLength = buffer.size, offset = 0): Promise<ArrayBuffer> {
    this.assertOpen();
    // A capture never runs: its reads never resolve (and nothing awaits them).
    if (this.dry) return new Promise<ArrayBuffer>(() => {});
    const size = Math.ceil(byteLength / 4) * 4;
    const staging = this.pool.acquire(size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'readback');
    this.copy(buffer, staging, size, offset, 0);
    return new Promise((resolve, reject) => this.reads.push({ staging, byteLength, resolve, reject }));
  }

  async readF32(buffer: GPUBuffer, count: number, offsetElements = 0): Promise<Float32Array> {
    return new Float32Array(await this.read(buffer, count * 4, offsetElements * 4));
  }

  async readU32(buffer: GPUBuffer, count: number, offsetElements = 0): Promise<Uint32Array> {
    return new Uint32Array(await this.read(buffer, count * 4, offsetElements * 4));
  }

  /** One queue submission for everything recorded; then the scheduled reads resolve. */
  async submit(): Promise<void> {
    this.assertOpen();
    if (this.dry) throw new Error('a kernel-capture recording cannot be submitted');
    this.flush();
    this.endPass();
    this.submitted = true;
    // Every uniform of the recording, one write per buffer of slots, ahead of the commands.
    for (const c of this.uniformChunks.splice(0)) this.device.queue.writeBuffer(c.buffer, 0, c.data.buffer, c.data.byteOffset, c.used);
    this.profile?.resolve(this.encoder);
    this.device.pushErrorScope('validation');
    this.device.queue.submit([this.encoder.finish()]);
    this.counters.submits++;
    const error = await this.untilLost(this.device.popErrorScope()).catch((err: unknown) => {
      for (const r of this.reads.splice(0)) {
        this.pool.release(r.staging);
        r.reject(err as Error);
      }
      throw err;
    });
    if (error) {
      for (const r of this.reads) this.pool.release(r.staging);
      for (const b of this.temporaries.splice(0)) this.pool.release(b);
      throw new Error(await this.describe(error));
    }
    const reads = this.reads.splice(0);
    await Promise.all(
      reads.map(async (r) => {
        try {
          await this.untilLost(r.staging.mapAsync(GPUMapMode.READ, 0, r.staging.size));
          const copy = r.staging.getMappedRange(0, r.staging.size).slice(0, r.byteLength);
          r.staging.unmap();
          this.counters.readbacks++;
          this.counters.bytesRead += r.byteLength;
          r.resolve(copy);
        } catch (err) {
          // An aborted map is not the user's stop: it must not read as an AbortError upstream.
          const aborted = err instanceof Error && err.name === 'AbortError';
          r.reject(aborted ? new Error(`a GPU readback was aborted: ${err.message}`) : err instanceof Error ? err : new Error(String(err)));
        } finally {
          this.pool.release(r.staging);
        }
      }),
    );
    // Safe to reuse now: the queue has finished every command that read these.
    // After a loss the temporaries are not returned: their device is gone, and so is its pool's use.
    await this.untilLost(this.device.queue.onSubmittedWorkDone());
    for (const b of this.temporaries.splice(0)) this.pool.release(b);
    if (this.profile) this.onTimings?.(await this.untilLost(this.profile.collect()));
    // A read rejected by the loss rejects submit() too, so a caller awaiting only submit() learns of it.
    if (this.loss?.lost) throw this.loss.lost;
  }

  /** Ends a capture recording: its pooled temporaries go back (nothing was written to them). */
  discard(): void {
    if (!this.dry) throw new Error('only a kernel-capture recording can be discarded; submit this one');
    this.flush();
    this.submitted = true;
    for (const b of this.temporaries.splice(0)) this.pool.release(b);
  }

  /** Names the kernel whose WGSL or pipeline failed, rather than only "invalid command buffer". */
  private async describe(submitError: GPUError): Promise<string> {
    for (const kernel of this.kernels) {
      const built = await this.untilLost(kernel.buildError);
      if (built) return `GPU kernel ${kernel.spec.name}:${kernel.spec.entryPoint} failed to build: ${built.message}`;
    }
    return `GPU validation error: ${submitError.message}`;
  }

  private endPass(): void {
    this.pass?.end();
    this.pass = null;
  }

  private assertOpen(): void {
    if (this.submitted) throw new Error('this recording was already submitted; start a new one');
  }
}
