// "Try it": one typed response judged by the rubric being edited, with the same functions the
// trainer uses (judgeWithRules, scoresOf, aggregateGroup, aggregateAll). Judge-question criteria
// need a model; the user may pick the answer a judge would give to see the reward it leads to.
import type { GrpoConfig } from '../../rl/config';
import {
  aggregateAll,
  aggregateGroup,
  choiceScore,
  DEFAULT_PASS_THRESHOLD,
  judgeWithRules,
  parseRubric,
  RubricError,
  scoresOf,
  type CriterionResult,
  type Rubric,
} from '../../rubric';
import { rubricPathLabel } from '../../rubric/issueLabel';
import { compileSafeRegex, MAX_REGEX_WORK, regexWork } from '../../rubric/safeRegex';
import { criterionJson, type CriterionDraft, type RubricDraft } from './rubricDraft';

export interface TryItRow {
  uid: number;
  id: string;
  text: string;
  weight: number;
  /** null when the criterion itself is invalid (see `invalid`). */
  result: CriterionResult | null;
  invalid: string | null;
  /** Met for a positive criterion, not met for a pitfall; null when unscored or weight 0. */
  passes: boolean | null;
}

export interface TryItResult {
  rows: TryItRow[];
  /** The reward training would give, under the configured aggregation; null with `why`. */
  reward: number | null;
  method: string | null;
  why: string | null;
  /** Every other aggregation of the same scores, for comparison. */
  alternatives: { method: string; reward: number | null }[];
}

/** Regex work spent on one response so far, against MAX_REGEX_WORK (the trainer's bound). */
interface WorkBudget {
  spent: number;
}

/** What this rule costs on this response (0 when the response is over its max_input_chars: not run). */
function workOf(rubric: Rubric, response: string): number {
  const c = rubric.criteria[0];
  if (!('rule' in c) || c.rule.kind !== 'regex') return 0;
  const chars = response.normalize('NFC').length;
  return chars > c.rule.max_input_chars ? 0 : regexWork(compileSafeRegex(c.rule.pattern, c.rule.flags), chars);
}

/**
 * One criterion judged alone (so one broken criterion does not hide the others' scores). A rubric
 * that is invalid as a whole may be invalid because its regex rules cost too much: the criteria
 * judged alone still share one budget, and those past it are not run.
 */
function judgeAlone(c: CriterionDraft, prompt: string, response: string, budget: WorkBudget): { result: CriterionResult | null; invalid: string | null } {
  let single: Rubric;
  try {
    single = parseRubric({ name: 'one criterion', criteria: [{ ...criterionJson(c), weight: 1 }] });
  } catch (e) {
    if (!(e instanceof RubricError)) throw e;
    // The row is the criterion: name only the field ("rule text"), as the builder labels it.
    // Rubric-wide checks run on this one-criterion rubric are about this criterion alone.
    const field = (path: string) => (path === 'criteria' ? 'criterion' : rubricPathLabel(path, null).replace(/^Criterion 1(, )?/, '') || 'criterion');
    const message = (m: string) => m.replace(/ Costliest: [^.]*\./, '');
    return { result: null, invalid: e.issues.map((i) => `${field(i.path)}: ${message(i.message)}`).join('; ') };
  }
  const work = workOf(single, response);
  if (budget.spent + work > MAX_REGEX_WORK) {
    return { result: null, invalid: 'not run: the regex rules before it already used the work one response may cost (see the rubric problems)' };
  }
  budget.spent += work;
  return { result: judgeWithRules(single, prompt, response)[0], invalid: null };
}

/** A simulated judge answer for a question criterion. */
function answered(c: CriterionDraft, answer: string | undefined, result: CriterionResult | null): CriterionResult | null {
  if (c.mode !== 'question' || answer === undefined || result?.status !== 'needs_model') return result;
  const score = choiceScore(c.choices, answer);
  return score === null ? result : { criterion_id: result.criterion_id, status: 'ok', score, reason: `you picked the judge's answer "${answer}"` };
}

export function tryResponse(
  draft: RubricDraft,
  rubric: Rubric | null,
  config: GrpoConfig | null,
  prompt: string,
  response: string,
  answers: Readonly<Record<number, string>> = {},
): TryItResult {
  const threshold = config?.reward_aggregation.pass_threshold ?? DEFAULT_PASS_THRESHOLD;
  const full = rubric && rubric.criteria.length === draft.criteria.length ? judgeWithRules(rubric, prompt, response) : null;
  const budget: WorkBudget = { spent: 0 };
  const rows: TryItRow[] = draft.criteria.map((c, k) => {
    const judged = full ? { result: full[k], invalid: null } : judgeAlone(c, prompt, response, budget);
    const result = answered(c, answers[c.uid], judged.result);
    const met = result?.status === 'ok' ? result.score >= threshold : null;
    const passes = met === null || c.weight === 0 ? null : c.weight > 0 ? met : !met;
    return { uid: c.uid, id: c.id, text: c.text, weight: c.weight, result, invalid: judged.invalid, passes };
  });

  if (!rubric || !full) return { rows, reward: null, method: null, why: 'Fix the rubric problems to see the aggregated reward.', alternatives: [] };
  if (!config) return { rows, reward: null, method: null, why: 'Fix the settings problems to see the aggregated reward.', alternatives: [] };
  const scores = scoresOf(rubric, rows.map((r) => r.result!));
  const agg = config.reward_aggregation;
  const context = { seed: config.seed, step: 0, group: 0 };
  // holistic_likert's reward is the holistic judge's one score for the whole rubric (src/rubric/holistic.ts): Try it has no judge model.
  const holistic = agg.method === 'holistic_likert';
  const reward = holistic ? null : aggregateGroup(rubric, [scores], agg, context).rewards[0];
  const unscored = rows.filter((r) => r.result?.status !== 'ok' && r.weight !== 0);
  const why = holistic
    ? 'holistic_likert: the reward is the judge\'s single 1–5 score for the whole rubric, which needs the judge model; the checklist\'s aggregations are below for comparison.'
    : reward !== null ? null : unscored.length ? `Not scored: ${unscored.map((r) => r.id).join(', ')} (a completion with an unscored criterion gets no reward and advantage 0).` : 'No reward.';
  const all = aggregateAll(rubric, [scores], { pass_threshold: agg.pass_threshold, gate_cap: agg.gate_cap, dropout_p: agg.dropout_p, adaptive_floor: agg.adaptive_floor }, context);
  const alternatives = Object.entries(all)
    .filter(([method]) => method !== agg.method)
    .map(([method, values]) => ({ method, reward: values?.[0] ?? null }));
  return { rows, reward, method: agg.method, why, alternatives };
}
