// A quick in-page proof that the GPU kernels compute what their float64 twins compute:
// small random problems, one submission each, worst error against the stated tolerance.
import type { GpuRuntime } from '../gpu/runtime';
import { runLogprobs } from './logprobs';
import { logprobsBackwardRef, logprobsForwardRef } from './logprobs.reference';
import { runGroupAdvantage } from './groupAdvantage';
import { groupAdvantageRef } from './groupAdvantage.reference';

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

export async function runSelfCheck(rt: GpuRuntime): Promise<KernelCheck[]> {
  return [await checkLogprobs(rt), await checkGroupAdvantage(rt)];
}
