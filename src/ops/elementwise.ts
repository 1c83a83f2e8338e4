// Launcher for shaders/elementwise.wgsl: residual add, in-place accumulate, scale, fill.
// Backward of add is the identity (d a = d out, d b = alpha * d out): no kernel needed.
import code from '../../shaders/elementwise.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const WORKGROUP = 256;

function spec(entryPoint: string, bindings: KernelSpec['bindings']): KernelSpec {
  return { name: 'elementwise', code, entryPoint, bindings };
}

const ADD = spec('add', ['uniform', 'read-only-storage', 'read-only-storage', 'storage']);
const ACCUMULATE = spec('accumulate', ['uniform', 'read-only-storage', 'storage']);
const SCALE = spec('scale', ['uniform', 'read-only-storage', 'storage']);
const FILL = spec('fill', ['uniform', 'storage']);

export type ElementwiseOp = 'add' | 'accumulate' | 'scale' | 'fill';

/** Checks an element count and that each whole buffer given holds it (slices are trusted). */
export function validateElementwise(
  count: number,
  buffers: Record<string, Binding>,
  maxBindingBytes: number,
  op = 'elementwise',
): void {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`${op}: count must be a positive integer, got ${count}`);
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  if (count * 4 > limit) {
    throw new RangeError(`${op}: ${count} floats exceed this GPU's storage binding limit of ${limit} bytes`);
  }
  for (const [name, b] of Object.entries(buffers)) checkBinding(op, name, b, count);
}

/** Throws a RangeError naming `name` when the binding holds fewer than `floats` 4-byte values. */
export function checkBinding(op: string, name: string, binding: Binding, floats: number): void {
  const size = 'buffer' in binding ? (binding.size ?? binding.buffer.size - (binding.offset ?? 0)) : binding.size;
  if (size < floats * 4) {
    throw new RangeError(`${op}: ${name} holds ${Math.floor(size / 4)} values, needs ${floats}`);
  }
}

function checkAlpha(op: string, alpha: number): void {
  if (!Number.isFinite(alpha)) throw new RangeError(`${op}: alpha must be a finite number, got ${alpha}`);
}

function paramsFor(count: number, alpha: number): Uint32Array {
  const data = new ArrayBuffer(16);
  const u32 = new Uint32Array(data);
  u32[0] = count;
  new Float32Array(data)[1] = alpha;
  return u32;
}

function dispatch(rt: GpuRuntime, rec: Recorder, kernel: KernelSpec, bindings: Binding[], count: number, alpha: number): void {
  const [x, y] = rt.grid(Math.ceil(count / WORKGROUP));
  rec.dispatch(rt.pipeline(kernel), [rec.uniform(paramsFor(count, alpha)), ...bindings], x, y);
}

/** out = a + alpha * b over `count` floats; returns a pooled buffer (release it when done). */
export function recordAdd(rt: GpuRuntime, rec: Recorder, a: Binding, b: Binding, count: number, alpha = 1): GPUBuffer {
  validateElementwise(count, { a, b }, rt.device.limits.maxStorageBufferBindingSize, 'add');
  checkAlpha('add', alpha);
  const out = rt.storage(count * 4, 'add.out');
  dispatch(rt, rec, ADD, [a, b, out], count, alpha);
  return out;
}

/** acc += alpha * a, in place. `acc` must not be (or overlap) `a`. */
export function recordAccumulate(rt: GpuRuntime, rec: Recorder, acc: Binding, a: Binding, count: number, alpha = 1): void {
  validateElementwise(count, { acc, a }, rt.device.limits.maxStorageBufferBindingSize, 'accumulate');
  checkAlpha('accumulate', alpha);
  dispatch(rt, rec, ACCUMULATE, [a, acc], count, alpha);
}

/** out = alpha * a; returns a pooled buffer. */
export function recordScale(rt: GpuRuntime, rec: Recorder, a: Binding, count: number, alpha: number): GPUBuffer {
  validateElementwise(count, { a }, rt.device.limits.maxStorageBufferBindingSize, 'scale');
  checkAlpha('scale', alpha);
  const out = rt.storage(count * 4, 'scale.out');
  dispatch(rt, rec, SCALE, [a, out], count, alpha);
  return out;
}

/** Sets `count` floats of `out` to `value` (e.g. zeroes a gradient). */
export function recordFill(rt: GpuRuntime, rec: Recorder, out: Binding, count: number, value: number): void {
  validateElementwise(count, { out }, rt.device.limits.maxStorageBufferBindingSize, 'fill');
  checkAlpha('fill', value);
  dispatch(rt, rec, FILL, [out], count, value);
}

export interface ElementwiseHostInput {
  op: ElementwiseOp;
  /** Input a (add, accumulate, scale); ignored by fill. */
  a?: Float32Array;
  /** Input b (add). */
  b?: Float32Array;
  /** Initial accumulator (accumulate). */
  acc?: Float32Array;
  /** alpha for add/accumulate (default 1) and scale; the fill value. */
  alpha?: number;
  /** Element count for fill. */
  count?: number;
}

/** Host arrays in, the result out, in one submission. For tests and the benchmarks. */
export async function runElementwise(rt: GpuRuntime, input: ElementwiseHostInput): Promise<Float32Array> {
  const { op } = input;
  if (!['add', 'accumulate', 'scale', 'fill'].includes(op)) {
    throw new RangeError(`unknown elementwise op "${String(op)}" (known: add, accumulate, scale, fill)`);
  }
  const need = (name: 'a' | 'b' | 'acc'): Float32Array => {
    const v = input[name];
    if (!v) throw new RangeError(`${op}: ${name} is required`);
    return v;
  };
  const count = op === 'fill' ? (input.count ?? NaN) : need(op === 'accumulate' ? 'acc' : 'a').length;
  for (const name of ['a', 'b', 'acc'] as const) {
    const v = input[name];
    if (v && op !== 'fill' && v.length !== count) throw new RangeError(`${op}: ${name} has ${v.length} values, expected ${count}`);
  }
  if (op === 'fill' && (!Number.isInteger(count) || count < 1)) {
    throw new RangeError(`fill: count must be a positive integer, got ${input.count}`);
  }
  if (op === 'scale' && input.alpha === undefined) throw new RangeError('scale: alpha is required');
  if (op === 'fill' && input.alpha === undefined) throw new RangeError('fill: alpha (the fill value) is required');
  if (op === 'add') need('b');
  if (op === 'accumulate') need('a');
  const alpha = input.alpha ?? 1;
  const rec = rt.recorder(`elementwise.${op}`);
  const owned: GPUBuffer[] = [];
  const upload = (v: Float32Array, label: string) => {
    const buf = rt.upload(v, label);
    owned.push(buf);
    return buf;
  };
  try {
    let result: GPUBuffer;
    if (op === 'add') {
      result = recordAdd(rt, rec, upload(need('a'), 'a'), upload(need('b'), 'b'), count, alpha);
      owned.push(result);
    } else if (op === 'accumulate') {
      result = upload(need('acc'), 'acc');
      recordAccumulate(rt, rec, result, upload(need('a'), 'a'), count, alpha);
    } else if (op === 'scale') {
      result = recordScale(rt, rec, upload(need('a'), 'a'), count, alpha);
      owned.push(result);
    } else {
      result = rt.storage(count * 4, 'fill.out');
      owned.push(result);
      recordFill(rt, rec, result, count, alpha);
    }
    const out = rec.readF32(result, count);
    await rec.submit();
    return await out;
  } finally {
    rt.release(...owned);
  }
}
