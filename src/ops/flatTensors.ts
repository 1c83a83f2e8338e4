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

/** Bytes of a tensor's binding a flat kernel touches: from its start to the end of its last vec4. */
function spanOf(r: TensorRange): { lo: number; hi: number } {
  const lo = offsetOfBinding(r.binding);
  return { lo, hi: lo + Math.ceil(r.count / 4) * 16 };
}

/** A tensor binding a flat kernel can take: a 16-byte aligned start, its last vec4 inside the buffer. */
function flatReady(r: TensorRange): boolean {
  const { lo, hi } = spanOf(r);
  return lo % 16 === 0 && hi <= bufferOfBinding(r.binding).size;
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

/** A flat run being gathered: its first tensor, and per role its buffer and byte span so far. */
interface OpenGroup {
  start: number;
  roles: { buffer: GPUBuffer; lo: number; hi: number }[];
}

/**
 * Splits tensors 0..count-1 into runs: a flat run holds 2 to `most` consecutive tensors whose
 * bindings of each role (`bindingsOf(k)`: e.g. grad, param, moments; null: never flat) lie in
 * one buffer per role, each flat-ready, and whose extent per role stays within `maxBytes`; the
 * tensors between flat runs form non-flat runs, for the kernels that bind a buffer per tensor.
 * One pass, each tensor's bindings asked for once (it runs every step's recording).
 */
export function flatRuns(count: number, bindingsOf: (k: number) => TensorRange[] | null, maxBytes: number, most = Infinity): TensorRun[] {
  const runs: TensorRun[] = [];
  let group: OpenGroup | null = null;
  // Start of the pending stretch of tensors no flat run takes (-1: none).
  let looseStart = -1;
  const close = (end: number) => {
    if (group && end - group.start >= 2) {
      if (looseStart >= 0) runs.push({ start: looseStart, end: group.start, flat: false });
      runs.push({ start: group.start, end, flat: true });
      looseStart = -1;
    } else if (group && looseStart < 0) {
      looseStart = group.start;
    }
    group = null;
  };
  for (let k = 0; k < count; k++) {
    const own = bindingsOf(k);
    const ready = own !== null && own.every(flatReady);
    if (ready && group && k - group.start < most) {
      const open: OpenGroup = group;
      const spans = own.map(spanOf);
      const joins = own.every((r, role) => {
        const g = open.roles[role];
        return bufferOfBinding(r.binding) === g.buffer && Math.max(g.hi, spans[role].hi) - Math.min(g.lo, spans[role].lo) <= maxBytes;
      });
      if (joins) {
        open.roles.forEach((g, role) => {
          g.lo = Math.min(g.lo, spans[role].lo);
          g.hi = Math.max(g.hi, spans[role].hi);
        });
        continue;
      }
    }
    close(k);
    if (ready) group = { start: k, roles: own.map((r) => ({ buffer: bufferOfBinding(r.binding), ...spanOf(r) })) };
    else if (looseStart < 0) looseStart = k;
  }
  close(count);
  if (looseStart >= 0) runs.push({ start: looseStart, end: count, flat: false });
  return runs;
}

/**
 * One role's binding for a flat run: the buffer from the run's lowest offset (each tensor's
 * offset is a valid binding offset, so that one is too) to the end of its last vec4, and each
 * tensor's first element in it.
 */
export function flatBinding(ranges: readonly TensorRange[]): { binding: Binding; firstElements: number[] } {
  const spans = ranges.map(spanOf);
  const lo = Math.min(...spans.map((r) => r.lo));
  const hi = Math.max(...spans.map((r) => r.hi));
  return { binding: { buffer: bufferOfBinding(ranges[0].binding), offset: lo, size: hi - lo }, firstElements: spans.map((r) => (r.lo - lo) / 4) };
}

/** The flat kernels' variant: `requested` ('vec4' or 'scalar'), else vec4 on a software adapter. Throws on anything else. */
export function flatVec4(requested: string | undefined, software: boolean): boolean {
  if (requested !== undefined && requested !== 'scalar' && requested !== 'vec4') {
    throw new RangeError(`flatVariant must be 'scalar' or 'vec4', got ${String(requested)}`);
  }
  return (requested ?? (software ? 'vec4' : 'scalar')) === 'vec4';
}
