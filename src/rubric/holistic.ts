// RaR's implicit aggregation (Gunjal et al., arXiv 2507.17746, Eq. 2; research/anchors-grpo-trainers.md
// §7.1) as a baseline reward next to the checklist: one judge sees the whole rubric (every
// criterion with its tier and weight) and the response, and gives one Likert score, normalised
// to [0, 1]. RaR asks for 1–10; here the scale is 1–5 so that every answer is one digit: one
// token in any tokenizer, which the in-page model judges need (they read the answer from one
// next-token distribution, and "1" and "10" would share their first token). Score k → (k − 1) / 4.
//
// It rides on the judges as one more criterion, a judge_question with weight 0 appended to the
// trained rubric (weight 0: tracked only, so every checklist aggregation ignores it and the
// checklist is still judged and shown next to it); the aggregation `holistic_likert` trains on
// its score alone. A missing or out-of-range answer is unscorable (the rollout gets no reward),
// never 0.
import type { Scores } from './aggregate';
import type { QuestionCriterion, Rubric } from './schema';

export const HOLISTIC_ID = 'holistic_likert';
export const LIKERT_POINTS = 5;
export const LIKERT_CHOICES: readonly string[] = Array.from({ length: LIKERT_POINTS }, (_, i) => String(i + 1));

export const HOLISTIC_QUESTION = `Taking every criterion and its weight into account, how well does the response satisfy the rubric as a whole, from 1 (fails it) to ${LIKERT_POINTS} (fully satisfies it)?`;

/** The opening line of the holistic judge's prompt (the per-criterion judge's says "one criterion"). */
export const HOLISTIC_INTRO =
  'Rate the response below against the whole rubric: every criterion, with its tier and weight. A criterion with a negative weight is a pitfall: meeting it makes the response worse.';

/** Whether a criterion is the holistic judge's (its prompt and its answer parsing differ). */
export function isHolistic(c: { id: string; judge_question?: string }): boolean {
  return c.id === HOLISTIC_ID && c.judge_question === HOLISTIC_QUESTION;
}

/** The rubric as the holistic judge reads it: one line per criterion with its tier and weight (weight-0 criteria are tracked only and left out). */
export function rubricListing(rubric: Rubric): string {
  return rubric.criteria
    .filter((c) => c.weight !== 0 && c.id !== HOLISTIC_ID)
    .map((c) => `- [${c.weight < 0 ? 'pitfall' : c.tier}, weight ${c.weight}] ${c.text}`)
    .join('\n');
}

/** The holistic judge's criterion for `rubric`. */
export function holisticCriterion(rubric: Rubric): QuestionCriterion {
  return { id: HOLISTIC_ID, text: rubricListing(rubric), weight: 0, tier: 'essential', judge_question: HOLISTIC_QUESTION, choices: [...LIKERT_CHOICES] };
}

/** The rubric with the holistic criterion appended (what the judges see under holistic_likert). */
export function withHolistic(rubric: Rubric): Rubric {
  if (rubric.criteria.some((c) => c.id === HOLISTIC_ID)) {
    throw new RangeError(`the rubric already has a criterion with id "${HOLISTIC_ID}", the holistic judge's: rename it to use reward_aggregation "holistic_likert"`);
  }
  return { ...rubric, criteria: [...rubric.criteria, holisticCriterion(rubric)] };
}

/**
 * The Likert point of a judge's text answer, or null: the answer must be one whole number in
 * 1..LIKERT_POINTS, optionally "N/5" or "Score: N", with a final period at most. "5/10", "3.5",
 * "6", "0", "about 4" or prose are not answers (unscorable).
 */
export function parseLikert(answer: string): number | null {
  const m = /^(?:score\s*:\s*)?(\d{1,3})(?:\s*\/\s*(\d{1,3}))?\s*\.?$/i.exec(answer.trim());
  if (!m) return null;
  if (m[2] !== undefined && Number(m[2]) !== LIKERT_POINTS) return null;
  const k = Number(m[1]);
  return k >= 1 && k <= LIKERT_POINTS ? k : null;
}

/** Likert point k → its score in [0, 1]: (k − 1) / (points − 1). */
export function likertScore(k: number): number {
  if (!(Number.isInteger(k) && k >= 1 && k <= LIKERT_POINTS)) throw new RangeError(`a Likert point is a whole number in 1..${LIKERT_POINTS}, got ${k}`);
  return (k - 1) / (LIKERT_POINTS - 1);
}

/** holistic_likert's reward of one rollout: the holistic criterion's score (null when unscored). */
export function holisticReward(rubric: Rubric, scores: Scores): number | null {
  const k = rubric.criteria.findIndex((c) => c.id === HOLISTIC_ID);
  if (k < 0) throw new RangeError(`reward_aggregation "holistic_likert" needs the holistic judge's criterion in the rubric (withHolistic)`);
  if (scores.length !== rubric.criteria.length) throw new RangeError(`scores has ${scores.length} entries for ${rubric.criteria.length} criteria`);
  const s = scores[k];
  if (s !== null && !(s >= 0 && s <= 1)) throw new RangeError(`scores[${k}] = ${s} is outside [0, 1]`);
  return s;
}

/** The rubric the judges score for an aggregation method: with the holistic criterion under holistic_likert. */
export function judgedRubric(rubric: Rubric, method: string): Rubric {
  return method === 'holistic_likert' ? withHolistic(rubric) : rubric;
}
