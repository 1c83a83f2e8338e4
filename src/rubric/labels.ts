// Human labels against the rubric (the rubric lab, issue 12): a user marks rollouts better or
// worse, prefers one rollout of a pair to another, or marks a judge's verdict wrong. From those:
//   - judge agreement per criterion: of the labelled verdicts of criterion k, the share the user
//     left standing (agreement = #right / #labelled), and Cohen's kappa between the judge's met /
//     not met (score >= threshold) and the user's (the judge's, flipped where marked wrong):
//       κ = (p_o − p_e) / (1 − p_e),  p_e = p_J p_H + (1 − p_J)(1 − p_H)
//     (p_J, p_H: the shares judged met by the judge and by the user; κ null when p_e = 1);
//   - the reward's AUROC on rollouts marked better (positives) vs worse (negatives): the
//     probability that a random positive gets a higher reward than a random negative, ties ½
//     (the Mann–Whitney statistic / (#pos · #neg));
//   - pairwise accuracy on preference pairs (proxy preference accuracy, Proxy-GRM #32, Co-ReAct
//     #50): the share of pairs whose preferred rollout has the higher reward, ties ½.
// A rollout without a reward (unscorable) is left out and counted as skipped, never scored 0.
import { cohenKappa } from './judgeMeta';

export type RolloutKey = string;

export interface VerdictLabel {
  rollout: RolloutKey;
  criterion: string;
  /** The judge's score of the criterion on that rollout, in [0, 1]. */
  score: number;
  /** The user's call: the verdict is right or wrong. */
  correct: boolean;
}

export interface CriterionAgreement {
  criterion: string;
  labelled: number;
  agreement: number;
  /** Cohen's kappa; null when chance agreement is 1 (everyone says the same thing). */
  kappa: number | null;
}

export interface PreferencePair {
  better: RolloutKey;
  worse: RolloutKey;
}

export interface RankingResult {
  /** The statistic; null with nothing to compare. */
  value: number | null;
  /** Comparisons made (positive × negative pairs for AUROC, labelled pairs for accuracy). */
  compared: number;
  ties: number;
  /** Labels left out: a rollout with no reward, or unknown. */
  skipped: number;
}

const DEFAULT_THRESHOLD = 0.5;

/** Agreement and kappa per criterion, in the order the criteria first appear in the labels. */
export function judgeAgreement(labels: readonly VerdictLabel[], threshold = DEFAULT_THRESHOLD): CriterionAgreement[] {
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`threshold must be in [0, 1], got ${threshold}`);
  const by = new Map<string, VerdictLabel[]>();
  labels.forEach((l, i) => {
    if (!(l.score >= 0 && l.score <= 1)) throw new RangeError(`label ${i + 1}: score ${l.score} is outside [0, 1]`);
    by.set(l.criterion, [...(by.get(l.criterion) ?? []), l]);
  });
  return [...by.entries()].map(([criterion, ls]) => {
    // The person's verdict is the judge's when marked right, the other one when marked wrong.
    const count = (judgeMet: boolean, correct: boolean) => ls.filter((l) => (l.score >= threshold) === judgeMet && l.correct === correct).length;
    const [tp, fp, tn, fn] = [count(true, true), count(true, false), count(false, true), count(false, false)];
    const n = ls.length;
    return { criterion, labelled: n, agreement: (tp + tn) / n, kappa: cohenKappa(tp, fp, fn, tn) };
  });
}

type Rewards = ReadonlyMap<RolloutKey, number | null>;

/** +1 / ½ / 0: whether `a` outranks `b`. */
const outranks = (a: number, b: number) => (a > b ? 1 : a === b ? 0.5 : 0);

/** AUROC of the reward on rollouts marked better (positives) vs worse (negatives). */
export function rewardAuroc(rewards: Rewards, marks: readonly { rollout: RolloutKey; label: 'better' | 'worse' }[]): RankingResult {
  const pos: number[] = [];
  const neg: number[] = [];
  let skipped = 0;
  for (const m of marks) {
    const r = rewards.get(m.rollout);
    if (r === undefined || r === null) skipped++;
    else (m.label === 'better' ? pos : neg).push(r);
  }
  let wins = 0;
  let ties = 0;
  for (const p of pos) {
    for (const q of neg) {
      wins += outranks(p, q);
      if (p === q) ties++;
    }
  }
  const compared = pos.length * neg.length;
  return { value: compared ? wins / compared : null, compared, ties, skipped };
}

/** Pairwise accuracy: the share of preference pairs the reward orders the same way, ties ½. */
export function pairwiseAccuracy(rewards: Rewards, pairs: readonly PreferencePair[]): RankingResult {
  let wins = 0;
  let ties = 0;
  let compared = 0;
  let skipped = 0;
  for (const { better, worse } of pairs) {
    const a = rewards.get(better);
    const b = rewards.get(worse);
    if (a === undefined || a === null || b === undefined || b === null) {
      skipped++;
      continue;
    }
    compared++;
    wins += outranks(a, b);
    if (a === b) ties++;
  }
  return { value: compared ? wins / compared : null, compared, ties, skipped };
}

/**
 * Preference pairs implied by better/worse marks within one group (the rollouts answering one
 * prompt): every marked-better rollout over every marked-worse one of its group.
 */
export function pairsFromMarks(marks: readonly { rollout: RolloutKey; label: 'better' | 'worse'; group: string }[]): PreferencePair[] {
  const pairs: PreferencePair[] = [];
  for (const a of marks) {
    if (a.label !== 'better') continue;
    for (const b of marks) if (b.label === 'worse' && b.group === a.group) pairs.push({ better: a.rollout, worse: b.rollout });
  }
  return pairs;
}
