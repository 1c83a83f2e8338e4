// Launcher for shaders/activation.wgsl: GELU (tanh approximation, GPT-2 gelu_new) and
// SwiGLU (Llama MLP: silu(gate) * up), forward and backward. Tensors are flat f32 arrays of
// `count` elements; SwiGLU's gate, up and output share one shape (e.g. [rows, F]).
import code from '../../shaders/activation.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import { validateElementwise } from './elementwise';

const WORKGROUP = 256;
const READ = 'read-only-storage';

function spec(entryPoint: string, bindings: KernelSpec['bindings']): KernelSpec {
  return { name: 'activation', code, entryPoint, bindings };
}

const GELU_FORWARD = spec('gelu_forward', ['uniform', READ, 'storage']);
const GELU_BACKWARD = spec('gelu_backward', ['uniform', READ, READ, 'storage']);
const SWIGLU_FORWARD = spec('swiglu_forward', ['uniform', READ, READ, 'storage']);
const SWIGLU_BACKWARD = spec('swiglu_backward', ['uniform', READ, READ, READ, 'storage', 'storage']);

function dispatch(rt: GpuRuntime, rec: Recorder, kernel: KernelSpec, buffers: GPUBuffer[], count: number): void {
  const params = new Uint32Array(4);
  params[0] = count;
  const [x, y] = rt.grid(Math.ceil(count / WORKGROUP));
  rec.dispatch(rt.pipeline(kernel), [rec.uniform(params), ...buffers], x, y);
}

function validate(rt: GpuRuntime, op: string, count: number, buffers: Record<string, GPUBuffer>): void {
  validateElementwise(count, buffers, rt.device.limits.maxStorageBufferBindingSize, op);
}

/** y = gelu(x); returns a pooled buffer of `count` floats. */
export function recordGeluForward(rt: GpuRuntime, rec: Recorder, x: GPUBuffer, count: number): GPUBuffer {
  validate(rt, 'gelu', count, { x });
  const y = rt.storage(count * 4, 'gelu.y');
  dispatch(rt, rec, GELU_FORWARD, [x, y], count);
  return y;
}

/** dx = dy * gelu'(x); returns a pooled buffer. */
export function recordGeluBackward(rt: GpuRuntime, rec: Recorder, x: GPUBuffer, dy: GPUBuffer, count: number): GPUBuffer {
  validate(rt, 'gelu backward', count, { x, dy });
  const dx = rt.storage(count * 4, 'gelu.dx');
  dispatch(rt, rec, GELU_BACKWARD, [x, dy, dx], count);
  return dx;
}

/** h = silu(gate) * up; returns a pooled buffer. */
export function recordSwigluForward(rt: GpuRuntime, rec: Recorder, gate: GPUBuffer, up: GPUBuffer, count: number): GPUBuffer {
  validate(rt, 'swiglu', count, { gate, up });
  const h = rt.storage(count * 4, 'swiglu.h');
  dispatch(rt, rec, SWIGLU_FORWARD, [gate, up, h], count);
  return h;
}

export interface SwigluGrads {
  dGate: GPUBuffer;
  dUp: GPUBuffer;
}

/** d_gate = dh * up * silu'(gate), d_up = dh * silu(gate); pooled buffers. */
export function recordSwigluBackward(
  rt: GpuRuntime,
  rec: Recorder,
  gate: GPUBuffer,
  up: GPUBuffer,
  dh: GPUBuffer,
  count: number,
): SwigluGrads {
  validate(rt, 'swiglu backward', count, { gate, up, dh });
  const dGate = rt.storage(count * 4, 'swiglu.d_gate');
  const dUp = rt.storage(count * 4, 'swiglu.d_up');
  dispatch(rt, rec, SWIGLU_BACKWARD, [gate, up, dh, dGate, dUp], count);
  return { dGate, dUp };
}

function checkLength(op: string, name: string, v: Float32Array | undefined, count: number): void {
  if (v && v.length !== count) throw new RangeError(`${op}: ${name} has ${v.length} values, expected ${count}`);
}

/** Host arrays in, host arrays out (forward, and backward when `dy` is given), one submission. */
export async function runGelu(
  rt: GpuRuntime,
  input: { x: Float32Array; dy?: Float32Array },
): Promise<{ y: Float32Array; dx?: Float32Array }> {
  const count = input.x.length;
  if (count < 1) throw new RangeError('gelu: x is empty');
  checkLength('gelu', 'dy', input.dy, count);
  const rec = rt.recorder('gelu');
  const x = rt.upload(input.x, 'x');
  const owned = [x];
  try {
    const y = recordGeluForward(rt, rec, x, count);
    owned.push(y);
    const yRead = rec.readF32(y, count);
    let dxRead: Promise<Float32Array> | undefined;
    if (input.dy) {
      const dy = rt.upload(input.dy, 'dy');
      owned.push(dy);
      const dx = recordGeluBackward(rt, rec, x, dy, count);
      owned.push(dx);
      dxRead = rec.readF32(dx, count);
    }
    await rec.submit();
    return { y: await yRead, dx: dxRead && (await dxRead) };
  } finally {
    rt.release(...owned);
  }
}

export async function runSwiglu(
  rt: GpuRuntime,
  input: { gate: Float32Array; up: Float32Array; dh?: Float32Array },
): Promise<{ h: Float32Array; dGate?: Float32Array; dUp?: Float32Array }> {
  const count = input.gate.length;
  if (count < 1) throw new RangeError('swiglu: gate is empty');
  checkLength('swiglu', 'up', input.up, count);
  checkLength('swiglu', 'dh', input.dh, count);
  const rec = rt.recorder('swiglu');
  const gate = rt.upload(input.gate, 'gate');
  const up = rt.upload(input.up, 'up');
  const owned = [gate, up];
  try {
    const h = recordSwigluForward(rt, rec, gate, up, count);
    owned.push(h);
    const hRead = rec.readF32(h, count);
    let grads: [Promise<Float32Array>, Promise<Float32Array>] | undefined;
    if (input.dh) {
      const dh = rt.upload(input.dh, 'dh');
      owned.push(dh);
      const g = recordSwigluBackward(rt, rec, gate, up, dh, count);
      owned.push(g.dGate, g.dUp);
      grads = [rec.readF32(g.dGate, count), rec.readF32(g.dUp, count)];
    }
    await rec.submit();
    return { h: await hRead, dGate: grads && (await grads[0]), dUp: grads && (await grads[1]) };
  } finally {
    rt.release(...owned);
  }
}
