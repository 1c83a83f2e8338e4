// Launcher for shaders/kv_cache.wgsl, plus its float64 twin (a plain index transform).
import code from '../../shaders/kv_cache.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';

const WRITE: KernelSpec = { name: 'kv_cache', code, entryPoint: 'write', bindings: ['uniform', 'read-only-storage', 'storage', 'read-only-storage', 'storage'] };

export interface KvCacheShape {
  batch: number;
  numKvHeads: number;
  headDim: number;
  /** Positions each sequence's cache holds. */
  maxSeqLen: number;
}

/** Floats of one cache tensor (keys or values) of this shape: [B, Hkv, Tmax, Dh]. */
export function kvCacheFloats(s: KvCacheShape): number {
  return s.batch * s.numKvHeads * s.maxSeqLen * s.headDim;
}

/** A layer's new keys and values, [B, T, Hkv, Dh] each (buffers or ranges of one). */
export interface KvSources {
  k: Binding;
  v: Binding;
}

/** A layer's two caches, [B, Hkv, Tmax, Dh] each. */
export interface KvTargets {
  keys: GPUBuffer;
  values: GPUBuffer;
}

/** Records keys[b, h, start + t, :] = k[b, t, h, :] and the same for the values, for t < tokens: one dispatch. */
export function recordKvCacheWrite(rt: GpuRuntime, rec: Recorder, src: KvSources, cache: KvTargets, shape: KvCacheShape, start: number, tokens: number): void {
  if (!Number.isInteger(start) || start < 0 || !Number.isInteger(tokens) || tokens < 1 || start + tokens > shape.maxSeqLen) {
    throw new RangeError(`positions ${start}..${start + tokens - 1} do not fit a cache of ${shape.maxSeqLen} positions`);
  }
  for (const [name, buffer] of [['keys', cache.keys], ['values', cache.values]] as const) {
    if (buffer.size < kvCacheFloats(shape) * 4) throw new RangeError(`the ${name} cache buffer holds ${buffer.size} bytes, its shape needs ${kvCacheFloats(shape) * 4}`);
  }
  const total = shape.batch * tokens * shape.numKvHeads * shape.headDim;
  const params = new Uint32Array([shape.batch, tokens, shape.numKvHeads, shape.headDim, shape.maxSeqLen, start, total, 0]);
  const [x, y] = rt.grid(Math.ceil((2 * total) / 256));
  rec.dispatch(rt.pipeline(WRITE), [rec.uniform(params), src.k, cache.keys, src.v, cache.values], x, y);
}

/** Twin: the same write on host arrays (float64 semantics are exact for a copy). */
export function kvCacheWriteRef(src: ArrayLike<number>, cache: Float64Array | Float32Array, shape: KvCacheShape, start: number, tokens: number): void {
  const { batch, numKvHeads: H, headDim: Dh, maxSeqLen } = shape;
  for (let b = 0; b < batch; b++)
    for (let t = 0; t < tokens; t++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < Dh; d++) cache[((b * H + h) * maxSeqLen + start + t) * Dh + d] = src[((b * tokens + t) * H + h) * Dh + d];
}
