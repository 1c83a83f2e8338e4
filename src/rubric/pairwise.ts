// The pairwise judging mode (issue 13; seed 000 #101 position bias): a judge asked "which of
// these two responses meets the criterion better?" sees the two rollouts of a group in slots
// first and second. The page asks every pair of a group in both orders, per criterion, so a
// judge that favours a slot shows it: with no position bias the same rollout wins whichever slot
// it is in.
//
// The pairwise verdict, exactly (so other implementations can reproduce it):
//   from the judge's scores s (status 'ok' only; a pair with an unscored side is not compared):
//     first wins if s_first > s_second, second wins if s_second > s_first, else a tie
//   with a declared `position` bias (src/rubric/bias.ts, kind 'position', slot first|second):
//     u = mulberry32(fnv1a32(`bias:${seed}:${step}:${group}:${first}>${second}:${criterion_id}`))()  (step: the group's)
//     if u < strength: the bias's slot wins, whatever the scores (the comparison is `biased`)
//   strength 0 changes nothing. The judges the page runs score one response at a time, so their
//   own pairwise verdicts are order-free: the position bias measured without a declared bias is 0
//   by construction, and the mode shows what a position-biased pairwise judge does to the verdicts.
// GRPO's reward stays pointwise (one score per rollout and criterion): the position bias acts on
// this mode's comparisons, the judge meta panel's measurement (judgeMeta.ts positionBias), never
// on the trained reward.
import { fnv1a32, mulberry32 } from './dropout';
import type { CriterionResult } from './judge';
import type { JudgeBias } from './bias';

export type Slot = 'first' | 'second';
export type PairWinner = Slot | 'tie';

export interface PairComparison {
  criterion_id: string;
  /** The group's key (e.g. "step/group"). */
  group: string;
  /** Rollout indices (within the group) in the first and second slot. */
  first: number;
  second: number;
  winner: PairWinner;
  /** The declared position bias decided this comparison. */
  biased?: true;
}

export interface PairGroup {
  /** The group's key (e.g. "step/group"), unique among the groups compared. */
  group: string;
  /** The step it was sampled at (part of the bias's draw). */
  step: number;
  /** results[i]: rollout i's results (by criterion id). */
  results: readonly (readonly CriterionResult[])[];
}

/** The order-free pairwise verdict of two scores. */
export const compareScores = (first: number, second: number): PairWinner => (first > second ? 'first' : second > first ? 'second' : 'tie');

const scoreOf = (row: readonly CriterionResult[], id: string): number | null => {
  const r = row.find((x) => x.criterion_id === id);
  return r?.status === 'ok' ? r.score : null;
};

/**
 * Every ordered pair (i, j), i ≠ j, of every group, for each criterion: both orders of each pair.
 * `bias` is applied only when its kind is 'position'; `seed` is the run's (used when the bias names none).
 */
export function pairwiseComparisons(
  criteria: readonly string[],
  groups: readonly PairGroup[],
  bias: JudgeBias | null | undefined,
  options: { seed: number },
): PairComparison[] {
  const position = bias?.kind === 'position' && bias.strength > 0 ? bias : null;
  if (position && !(position.strength <= 1)) throw new RangeError(`judge bias strength must be in [0, 1], got ${position.strength}`);
  const slot: Slot = position?.slot ?? 'first';
  const seed = position?.seed ?? options.seed;
  const only = position?.criteria ? new Set(position.criteria) : null;
  const out: PairComparison[] = [];
  for (const g of groups) {
    for (const id of criteria) {
      const n = g.results.length;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          if (i === j) continue;
          const a = scoreOf(g.results[i], id);
          const b = scoreOf(g.results[j], id);
          if (a === null || b === null) continue;
          const c: PairComparison = { criterion_id: id, group: g.group, first: i, second: j, winner: compareScores(a, b) };
          if (position && (!only || only.has(id))) {
            const u = mulberry32(fnv1a32(`bias:${seed}:${g.step}:${g.group}:${i}>${j}:${id}`))();
            if (u < position.strength) {
              c.winner = slot;
              c.biased = true;
            }
          }
          out.push(c);
        }
      }
    }
  }
  return out;
}
