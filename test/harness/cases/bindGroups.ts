// Page side of test/browser/bindGroups.test.ts: the same dispatch recorded again over the same
// buffers reuses its bind group; other buffers or ranges get their own; results stay right.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { recordAdd } from '../../../src/ops/elementwise';

export async function reuse(rt: GpuRuntime) {
  const a = rt.upload(Float32Array.from([1, 2, 3, 4]), 'a');
  const b = rt.upload(Float32Array.from([10, 20, 30, 40]), 'b');
  const c = rt.upload(Float32Array.from([100, 200, 300, 400]), 'c');
  const before = { ...rt.bindGroups.stats };
  const sums: number[][] = [];
  const run = async (x: GPUBuffer, y: GPUBuffer) => {
    const rec = rt.recorder('bind group reuse');
    const out = recordAdd(rt, rec, x, y, 4);
    const read = rec.readF32(out, 4);
    rec.releaseAfterSubmit(out);
    await rec.submit();
    sums.push(Array.from(await read));
  };
  await run(a, b);
  const afterFirst = { ...rt.bindGroups.stats };
  await run(a, b);
  const afterSecond = { ...rt.bindGroups.stats };
  await run(a, c);
  const afterThird = { ...rt.bindGroups.stats };
  rt.release(a, b, c);
  const delta = (s: { created: number; reused: number }, t: { created: number; reused: number }) => ({ created: t.created - s.created, reused: t.reused - s.reused });
  return { sums, first: delta(before, afterFirst), second: delta(afterFirst, afterSecond), third: delta(afterSecond, afterThird) };
}
