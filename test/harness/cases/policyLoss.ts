// Page side of the non-finite cases in test/browser/policyLoss.test.ts: host arrays straight
// into the launcher, since JSON requests cannot carry the NaN log-probs and advantages needed.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { runPolicyLoss } from '../../../src/ops/policyLoss';
import type { PolicyLossOptions } from '../../../src/ops/policyLoss.reference';

export interface PolicyLossCase {
  n: number;
  l: number;
  logprobs: number[];
  oldLogprobs?: number[];
  mask: number[];
  advantages: number[];
  options?: Partial<PolicyLossOptions>;
}

export async function policyLoss(rt: GpuRuntime, c: PolicyLossCase) {
  const out = await runPolicyLoss(rt, {
    n: c.n,
    l: c.l,
    logprobs: new Float32Array(c.logprobs),
    oldLogprobs: c.oldLogprobs ? new Float32Array(c.oldLogprobs) : null,
    mask: new Float32Array(c.mask),
    advantages: new Float32Array(c.advantages),
    options: c.options,
    readGradients: true,
  });
  return { loss: out.loss, policyLoss: out.policyLoss, gradLogprobs: Array.from(out.gradLogprobs ?? []) };
}
