// Launcher for shaders/adamw.wgsl: torch.optim.AdamW on many tensors, reading the clip scale
// and finite flag that grad_norm.wgsl left in the step-state buffer. recordOptimizerStep
// records a whole optimizer step (norm + every tensor's update) into the caller's recording, so
// one trainer step stays one submission and reads back at most the 16-byte step state.
import code from '../../shaders/adamw.wgsl?raw';
import multiCode from '../../shaders/adamw_multi.wgsl?raw';
import momentsCode from '../../shaders/adamw_moments.wgsl?raw';
import flatCode from '../../shaders/adamw_flat.wgsl?raw';
import updateCode from '../../shaders/adamw_update.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import {
  bindingBytes,
  checkTensorBinding,
  checkedGroupSize,
  flatGradNormKernels,
  gradNormKernels,
  readStepState,
  recordGradNorm,
  STEP_STATE_FLOATS,
  type GradNormBuffers,
  type GradNormOptions,
  type StepState,
} from './gradNorm';
import { bufferOfBinding, expandMultiTensor, tensorGroups } from './multiTensor';
import { includeWgsl } from './wgslInclude';
import { quad, quadOffset } from './vec4Layout';
import { flatBinding, flatRuns, flatVec4, offsetOfBinding, type TensorRange } from './flatTensors';

const WORKGROUP = 256;

/** A kernel's text with the shared AdamW update (shaders/adamw_update.wgsl) pasted in. */
export function adamwShader(kernel: 'adamw' | 'adamw_multi' | 'adamw_moments' | 'adamw_flat'): string {
  const text = { adamw: code, adamw_multi: multiCode, adamw_moments: momentsCode, adamw_flat: flatCode }[kernel];
  return includeWgsl(text, { 'adamw_update.wgsl': updateCode });
}

const STEP: KernelSpec = {
  name: 'adamw',
  code: adamwShader('adamw'),
  entryPoint: 'adamw_step',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage', 'storage', 'storage'],
};

/** adamw_step4: a vec4 an iteration (a software adapter; a tensor of a multiple of 4 values, bound 16-byte aligned). */
const STEP4: KernelSpec = { ...STEP, entryPoint: 'adamw_step4' };
/** adamw_step4's threads per workgroup (the shader's WG4) and most workgroups: they stride over the tensor. */
const STEP4_WORKGROUP = 64;
const STEP4_MAX_WORKGROUPS = 64;

/**
 * AdamW over many tensors whose gradients, values and moments lie in one buffer each
 * (ParameterStore's arenas): one dispatch (shaders/adamw_flat.wgsl), a thread an element on a
 * GPU, a vec4 an iteration with a few workgroups a tensor on a software adapter.
 */
const FLAT: KernelSpec = {
  name: 'adamw_flat',
  code: adamwShader('adamw_flat'),
  entryPoint: 'adamw_flat',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'read-only-storage', 'storage', 'storage'],
};
const FLAT4: KernelSpec = { ...FLAT, entryPoint: 'adamw_flat4' };
/** adamw_flat4's threads per workgroup (the shader's WG4) and most workgroups a tensor. */
const FLAT4_WORKGROUP = 64;
const FLAT4_MAX_WORKGROUPS = 64;

/** The flat AdamW kernel: vec4 on a software adapter, a thread an element on a GPU. */
export const flatAdamwKernel = (vec4: boolean): KernelSpec => (vec4 ? FLAT4 : FLAT);

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
      code: expandMultiTensor(adamwShader('adamw_multi'), tensors, 2, 4),
      entryPoint: 'adamw_step_multi',
      bindings: ['uniform', 'read-only-storage', ...Array.from({ length: tensors }, () => perTensor).flat()],
    };
    MULTI_SPECS.set(tensors, spec);
  }
  return spec;
}

/** Tensors per AdamW dispatch on this device: four storage bindings each, plus the step state. */
export function adamwGroupSize(limits: GPUSupportedLimits, software = false, requested?: number): number {
  const most = Math.max(1, Math.min(MULTI_MAX, Math.floor((limits.maxStorageBuffersPerShaderStage - 1) / 4)));
  if (requested !== undefined) return checkedGroupSize(requested, most);
  // A software adapter: one tensor a dispatch (see gradNormGroupSize).
  return software ? 1 : most;
}

/** Most tensors one shared-moments AdamW dispatch binds (two storage bindings each). */
const MOMENTS_MAX = 8;
const MOMENTS_SPECS = new Map<number, KernelSpec>();

/** adamw_step over `tensors` tensors whose moments share one buffer (shaders/adamw_moments.wgsl). */
function momentsStep(tensors: number): KernelSpec {
  let spec = MOMENTS_SPECS.get(tensors);
  if (!spec) {
    const perTensor = ['read-only-storage', 'storage'] as const;
    spec = {
      name: 'adamw_moments',
      code: expandMultiTensor(adamwShader('adamw_moments'), tensors, 3, 2),
      entryPoint: 'adamw_step_moments',
      bindings: ['uniform', 'read-only-storage', 'storage', ...Array.from({ length: tensors }, () => perTensor).flat()],
    };
    MOMENTS_SPECS.set(tensors, spec);
  }
  return spec;
}

/**
 * Tensors per AdamW dispatch when their moments share one buffer (ParameterStore's): two storage
 * bindings each (grad, param), plus the step state and the moments (4 on SwiftShader's 10).
 */
export function momentsGroupSize(limits: GPUSupportedLimits, software = false, requested?: number): number {
  const most = Math.max(1, Math.min(MOMENTS_MAX, Math.floor((limits.maxStorageBuffersPerShaderStage - 2) / 2)));
  if (requested !== undefined) return checkedGroupSize(requested, most);
  return software ? 1 : most;
}

/**
 * The kernels recordOptimizerStep dispatches for `count` tensors (for pipeline warm-up):
 * `moments` 'arena' when gradients, values and moments each lie in one buffer (ParameterStore's
 * arenas: the flat kernels), 'shared' when only every tensor's exp_avg and exp_avg_sq are ranges
 * of one buffer, 'separate' when each is a buffer of its own.
 */
export function optimizerKernels(limits: GPUSupportedLimits, count: number, moments: 'arena' | 'shared' | 'separate', software = false): KernelSpec[] {
  if (moments === 'arena' && count > 1) return [...flatGradNormKernels(software), flatAdamwKernel(software)];
  const updates =
    moments !== 'separate'
      ? tensorGroups(count, momentsGroupSize(limits, software)).map(([a, b]) => (b - a === 1 ? STEP : momentsStep(b - a)))
      : tensorGroups(count, adamwGroupSize(limits, software)).map(([a, b]) => (b - a === 1 ? STEP : multiStep(b - a)));
  // A software adapter's lone tensors take STEP or STEP4 by their size.
  return [...gradNormKernels(limits, count, software), ...new Set(updates), ...(software && updates.includes(STEP) ? [STEP4] : [])];
}

/** The buffer holding both of a tensor's moments, or null when they are in separate buffers. */
function sharedMomentsBuffer(t: AdamWTensor): GPUBuffer | null {
  const m = bufferOfBinding(t.m);
  return m === bufferOfBinding(t.v) ? m : null;
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
  /** Engine setting, as GradNormOptions.tensorsPerDispatch: at most this many tensors per AdamW dispatch (default: the device's choice). */
  tensorsPerDispatch?: number;
  /** Engine setting, as GradNormOptions.flatVariant: adamw_flat4 ('vec4', a software adapter's default) or adamw_flat. */
  flatVariant?: 'scalar' | 'vec4';
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
  tensorsPerDispatch?: number;
  flatVariant?: 'scalar' | 'vec4';
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
  if (options.tensorsPerDispatch !== undefined) checkedGroupSize(options.tensorsPerDispatch, 1);
  flatVec4(options.flatVariant, false);
  return { lr, beta1, beta2, eps, weightDecay, tensorsPerDispatch: options.tensorsPerDispatch, flatVariant: options.flatVariant };
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
  // Runs of consecutive tensors whose moments share one buffer take the shared-moments kernel;
  // the others, adamw_multi / adamw.
  for (let start = 0; start < tensors.length; ) {
    const moments = sharedMomentsBuffer(tensors[start]);
    let end = start + 1;
    while (end < tensors.length && sharedMomentsBuffer(tensors[end]) === moments) end++;
    const run = tensors.slice(start, end);
    if (moments) {
      // Within them, runs whose gradients and values also share a buffer each take one dispatch.
      for (const part of flatAdamwRuns(rt, run, hyper)) {
        const tensorsOfPart = run.slice(part.start, part.end);
        if (part.flat) recordFlatAdamW(rt, rec, tensorsOfPart, stepState, step, hyper);
        else recordSharedMoments(rt, rec, tensorsOfPart, moments, stepState, step, hyper);
      }
    } else {
      recordSeparateMoments(rt, rec, run, stepState, step, hyper);
    }
    start = end;
  }
}

/** A tensor's exp_avg and exp_avg_sq as one range of their buffer (ParameterStore puts them side by side). */
function momentsRange(t: AdamWTensor): TensorRange {
  const lo = Math.min(offsetOfBinding(t.m), offsetOfBinding(t.v));
  const hi = Math.max(offsetOfBinding(t.m), offsetOfBinding(t.v)) + Math.ceil(t.count / 4) * 16;
  return { binding: { buffer: bufferOfBinding(t.m), offset: lo, size: hi - lo }, count: (hi - lo) / 4 };
}

/**
 * Runs of tensors (with shared moments) adamw_flat takes: gradients in one buffer, values in
 * another, moments in a third, each run's ranges within the binding limit. Flat kernels on
 * every adapter; `tensorsPerDispatch` caps a run as it caps a group.
 */
function flatAdamwRuns(rt: GpuRuntime, tensors: readonly AdamWTensor[], hyper: ResolvedAdamW) {
  const distinct = (t: AdamWTensor) => new Set([t.grad, t.param, t.m].map(bufferOfBinding)).size === 3;
  const most = Math.min(hyper.tensorsPerDispatch ?? Infinity, Math.floor(rt.device.limits.maxComputeWorkgroupsPerDimension / FLAT4_MAX_WORKGROUPS));
  const roles = (k: number) => {
    const t = tensors[k];
    // A tensor whose buffers clash is left to the per-tensor kernels (and their errors).
    if (!distinct(t)) return null;
    return [{ binding: t.grad, count: t.count }, { binding: t.param, count: t.count }, momentsRange(t)];
  };
  return flatRuns(tensors.length, roles, rt.device.limits.maxStorageBufferBindingSize, most);
}

/** adamw_flat(4): one dispatch for tensors whose gradients, values and moments lie in one buffer each. */
function recordFlatAdamW(rt: GpuRuntime, rec: Recorder, tensors: readonly AdamWTensor[], stepState: Binding, step: number, hyper: ResolvedAdamW): void {
  const vec4 = flatVec4(hyper.flatVariant, rt.info.isFallback);
  const grads = flatBinding(tensors.map((t) => ({ binding: t.grad, count: t.count })));
  const params = flatBinding(tensors.map((t) => ({ binding: t.param, count: t.count })));
  const moments = flatBinding(tensors.map(momentsRange));
  const momentsStart = offsetOfBinding(moments.binding);
  const table = new Uint32Array(8 * tensors.length);
  const decays = new Float32Array(table.buffer);
  let workgroups = 0;
  tensors.forEach((t, j) => {
    const own = vec4 ? Math.min(FLAT4_MAX_WORKGROUPS, Math.ceil(t.count / 4 / FLAT4_WORKGROUP)) : Math.ceil(t.count / WORKGROUP);
    table.set([t.count, grads.firstElements[j], params.firstElements[j], (offsetOfBinding(t.m) - momentsStart) / 4, (offsetOfBinding(t.v) - momentsStart) / 4, 0, workgroups, own], 8 * j);
    // float64 here, rounded once to f32 (see adamw.wgsl's header).
    decays[8 * j + 5] = 1 - hyper.lr * (t.weight_decay ?? hyper.weightDecay);
    workgroups += own;
  });
  const tableBuffer = rec.scratch(table.byteLength, 'adamw.flat_tensors');
  rt.device.queue.writeBuffer(tableBuffer, 0, table);
  const header = new ArrayBuffer(32);
  new Float32Array(header).set([hyper.beta1, hyper.beta2, 1 - hyper.beta1, 1 - hyper.beta2, hyper.lr / (1 - hyper.beta1 ** step), Math.sqrt(1 - hyper.beta2 ** step), hyper.eps]);
  new Uint32Array(header)[7] = tensors.length;
  const [x, y] = vec4 ? [workgroups, 1] : rt.grid(workgroups);
  const bindings = [rec.uniform(new Uint32Array(header)), stepState, tableBuffer, grads.binding, params.binding, moments.binding];
  rec.dispatch(rt.pipeline(flatAdamwKernel(vec4)), bindings, x, y);
}

/** AdamW over tensors whose exp_avg and exp_avg_sq all lie in `moments` (adamw_moments.wgsl). */
function recordSharedMoments(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly AdamWTensor[],
  moments: GPUBuffer,
  stepState: Binding,
  step: number,
  hyper: ResolvedAdamW,
): void {
  tensors.forEach((t, k) => {
    if (bufferOfBinding(t.grad) === moments || bufferOfBinding(t.param) === moments) {
      throw new RangeError(`tensors[${k}]: param and grad must not share the moments' buffer`);
    }
  });
  const buffersOf = (k: number) => [tensors[k].grad, tensors[k].param].map(bufferOfBinding);
  const elementOffset = (b: Binding) => offsetOfBinding(b) / 4;
  for (const [start, end] of tensorGroups(tensors.length, momentsGroupSize(rt.device.limits, rt.info.isFallback, hyper.tensorsPerDispatch), buffersOf)) {
    if (end - start === 1) {
      // A lone tensor: adamw.wgsl with its two moment ranges bound apart (they never overlap).
      recordLoneTensor(rt, rec, tensors[start], stepState, step, hyper);
      continue;
    }
    const group = tensors.slice(start, end);
    const n = group.length;
    const { u32, workgroups } = multiHeader(group, 32 * n, step, hyper);
    group.forEach((t, j) => {
      u32[8 + 4 * n + 4 * j] = elementOffset(t.m);
      u32[9 + 4 * n + 4 * j] = elementOffset(t.v);
    });
    const [x, y] = rt.grid(workgroups);
    const bindings = group.flatMap((t) => [t.grad, t.param]);
    rec.dispatch(rt.pipeline(momentsStep(n)), [rec.uniform(u32), stepState, moments, ...bindings], x, y);
  }
}

/** AdamW over tensors whose moments are buffers of their own (adamw_multi.wgsl, adamw.wgsl). */
function recordSeparateMoments(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly AdamWTensor[],
  stepState: Binding,
  step: number,
  hyper: ResolvedAdamW,
): void {
  const buffersOf = (k: number) => [tensors[k].grad, tensors[k].param, tensors[k].m, tensors[k].v].map(bufferOfBinding);
  for (const [start, end] of tensorGroups(tensors.length, adamwGroupSize(rt.device.limits, rt.info.isFallback, hyper.tensorsPerDispatch), buffersOf)) {
    if (end - start === 1) {
      recordLoneTensor(rt, rec, tensors[start], stepState, step, hyper);
      continue;
    }
    const group = tensors.slice(start, end);
    const { u32, workgroups } = multiHeader(group, 16 * group.length, step, hyper);
    const [x, y] = rt.grid(workgroups);
    const bindings = group.flatMap((t) => [t.grad, t.param, t.m, t.v]);
    rec.dispatch(rt.pipeline(multiStep(group.length)), [rec.uniform(u32), stepState, ...bindings], x, y);
  }
}

/** One tensor alone (adamw.wgsl): its own param, grad and moment bindings. */
function recordLoneTensor(rt: GpuRuntime, rec: Recorder, t: AdamWTensor, stepState: Binding, step: number, hyper: ResolvedAdamW): void {
  const params = rec.uniform(paramsFor(t.count, hyper, step, t.weight_decay ?? hyper.weightDecay));
  const bindings = [params, t.grad, stepState, t.param, t.m, t.v];
  // adamw_step4 on a software adapter (about 3x faster there); a GPU keeps a thread an element.
  if (rt.info.isFallback && quad(t.count) && [t.grad, t.param, t.m, t.v].every(quadOffset)) {
    rec.dispatch(rt.pipeline(STEP4), bindings, Math.min(STEP4_MAX_WORKGROUPS, Math.ceil(t.count / 4 / STEP4_WORKGROUP)));
    return;
  }
  const [x, y] = rt.grid(Math.ceil(t.count / WORKGROUP));
  rec.dispatch(rt.pipeline(STEP), bindings, x, y);
}

/**
 * The uniform block of the multi-tensor kernels (adamw_multi.wgsl, adamw_moments.wgsl): the
 * hyper-parameters, the tensor count, then per tensor its count, first workgroup and decay
 * factor; `tailBytes` more for what a kernel adds after that (moment offsets). Returns the
 * block and the workgroups the group needs.
 */
function multiHeader(group: readonly AdamWTensor[], tailBytes: number, step: number, hyper: ResolvedAdamW): { u32: Uint32Array; workgroups: number } {
  const data = new ArrayBuffer(32 + tailBytes);
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
  return { u32, workgroups };
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
 * Where each tensor's exp_avg and exp_avg_sq go in one shared moments buffer (as ParameterStore
 * keeps them): each at an offset the device accepts for a binding. Returns the offsets in bytes
 * and the buffer's length.
 */
export function sharedMomentsLayout(counts: readonly number[], alignment: number): { m: number[]; v: number[]; byteLength: number } {
  const m: number[] = [];
  const v: number[] = [];
  let at = 0;
  const next = (count: number) => {
    const offset = at;
    at += Math.ceil((count * 4) / alignment) * alignment;
    return offset;
  };
  for (const count of counts) {
    m.push(next(count));
    v.push(next(count));
  }
  return { m, v, byteLength: Math.max(at, 4) };
}

/**
 * Host arrays in, host arrays out: uploads, records one optimizer step, submits once, reads
 * back. For tests, the kernel runner and benchmarks. `sharedMoments`: every tensor's moments
 * in one buffer (ParameterStore's layout, adamw_moments.wgsl) instead of a buffer each.
 */
export async function runOptimizerStep(
  rt: GpuRuntime,
  tensors: readonly OptimizerHostTensor[],
  options: OptimizerStepOptions,
  layout: { sharedMoments?: boolean } = {},
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
    let moments: (k: number, which: 'm' | 'v') => Binding = (k, which) => up(tensors[k][which] ?? new Float32Array(tensors[k].param.length), `${which}[${k}]`);
    if (layout.sharedMoments) {
      const at = sharedMomentsLayout(tensors.map((t) => t.param.length), rt.device.limits.minStorageBufferOffsetAlignment);
      // Zeros first, then the given moments: queue writes land in order, before the recording.
      const buffer = rt.upload(new Uint8Array(at.byteLength), 'moments');
      owned.push(buffer);
      moments = (k, which) => {
        const offset = at[which][k];
        const data = tensors[k][which];
        if (data) rt.device.queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength);
        return { buffer, offset, size: tensors[k].param.length * 4 };
      };
    }
    const gpu = tensors.map((t, k) => ({
      param: up(t.param, `params[${k}]`),
      grad: up(t.grad, `grads[${k}]`),
      m: moments(k, 'm'),
      v: moments(k, 'v'),
      count: t.param.length,
      weight_decay: t.weight_decay,
    }));
    const out = recordOptimizerStep(rt, rec, gpu, options);
    owned.push(out.stepState, out.tensorStats);
    const state = readStepState(rec, out.stepState);
    const read = (b: Binding, count: number) => ('buffer' in b ? rec.readF32(b.buffer, count, (b.offset ?? 0) / 4) : rec.readF32(b, count));
    const reads = gpu.map((t) => [t.param, t.m, t.v].map((b) => read(b, t.count)));
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
