// Rubric Dropout (arXiv 2608.11669): each step, a random subset of criteria is dropped before
// the reward is computed, so the policy never optimises the same rubric twice. The subset is
// shared by every rollout of a group (advantages stay comparable) and seeded, so a shared link
// reproduces it. Evaluation always uses the full rubric: call the base aggregation without a mask.
//
// The mask, exactly (so other implementations can reproduce it):
//   rand = mulberry32(fnv1a32(`${seed}:${step}:${group}`))   (FNV-1a over UTF-16 code units)
//   keep[k] = rand() >= p, drawn for k = 0..K-1 in order (weight-0 criteria draw too);
//   if no positive-weight criterion is kept, the positive criterion positives[floor(rand() * |positives|)]
//   is restored (positives in rubric order), so something can always be earned.
import { ROLLOUT_AGGREGATIONS, type GateOptions, type RolloutAggregation, type Scores } from './aggregate';
import type { Rubric } from './schema';

export interface DropoutOptions {
  /** Probability of dropping each criterion, in [0, 1); the paper's sweet spot is 0.3–0.5. */
  p: number;
  seed: number;
  /** The training step: a new subset every step. */
  step: number;
  /** The group (prompt) id: every rollout of one group shares the subset. */
  group: string | number;
}

export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Which criteria a group keeps this step (true = kept). Never drops every positive criterion. */
export function dropoutMask(rubric: Rubric, options: DropoutOptions): boolean[] {
  const { p, seed, step, group } = options;
  if (!(p >= 0 && p < 1)) throw new RangeError(`dropout p must be in [0, 1), got ${p}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`dropout seed must be an integer, got ${seed}`);
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError(`dropout step must be a non-negative integer, got ${step}`);
  const rand = mulberry32(fnv1a32(`${seed}:${step}:${group}`));
  const keep = rubric.criteria.map(() => rand() >= p);
  const positives = rubric.criteria.flatMap((c, k) => (c.weight > 0 ? [k] : []));
  if (!positives.some((k) => keep[k])) keep[positives[Math.floor(rand() * positives.length)]] = true;
  return keep;
}

export interface RubricDropoutOptions extends DropoutOptions, Omit<GateOptions, 'keep'> {
  /** The aggregation applied to the kept criteria; default weighted_mean. */
  aggregation?: RolloutAggregation;
}

/** Training rewards of one group under Rubric Dropout, and the mask used. */
export function rubricDropout(
  rubric: Rubric,
  groupScores: readonly Scores[],
  options: RubricDropoutOptions,
): { rewards: (number | null)[]; keep: boolean[] } {
  const keep = dropoutMask(rubric, options);
  const aggregate = ROLLOUT_AGGREGATIONS[options.aggregation ?? 'weighted_mean'];
  return { rewards: groupScores.map((s) => aggregate(rubric, s, { ...options, keep })), keep };
}
