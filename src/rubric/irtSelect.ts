// Fisher-information criterion selection for irt_ability (RRT, seed 000 #63: "adaptive Fisher
// selection" judges about half the criteria). Rules cost nothing, so they are always checked; of
// the criteria that need a model judge (judge questions), only `budget` are asked per rollout,
// chosen one at a time as in computerised adaptive testing:
//     θ̂ ← EAP of the verdicts so far (the rules', then each judged one) under the run's items
//     ask the not-yet-asked judged criterion j with the largest information a_j² p_j(θ̂)(1 − p_j(θ̂))
//         (ties: rubric order), add its verdict, repeat until `budget` are asked.
// An unscorable answer still spends its call and adds nothing. Not asked = null, exactly like an
// unscorable verdict, so the reward (Φ of the EAP) is computed the same way from fewer verdicts.
// With a batch of rollouts each round asks one criterion of every rollout (one judge call each):
// `budget` rounds, budget × rollouts judge calls instead of (judged criteria) × rollouts.
import { DEFAULT_PASS_THRESHOLD, scoresOf } from './aggregate';
import { itemInformation, irtVerdicts, type Verdict } from './irt';
import { irtEap, irtStateItems, type IrtOnlineState } from './irtOnline';
import { judgeRollouts, type CriterionResult, type JudgeRolloutsOptions, type Rollout } from './judge';
import type { Rubric } from './schema';

/** The criteria a model judge must answer (judge questions with a non-zero weight): the ones selection chooses among. */
export function judgedCriteria(rubric: Rubric): number[] {
  return rubric.criteria.flatMap((c, k) => ('judge_question' in c && c.weight !== 0 ? [k] : []));
}

/** The not-yet-asked candidate with the most information at the row's current EAP ability (null: none left). */
export function nextCriterion(state: IrtOnlineState, row: readonly Verdict[], candidates: readonly number[], asked: ReadonlySet<number>): number | null {
  const items = irtStateItems(state);
  const theta = irtEap(state, row) ?? 0; // nothing scored yet: the prior mean
  let best: number | null = null;
  let bestInfo = -Infinity;
  for (const j of candidates) {
    if (asked.has(j)) continue;
    const info = itemInformation(items[j], theta);
    if (info > bestInfo) {
      best = j;
      bestInfo = info;
    }
  }
  return best;
}

export interface AdaptiveJudging {
  /** Per rollout: the verdicts (rules' and the asked judged ones; the rest null). */
  verdicts: Verdict[][];
  /** Per rollout: the judged criteria asked, in the order asked. */
  asked: number[][];
  /** Judge calls made (one per asked criterion per rollout). */
  calls: number;
}

/**
 * Adaptive judging of a batch: `rules` holds each rollout's free verdicts (rule criteria; judged
 * ones null), `judge(i, j)` one judge call's verdict for rollout i and criterion j. `budget`
 * rounds of one call per rollout (see the header); calls run concurrently within a round.
 */
export async function judgeAdaptively(
  state: IrtOnlineState,
  rules: readonly (readonly Verdict[])[],
  candidates: readonly number[],
  budget: number,
  judge: (rollout: number, criterion: number) => Promise<Verdict> | Verdict,
): Promise<AdaptiveJudging> {
  if (!Number.isInteger(budget) || budget < 0) throw new RangeError(`the judge budget must be a whole number of criteria >= 0, got ${budget}`);
  const K = state.params.length;
  candidates.forEach((j) => {
    if (!(Number.isInteger(j) && j >= 0 && j < K)) throw new RangeError(`criterion ${j} is not one of the ${K} criteria`);
  });
  const verdicts = rules.map((row, i) => {
    if (row.length !== K) throw new RangeError(`rollout ${i} has ${row.length} verdicts for ${K} criteria`);
    return row.map((x, j) => (candidates.includes(j) ? null : x));
  });
  const asked = rules.map(() => [] as number[]);
  let calls = 0;
  for (let round = 0; round < Math.min(budget, candidates.length); round++) {
    const picks = verdicts.map((row, i) => nextCriterion(state, row, candidates, new Set(asked[i])));
    const answers = await Promise.all(picks.map((j, i) => (j === null ? null : judge(i, j))));
    picks.forEach((j, i) => {
      if (j === null) return;
      asked[i].push(j);
      verdicts[i][j] = answers[i];
      calls++;
    });
  }
  return { verdicts, asked, calls };
}

/**
 * The trainer's adaptive judging (reward_aggregation.irt_judge_budget): the rules of every rollout
 * at once (free), then `budget` rounds in each of which every rollout asks the model judge its
 * most informative unasked judge question at its current θ̂ (one judgeRollouts call per round,
 * through the same judge, cache and evidence wrappers). Per rollout: its results in rubric order;
 * criteria never asked are absent (scored as null, like a dropped criterion). Weight-0 questions
 * are never asked. The item table is not updated between rounds (it moves once per step).
 * Leaving unasked verdicts out is ignorable for the fit: which criterion is asked depends only on
 * verdicts already seen (missing at random), so the likelihood of the seen ones is the right one.
 */
export async function judgeRolloutsByInformation(
  rubric: Rubric,
  rubricVersion: string,
  rollouts: readonly Rollout[],
  state: IrtOnlineState,
  budget: number,
  options: JudgeRolloutsOptions & { threshold?: number } = {},
): Promise<{ results: CriterionResult[][]; calls: number }> {
  if (!Number.isInteger(budget) || budget < 0) throw new RangeError(`the judge budget must be a whole number of criteria >= 0, got ${budget}`);
  if (state.params.length !== rubric.criteria.length) throw new RangeError(`the IRT state has ${state.params.length} criteria, the rubric ${rubric.criteria.length}`);
  const { threshold = DEFAULT_PASS_THRESHOLD, onProgress, ...judgeOptions } = options;
  const candidates = judgedCriteria(rubric);
  const rounds = Math.min(budget, candidates.length);
  const order = new Map(rubric.criteria.map((c, k) => [c.id, k]));
  const progress = (round: number) => onProgress && ((done: number, total: number) => onProgress(Math.floor(((round + done / Math.max(total, 1)) / (rounds + 1)) * rollouts.length), rollouts.length));
  const rulesOnly = rubric.criteria.map((c) => !('judge_question' in c));
  const results = (await judgeRollouts(rubric, rubricVersion, rollouts, { ...judgeOptions, keep: rollouts.map(() => rulesOnly), onProgress: progress(0) })).map((row) => [...row]);
  const asked = rollouts.map(() => new Set<number>());
  let calls = 0;
  for (let round = 0; round < rounds; round++) {
    const picks = results.map((row, i) => nextCriterion(state, irtVerdicts(rubric, [scoresOf(rubric, row)], threshold)[0], candidates, asked[i]));
    const todo = picks.flatMap((j, i) => (j === null ? [] : [i]));
    if (todo.length === 0) break;
    const answered = await judgeRollouts(
      rubric,
      rubricVersion,
      todo.map((i) => rollouts[i]),
      { ...judgeOptions, keep: todo.map((i) => rubric.criteria.map((_, k) => k === picks[i])), onProgress: progress(round + 1) },
    );
    todo.forEach((i, t) => {
      asked[i].add(picks[i]!);
      results[i].push(...answered[t]);
      calls++;
    });
  }
  onProgress?.(rollouts.length, rollouts.length);
  return { results: results.map((row) => row.sort((x, y) => order.get(x.criterion_id)! - order.get(y.criterion_id)!)), calls };
}
