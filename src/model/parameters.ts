// The model's parameters on the GPU: value, gradient and AdamW moments per tensor, each in its
// own buffer, uploaded once and kept for the model's life. A frozen tensor (the base weights
// under LoRA) keeps only its value: no gradient, no moments, and the optimizer never sees it.
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { AdamWTensor } from '../ops/adamw';
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
  /** AdamW exp_avg and exp_avg_sq, created (zeroed) on the first optimizer step. */
  m: GPUBuffer | null;
  v: GPUBuffer | null;
}

export class ParameterStore {
  private readonly byName = new Map<string, Parameter>();

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
    for (const p of this.list) {
      const owned = [p.grad, p.m, p.v].filter((b): b is GPUBuffer => b !== null);
      // Destroyed, not pooled: a 135M model's gradients are 0.5 GB nothing else would reuse.
      for (const b of owned) this.rt.pool.discard(b);
      p.grad = p.m = p.v = null;
    }
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
    return this.list.reduce((s, p) => s + p.value.size + (p.grad?.size ?? 0) + (p.m?.size ?? 0) + (p.v?.size ?? 0), 0);
  }

  recordZeroGrads(rec: Recorder): void {
    for (const p of this.list) if (p.grad) rec.clear(p.grad);
  }

  /** AdamW views of every trainable tensor; the first call creates zeroed moment buffers. */
  optimizerTensors(rec: Recorder): AdamWTensor[] {
    return this.trainable.map((p) => {
      if (!p.m || !p.v) {
        // New buffers: the first step's temporaries (sampling's, in GRPO) are back on the free
        // list by now, and a moment taking one would leave the next step short of it.
        p.m = this.rt.persistentStorage(p.count * 4, `${p.name}.exp_avg`);
        p.v = this.rt.persistentStorage(p.count * 4, `${p.name}.exp_avg_sq`);
        rec.clear(p.m);
        rec.clear(p.v);
      }
      return { param: p.value, grad: p.grad!, m: p.m, v: p.v, count: p.count };
    });
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
    for (const p of trainable) {
      if (p.m) this.rt.release(p.m);
      if (p.v) this.rt.release(p.v);
      p.m = this.rt.upload(moments.get(`exp_avg.${p.name}`)!.data, `${p.name}.exp_avg`);
      p.v = this.rt.upload(moments.get(`exp_avg_sq.${p.name}`)!.data, `${p.name}.exp_avg_sq`);
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
    const pending = chosen.map((p) => [p, rec.readF32(p[which]!, p.count)] as const);
    await rec.submit();
    const out = new Map<string, Tensor>();
    for (const [p, data] of pending) out.set(p.name, { shape: p.shape, data: await data });
    return out;
  }

  destroy(): void {
    // Destroyed, not pooled: weights and moments are model-sized, and a pool holding a closed
    // model's buffers would keep that GPU memory from the next model of another shape.
    for (const p of this.list) for (const b of [p.value, p.grad, p.m, p.v]) if (b) this.rt.pool.discard(b);
  }
}
