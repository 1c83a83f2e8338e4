// What the memory plan (src/rl/memoryPlan.ts) needs to know before training about the extra
// guided rollouts of guided.ts: how many rows a step can add at most, and the longest prompt
// they can be sampled from. Pure, so the plan needs no GPU.
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
 * max_completion_length characters and naming every weighted criterion (a revision's answer is
 * cut to fit the context when it must, guided.ts), or plus every weighted criterion as on-demand
 * guidance. null when both options are off.
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
