// fork_precision_recall: a precision + recall reward after FORK (seed 000 #39). A rubric reward
// that only counts coverage is a recall: RL then pads answers ("more verbose and contain more
// unnecessary or factually incorrect content"). FORK adds a precision objective. FORK's precision
// is per response unit (necessity credits and a correctness grader); here the rubric is the only
// signal, so the criteria are split in two:
//   R (recall items)    = active criteria marked `recall: true` (positive weights only): what the
//                         response must cover
//   Q (precision items) = the other active criteria, pitfalls included: that what it says is
//                         needed and correct ("every sentence answers the question", "no false claim")
//   recall    = Σ_{k in R} w_k s_k / Σ_{k in R} w_k
//   precision = Σ_{k in Q} |w_k| p_k / Σ_{k in Q} |w_k|,   p_k = s_k (w_k > 0), 1 − s_k (pitfall)
//   r         = F_β = (1 + β²) · precision · recall / (β² · precision + recall)   (0 when both are 0)
// β > 1 favours recall, β < 1 precision (default 1: the F1 score; FORK does not publish its
// combination rule). In [0, 1]; null when a score of an active criterion is missing.
import { activeCriteria, type Scores } from './aggregate';
import type { Rubric } from './schema';

export const DEFAULT_FORK_BETA = 1;

/** Why a rubric cannot use fork_precision_recall (null when it can): it needs both kinds of criteria. */
export function forkRubricIssue(rubric: Rubric): string | null {
  const scored = rubric.criteria.filter((c) => c.weight !== 0);
  if (!scored.some((c) => c.recall)) {
    return 'reward_aggregation "fork_precision_recall" needs at least one criterion marked as a recall item ("recall": true: something the response must cover)';
  }
  if (!scored.some((c) => !c.recall)) {
    return 'reward_aggregation "fork_precision_recall" needs at least one criterion that is not a recall item (a precision check such as "every sentence is needed and correct", or a pitfall)';
  }
  return null;
}

export interface ForkParts {
  precision: number;
  recall: number;
  reward: number;
}

/** Precision, recall and their F_β for one rollout; null when a score is missing. */
export function forkParts(rubric: Rubric, scores: Scores, beta = DEFAULT_FORK_BETA): ForkParts | null {
  if (!(beta > 0 && Number.isFinite(beta))) throw new RangeError(`fork_beta must be a positive number, got ${beta}`);
  const issue = forkRubricIssue(rubric);
  if (issue) throw new RangeError(issue);
  const active = activeCriteria(rubric, scores);
  if (active.some((k) => scores[k] === null)) return null;
  let recallSum = 0;
  let recallWeight = 0;
  let precisionSum = 0;
  let precisionWeight = 0;
  for (const k of active) {
    const { weight, recall } = rubric.criteria[k];
    const s = scores[k]!;
    if (recall) {
      recallSum += weight * s;
      recallWeight += weight;
    } else {
      precisionSum += Math.abs(weight) * (weight > 0 ? s : 1 - s);
      precisionWeight += Math.abs(weight);
    }
  }
  const recall = recallSum / recallWeight;
  const precision = precisionSum / precisionWeight;
  const b2 = beta * beta;
  const denominator = b2 * precision + recall;
  return { precision, recall, reward: denominator > 0 ? ((1 + b2) * precision * recall) / denominator : 0 };
}

export function forkReward(rubric: Rubric, scores: Scores, beta = DEFAULT_FORK_BETA): number | null {
  return forkParts(rubric, scores, beta)?.reward ?? null;
}
