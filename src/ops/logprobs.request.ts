// JSON request/response of the `logprobs` kernel for scripts/kernel.mjs and the tests:
//   in  {logits: number[T][V], tokens: number[T], temperature?, grad_logprobs?: number[T], grad_entropy?: number[T]}
//   out {logprobs: number[T], entropy: number[T], grad_logits?: number[T][V]}
// JSON has no -Infinity: a masked logit may be written null or "-inf"; a -Infinity result prints as null.
import type { GpuRuntime } from '../gpu/runtime';
import { runLogprobs } from './logprobs';
import { asObject, matrix, optionalNumber, rejectUnknownFields, toRows, vector, KernelRequestError } from './requestFields';

const FIELDS = ['logits', 'tokens', 'temperature', 'grad_logprobs', 'grad_entropy'] as const;

export async function logprobsRequest(rt: GpuRuntime, request: unknown): Promise<object> {
  const obj = asObject(request);
  rejectUnknownFields(obj, FIELDS);
  const logits = matrix(obj, 'logits', { nullAs: -Infinity, allowNegInfString: true });
  const rows = logits.rows;
  const vocab = logits.cols;
  if (vocab < 2) throw new KernelRequestError('logits', `each row needs at least 2 vocabulary entries, got ${vocab}`);
  const tokens = vector(obj, 'tokens', { integer: true, min: 0 }, rows);
  tokens.forEach((t, i) => {
    if (t >= vocab) throw new KernelRequestError(`tokens[${i}]`, `token ${t} is outside the vocabulary of ${vocab}`);
  });
  const temperature = optionalNumber(obj, 'temperature', 1);
  if (temperature <= 0) throw new KernelRequestError('temperature', `must be > 0, got ${temperature}`);
  const gradLogprobs = obj.grad_logprobs === undefined ? undefined : new Float32Array(vector(obj, 'grad_logprobs', {}, rows));
  const gradEntropy = obj.grad_entropy === undefined ? undefined : new Float32Array(vector(obj, 'grad_entropy', {}, rows));
  const out = await runLogprobs(rt, {
    logits: new Float32Array(logits.data),
    tokens: new Uint32Array(tokens),
    rows,
    vocab,
    temperature,
    gradLogprobs,
    gradEntropy,
  });
  return {
    logprobs: Array.from(out.logprobs),
    entropy: Array.from(out.entropy),
    ...(out.gradLogits ? { grad_logits: toRows(out.gradLogits, rows, vocab) } : {}),
  };
}
