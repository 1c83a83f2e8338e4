// A quick in-page proof that the GPU kernels compute what their float64 twins compute:
// small random problems, one submission each, worst error against the stated tolerance.
import type { GpuRuntime } from '../gpu/runtime';
import { runLogprobs } from './logprobs';
import { logprobsBackwardRef, logprobsForwardRef } from './logprobs.reference';
import { runGroupAdvantage } from './groupAdvantage';
import { groupAdvantageRef } from './groupAdvantage.reference';
import { runPolicyLoss } from './policyLoss';
import { policyLossRef, type PolicyLossOptions } from './policyLoss.reference';

export interface KernelCheck {
  kernel: string;
  /** What was compared, in words. */
  what: string;
  passed: boolean;
  maxAbsError: number;
  tolerance: number;
  milliseconds: number;
  error?: string;
}

/** Deterministic pseudo-random numbers in [-scale, scale). */
function noise(n: number, seed: number, scale: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296 - 0.5) * 2 * scale;
  }
  return out;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    worst = Number.isNaN(d) ? Infinity : Math.max(worst, d);
  }
  return worst;
}

async function timed(kernel: string, what: string, tolerance: number, body: () => Promise<number>): Promise<KernelCheck> {
  const t0 = performance.now();
  try {
    const maxAbsError = await body();
    return { kernel, what, passed: maxAbsError <= tolerance, maxAbsError, tolerance, milliseconds: performance.now() - t0 };
  } catch (err) {
    return { kernel, what, passed: false, maxAbsError: NaN, tolerance, milliseconds: performance.now() - t0, error: (err as Error).message };
  }
}

export function checkLogprobs(rt: GpuRuntime): Promise<KernelCheck> {
  return timed('logprobs', 'log-probs, entropies and logit gradients, 8 tokens x V=5000', 1e-4, async () => {
    const rows = 8;
    const vocab = 5000;
    const logits = noise(rows * vocab, 1, 6);
    const tokens = new Uint32Array(rows).map((_, i) => (i * 613) % vocab);
    const gradLogprobs = noise(rows, 2, 1);
    const gradEntropy = noise(rows, 3, 1);
    const out = await runLogprobs(rt, { logits, tokens, rows, vocab, temperature: 0.9, gradLogprobs, gradEntropy });
    const problem = { logits, tokens, rows, vocab, temperature: 0.9 };
    const ref = logprobsForwardRef(problem);
    return Math.max(
      maxAbsDiff(out.logprobs, ref.logprobs),
      maxAbsDiff(out.entropy, ref.entropy),
      maxAbsDiff(out.gradLogits!, logprobsBackwardRef(problem, gradLogprobs, gradEntropy)),
    );
  });
}

export function checkGroupAdvantage(rt: GpuRuntime): Promise<KernelCheck> {
  return timed('group_advantage', 'advantages of 16 groups x 8 rollouts, some unscorable, scale_rewards="group"', 1e-4, async () => {
    const rewards = noise(128, 4, 1).map((r, i) => (i % 13 === 0 ? NaN : r));
    const options = { numGenerations: 8, scaleRewards: 'group', eps: 1e-4, multiObjectiveAggregation: 'sum_then_normalize', advantageEstimator: 'grpo' } as const;
    const out = await runGroupAdvantage(rt, { rewards, criteria: 1, ...options });
    const ref = groupAdvantageRef({ rewards, numCriteria: 1, ...options });
    if (out.unscorable !== ref.unscorable || out.zeroStdGroups !== ref.zeroStdGroups) return Infinity;
    return maxAbsDiff(out.advantages!, ref.advantages);
  });
}

export function checkPolicyLoss(rt: GpuRuntime): Promise<KernelCheck> {
  return timed('policy_loss', 'clipped loss, KL and gradients, 8 sequences x 40 tokens, loss_type="dapo"', 1e-4, async () => {
    const n = 8;
    const l = 40;
    const logprobs = noise(n * l, 5, 1).map((x) => x - 2);
    const oldLogprobs = logprobs.map((x, i) => x + 0.3 * Math.sin(i * 1.7));
    const refLogprobs = logprobs.map((x, i) => x + 0.2 * Math.cos(i * 0.9));
    const mask = new Float32Array(n * l).map((_, i) => (i % l < l - (i / l) * 4 ? 1 : 0));
    const advantages = noise(n, 6, 1.5);
    const options = { lossType: 'dapo', beta: 0.04, epsilon: 0.2, epsilonHigh: 0.28 } satisfies Partial<PolicyLossOptions>;
    const problem = { n, l, logprobs, oldLogprobs, refLogprobs, mask, advantages };
    const out = await runPolicyLoss(rt, { ...problem, options, readGradients: true });
    const ref = policyLossRef({ ...problem, options });
    return Math.max(Math.abs(out.loss - ref.loss), Math.abs(out.clipRatioRegion - ref.clipRatioRegion), maxAbsDiff(out.gradLogprobs!, ref.gradLogprobs));
  });
}

export async function runSelfCheck(rt: GpuRuntime): Promise<KernelCheck[]> {
  return [await checkLogprobs(rt), await checkGroupAdvantage(rt), await checkPolicyLoss(rt)];
}
