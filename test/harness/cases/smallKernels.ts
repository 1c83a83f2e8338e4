// Page side of test/browser/smallKernels.test.ts: the KV-cache write and the weighted sum.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { kvCacheFloats, recordKvCacheWrite, type KvCacheShape } from '../../../src/ops/kvCache';
import { recordWeightedSum } from '../../../src/ops/reduce';

export async function kvWrite(rt: GpuRuntime, input: { shape: KvCacheShape; src: number[]; start: number; tokens: number; initial: number[] }) {
  const rec = rt.recorder('kv');
  const cache = rt.upload(new Float32Array(input.initial), 'cache');
  const src = rt.upload(new Float32Array(input.src), 'src');
  recordKvCacheWrite(rt, rec, src, cache, input.shape, input.start, input.tokens);
  const out = rec.readF32(cache, kvCacheFloats(input.shape));
  await rec.submit();
  rt.release(cache, src);
  return Array.from(await out);
}

export async function weightedSum(rt: GpuRuntime, input: { x: number[]; w: number[] }) {
  const rec = rt.recorder('sum');
  const x = rt.upload(new Float32Array(input.x));
  const w = rt.upload(new Float32Array(input.w));
  const out = rt.storage(16);
  recordWeightedSum(rt, rec, x, w, out, input.x.length, 2);
  const r = rec.readF32(out, 1, 2);
  await rec.submit();
  rt.release(x, w, out);
  return (await r)[0];
}
