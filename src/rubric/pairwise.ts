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
//   strength 0 changes nothing. Judges that score one response at a time give order-free
//   pairwise verdicts: the position bias measured without a declared bias is 0 by construction.
//   A model that reads both responses in one prompt (judge_verdict "pairwise", src/rubric/
//   pairwiseJudge.ts) records its own verdict of each ordered pair on the first slot's result
//   (`pairwise`); those recorded verdicts replace the score comparison, so the meta panel's
//   position bias is the model's own:
//     margin m = log P("A") − log P("B") after the prompt (a remote reply: +1 for "A", −1 for "B")
//     first wins if m > 0, second wins if m < 0, else a tie                      (pairWinner)
// GRPO's reward stays pointwise (one score per rollout and criterion): a declared position bias
// acts on this mode's comparisons, the judge meta panel's measurement (judgeMeta.ts
// positionBias), never on the trained reward. The pairwise judge's score of a rollout is its
// share of the comparisons it took part in, both orders and both slots (winShare):
//     score = (wins + ties / 2) / comparisons
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

/** A pairwise judge's verdict of one ordered pair, kept on the first slot's result. */
export interface PairRecord {
  /** The second slot's place among the responses compared with this one (rollout order). */
  vs: number;
  winner: PairWinner;
  /** log P("A") − log P("B"); a remote reply's ±1. */
  margin: number;
}

/** A criterion result of the pairwise judge: its comparisons with this rollout in the first slot. */
export type PairwiseResult = CriterionResult & { pairwise?: PairRecord[] };

/** The winner of a margin (first slot's log-odds): its sign. */
export const pairWinner = (margin: number): PairWinner => (margin > 0 ? 'first' : margin < 0 ? 'second' : 'tie');

/** A side's share of its comparisons, ties counting half; null without any. */
export const winShare = (wins: number, ties: number, comparisons: number): number | null => (comparisons > 0 ? (wins + ties / 2) / comparisons : null);

/** The order-free pairwise verdict of two scores. */
export const compareScores = (first: number, second: number): PairWinner => (first > second ? 'first' : second > first ? 'second' : 'tie');

const scoreOf = (row: readonly CriterionResult[], id: string): number | null => {
  const r = row.find((x) => x.criterion_id === id);
  return r?.status === 'ok' ? r.score : null;
};

const recordsOf = (row: readonly CriterionResult[], id: string): readonly PairRecord[] | undefined => (row.find((x) => x.criterion_id === id) as PairwiseResult | undefined)?.pairwise;

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
  const biased = (c: PairComparison, g: PairGroup, id: string): PairComparison => {
    if (position && (!only || only.has(id))) {
      const u = mulberry32(fnv1a32(`bias:${seed}:${g.step}:${g.group}:${c.first}>${c.second}:${id}`))();
      if (u < position.strength) {
        c.winner = slot;
        c.biased = true;
      }
    }
    return c;
  };
  for (const g of groups) {
    for (const id of criteria) {
      const n = g.results.length;
      // A pairwise judge's own verdicts, when it left them (judge_verdict "pairwise").
      const recorded = g.results.some((row) => recordsOf(row, id)?.length);
      for (let i = 0; i < n; i++) {
        if (recorded) {
          for (const r of recordsOf(g.results[i], id) ?? []) out.push(biased({ criterion_id: id, group: g.group, first: i, second: r.vs, winner: r.winner }, g, id));
          continue;
        }
        for (let j = 0; j < n; j++) {
          if (i === j) continue;
          const a = scoreOf(g.results[i], id);
          const b = scoreOf(g.results[j], id);
          if (a === null || b === null) continue;
          out.push(biased({ criterion_id: id, group: g.group, first: i, second: j, winner: compareScores(a, b) }, g, id));
        }
      }
    }
  }
  return out;
}
