// Launcher for shaders/reduce.wgsl and its float64 twin.
import code from '../../shaders/reduce.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const WEIGHTED_SUM: KernelSpec = {
  name: 'reduce',
  code,
  entryPoint: 'weighted_sum',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage'],
};

/** Records out[slot] = Σ_{i<n} w[i]·x[i] (entries with w = 0 skipped). */
export function recordWeightedSum(rt: GpuRuntime, rec: Recorder, x: Binding, w: Binding, out: GPUBuffer, n: number, slot = 0): void {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer, got ${n}`);
  if (!Number.isInteger(slot) || slot < 0 || (slot + 1) * 4 > out.size) throw new RangeError(`slot ${slot} is outside the output buffer`);
  rec.dispatch(rt.pipeline(WEIGHTED_SUM), [rec.uniform(new Uint32Array([n, slot, 0, 0])), x, w, out], 1);
}

export function weightedSumRef(x: ArrayLike<number>, w: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) if (w[i] !== 0) s += w[i] * x[i];
  return s;
}
