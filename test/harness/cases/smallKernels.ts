// Page side of test/browser/smallKernels.test.ts: the KV-cache write and the weighted sum.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { kvCacheFloats, recordKvCacheWrite, type KvCacheShape } from '../../../src/ops/kvCache';
import { recordWeightedSum } from '../../../src/ops/reduce';

/** Keys and values from one source buffer (k at float 0, v at `vAt`, a binding offset), into two caches. */
export async function kvWrite(rt: GpuRuntime, input: { shape: KvCacheShape; k: number[]; v: number[]; vAt: number; start: number; tokens: number; initialKeys: number[]; initialValues: number[] }) {
  const rec = rt.recorder('kv');
  const keys = rt.upload(new Float32Array(input.initialKeys), 'keys');
  const values = rt.upload(new Float32Array(input.initialValues), 'values');
  const data = new Float32Array(input.vAt + input.v.length);
  data.set(input.k);
  data.set(input.v, input.vAt);
  const src = rt.upload(data, 'src');
  const v = { buffer: src, offset: input.vAt * 4, size: input.v.length * 4 };
  recordKvCacheWrite(rt, rec, { k: { buffer: src, offset: 0, size: input.k.length * 4 }, v }, { keys, values }, input.shape, input.start, input.tokens);
  const outKeys = rec.readF32(keys, kvCacheFloats(input.shape));
  const outValues = rec.readF32(values, kvCacheFloats(input.shape));
  await rec.submit();
  rt.release(keys, values, src);
  return { keys: Array.from(await outKeys), values: Array.from(await outValues) };
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
