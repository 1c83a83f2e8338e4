// Launcher for shaders/adamw.wgsl: torch.optim.AdamW on many tensors, reading the clip scale
// and finite flag that grad_norm.wgsl left in the step-state buffer. recordOptimizerStep
// records a whole optimizer step (norm + every tensor's update) into the caller's recording, so
// one trainer step stays one submission and reads back at most the 16-byte step state.
import code from '../../shaders/adamw.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import {
  bindingBytes,
  checkTensorBinding,
  readStepState,
  recordGradNorm,
  STEP_STATE_FLOATS,
  type GradNormBuffers,
  type GradNormOptions,
  type StepState,
} from './gradNorm';

const WORKGROUP = 256;

const STEP: KernelSpec = {
  name: 'adamw',
  code,
  entryPoint: 'adamw_step',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage', 'storage', 'storage'],
};

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
 * Records one AdamW update per tensor (one dispatch each). `stepState` is the buffer written by
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
  const kernel = rt.pipeline(STEP);
  for (const t of tensors) {
    const params = rec.uniform(paramsFor(t.count, hyper, step, t.weight_decay ?? hyper.weightDecay));
    const [x, y] = rt.grid(Math.ceil(t.count / WORKGROUP));
    rec.dispatch(kernel, [params, t.grad, stepState, t.param, t.m, t.v], x, y);
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
