// How long the extra guided rollouts' prompts (guided.ts) can be: for the memory plan
// (src/rl/memoryPlan.ts) before training, how many rows a step can add at most and the longest
// prompt they can be sampled from; at the step, a guidance shortened to fit the context. Pure.
import type { Criterion } from '../../rubric';
import type { GrpoConfig } from '../config';
import { herlSlots, revisionGuidance } from './hindsight';
import { scaffoldGuidance } from './scaffold';

type BoundConfig = Pick<GrpoConfig, 'herl_fraction' | 'guidance_on_demand' | 'guidance_num_generations' | 'num_generations' | 'generation_batch_size' | 'max_completion_length'>;

/** Extra rows per step at most: each group's ⌊herl_fraction · G⌋ revisions plus guidance_num_generations on-demand rollouts. */
export function guidedRowsBound(cfg: BoundConfig): number {
  const groups = cfg.generation_batch_size / cfg.num_generations;
  return groups * (herlSlots(cfg) + (cfg.guidance_on_demand ? cfg.guidance_num_generations : 0));
}

/**
 * The longest guided sampling prompt: the longest prompt plus a revision quoting an answer of
 * max_completion_length characters and naming every weighted criterion, or plus every weighted
 * criterion as on-demand guidance (guided.ts shortens a guidance that does not fit the context).
 * null when both options are off.
 */
export function guidedPromptBound(prompts: readonly string[], criteria: readonly Criterion[], cfg: BoundConfig): string | null {
  if (guidedRowsBound(cfg) === 0 || prompts.length === 0) return null;
  const bytes = (t: string) => new TextEncoder().encode(t).length;
  const prompt = prompts.reduce((a, b) => (bytes(b) > bytes(a) ? b : a));
  const weighted = criteria.filter((c) => c.weight !== 0);
  const candidates = [
    ...(herlSlots(cfg) > 0 ? [prompt + revisionGuidance('x'.repeat(cfg.max_completion_length), weighted)] : []),
    ...(cfg.guidance_on_demand ? [prompt + scaffoldGuidance(weighted)] : []),
  ];
  return candidates.reduce((a, b) => (bytes(b) > bytes(a) ? b : a));
}

/**
 * The guided sampling prompt as ids, shortened (in `plan`, which the rollout's label shows) until
 * it is at most `room` tokens (the context less max_completion_length): a revision's quoted answer is cut first (marked "…"), then criteria are
 * left out from the last one. null when even one criterion does not fit: that rollout is skipped.
 */
export function fitGuidance(
  formatPrompt: (text: string) => number[],
  room: number,
  prompt: string,
  plan: { kind: 'hindsight' | 'on_demand'; guidance: string; criteria: Criterion[] },
  completion: string | null,
): number[] | null {
  let answer = completion ?? '';
  let cut = false;
  let ids = formatPrompt(prompt + plan.guidance);
  while (ids.length > room) {
    if (plan.kind === 'hindsight' && answer.length > 0) {
      answer = answer.slice(0, Math.floor(answer.length * 0.75));
      cut = true;
    } else if (plan.criteria.length > 1) {
      plan.criteria = plan.criteria.slice(0, -1);
    } else {
      return null;
    }
    plan.guidance = plan.kind === 'hindsight' ? revisionGuidance(cut ? `${answer}…` : answer, plan.criteria) : scaffoldGuidance(plan.criteria);
    ids = formatPrompt(prompt + plan.guidance);
  }
  return ids;
}
