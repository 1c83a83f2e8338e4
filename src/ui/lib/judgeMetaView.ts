// The run view's judge meta-evaluation (src/rubric/judgeMeta.ts) over what the page keeps of a
// run: every step's judge_seconds, and the rollouts of the steps still in the history. Per
// criterion, verbosity bias (pass rate by length quartile, Spearman's ρ of length vs score) over
// those rollouts; per step, the model judge's requests and seconds.
import { judgeLoad, verbosityBias, type JudgeLoad, type VerbosityBias } from '../../rubric/judgeMeta';
import type { CriterionResult } from '../../rubric/judge';
import type { JudgeScope } from '../../rubric/judgeDesign';

export interface JudgeMetaView {
  verbosity: { criterion_id: string; bias: VerbosityBias }[];
  /** Steps with rollouts in the history: requests counted; the others: seconds only (requests null). */
  load: (Omit<JudgeLoad, 'model_requests' | 'requests_per_second' | 'judge_calls'> & { model_requests: number | null; requests_per_second: number | null; judge_calls: number | null })[];
}

export interface ViewRollout {
  step: number;
  completion: string;
  results: readonly CriterionResult[];
}

/** `questions`: the run rubric's judge_question ids; `criteria`: every criterion id, in rubric order; `scope`: the run's judge_scope (judge calls). */
export function judgeMetaView(
  criteria: readonly string[],
  questions: ReadonlySet<string>,
  metrics: readonly { step: number; judge_seconds: number }[],
  rollouts: readonly ViewRollout[],
  scope: JudgeScope = 'per_criterion',
): JudgeMetaView {
  const verbosity = criteria.map((id) => ({
    criterion_id: id,
    bias: verbosityBias(
      rollouts.flatMap((r) => {
        const v = r.results.find((x) => x.criterion_id === id);
        return v ? [{ length: Array.from(r.completion).length, score: v.status === 'ok' ? v.score : null }] : [];
      }),
    ),
  }));
  const byStep = new Map<number, ViewRollout[]>();
  for (const r of rollouts) byStep.set(r.step, [...(byStep.get(r.step) ?? []), r]);
  const load = metrics.map((m) => {
    const kept = byStep.get(m.step);
    if (!kept) return { step: m.step, judge_seconds: m.judge_seconds, model_requests: null, requests_per_second: null, judge_calls: null };
    return judgeLoad(questions, m.step, kept.map((r) => r.results), m.judge_seconds, scope);
  });
  return { verbosity, load };
}
