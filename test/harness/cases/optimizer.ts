// Page-side cases for test/browser/optimizer.test.ts: the global grad norm and AdamW kernels on
// a real GPUDevice. Inputs and outputs are plain JSON-able data.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { recordAdamW, recordOptimizerStep, runOptimizerStep, sharedMomentsLayout, type AdamWOptions } from '../../../src/ops/adamw';
import type { Binding } from '../../../src/gpu/recorder';
import { readStepState, recordGradNorm, runGradNorm, type GradNormOptions, type StepState } from '../../../src/ops/gradNorm';
import { arenaLayout } from '../../../src/ops/flatTensors';

/** Grad i of a patterned tensor: exact in f32, so the Node side can sum squares exactly. */
function pattern(count: number): Float32Array {
  return Float32Array.from({ length: count }, (_, i) => ((i % 97) - 48) / 64);
}

export interface GradNormInput extends GradNormOptions {
  grads: number[][];
  /** Sizes of extra tensors filled with pattern(count), appended after `grads`. */
  patterned?: number[];
  /** Runs the same input this many times (determinism). */
  repeat?: number;
}

export async function gradNorm(rt: GpuRuntime, input: GradNormInput) {
  const grads = [...input.grads.map((g) => new Float32Array(g)), ...(input.patterned ?? []).map(pattern)];
  const runs = [];
  for (let r = 0; r < (input.repeat ?? 1); r++) {
    const out = await runGradNorm(rt, grads, { max_grad_norm: input.max_grad_norm });
    runs.push({ state: out.state, tensorSumSquares: Array.from(out.tensorSumSquares), tensorNonfinite: Array.from(out.tensorNonfinite) });
  }
  return runs;
}

export interface StepsInput {
  tensors: { param: number[]; m?: number[]; v?: number[]; weight_decay?: number }[];
  steps: { grads: number[][]; step: number; learning_rate: number }[];
  options: Omit<AdamWOptions, 'learning_rate'> & GradNormOptions;
  /** Read params, m and v back after every step (in a separate submission). */
  snapshots?: boolean;
  /** Every tensor's m and v in one buffer, as ParameterStore keeps them (adamw_moments.wgsl). */
  sharedMoments?: boolean;
  /**
   * Params in one buffer and grads in another too, as ParameterStore's arenas (with shared
   * moments: the flat kernels); the padding between tensors holds NaN.
   */
  arena?: boolean;
}

interface Snapshot {
  params: number[][];
  m: number[][];
  v: number[][];
}

/**
 * Keeps params, m and v on the GPU across steps, as a trainer does. Each step writes new grads
 * with queue.writeBuffer, records norm + AdamW into one recording, reads back only the step
 * state, and reports the runtime counters' deltas for that step.
 */
export async function optimizerSteps(rt: GpuRuntime, input: StepsInput) {
  const owned: GPUBuffer[] = [];
  const up = (a: Float32Array, label: string) => {
    const b = rt.upload(a, label);
    owned.push(b);
    return b;
  };
  const initial = (k: number, which: 'm' | 'v') => Float32Array.from(input.tensors[k][which] ?? new Array<number>(input.tensors[k].param.length).fill(0));
  let moment = (k: number, which: 'm' | 'v'): Binding => up(initial(k, which), `${which}${k}`);
  if (input.sharedMoments || input.arena) {
    const at = sharedMomentsLayout(input.tensors.map((t) => t.param.length), rt.device.limits.minStorageBufferOffsetAlignment);
    const buffer = up(new Float32Array(at.byteLength / 4).fill(NaN), 'moments');
    moment = (k, which) => {
      const data = initial(k, which);
      rt.device.queue.writeBuffer(buffer, at[which][k], data);
      return { buffer, offset: at[which][k], size: data.byteLength };
    };
  }
  let paramOf = (k: number): Binding => up(new Float32Array(input.tensors[k].param), `param${k}`);
  let gradOf = (k: number): Binding => {
    const grad = rt.storage(input.tensors[k].param.length * 4, `grad${k}`);
    owned.push(grad);
    return grad;
  };
  if (input.arena) {
    const at = arenaLayout(input.tensors.map((t) => t.param.length), rt.device.limits.minStorageBufferOffsetAlignment);
    const params = up(new Float32Array(at.byteLength / 4).fill(NaN), 'params');
    const grads = up(new Float32Array(at.byteLength / 4).fill(NaN), 'grads');
    paramOf = (k) => {
      const data = new Float32Array(input.tensors[k].param);
      rt.device.queue.writeBuffer(params, at.offsets[k], data);
      return { buffer: params, offset: at.offsets[k], size: data.byteLength };
    };
    gradOf = (k) => ({ buffer: grads, offset: at.offsets[k], size: input.tensors[k].param.length * 4 });
  }
  const tensors = input.tensors.map((t, k) => ({ param: paramOf(k), m: moment(k, 'm'), v: moment(k, 'v'), grad: gradOf(k), count: t.param.length, weight_decay: t.weight_decay }));
  const readBinding = (rec: ReturnType<GpuRuntime['recorder']>, b: Binding, count: number) =>
    'buffer' in b ? rec.readF32(b.buffer, count, (b.offset ?? 0) / 4) : rec.readF32(b, count);
  const snapshot = async (): Promise<Snapshot> => {
    const rec = rt.recorder('snapshot');
    const reads = tensors.map((t) => [t.param, t.m, t.v].map((b) => readBinding(rec, b, t.count)));
    await rec.submit();
    const values = await Promise.all(reads.map((r) => Promise.all(r)));
    return {
      params: values.map((r) => Array.from(r[0])),
      m: values.map((r) => Array.from(r[1])),
      v: values.map((r) => Array.from(r[2])),
    };
  };
  const steps: { state: StepState; submits: number; readbacks: number; bytesRead: number; dispatches: number; after?: Snapshot }[] = [];
  try {
    for (const s of input.steps) {
      s.grads.forEach((g, k) => {
        const grad = tensors[k].grad;
        if ('buffer' in grad) rt.device.queue.writeBuffer(grad.buffer, grad.offset ?? 0, new Float32Array(g));
        else rt.device.queue.writeBuffer(grad, 0, new Float32Array(g));
      });
      const before = { ...rt.counters };
      const rec = rt.recorder('optimizer step');
      const bufs = recordOptimizerStep(rt, rec, tensors, { ...input.options, step: s.step, learning_rate: s.learning_rate });
      const state = readStepState(rec, bufs.stepState);
      await rec.submit();
      const after = rt.counters;
      rt.release(bufs.stepState, bufs.tensorStats);
      steps.push({
        state: await state,
        submits: after.submits - before.submits,
        readbacks: after.readbacks - before.readbacks,
        bytesRead: after.bytesRead - before.bytesRead,
        dispatches: after.dispatches - before.dispatches,
        ...(input.snapshots ? { after: await snapshot() } : {}),
      });
    }
    return { steps, final: await snapshot(), maxStorageBuffers: rt.device.limits.maxStorageBuffersPerShaderStage, software: rt.info.isFallback };
  } finally {
    rt.release(...owned);
  }
}

/** One host-helper step (runOptimizerStep) on explicit arrays. */
export async function hostStep(
  rt: GpuRuntime,
  input: { tensors: { param: number[]; grad: number[]; weight_decay?: number }[]; options: Parameters<typeof runOptimizerStep>[2]; sharedMoments?: boolean },
) {
  const out = await runOptimizerStep(
    rt,
    input.tensors.map((t) => ({ param: new Float32Array(t.param), grad: new Float32Array(t.grad), weight_decay: t.weight_decay })),
    input.options,
    { sharedMoments: input.sharedMoments },
  );
  return { params: out.params.map((p) => Array.from(p)), m: out.m.map((a) => Array.from(a)), v: out.v.map((a) => Array.from(a)), state: out.state };
}

/** Bad calls: each entry is "ErrorName: message"; `dispatches` counts what they recorded (0). */
export async function badCalls(rt: GpuRuntime) {
  const small = rt.storage(64, 'small'); // pooled: 256 bytes, 64 f32
  const p = rt.storage(64, 'p');
  const m = rt.storage(64, 'm');
  const v = rt.storage(64, 'v');
  const g = rt.storage(64, 'g');
  const state = rt.storage(16, 'state');
  const ok = { param: p, grad: g, m, v, count: 16 };
  const lr = { learning_rate: 0.1 };
  const rec = rt.recorder('bad calls');
  const before = rt.counters.dispatches;
  const attempts: [string, () => unknown][] = [
    ['count too large', () => recordOptimizerStep(rt, rec, [{ ...ok, count: 100 }], { ...lr, step: 1 })],
    ['count zero', () => recordOptimizerStep(rt, rec, [{ ...ok, count: 0 }], { ...lr, step: 1 })],
    ['step zero', () => recordOptimizerStep(rt, rec, [ok], { ...lr, step: 0 })],
    ['beta2 one', () => recordOptimizerStep(rt, rec, [ok], { ...lr, step: 1, adam_beta2: 1 })],
    ['negative lr', () => recordOptimizerStep(rt, rec, [ok], { learning_rate: -1, step: 1 })],
    ['negative eps', () => recordOptimizerStep(rt, rec, [ok], { ...lr, step: 1, adam_epsilon: -1 })],
    ['negative max_grad_norm', () => recordOptimizerStep(rt, rec, [ok], { ...lr, step: 1, max_grad_norm: -1 })],
    ['no tensors', () => recordOptimizerStep(rt, rec, [], { ...lr, step: 1 })],
    ['bad tensor weight_decay', () => recordOptimizerStep(rt, rec, [ok, { ...ok, weight_decay: NaN }], { ...lr, step: 1 })],
    ['short m', () => recordOptimizerStep(rt, rec, [{ ...ok, m: { buffer: small, size: 32 } }], { ...lr, step: 1 })],
    ['misaligned grad', () => recordOptimizerStep(rt, rec, [{ ...ok, grad: { buffer: g, offset: 4, size: 64 } }], { ...lr, step: 1 })],
    ['small step state', () => recordAdamW(rt, rec, [ok], { buffer: state, size: 8 }, 1, lr)],
    ['grad norm of nothing', () => recordGradNorm(rt, rec, [])],
  ];
  const errors: Record<string, string> = {};
  for (const [name, call] of attempts) {
    try {
      call();
      errors[name] = 'no error';
    } catch (err) {
      errors[name] = `${(err as Error).name}: ${(err as Error).message}`;
    }
  }
  try {
    await runOptimizerStep(rt, [{ param: new Float32Array(4), grad: new Float32Array(3) }], { ...lr, step: 1 });
    errors['host length mismatch'] = 'no error';
  } catch (err) {
    errors['host length mismatch'] = `${(err as Error).name}: ${(err as Error).message}`;
  }
  const dispatches = rt.counters.dispatches - before;
  await rec.submit(); // nothing was recorded: an empty submission must still be valid
  rt.release(small, p, m, v, g, state);
  return { errors, dispatches };
}

/**
 * The entry points one optimizer step over tensors of `sizes` values dispatches, one tensor a
 * dispatch (captured: nothing compiled or run); `sharedMoments` as ParameterStore keeps them.
 */
export function loneTensorKernels(rt: GpuRuntime, input: { sizes: number[]; sharedMoments: boolean }) {
  const owned: GPUBuffer[] = [];
  const buffer = (bytes: number) => {
    const b = rt.storage(bytes);
    owned.push(b);
    return b;
  };
  const layout = sharedMomentsLayout(input.sizes, rt.device.limits.minStorageBufferOffsetAlignment);
  const moments = buffer(layout.byteLength);
  const tensors = input.sizes.map((count, k) => ({
    param: buffer(count * 4),
    grad: buffer(count * 4),
    m: input.sharedMoments ? { buffer: moments, offset: layout.m[k], size: count * 4 } : buffer(count * 4),
    v: input.sharedMoments ? { buffer: moments, offset: layout.v[k], size: count * 4 } : buffer(count * 4),
    count,
  }));
  // The kernels each tensor gets, one dispatch each (pairing would merge two tensors' AdamW).
  const captured = rt.unpaired(() =>
    rt.captureDispatches(() => {
      const rec = rt.recorder('lone-tensor kernels');
      const out = recordOptimizerStep(rt, rec, tensors, { learning_rate: 1e-3, step: 1, tensorsPerDispatch: 1 });
      rt.release(out.stepState, out.tensorStats);
    }),
  );
  rt.release(...owned);
  return { software: rt.info.isFallback, entryPoints: captured.map((d) => d.spec.entryPoint) };
}
