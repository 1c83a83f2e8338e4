// CriPO's criterion diagnostics (seed 000 #24) and its suppressed-criterion fix.
//
// Per group and positive-weight criterion (pitfalls and tracked criteria are left out: "satisfying"
// one is avoiding a behaviour, which has no text to point at):
//   Unexplored (UC): no scorable rollout of the group meets it (score >= pass_threshold).
//   Suppressed (SC): a rollout meets it but its advantage is negative, so the tokens that met it
//                    are pushed down with the rest of the rollout.
// The fix (cripo_flip): in a negative-advantage rollout, the tokens of the evidence spans of the
// criteria it meets get their advantage sign flipped (weight × −1). CriPO finds those tokens with
// a counterfactual self-teacher; here the evidence spans play that part.

export interface JudgedRollout {
  group: number;
  advantage: number;
  /** Scores aligned with the rubric's criteria; null = not scored. */
  scores: readonly (number | null)[];
  reward: number | null;
}

export interface CriterionDiagnostics {
  /** Per group: the ids of its unexplored criteria. */
  unexplored: string[][];
  /** Per rollout: the ids of the criteria it meets while its advantage is negative. */
  suppressed: string[][];
  /** Σ over groups of unexplored criteria. */
  unexploredCount: number;
  /** Σ over groups of criteria suppressed in at least one rollout of the group. */
  suppressedCount: number;
}

export function criterionDiagnostics(
  criteria: readonly { id: string; weight: number }[],
  rollouts: readonly JudgedRollout[],
  groups: number,
  threshold: number,
): CriterionDiagnostics {
  const positive = criteria.flatMap((c, k) => (c.weight > 0 ? [k] : []));
  const met = (r: JudgedRollout, k: number) => r.reward !== null && r.scores[k] !== null && r.scores[k]! >= threshold;
  const unexplored: string[][] = [];
  let suppressedCount = 0;
  for (let g = 0; g < groups; g++) {
    const members = rollouts.filter((r) => r.group === g && r.reward !== null);
    unexplored.push(members.length === 0 ? [] : positive.filter((k) => !members.some((r) => met(r, k))).map((k) => criteria[k].id));
    suppressedCount += positive.filter((k) => members.some((r) => r.advantage < 0 && met(r, k))).length;
  }
  const suppressed = rollouts.map((r) => (r.advantage < 0 ? positive.filter((k) => met(r, k)).map((k) => criteria[k].id) : []));
  return { unexplored, suppressed, unexploredCount: unexplored.reduce((s, u) => s + u.length, 0), suppressedCount };
}

/** Multiplies by −1 the weights of `tokens` (the spans of the suppressed criteria); each token flips once. */
export function flipSuppressed(weights: Float64Array, tokens: Iterable<number>): void {
  for (const j of new Set(tokens)) if (j >= 0 && j < weights.length) weights[j] = -weights[j];
}
