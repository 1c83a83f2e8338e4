// The model's parameters on the GPU, uploaded once and kept for the model's life. The tensors
// added together share buffers ("arenas"): their values are ranges of one buffer, their
// gradients ranges of another with the same layout, and the AdamW moments of all trainable
// tensors ranges of a third (each tensor at an offset the device accepts for a binding, so an
// op binds a tensor as before), up to the device's buffer and binding limits. So the optimizer
// binds three buffers for any number of tensors: the grad norm's first pass and AdamW are one
// dispatch each (shaders/grad_norm.wgsl partial_sums_flat, shaders/adamw_flat.wgsl), and
// zeroing the gradients is one clear. A frozen tensor (the base weights under LoRA) keeps only
// its value: no gradient, no moments, and the optimizer never sees it.
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import { sharedMomentsLayout, type AdamWTensor } from '../ops/adamw';
import { arenaLayout } from '../ops/flatTensors';
import type { ModelConfig } from './config';
import type { Tensor } from './safetensors';
import { parameterSpecs, type ParameterSpec } from './weights';

export interface Parameter {
  name: string;
  shape: number[];
  count: number;
  /** A range of the buffer holding the values of the tensors added with this one. */
  value: BufferRange;
  /** Null when the tensor is frozen; else a range of their gradients' buffer, at the value's offset. */
  grad: BufferRange | null;
  /** AdamW exp_avg and exp_avg_sq, created (zeroed) on the first optimizer step: ranges of a buffer shared with the other tensors' moments. */
  m: Binding | null;
  v: Binding | null;
}

/** `size` bytes of a buffer from byte `offset`: a tensor in an arena. */
export interface BufferRange {
  buffer: GPUBuffer;
  offset: number;
  size: number;
}

/**
 * Tensors of one size at one stride in one arena, seen as a batch of matrices: `value` and `grad`
 * cover them all, the i-th starting `stride` floats after the (i-1)-th. A matmul's batch then
 * reads or writes them in one dispatch (q, k and v of a layer).
 */
export interface ParameterStack {
  value: BufferRange;
  /** Null when the tensors are frozen. */
  grad: BufferRange | null;
  /** Floats from one tensor's start to the next's. */
  stride: number;
  /** Floats per tensor. */
  count: number;
}

/** A binding's buffer and byte offset. */
function rangeOf(b: Binding): { buffer: GPUBuffer; offset: number } {
  return 'buffer' in b ? { buffer: b.buffer, offset: b.offset ?? 0 } : { buffer: b, offset: 0 };
}

export class ParameterStore {
  private readonly byName = new Map<string, Parameter>();
  /** The buffers holding the moments (one per set of tensors given moments together). */
  private momentBuffers: GPUBuffer[] = [];
  /** The arenas: values, and gradients (absent when frozen), one pair per set of tensors added together. */
  private valueBuffers: GPUBuffer[] = [];
  private gradBuffers: GPUBuffer[] = [];

  private constructor(
    private readonly rt: GpuRuntime,
    readonly list: Parameter[],
  ) {
    for (const p of list) this.byName.set(p.name, p);
  }

  /** Uploads the engine's tensors (see weights.ts fromHfTensors) in parameterSpecs order, all trainable. */
  /** `frozen`: no gradient buffers at all (a base LoRA will be attached to, or a model only run). */
  static create(rt: GpuRuntime, config: ModelConfig, tensors: Map<string, Tensor>, options: { frozen?: boolean } = {}): ParameterStore {
    const store = new ParameterStore(rt, []);
    store.add(parameterSpecs(config), tensors, options);
    return store;
  }

  /** Uploads further tensors (LoRA adapters), trainable unless `frozen`; names must be new. */
  add(specs: readonly ParameterSpec[], tensors: Map<string, Tensor>, options: { frozen?: boolean } = {}): void {
    const data: Float32Array[] = [];
    for (const spec of specs) {
      if (this.byName.has(spec.name)) throw new Error(`the model already has a parameter ${spec.name}`);
      const t = tensors.get(spec.name);
      if (!t) throw new Error(`missing tensor ${spec.name}`);
      const count = spec.shape.reduce((a, b) => a * b, 1);
      if (t.data.length !== count) throw new Error(`tensor ${spec.name} has ${t.data.length} values, its shape ${JSON.stringify(spec.shape)} needs ${count}`);
      data.push(t.data);
    }
    const added: Parameter[] = [];
    const valueBuffers: GPUBuffer[] = [];
    const gradBuffers: GPUBuffer[] = [];
    try {
      for (const [start, end] of this.arenaGroups(data.map((d) => d.length))) {
        const layout = arenaLayout(data.slice(start, end).map((d) => d.length), this.rt.device.limits.minStorageBufferOffsetAlignment);
        const values = this.rt.persistentStorage(layout.byteLength, 'parameters');
        valueBuffers.push(values);
        const grads = options.frozen ? null : this.rt.persistentStorage(layout.byteLength, 'gradients');
        if (grads) gradBuffers.push(grads);
        for (let k = start; k < end; k++) {
          const offset = layout.offsets[k - start];
          const size = data[k].byteLength;
          this.rt.device.queue.writeBuffer(values, offset, data[k].buffer, data[k].byteOffset, size);
          const spec = specs[k];
          added.push({ name: spec.name, shape: spec.shape, count: data[k].length, value: { buffer: values, offset, size }, grad: grads && { buffer: grads, offset, size }, m: null, v: null });
        }
      }
    } catch (err) {
      for (const b of [...valueBuffers, ...gradBuffers]) this.rt.pool.discard(b);
      throw err;
    }
    for (const p of added) {
      this.list.push(p);
      this.byName.set(p.name, p);
    }
    this.valueBuffers.push(...valueBuffers);
    this.gradBuffers.push(...gradBuffers);
  }

  /**
   * Consecutive tensors [start, end) that share an arena: as many as fit the device's buffer
   * and binding limits; a tensor past them alone (its ops' own checks then name the limit).
   */
  private arenaGroups(counts: readonly number[]): [number, number][] {
    const limits = this.rt.device.limits;
    const limit = Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
    const align = limits.minStorageBufferOffsetAlignment;
    const groups: [number, number][] = [];
    let start = 0;
    let bytes = 0;
    counts.forEach((count, k) => {
      const own = Math.ceil((count * 4) / align) * align;
      if (k > start && bytes + own > limit) {
        groups.push([start, k]);
        start = k;
        bytes = 0;
      }
      bytes += own;
    });
    if (counts.length > start) groups.push([start, counts.length]);
    return groups;
  }

  /** Freezes every tensor held now: frees its gradient and AdamW moments (values stay). */
  freeze(): void {
    // Destroyed, not pooled: a 135M model's gradients are 0.5 GB nothing else would reuse.
    for (const b of this.gradBuffers) this.rt.pool.discard(b);
    this.gradBuffers = [];
    for (const p of this.list) p.grad = p.m = p.v = null;
    for (const b of this.momentBuffers) this.rt.pool.discard(b);
    this.momentBuffers = [];
  }

  get(name: string): Parameter {
    const p = this.byName.get(name);
    if (!p) throw new Error(`the model has no parameter ${name}`);
    return p;
  }

  /**
   * The named tensors as one stack, or null when they do not form one: different sizes, other
   * arenas, or uneven spacing (the arena keeps tensors in the order they were added, so
   * parameterSpecs lists q, k and v next to each other).
   */
  stack(names: readonly string[]): ParameterStack | null {
    const ps = names.map((n) => this.get(n));
    const [first, second] = ps;
    if (!first) return null;
    const stride = second ? second.value.offset - first.value.offset : 0;
    const frozen = first.grad === null;
    const even = ps.every(
      (p, i) =>
        p.count === first.count &&
        p.value.buffer === first.value.buffer &&
        p.value.offset === first.value.offset + i * stride &&
        (p.grad === null) === frozen &&
        (frozen || p.grad!.buffer === first.grad!.buffer),
    );
    if (!even || stride < 0 || (ps.length > 1 && stride < first.value.size)) return null;
    const size = (ps.length - 1) * stride + first.value.size;
    return {
      value: { buffer: first.value.buffer, offset: first.value.offset, size },
      grad: frozen ? null : { buffer: first.grad!.buffer, offset: first.grad!.offset, size },
      stride: stride / 4,
      count: first.count,
    };
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The tensors the optimizer updates. */
  get trainable(): Parameter[] {
    return this.list.filter((p) => p.grad !== null);
  }

  /** Number of trainable values. */
  get size(): number {
    return this.trainable.reduce((s, p) => s + p.count, 0);
  }

  /** Number of values, frozen ones included. */
  get totalSize(): number {
    return this.list.reduce((s, p) => s + p.count, 0);
  }

  /** GPU bytes held for values, gradients and (once created) AdamW moments. */
  get bytes(): number {
    return [...this.valueBuffers, ...this.gradBuffers, ...this.momentBuffers].reduce((s, b) => s + b.size, 0);
  }

  /** Zeroes every gradient: one clear per arena. */
  recordZeroGrads(rec: Recorder): void {
    for (const b of this.gradBuffers) rec.clear(b);
  }

  /** AdamW views of every trainable tensor; the first call creates the (zeroed) moments. */
  optimizerTensors(rec: Recorder): AdamWTensor[] {
    const trainable = this.trainable;
    const fresh = trainable.filter((p) => !p.m || !p.v);
    for (const buffer of this.allocateMoments(fresh)) rec.clear(buffer);
    return trainable.map((p) => ({ param: p.value, grad: p.grad!, m: p.m!, v: p.v!, count: p.count }));
  }

  /**
   * Buffers for the moments of `params` (contents undefined): consecutive tensors share one,
   * laid out by sharedMomentsLayout, up to the device's buffer and binding limits; a tensor
   * whose two moments alone pass them gets a buffer per moment. Returns the new buffers.
   */
  private allocateMoments(params: readonly Parameter[]): GPUBuffer[] {
    const limits = this.rt.device.limits;
    const align = limits.minStorageBufferOffsetAlignment;
    const limit = Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
    // New buffers: the first step's temporaries (sampling's, in GRPO) are back on the free list
    // by now, and the moments taking one would leave the next step short of it.
    const made: GPUBuffer[] = [];
    const share = (group: readonly Parameter[]) => {
      if (group.length === 0) return;
      const layout = sharedMomentsLayout(group.map((p) => p.count), align);
      const buffer = this.rt.persistentStorage(layout.byteLength, 'exp_avg, exp_avg_sq');
      made.push(buffer);
      group.forEach((p, k) => {
        p.m = { buffer, offset: layout.m[k], size: p.count * 4 };
        p.v = { buffer, offset: layout.v[k], size: p.count * 4 };
      });
    };
    let group: Parameter[] = [];
    for (const p of params) {
      if (sharedMomentsLayout([p.count], align).byteLength > limit) {
        p.m = this.rt.persistentStorage(p.count * 4, `${p.name}.exp_avg`);
        p.v = this.rt.persistentStorage(p.count * 4, `${p.name}.exp_avg_sq`);
        made.push(p.m, p.v);
        continue;
      }
      if (sharedMomentsLayout([...group, p].map((q) => q.count), align).byteLength > limit) {
        share(group);
        group = [];
      }
      group.push(p);
    }
    share(group);
    this.momentBuffers.push(...made);
    return made;
  }

  /** Sets the trainable tensors' AdamW moments from tensors named exp_avg.<name> / exp_avg_sq.<name> (a checkpoint). */
  loadMoments(moments: Map<string, Tensor>): void {
    const trainable = this.trainable;
    for (const p of trainable) {
      const m = moments.get(`exp_avg.${p.name}`);
      const v = moments.get(`exp_avg_sq.${p.name}`);
      if (!m || !v || m.data.length !== p.count || v.data.length !== p.count) {
        throw new Error(`optimizer.safetensors: missing or misshapen moments for ${p.name}`);
      }
    }
    this.allocateMoments(trainable.filter((p) => !p.m || !p.v));
    for (const p of trainable) {
      for (const [which, key] of [['m', `exp_avg.${p.name}`], ['v', `exp_avg_sq.${p.name}`]] as const) {
        const { buffer, offset } = rangeOf(p[which]!);
        const data = moments.get(key)!.data;
        this.rt.device.queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength);
      }
    }
  }

  /** Overwrites a tensor's value (e.g. a loaded adapter); the data must match its shape. */
  writeValue(name: string, data: Float32Array): void {
    const p = this.get(name);
    if (data.length !== p.count) throw new Error(`${name} holds ${p.count} values (shape ${JSON.stringify(p.shape)}), got ${data.length}`);
    this.rt.device.queue.writeBuffer(p.value.buffer, p.value.offset, data.buffer, data.byteOffset, data.byteLength);
  }

  /**
   * Reads tensors back in one submission, keyed by internal name: every value, or the
   * gradients / moments of the trainable tensors (frozen ones have none).
   */
  async read(which: 'value' | 'grad' | 'm' | 'v' = 'value', names?: readonly string[]): Promise<Map<string, Tensor>> {
    const chosen = names ? names.map((n) => this.get(n)) : which === 'value' ? this.list : this.trainable;
    for (const p of chosen) {
      if (!p[which]) throw new Error(which === 'grad' ? `${p.name} is frozen: it has no gradient` : `${p.name} has no ${which} yet (no optimizer step was taken)`);
    }
    const rec = this.rt.recorder(`read ${which}`);
    const pending = chosen.map((p) => {
      const { buffer, offset } = rangeOf(p[which]!);
      return [p, rec.readF32(buffer, p.count, offset / 4)] as const;
    });
    await rec.submit();
    const out = new Map<string, Tensor>();
    for (const [p, data] of pending) out.set(p.name, { shape: p.shape, data: await data });
    return out;
  }

  destroy(): void {
    // Destroyed, not pooled: weights and moments are model-sized, and a pool holding a closed
    // model's buffers would keep that GPU memory from the next model of another shape.
    for (const b of [...this.valueBuffers, ...this.gradBuffers, ...this.momentBuffers]) this.rt.pool.discard(b);
    this.valueBuffers = [];
    this.gradBuffers = [];
    this.momentBuffers = [];
  }
}
