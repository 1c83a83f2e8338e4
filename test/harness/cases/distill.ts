// Page side of the non-finite cases in test/browser/distill.test.ts: host arrays straight into
// the launcher, since JSON requests cannot carry the NaN and +inf logits these cases need.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { runDistill } from '../../../src/ops/distill';

export interface DistillCase {
  student: number[];
  teacher: number[];
  rows: number;
  vocab: number;
  beta: number;
  temperature: number;
  topK: number | null;
  excludedIds?: number[];
  mask?: number[];
  weights?: number[];
  gradLoss: number[];
}

export async function distill(rt: GpuRuntime, c: DistillCase) {
  const out = await runDistill(rt, {
    ...c,
    student: new Float32Array(c.student),
    teacher: new Float32Array(c.teacher),
    gradLoss: new Float32Array(c.gradLoss),
  });
  return { loss: Array.from(out.loss), meanLoss: out.meanLoss, grad: Array.from(out.gradStudentLogits ?? []) };
}
