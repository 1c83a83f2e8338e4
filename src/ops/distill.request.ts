// JSON request/response of the `distill` kernel for scripts/kernel.mjs and the tests:
//   in  {student_logits: number[T][V], teacher_logits: number[T][V], beta?=0.5, temperature?=1, top_k?=null,
//        special_token_ids?: number[], mask?: number[T], weights?: number[T], grad_loss?: number[T]}
//   out {loss: number[T], mean_loss: number, grad_student_logits?: number[T][V]}
// JSON has no infinities: a masked logit may be written null or "-inf"; an infinite loss prints as null.
import type { GpuRuntime } from '../gpu/runtime';
import { runDistill } from './distill';
import { asObject, matrix, optionalNumber, rejectUnknownFields, toRows, vector, KernelRequestError } from './requestFields';

const FIELDS = [
  'student_logits',
  'teacher_logits',
  'beta',
  'temperature',
  'top_k',
  'special_token_ids',
  'mask',
  'weights',
  'grad_loss',
] as const;

export async function distillRequest(rt: GpuRuntime, request: unknown): Promise<object> {
  const obj = asObject(request);
  rejectUnknownFields(obj, FIELDS);
  const logitOpts = { nullAs: -Infinity, allowNegInfString: true };
  const student = matrix(obj, 'student_logits', logitOpts);
  const { rows, cols: vocab } = student;
  if (vocab < 2) throw new KernelRequestError('student_logits', `each row needs at least 2 vocabulary entries, got ${vocab}`);
  const teacher = matrix(obj, 'teacher_logits', logitOpts, { rows, cols: vocab });
  const beta = optionalNumber(obj, 'beta', 0.5);
  if (beta < 0 || beta > 1) throw new KernelRequestError('beta', `must be between 0 and 1, got ${beta}`);
  const temperature = optionalNumber(obj, 'temperature', 1);
  if (temperature <= 0) throw new KernelRequestError('temperature', `must be > 0, got ${temperature}`);
  let topK: number | null = null;
  if (obj.top_k !== undefined && obj.top_k !== null) {
    topK = optionalNumber(obj, 'top_k', 0);
    if (!Number.isInteger(topK) || topK < 1 || topK > vocab) {
      throw new KernelRequestError('top_k', `expected an integer from 1 to the vocabulary size ${vocab}, got ${topK}`);
    }
  }
  let excludedIds: number[] | undefined;
  if (obj.special_token_ids !== undefined) {
    if (topK === null) throw new KernelRequestError('special_token_ids', 'only applies with top_k');
    excludedIds = Array.isArray(obj.special_token_ids) && obj.special_token_ids.length === 0
      ? []
      : vector(obj, 'special_token_ids', { integer: true, min: 0 });
    excludedIds.forEach((id, i) => {
      if (id >= vocab) throw new KernelRequestError(`special_token_ids[${i}]`, `token ${id} is outside the vocabulary of ${vocab}`);
    });
  }
  const mask = obj.mask === undefined ? undefined : vector(obj, 'mask', {}, rows);
  mask?.forEach((m, i) => {
    if (m !== 0 && m !== 1) throw new KernelRequestError(`mask[${i}]`, `expected 0 (masked) or 1, got ${m}`);
  });
  const weights = obj.weights === undefined ? undefined : vector(obj, 'weights', { min: 0 }, rows);
  const gradLoss = obj.grad_loss === undefined ? undefined : new Float32Array(vector(obj, 'grad_loss', {}, rows));
  const out = await runDistill(rt, {
    student: new Float32Array(student.data),
    teacher: new Float32Array(teacher.data),
    rows,
    vocab,
    beta,
    temperature,
    topK,
    excludedIds,
    mask,
    weights,
    gradLoss,
  });
  return {
    loss: Array.from(out.loss),
    mean_loss: out.meanLoss,
    ...(out.gradStudentLogits ? { grad_student_logits: toRows(out.gradStudentLogits, rows, vocab) } : {}),
  };
}
