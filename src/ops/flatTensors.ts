// Many tensors as ranges of one buffer (ParameterStore's arenas): the layout that packs them,
// and the runs of a tensor list an optimizer kernel can bind as one range each, so a single
// dispatch covers them all (shaders/grad_norm.wgsl partial_sums_flat, shaders/adamw_flat.wgsl)
// instead of one per tensor or per few tensors.
import type { Binding } from '../gpu/recorder';
import { bufferOfBinding } from './multiTensor';

/** Byte offset of a binding in its buffer. */
export const offsetOfBinding = (b: Binding): number => ('buffer' in b ? (b.offset ?? 0) : 0);

/**
 * Byte offsets that pack tensors of `counts` f32 values one after another, each at a multiple of
 * `alignment` (the device's minStorageBufferOffsetAlignment, so each is also a binding of its
 * own), and the buffer's length: a multiple of `alignment`, so every tensor's last vec4 is inside.
 */
export function arenaLayout(counts: readonly number[], alignment: number): { offsets: number[]; byteLength: number } {
  const offsets: number[] = [];
  let at = 0;
  for (const count of counts) {
    offsets.push(at);
    at += Math.ceil((count * 4) / alignment) * alignment;
  }
  return { offsets, byteLength: Math.max(at, alignment) };
}

/** A tensor binding a flat kernel can take: a 16-byte aligned start, its last vec4 inside the buffer. */
function flatReady(b: Binding, count: number): boolean {
  const offset = offsetOfBinding(b);
  return offset % 16 === 0 && offset + Math.ceil(count / 4) * 16 <= bufferOfBinding(b).size;
}

/** `count` f32 values at the start of a binding. */
export interface TensorRange {
  binding: Binding;
  count: number;
}

/** A run of tensors [start, end) of a list; `flat` when one dispatch binds each of their roles as one range. */
export interface TensorRun {
  start: number;
  end: number;
  flat: boolean;
}

/**
 * Splits tensors 0..count-1 into runs: a flat run holds 2 to `most` consecutive tensors whose
 * bindings of each role (`bindingsOf(k)`: e.g. grad, param, moments; null: never flat) lie in one buffer per role,
 * each flat-ready, and whose extent per role stays within `maxBytes`; the tensors between flat
 * runs form non-flat runs, for the kernels that bind a buffer per tensor.
 */
export function flatRuns(count: number, bindingsOf: (k: number) => TensorRange[] | null, maxBytes: number, most = Infinity): TensorRun[] {
  const runs: TensorRun[] = [];
  const ready = (k: number) => bindingsOf(k)?.every((r) => flatReady(r.binding, r.count)) ?? false;
  const joins = (group: readonly number[], k: number) => {
    const own = bindingsOf(k);
    if (group.length >= most || !own || !ready(k)) return false;
    const first = bindingsOf(group[0])!;
    return own.every((r, role) => bufferOfBinding(r.binding) === bufferOfBinding(first[role].binding) && extent([...group, k].map((j) => bindingsOf(j)![role])) <= maxBytes);
  };
  let group: number[] = [];
  // Start of the pending stretch of tensors no flat run takes (-1: none).
  let looseStart = -1;
  const close = () => {
    if (group.length >= 2) {
      if (looseStart >= 0) runs.push({ start: looseStart, end: group[0], flat: false });
      runs.push({ start: group[0], end: group[group.length - 1] + 1, flat: true });
      looseStart = -1;
    } else if (group.length === 1 && looseStart < 0) {
      looseStart = group[0];
    }
    group = [];
  };
  for (let k = 0; k < count; k++) {
    if (group.length > 0 && joins(group, k)) {
      group.push(k);
      continue;
    }
    close();
    if (ready(k)) group = [k];
    else if (looseStart < 0) looseStart = k;
  }
  close();
  if (looseStart >= 0) runs.push({ start: looseStart, end: count, flat: false });
  return runs;
}

/** Bytes from the lowest start of `ranges` to the end of the last vec4 of any. */
function extent(ranges: readonly TensorRange[]): number {
  const lo = Math.min(...ranges.map((r) => offsetOfBinding(r.binding)));
  const hi = Math.max(...ranges.map((r) => offsetOfBinding(r.binding) + Math.ceil(r.count / 4) * 16));
  return hi - lo;
}

/**
 * One role's binding for a flat run: the buffer from the run's lowest offset (each tensor's
 * offset is a valid binding offset, so that one is too) to the end of its last vec4, and each
 * tensor's first element in it.
 */
export function flatBinding(ranges: readonly TensorRange[]): { binding: Binding; firstElements: number[] } {
  const buffer = bufferOfBinding(ranges[0].binding);
  const lo = Math.min(...ranges.map((r) => offsetOfBinding(r.binding)));
  const hi = Math.max(...ranges.map((r) => offsetOfBinding(r.binding) + Math.ceil(r.count / 4) * 16));
  return { binding: { buffer, offset: lo, size: hi - lo }, firstElements: ranges.map((r) => (offsetOfBinding(r.binding) - lo) / 4) };
}
