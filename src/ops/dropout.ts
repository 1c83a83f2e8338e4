// Launcher for shaders/dropout.wgsl: inverted dropout whose mask is regenerated from (seed,
// element index), so nothing is stored between the forward and the backward pass.
import code from '../../shaders/dropout.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import { dropoutThreshold, validateDropout } from './dropout.reference';

export { dropoutSeed } from './dropout.reference';
import { validateElementwise } from './elementwise';

const WORKGROUP = 256;
const APPLY: KernelSpec = { name: 'dropout', code, entryPoint: 'apply', bindings: ['uniform', 'read-only-storage', 'storage'] };
const ACCUMULATE: KernelSpec = { name: 'dropout', code, entryPoint: 'accumulate', bindings: ['uniform', 'read-only-storage', 'storage'] };

export interface DropoutOptions {
  /** Probability of zeroing an element, in [0, 1). */
  p: number;
  /** 32-bit seed: the same seed gives the same mask. */
  seed: number;
}

function paramsFor(count: number, o: DropoutOptions): Uint32Array {
  const data = new ArrayBuffer(16);
  const u32 = new Uint32Array(data);
  u32[0] = count;
  u32[1] = o.seed >>> 0;
  u32[2] = dropoutThreshold(o.p);
  new Float32Array(data)[3] = 1 / (1 - o.p);
  return u32;
}

function dispatch(rt: GpuRuntime, rec: Recorder, kernel: KernelSpec, x: Binding, target: Binding, count: number, o: DropoutOptions): void {
  const [gx, gy] = rt.grid(Math.ceil(count / WORKGROUP));
  rec.dispatch(rt.pipeline(kernel), [rec.uniform(paramsFor(count, o)), x, target], gx, gy);
}

/** out = mask(x) over `count` floats, into `out` when given (else a pooled buffer); returns out. */
export function recordDropout(rt: GpuRuntime, rec: Recorder, x: Binding, count: number, o: DropoutOptions, out?: GPUBuffer): GPUBuffer {
  validateDropout(o.p, o.seed);
  validateElementwise(count, { x, ...(out ? { out } : {}) }, rt.device.limits.maxStorageBufferBindingSize, 'dropout');
  const target = out ?? rt.storage(count * 4, 'dropout.out');
  dispatch(rt, rec, APPLY, x, target, count, o);
  return target;
}

/** acc += mask(x), in place (the backward of dropout feeding a gradient that already has terms). */
export function recordDropoutAccumulate(rt: GpuRuntime, rec: Recorder, acc: Binding, x: Binding, count: number, o: DropoutOptions): void {
  validateDropout(o.p, o.seed);
  validateElementwise(count, { x, acc }, rt.device.limits.maxStorageBufferBindingSize, 'dropout accumulate');
  dispatch(rt, rec, ACCUMULATE, x, acc, count, o);
}

/** Host arrays in, the result out, in one submission (tests). With `acc`, returns acc + mask(x). */
export async function runDropout(rt: GpuRuntime, input: { x: Float32Array; p: number; seed: number; acc?: Float32Array }): Promise<Float32Array> {
  const count = input.x.length;
  if (input.acc && input.acc.length !== count) throw new RangeError(`dropout: acc has ${input.acc.length} values, x has ${count}`);
  const rec = rt.recorder('dropout');
  const x = rt.upload(input.x, 'dropout.x');
  const owned = [x];
  try {
    let result: GPUBuffer;
    if (input.acc) {
      result = rt.upload(input.acc, 'dropout.acc');
      owned.push(result);
      recordDropoutAccumulate(rt, rec, result, x, count, input);
    } else {
      result = recordDropout(rt, rec, x, count, input);
      owned.push(result);
    }
    const out = rec.readF32(result, count);
    await rec.submit();
    return await out;
  } finally {
    rt.release(...owned);
  }
}
