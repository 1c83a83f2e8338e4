// The kernels reachable by name from scripts/kernel.mjs and the browser tests.
import type { GpuRuntime } from '../gpu/runtime';
import { logprobsRequest } from './logprobs.request';
import { groupAdvantageRequest } from './groupAdvantage.request';
import { policyLossRequest } from './policyLoss.request';
import { distillRequest } from './distill.request';

const KERNELS = {
  logprobs: logprobsRequest,
  group_advantage: groupAdvantageRequest,
  policy_loss: policyLossRequest,
  distill: distillRequest,
} as const;

export type KernelName = keyof typeof KERNELS;
export const KERNEL_NAMES = Object.keys(KERNELS) as KernelName[];

export function runKernelRequest(rt: GpuRuntime, name: string, request: unknown): Promise<object> {
  const run = KERNELS[name as KernelName];
  if (!run) throw new Error(`unknown kernel "${name}" (known: ${KERNEL_NAMES.join(', ')})`);
  return run(rt, request);
}
