// Launcher for shaders/adamw.wgsl: torch.optim.AdamW on many tensors, reading the clip scale
// and finite flag that grad_norm.wgsl left in the step-state buffer. recordOptimizerStep
// records a whole optimizer step (norm + every tensor's update) into the caller's recording, so
// one trainer step stays one submission and reads back at most the 16-byte step state.
import code from '../../shaders/adamw.wgsl?raw';
import multiCode from '../../shaders/adamw_multi.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import {
  bindingBytes,
  checkTensorBinding,
  gradNormKernels,
  readStepState,
  recordGradNorm,
  STEP_STATE_FLOATS,
  type GradNormBuffers,
  type GradNormOptions,
  type StepState,
} from './gradNorm';
import { bufferOfBinding, expandMultiTensor, tensorGroups } from './multiTensor';

const WORKGROUP = 256;

const STEP: KernelSpec = {
  name: 'adamw',
  code,
  entryPoint: 'adamw_step',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage', 'storage', 'storage'],
};

/** Most tensors one multi-tensor AdamW dispatch binds (four storage bindings each). */
const MULTI_MAX = 4;
const MULTI_SPECS = new Map<number, KernelSpec>();

/** adamw_step over `tensors` tensors at once (shaders/adamw_multi.wgsl). */
function multiStep(tensors: number): KernelSpec {
  let spec = MULTI_SPECS.get(tensors);
  if (!spec) {
    const perTensor = ['read-only-storage', 'storage', 'storage', 'storage'] as const;
    spec = {
      name: 'adamw_multi',
      code: expandMultiTensor(multiCode, tensors, 2, 4),
      entryPoint: 'adamw_step_multi',
      bindings: ['uniform', 'read-only-storage', ...Array.from({ length: tensors }, () => perTensor).flat()],
    };
    MULTI_SPECS.set(tensors, spec);
  }
  return spec;
}

/** Tensors per AdamW dispatch on this device: four storage bindings each, plus the step state. */
export function adamwGroupSize(limits: GPUSupportedLimits): number {
  return Math.max(1, Math.min(MULTI_MAX, Math.floor((limits.maxStorageBuffersPerShaderStage - 1) / 4)));
}

/**
 * The kernels recordOptimizerStep dispatches for `count` tensors in separate buffers (for
 * pipeline warm-up).
 */
export function optimizerKernels(limits: GPUSupportedLimits, count: number): KernelSpec[] {
  const updates = tensorGroups(count, adamwGroupSize(limits)).map(([a, b]) => (b - a === 1 ? STEP : multiStep(b - a)));
  return [...gradNormKernels(limits, count), ...new Set(updates)];
}

/** Hugging Face TrainingArguments names and defaults. */
export interface AdamWOptions {
  /** The rate of this step, e.g. learningRateAt(step - 1, schedule) from lrSchedule.ts. */
  learning_rate: number;
  /** Default 0.9. */
  adam_beta1?: number;
  /** Default 0.999. */
  adam_beta2?: number;
  /** Default 1e-8. */
  adam_epsilon?: number;
  /** Default 0 (Trainer's; torch's own default is 0.01). */
  weight_decay?: number;
}

/**
 * One parameter tensor and its optimizer state: `count` f32 values at the start of each binding.
 * `grad` must not share a buffer with `param`, `m` or `v` (WebGPU forbids a read-only and a
 * writable binding of one buffer in a dispatch). m and v start as zeros.
 */
export interface AdamWTensor {
  param: Binding;
  grad: Binding;
  /** torch's exp_avg. */
  m: Binding;
  /** torch's exp_avg_sq. */
  v: Binding;
  count: number;
  /** Overrides weight_decay for this tensor (Trainer gives biases and norm weights 0). */
  weight_decay?: number;
}

export interface ResolvedAdamW {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

export function resolveAdamWOptions(options: AdamWOptions): ResolvedAdamW {
  const lr = options.learning_rate;
  const beta1 = options.adam_beta1 ?? 0.9;
  const beta2 = options.adam_beta2 ?? 0.999;
  const eps = options.adam_epsilon ?? 1e-8;
  const weightDecay = options.weight_decay ?? 0;
  if (!(Number.isFinite(lr) && lr >= 0)) throw new RangeError(`learning_rate must be a finite number >= 0, got ${lr}`);
  if (!(beta1 >= 0 && beta1 < 1)) throw new RangeError(`adam_beta1 must be in [0, 1), got ${beta1}`);
  if (!(beta2 >= 0 && beta2 < 1)) throw new RangeError(`adam_beta2 must be in [0, 1), got ${beta2}`);
  if (!(Number.isFinite(eps) && eps >= 0)) throw new RangeError(`adam_epsilon must be a finite number >= 0, got ${eps}`);
  checkWeightDecay(weightDecay, 'weight_decay');
  return { lr, beta1, beta2, eps, weightDecay };
}

function checkWeightDecay(value: number, label: string): void {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${label} must be a finite number >= 0, got ${value}`);
}

function checkStep(step: number): void {
  if (!Number.isInteger(step) || step < 1) throw new RangeError(`step must be an integer >= 1 (AdamW's t), got ${step}`);
}

/** Throws a RangeError naming the first bad argument of recordAdamW. */
export function validateAdamW(
  rt: GpuRuntime,
  tensors: readonly AdamWTensor[],
  step: number,
  options: AdamWOptions,
): ResolvedAdamW {
  const hyper = resolveAdamWOptions(options);
  checkStep(step);
  if (tensors.length < 1) throw new RangeError('tensors must list at least one parameter tensor');
  tensors.forEach((t, k) => {
    for (const name of ['param', 'grad', 'm', 'v'] as const) checkTensorBinding(rt, t[name], t.count, `tensors[${k}].${name}`);
    if (t.weight_decay !== undefined) checkWeightDecay(t.weight_decay, `tensors[${k}].weight_decay`);
  });
  return hyper;
}

/**
 * Records the AdamW update of every tensor: groups of adamwGroupSize tensors share a dispatch
 * (shaders/adamw_multi.wgsl), a lone tensor gets adamw.wgsl. `stepState` is the buffer written by
 * recordGradNorm in the same or an earlier recording; `step` is t, counting from 1.
 */
export function recordAdamW(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly AdamWTensor[],
  stepState: Binding,
  step: number,
  options: AdamWOptions,
): void {
  const hyper = validateAdamW(rt, tensors, step, options);
  if (bindingBytes(stepState) < STEP_STATE_FLOATS * 4) {
    throw new RangeError(`stepState: the binding has ${bindingBytes(stepState)} bytes, it needs ${STEP_STATE_FLOATS * 4}`);
  }
  const buffersOf = (k: number) => [tensors[k].grad, tensors[k].param, tensors[k].m, tensors[k].v].map(bufferOfBinding);
  for (const [start, end] of tensorGroups(tensors.length, adamwGroupSize(rt.device.limits), buffersOf)) {
    if (end - start === 1) {
      const t = tensors[start];
      const params = rec.uniform(paramsFor(t.count, hyper, step, t.weight_decay ?? hyper.weightDecay));
      const [x, y] = rt.grid(Math.ceil(t.count / WORKGROUP));
      rec.dispatch(rt.pipeline(STEP), [params, t.grad, stepState, t.param, t.m, t.v], x, y);
      continue;
    }
    const group = tensors.slice(start, end);
    const data = new ArrayBuffer(32 + 16 * group.length);
    const f32 = new Float32Array(data);
    const u32 = new Uint32Array(data);
    // float64 here, rounded once to f32 (see adamw.wgsl's header).
    f32.set([hyper.beta1, hyper.beta2, 1 - hyper.beta1, 1 - hyper.beta2, hyper.lr / (1 - hyper.beta1 ** step), Math.sqrt(1 - hyper.beta2 ** step), hyper.eps]);
    u32[7] = group.length;
    let workgroups = 0;
    group.forEach((t, j) => {
      u32[8 + 4 * j] = t.count;
      u32[9 + 4 * j] = workgroups;
      f32[10 + 4 * j] = 1 - hyper.lr * (t.weight_decay ?? hyper.weightDecay);
      workgroups += Math.ceil(t.count / WORKGROUP);
    });
    const [x, y] = rt.grid(workgroups);
    const bindings = group.flatMap((t) => [t.grad, t.param, t.m, t.v]);
    rec.dispatch(rt.pipeline(multiStep(group.length)), [rec.uniform(u32), stepState, ...bindings], x, y);
  }
}

function paramsFor(count: number, h: ResolvedAdamW, step: number, weightDecay: number): Uint32Array {
  const data = new ArrayBuffer(36);
  const f32 = new Float32Array(data);
  new Uint32Array(data)[0] = count;
  // float64 here, rounded once to f32 (see the shader's header).
  f32[1] = h.beta1;
  f32[2] = h.beta2;
  f32[3] = 1 - h.beta1;
  f32[4] = 1 - h.beta2;
  f32[5] = 1 - h.lr * weightDecay;
  f32[6] = h.lr / (1 - h.beta1 ** step);
  f32[7] = Math.sqrt(1 - h.beta2 ** step);
  f32[8] = h.eps;
  return new Uint32Array(data);
}

export interface OptimizerStepOptions extends AdamWOptions, GradNormOptions {
  /** AdamW's t, counting from 1. */
  step: number;
}

/**
 * Records a whole optimizer step: global grad norm + clip scale + finite flag (no readback),
 * then AdamW on every tensor. Returns the pooled step-state and per-tensor stats buffers
 * (read with readStepState; release both).
 */
export function recordOptimizerStep(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly AdamWTensor[],
  options: OptimizerStepOptions,
): GradNormBuffers {
  // Validate everything before recording anything, so a bad call leaves the recording unchanged.
  validateAdamW(rt, tensors, options.step, options);
  const norm = recordGradNorm(
    rt,
    rec,
    tensors.map((t) => ({ grad: t.grad, count: t.count })),
    options,
  );
  recordAdamW(rt, rec, tensors, norm.stepState, options.step, options);
  return norm;
}

export interface OptimizerHostTensor {
  param: Float32Array;
  grad: Float32Array;
  /** Zeros when absent (before step 1). */
  m?: Float32Array;
  v?: Float32Array;
  weight_decay?: number;
}

export interface OptimizerHostOutput {
  params: Float32Array[];
  m: Float32Array[];
  v: Float32Array[];
  state: StepState;
}

/**
 * Host arrays in, host arrays out: uploads, records one optimizer step, submits once, reads
 * back. For tests, the kernel runner and benchmarks.
 */
export async function runOptimizerStep(
  rt: GpuRuntime,
  tensors: readonly OptimizerHostTensor[],
  options: OptimizerStepOptions,
): Promise<OptimizerHostOutput> {
  tensors.forEach((t, k) => {
    for (const name of ['grad', 'm', 'v'] as const) {
      const a = t[name];
      if (a && a.length !== t.param.length) {
        throw new RangeError(`tensors[${k}].${name} has ${a.length} values, param has ${t.param.length}`);
      }
    }
  });
  const rec = rt.recorder('optimizer');
  const owned: GPUBuffer[] = [];
  const up = (a: Float32Array, label: string) => {
    const b = rt.upload(a, label);
    owned.push(b);
    return b;
  };
  try {
    const gpu = tensors.map((t, k) => ({
      param: up(t.param, `params[${k}]`),
      grad: up(t.grad, `grads[${k}]`),
      m: up(t.m ?? new Float32Array(t.param.length), `m[${k}]`),
      v: up(t.v ?? new Float32Array(t.param.length), `v[${k}]`),
      count: t.param.length,
      weight_decay: t.weight_decay,
    }));
    const out = recordOptimizerStep(rt, rec, gpu, options);
    owned.push(out.stepState, out.tensorStats);
    const state = readStepState(rec, out.stepState);
    const reads = gpu.map((t) => [t.param, t.m, t.v].map((b) => rec.readF32(b, t.count)));
    await rec.submit();
    const values = await Promise.all(reads.map((r) => Promise.all(r)));
    return {
      params: values.map((r) => r[0]),
      m: values.map((r) => r[1]),
      v: values.map((r) => r[2]),
      state: await state,
    };
  } finally {
    rt.release(...owned);
  }
}
