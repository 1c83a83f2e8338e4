// The model's parameters on the GPU: value and gradient per tensor, each in its own buffer,
// uploaded once and kept for the model's life; the AdamW moments of all trainable tensors share
// one buffer (each tensor's exp_avg and exp_avg_sq at aligned offsets), so an AdamW dispatch
// binds them once and updates twice as many tensors (shaders/adamw_moments.wgsl). A frozen
// tensor (the base weights under LoRA) keeps only its value: no gradient, no moments, and the
// optimizer never sees it.
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import { sharedMomentsLayout, type AdamWTensor } from '../ops/adamw';
import type { ModelConfig } from './config';
import type { Tensor } from './safetensors';
import { parameterSpecs, type ParameterSpec } from './weights';

export interface Parameter {
  name: string;
  shape: number[];
  count: number;
  value: GPUBuffer;
  /** Null when the tensor is frozen. */
  grad: GPUBuffer | null;
  /** AdamW exp_avg and exp_avg_sq, created (zeroed) on the first optimizer step: ranges of a buffer shared with the other tensors' moments. */
  m: Binding | null;
  v: Binding | null;
}

/** A binding's buffer and byte offset. */
function rangeOf(b: Binding): { buffer: GPUBuffer; offset: number } {
  return 'buffer' in b ? { buffer: b.buffer, offset: b.offset ?? 0 } : { buffer: b, offset: 0 };
}

export class ParameterStore {
  private readonly byName = new Map<string, Parameter>();
  /** The buffers holding the moments (one per set of tensors given moments together). */
  private momentBuffers: GPUBuffer[] = [];

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
    const added: Parameter[] = [];
    try {
      for (const spec of specs) {
        if (this.byName.has(spec.name)) throw new Error(`the model already has a parameter ${spec.name}`);
        const t = tensors.get(spec.name);
        if (!t) throw new Error(`missing tensor ${spec.name}`);
        const count = spec.shape.reduce((a, b) => a * b, 1);
        if (t.data.length !== count) throw new Error(`tensor ${spec.name} has ${t.data.length} values, its shape ${JSON.stringify(spec.shape)} needs ${count}`);
        const grad = options.frozen ? null : this.rt.storage(count * 4, `${spec.name}.grad`);
        added.push({ name: spec.name, shape: spec.shape, count, value: this.rt.upload(t.data, spec.name), grad, m: null, v: null });
      }
    } catch (err) {
      for (const p of added) this.rt.release(p.value, ...(p.grad ? [p.grad] : []));
      throw err;
    }
    for (const p of added) {
      this.list.push(p);
      this.byName.set(p.name, p);
    }
  }

  /** Freezes every tensor held now: frees its gradient and AdamW moments (values stay). */
  freeze(): void {
    // Destroyed, not pooled: a 135M model's gradients are 0.5 GB nothing else would reuse.
    for (const p of this.list) {
      if (p.grad) this.rt.pool.discard(p.grad);
      p.grad = p.m = p.v = null;
    }
    for (const b of this.momentBuffers) this.rt.pool.discard(b);
    this.momentBuffers = [];
  }

  get(name: string): Parameter {
    const p = this.byName.get(name);
    if (!p) throw new Error(`the model has no parameter ${name}`);
    return p;
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
    const moments = this.momentBuffers.reduce((s, b) => s + b.size, 0);
    return this.list.reduce((s, p) => s + p.value.size + (p.grad?.size ?? 0), moments);
  }

  recordZeroGrads(rec: Recorder): void {
    for (const p of this.list) if (p.grad) rec.clear(p.grad);
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
    this.rt.device.queue.writeBuffer(p.value, 0, data.buffer, data.byteOffset, data.byteLength);
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
    for (const p of this.list) for (const b of [p.value, p.grad]) if (b) this.rt.pool.discard(b);
    for (const b of this.momentBuffers) this.rt.pool.discard(b);
    this.momentBuffers = [];
  }
}
