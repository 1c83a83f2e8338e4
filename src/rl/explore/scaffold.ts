// Rubric scaffolding (RuscaRL, seed 002 A095 / seed 000 #62): for part of each group, a random
// subset of the rubric's criteria is appended to the prompt the policy samples from, with a
// probability that decays linearly over training so the model learns to meet the criteria
// without being told. The rollout is judged and trained under the original prompt; only the
// sampling saw the scaffold (mismatch.ts measures how far apart the two prompts' log-probs are).
// Pure and seeded: the same (seed, step, round, group, index) gives the same scaffold.
import { mulberry32 } from '../../rubric/dropout';
import type { Criterion, Rubric } from '../../rubric';
import type { GrpoConfig } from '../config';

type ScaffoldConfig = Pick<GrpoConfig, 'scaffold_fraction' | 'scaffold_prob_start' | 'scaffold_decay_steps' | 'scaffold_criteria_fraction' | 'num_generations' | 'max_steps' | 'seed'>;

export interface Scaffold {
  /** The criteria named in the sampling prompt, in rubric order. */
  criteria: Criterion[];
  /** The text appended to the prompt. */
  guidance: string;
}

/** p(step) = scaffold_prob_start · max(0, 1 − step / decay_steps): 0 once the decay is over. */
export function scaffoldProbability(cfg: ScaffoldConfig, step: number): number {
  if (cfg.scaffold_fraction === 0) return 0;
  const decay = cfg.scaffold_decay_steps ?? cfg.max_steps;
  return cfg.scaffold_prob_start * Math.max(0, 1 - step / decay);
}

/** Rollouts of a group that may be scaffolded: the first ⌊fraction · G⌋ positions. */
export function scaffoldSlots(cfg: ScaffoldConfig): number {
  return Math.floor(cfg.scaffold_fraction * cfg.num_generations + 1e-9);
}

/** What a scaffold says: the criteria as a checklist; a negative weight is a pitfall to avoid. */
export function scaffoldGuidance(criteria: readonly Criterion[]): string {
  const lines = criteria.map((c) => (c.weight < 0 ? `- Avoid: ${c.text}` : `- ${c.text}`));
  return `\n\nYour answer will be checked against these criteria:\n${lines.join('\n')}`;
}

/**
 * The scaffold of each rollout of one group (null: sampled from the plain prompt). Each of the
 * first scaffoldSlots positions is scaffolded with probability p(step), with its own random
 * subset of ⌈scaffold_criteria_fraction · K⌉ of the K weighted criteria, so the group's scaffolds differ.
 */
export function planScaffolds(rubric: Rubric, cfg: ScaffoldConfig, at: { step: number; round: number; group: number }): (Scaffold | null)[] {
  const G = cfg.num_generations;
  const p = scaffoldProbability(cfg, at.step);
  const slots = scaffoldSlots(cfg);
  // Weight-0 criteria are tracked, not scored: nothing to steer towards.
  const pool = rubric.criteria.filter((c) => c.weight !== 0);
  const K = pool.length;
  const take = Math.max(1, Math.min(K, Math.ceil(cfg.scaffold_criteria_fraction * K - 1e-9)));
  const seed = (cfg.seed ^ Math.imul(at.step + 1, 0x9e3779b1) ^ Math.imul(at.round + 1, 0x85ebca6b) ^ Math.imul(at.group + 1, 0xc2b2ae35)) >>> 0;
  const rand = mulberry32(seed);
  return Array.from({ length: G }, (_, i) => {
    // Draw for every position, so one rollout's scaffold does not depend on p for another.
    const u = rand();
    const order = Array.from({ length: K }, (_, k) => k);
    for (let k = K - 1; k > 0; k--) {
      const j = Math.floor(rand() * (k + 1));
      [order[k], order[j]] = [order[j], order[k]];
    }
    if (i >= slots || u >= p) return null;
    const criteria = order
      .slice(0, take)
      .sort((a, b) => a - b)
      .map((k) => pool[k]);
    return { criteria, guidance: scaffoldGuidance(criteria) };
  });
}

/**
 * The prompts the sampler may see, for the memory plan: with scaffolding on, also the longest
 * prompt carrying the longest scaffold it can get (the ⌈fraction · K⌉ longest weighted criteria).
 */
export function samplingPromptsBound(prompts: readonly string[], rubric: Rubric, cfg: Pick<GrpoConfig, 'scaffold_fraction' | 'scaffold_criteria_fraction'>): string[] {
  if (cfg.scaffold_fraction === 0 || prompts.length === 0) return [...prompts];
  const pool = rubric.criteria.filter((c) => c.weight !== 0);
  const take = Math.max(1, Math.min(pool.length, Math.ceil(cfg.scaffold_criteria_fraction * pool.length - 1e-9)));
  const bytes = (t: string) => new TextEncoder().encode(t).length;
  const longest = [...pool].sort((a, b) => bytes(scaffoldGuidance([b])) - bytes(scaffoldGuidance([a]))).slice(0, take);
  const prompt = prompts.reduce((a, b) => (bytes(b) > bytes(a) ? b : a));
  return [...prompts, prompt + scaffoldGuidance(longest)];
}
