// Launcher for shaders/grad_norm.wgsl: the global L2 norm of many gradient tensors, the clip
// coefficient of torch.nn.utils.clip_grad_norm_ and a finite flag, written on the GPU into a
// small "step state" buffer that the AdamW kernel reads. Nothing is read back unless asked.
import code from '../../shaders/grad_norm.wgsl?raw';
import multiCode from '../../shaders/grad_norm_multi.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import { expandMultiTensor, tensorGroups } from './multiTensor';
import { quad, quadOffset } from './vec4Layout';
import { flatBinding, flatRuns, flatVec4 } from './flatTensors';

/** Threads of a partial-sum workgroup (the shaders' WG): few, since each barrier costs a software adapter a switch of every thread. */
const WORKGROUP = 64;
/** Elements per thread a partial-sum workgroup covers before another workgroup is added (2048 a workgroup). */
const ITEMS_PER_THREAD = 32;
/** Most workgroups (partials) per tensor; past that, threads stride further. */
const MAX_PARTIALS = 256;

const PARTIALS: KernelSpec = {
  name: 'grad_norm',
  code,
  entryPoint: 'partial_sums',
  bindings: ['uniform', 'read-only-storage', 'storage'],
};
/** The same pass with the same bits, a vec4 of 4 threads' elements per invocation: a tensor of a multiple of 4 values, 16-byte aligned. */
const PARTIALS4: KernelSpec = { ...PARTIALS, entryPoint: 'partial_sums4' };
/** partial_sums over many tensors bound as one range (ParameterStore's gradient arena): one dispatch, the same bits. */
const PARTIALS_FLAT: KernelSpec = { ...PARTIALS, entryPoint: 'partial_sums_flat', bindings: ['uniform', 'read-only-storage', 'storage', 'read-only-storage'] };
/** The same as partial_sums4 (a software adapter). */
const PARTIALS_FLAT4: KernelSpec = { ...PARTIALS_FLAT, entryPoint: 'partial_sums_flat4' };

/** The flat first pass: vec4 on a software adapter, a thread an element on a GPU. */
export const flatPartialsKernel = (vec4: boolean): KernelSpec => (vec4 ? PARTIALS_FLAT4 : PARTIALS_FLAT);

/** Per-tensor sums of the partials, then the norm, clip scale and flag: one workgroup. */
const SUMS_FINISH: KernelSpec = {
  name: 'grad_norm',
  code,
  entryPoint: 'sums_finish',
  bindings: ['uniform', 'read-only-storage', 'storage', 'read-only-storage', 'storage'],
};

/** Most gradient tensors one multi-tensor partial-sum dispatch binds. */
const MULTI_MAX = 8;
const MULTI_SPECS = new Map<number, KernelSpec>();

/** partial_sums over `tensors` tensors at once (shaders/grad_norm_multi.wgsl). */
function multiPartials(tensors: number): KernelSpec {
  let spec = MULTI_SPECS.get(tensors);
  if (!spec) {
    spec = {
      name: 'grad_norm_multi',
      code: expandMultiTensor(multiCode, tensors, 2, 1),
      entryPoint: 'partial_sums_multi',
      bindings: ['uniform', 'storage', ...Array<'read-only-storage'>(tensors).fill('read-only-storage')],
    };
    MULTI_SPECS.set(tensors, spec);
  }
  return spec;
}

/**
 * Tensors per partial-sum dispatch on this device: its storage bindings less the partials; one
 * on a software adapter, which runs every case of the multi-tensor kernel's per-tensor switch
 * for every thread (SwiftShader: a 4-tensor AdamW dispatch took 3.2x the time of one tensor per
 * dispatch for the same values), while a dispatch itself costs it little.
 */
export function gradNormGroupSize(limits: GPUSupportedLimits, software = false, requested?: number): number {
  const most = Math.max(1, Math.min(MULTI_MAX, limits.maxStorageBuffersPerShaderStage - 1));
  if (requested !== undefined) return checkedGroupSize(requested, most);
  return software ? 1 : most;
}

/** A requested number of tensors per dispatch, capped by what the device can bind. */
export function checkedGroupSize(requested: number, most: number): number {
  if (!Number.isInteger(requested) || requested < 1) throw new RangeError(`tensorsPerDispatch must be a positive integer, got ${requested}`);
  return Math.min(requested, most);
}

/** The kernels recordGradNorm dispatches for `count` tensors (for pipeline warm-up; a software adapter's lone tensors may take either first pass, by size). */
export function gradNormKernels(limits: GPUSupportedLimits, count: number, software = false): KernelSpec[] {
  const groups = tensorGroups(count, gradNormGroupSize(limits, software)).flatMap(([a, b]) => (b - a > 1 ? [multiPartials(b - a)] : software ? [PARTIALS, PARTIALS4] : [PARTIALS]));
  return [...new Set(groups), SUMS_FINISH];
}

/** The kernels recordGradNorm dispatches for tensors in one buffer (an arena). */
export function flatGradNormKernels(software: boolean): KernelSpec[] {
  return [flatPartialsKernel(software), SUMS_FINISH];
}

/** Float index of each scalar in the step-state buffer (STEP_STATE_FLOATS f32 values). */
export const STEP_STATE = { gradNorm: 0, clipScale: 1, finite: 2, nonfiniteCount: 3 } as const;
export const STEP_STATE_FLOATS = 4;

/** One gradient tensor: `count` f32 values at the start of `grad` (a buffer or an aligned range). */
export interface GradTensor {
  grad: Binding;
  count: number;
}

export interface GradNormOptions {
  /** Hugging Face Trainer's name and default (1.0); null or 0 turns clipping off. */
  max_grad_norm?: number | null;
  /**
   * Engine setting: at most this many tensors per multi-tensor dispatch, within the device's
   * storage-binding limit. Default: the device's choice (gradNormGroupSize). Tests set it to
   * cover both the one-tensor and the multi-tensor kernels on any adapter.
   */
  tensorsPerDispatch?: number;
  /**
   * Engine setting: the flat kernels' variant for tensors in one buffer, 'vec4' (a software
   * adapter's default) or 'scalar' (a GPU's). Tests set it to run both on any adapter.
   */
  flatVariant?: 'scalar' | 'vec4';
}

/** Pooled buffers written by recordGradNorm; the caller releases both. */
export interface GradNormBuffers {
  /** [STEP_STATE_FLOATS] f32: grad_norm, clip_scale, finite (1 or 0), non-finite entry count. */
  stepState: GPUBuffer;
  /**
   * [2T] 32-bit: T f32 sums of squares, one per tensor (NaN if it holds a NaN, +Inf if an
   * infinity or an f32 overflow), then T u32 counts of non-finite entries.
   */
  tensorStats: GPUBuffer;
}

export interface StepState {
  gradNorm: number;
  clipScale: number;
  /** False when the norm is NaN or infinite: the AdamW kernels skip the step. */
  finite: boolean;
  nonfiniteCount: number;
}

/** Bytes a binding covers. */
export function bindingBytes(binding: Binding): number {
  if ('buffer' in binding) return binding.size ?? binding.buffer.size - (binding.offset ?? 0);
  return binding.size;
}

/** Checks that `binding` holds `count` f32 values at an offset the device accepts. */
export function checkTensorBinding(rt: GpuRuntime, binding: Binding, count: number, label: string): void {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`${label}: count must be a positive integer, got ${count}`);
  const offset = 'buffer' in binding ? (binding.offset ?? 0) : 0;
  const align = rt.device.limits.minStorageBufferOffsetAlignment;
  if (offset % align !== 0) {
    throw new RangeError(`${label}: binding offset ${offset} is not a multiple of minStorageBufferOffsetAlignment (${align})`);
  }
  const bytes = bindingBytes(binding);
  if (count * 4 > bytes) throw new RangeError(`${label}: ${count} f32 values need ${count * 4} bytes, the binding has ${bytes}`);
  if (count * 4 > rt.device.limits.maxStorageBufferBindingSize) {
    throw new RangeError(
      `${label}: ${count} f32 values exceed this GPU's storage binding limit of ${rt.device.limits.maxStorageBufferBindingSize} bytes`,
    );
  }
}

/** max_grad_norm as [threshold, clip on]; undefined means Trainer's default 1.0. */
export function resolveMaxGradNorm(value: number | null | undefined): [number, boolean] {
  if (value === undefined) return [1, true];
  if (value === null || value === 0) return [0, false];
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`max_grad_norm must be a finite number > 0, or 0 / null for no clipping; got ${value}`);
  }
  return [value, true];
}

/** Workgroups (partials) the first pass uses for a tensor of `count` elements. */
export function partialsFor(count: number): number {
  return Math.min(MAX_PARTIALS, Math.ceil(count / (WORKGROUP * ITEMS_PER_THREAD)));
}

/**
 * Records the two passes for `tensors` (1 + ceil(T / gradNormGroupSize) dispatches, no
 * readback). Returns pooled
 * buffers; pass `stepState` to recordAdamW, read it with readStepState, release both.
 */
export function recordGradNorm(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly GradTensor[],
  options: GradNormOptions = {},
): GradNormBuffers {
  if (tensors.length < 1) throw new RangeError('tensors must list at least one gradient tensor');
  const [maxNorm, clip] = resolveMaxGradNorm(options.max_grad_norm);
  const vec4 = flatVec4(options.flatVariant, rt.info.isFallback);
  tensors.forEach((t, k) => checkTensorBinding(rt, t.grad, t.count, `tensors[${k}].grad`));
  const count = tensors.length;
  const offsets = new Uint32Array(count + 1);
  for (let k = 0; k < count; k++) offsets[k + 1] = offsets[k] + partialsFor(tensors[k].count);

  const partials = rec.scratch(offsets[count] * 12, 'grad_norm.partials');
  const table = rec.scratch(offsets.byteLength, 'grad_norm.offsets');
  rt.device.queue.writeBuffer(table, 0, offsets);
  const tensorStats = rt.storage(count * 8, 'grad_norm.tensor_stats');
  const stepState = rt.storage(STEP_STATE_FLOATS * 4, 'step_state');

  // The first pass: one dispatch per run of tensors bound as one range (an arena), the others
  // in groups, one dispatch each (a lone tensor: partial_sums).
  const runs = flatRuns(count, (k) => [{ binding: tensors[k].grad, count: tensors[k].count }], rt.device.limits.maxStorageBufferBindingSize, options.tensorsPerDispatch);
  for (const run of runs) {
    if (run.flat) recordFlatPartials(rt, rec, tensors.slice(run.start, run.end), offsets, run.start, partials, vec4);
    else recordGroupedPartials(rt, rec, tensors, run.start, run.end, offsets, partials, options);
  }
  rec.dispatch(rt.pipeline(SUMS_FINISH), [rec.uniform(paramsFor(count, 0, maxNorm, clip)), partials, tensorStats, table, stepState], 1);
  return { stepState, tensorStats };
}

/** partial_sums of tensors [start, end) in groups of gradNormGroupSize, one dispatch a group. */
function recordGroupedPartials(
  rt: GpuRuntime,
  rec: Recorder,
  tensors: readonly GradTensor[],
  first: number,
  last: number,
  offsets: Uint32Array,
  partials: GPUBuffer,
  options: GradNormOptions,
): void {
  for (const [start0, end0] of tensorGroups(last - first, gradNormGroupSize(rt.device.limits, rt.info.isFallback, options.tensorsPerDispatch))) {
    const start = first + start0;
    const end = first + end0;
    if (end - start === 1) {
      const t = tensors[start];
      const params = rec.uniform(paramsFor(t.count, offsets[start], 0, false));
      // partial_sums4 on a software adapter (2.5-3x faster there; a GPU keeps 64-thread workgroups).
      const spec = rt.info.isFallback && quad(t.count) && quadOffset(t.grad) ? PARTIALS4 : PARTIALS;
      rec.dispatch(rt.pipeline(spec), [params, t.grad, partials], offsets[end] - offsets[start]);
      continue;
    }
    const table = new Uint32Array(4 + 4 * (end - start));
    table[0] = end - start;
    for (let k = start; k < end; k++) {
      const j = 4 + 4 * (k - start);
      table[j] = tensors[k].count;
      table[j + 1] = offsets[k];
      table[j + 2] = offsets[k + 1] - offsets[k];
      table[j + 3] = offsets[k] - offsets[start];
    }
    const grads = tensors.slice(start, end).map((t) => t.grad);
    rec.dispatch(rt.pipeline(multiPartials(end - start)), [rec.uniform(table), partials, ...grads], offsets[end] - offsets[start]);
  }
}

/** partial_sums_flat(4) over tensors whose gradients lie in one buffer: one dispatch. */
function recordFlatPartials(rt: GpuRuntime, rec: Recorder, run: readonly GradTensor[], offsets: Uint32Array, start: number, partials: GPUBuffer, vec4: boolean): void {
  const { binding, firstElements } = flatBinding(run.map((t) => ({ binding: t.grad, count: t.count })));
  const table = new Uint32Array(4 * run.length);
  run.forEach((t, j) => {
    table.set([t.count, firstElements[j], offsets[start + j] - offsets[start], offsets[start + j + 1] - offsets[start + j]], 4 * j);
  });
  const tableBuffer = rec.scratch(table.byteLength, 'grad_norm.flat_tensors');
  rt.device.queue.writeBuffer(tableBuffer, 0, table);
  const [x, y] = rt.grid(offsets[start + run.length] - offsets[start]);
  const params = rec.uniform(paramsFor(run.length, offsets[start], 0, false));
  rec.dispatch(rt.pipeline(flatPartialsKernel(vec4)), [params, binding, partials, tableBuffer], x, y);
}

function paramsFor(count: number, base: number, maxGradNorm: number, clip: boolean): Uint32Array {
  const data = new ArrayBuffer(16);
  const u32 = new Uint32Array(data);
  u32[0] = count;
  u32[1] = base;
  new Float32Array(data)[2] = maxGradNorm;
  u32[3] = clip ? 1 : 0;
  return u32;
}

/** Schedules a readback of the step state (16 bytes); resolves after `rec.submit()`. */
export async function readStepState(rec: Recorder, stepState: Binding): Promise<StepState> {
  const buffer = 'buffer' in stepState ? stepState.buffer : stepState;
  const offset = 'buffer' in stepState ? (stepState.offset ?? 0) : 0;
  const s = await rec.readF32(buffer, STEP_STATE_FLOATS, offset / 4);
  return {
    gradNorm: s[STEP_STATE.gradNorm],
    clipScale: s[STEP_STATE.clipScale],
    finite: s[STEP_STATE.finite] === 1,
    nonfiniteCount: s[STEP_STATE.nonfiniteCount],
  };
}

export interface GradNormHostOutput {
  state: StepState;
  /** Sum of squares per tensor (NaN / Infinity as in GradNormBuffers.tensorStats). */
  tensorSumSquares: Float32Array;
  tensorNonfinite: Uint32Array;
}

/** Host arrays in: uploads, records, submits once, reads back the state and per-tensor stats. */
export async function runGradNorm(
  rt: GpuRuntime,
  grads: readonly Float32Array[],
  options: GradNormOptions = {},
): Promise<GradNormHostOutput> {
  grads.forEach((g, k) => {
    if (g.length < 1) throw new RangeError(`grads[${k}] is empty`);
  });
  const rec = rt.recorder('grad_norm');
  const uploaded = grads.map((g, k) => rt.upload(g, `grads[${k}]`));
  const owned = [...uploaded];
  try {
    const out = recordGradNorm(rt, rec, uploaded.map((grad, k) => ({ grad, count: grads[k].length })), options);
    owned.push(out.stepState, out.tensorStats);
    const state = readStepState(rec, out.stepState);
    const sums = rec.readF32(out.tensorStats, grads.length);
    const counts = rec.readU32(out.tensorStats, grads.length, grads.length);
    await rec.submit();
    return { state: await state, tensorSumSquares: await sums, tensorNonfinite: await counts };
  } finally {
    rt.release(...owned);
  }
}
