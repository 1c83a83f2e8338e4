// The model's parameters on the GPU: value, gradient and AdamW moments per tensor, each in its
// own buffer, uploaded once and kept for the model's life.
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { AdamWTensor } from '../ops/adamw';
import type { ModelConfig } from './config';
import type { Tensor } from './safetensors';
import { parameterSpecs } from './weights';

export interface Parameter {
  name: string;
  shape: number[];
  count: number;
  value: GPUBuffer;
  grad: GPUBuffer;
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

  /** Uploads the engine's tensors (see weights.ts fromHfTensors) in parameterSpecs order. */
  static create(rt: GpuRuntime, config: ModelConfig, tensors: Map<string, Tensor>): ParameterStore {
    const list = parameterSpecs(config).map((spec) => {
      const t = tensors.get(spec.name);
      if (!t) throw new Error(`missing tensor ${spec.name}`);
      const count = t.data.length;
      const grad = rt.storage(count * 4, `${spec.name}.grad`);
      return { name: spec.name, shape: spec.shape, count, value: rt.upload(t.data, spec.name), grad, m: null, v: null };
    });
    return new ParameterStore(rt, list);
  }

  get(name: string): Parameter {
    const p = this.byName.get(name);
    if (!p) throw new Error(`the model has no parameter ${name}`);
    return p;
  }

  /** Number of trainable values. */
  get size(): number {
    return this.list.reduce((s, p) => s + p.count, 0);
  }

  /** GPU bytes held for values, gradients and (once created) AdamW moments. */
  get bytes(): number {
    return this.list.reduce((s, p) => s + p.value.size + p.grad.size + (p.m?.size ?? 0) + (p.v?.size ?? 0), 0);
  }

  recordZeroGrads(rec: Recorder): void {
    for (const p of this.list) rec.clear(p.grad);
  }

  /** AdamW views of every tensor; the first call creates zeroed moment buffers. */
  optimizerTensors(rec: Recorder): AdamWTensor[] {
    return this.list.map((p) => {
      if (!p.m || !p.v) {
        p.m = this.rt.storage(p.count * 4, `${p.name}.exp_avg`);
        p.v = this.rt.storage(p.count * 4, `${p.name}.exp_avg_sq`);
        rec.clear(p.m);
        rec.clear(p.v);
      }
      return { param: p.value, grad: p.grad, m: p.m, v: p.v, count: p.count };
    });
  }

  /** Sets AdamW moments from tensors named exp_avg.<name> / exp_avg_sq.<name> (a checkpoint). */
  loadMoments(moments: Map<string, Tensor>): void {
    for (const p of this.list) {
      const m = moments.get(`exp_avg.${p.name}`);
      const v = moments.get(`exp_avg_sq.${p.name}`);
      if (!m || !v || m.data.length !== p.count || v.data.length !== p.count) {
        throw new Error(`optimizer.safetensors: missing or misshapen moments for ${p.name}`);
      }
      p.m = this.rt.upload(m.data, `${p.name}.exp_avg`);
      p.v = this.rt.upload(v.data, `${p.name}.exp_avg_sq`);
    }
  }

  /** Reads values (or gradients) back in one submission, keyed by internal name. */
  async read(which: 'value' | 'grad' | 'm' | 'v' = 'value'): Promise<Map<string, Tensor>> {
    const rec = this.rt.recorder(`read ${which}`);
    const pending = this.list.map((p) => {
      const buffer = p[which];
      if (!buffer) throw new Error(`${p.name} has no ${which} yet (no optimizer step was taken)`);
      return [p, rec.readF32(buffer, p.count)] as const;
    });
    await rec.submit();
    const out = new Map<string, Tensor>();
    for (const [p, data] of pending) out.set(p.name, { shape: p.shape, data: await data });
    return out;
  }

  destroy(): void {
    for (const p of this.list) this.rt.release(p.value, p.grad, ...(p.m ? [p.m] : []), ...(p.v ? [p.v] : []));
  }
}
