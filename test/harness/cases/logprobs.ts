// Page side of the non-finite cases in test/browser/logprobs.test.ts: host arrays straight into
// the launcher, since JSON requests cannot carry the NaN and +inf logits these cases need.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { runLogprobs } from '../../../src/ops/logprobs';

export interface LogprobsCase {
  logits: number[];
  tokens: number[];
  vocab: number;
  temperature: number;
  gradLogprobs: number[];
  gradEntropy: number[];
}

export async function logprobs(rt: GpuRuntime, c: LogprobsCase) {
  const out = await runLogprobs(rt, {
    rows: c.tokens.length,
    vocab: c.vocab,
    temperature: c.temperature,
    logits: new Float32Array(c.logits),
    tokens: new Uint32Array(c.tokens),
    gradLogprobs: new Float32Array(c.gradLogprobs),
    gradEntropy: new Float32Array(c.gradEntropy),
  });
  return { logprobs: Array.from(out.logprobs), entropy: Array.from(out.entropy), gradLogits: Array.from(out.gradLogits ?? []) };
}
