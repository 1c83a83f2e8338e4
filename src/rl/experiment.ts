// An experiment: which model, which prompts, which rubric, which GRPO settings. This is what a
// run stores and what a share link carries (never weights or keys). Pure: no GPU imports, so
// the UI and share links can validate experiments without loading the engine.
import { z } from 'zod';
import { parseRubric, RubricError } from '../rubric';
import { evidenceJudgeIssue } from '../rubric/evidenceCredit';
import { judgeDesignIssue, judgeDesignOf } from '../rubric/judgeDesign';
import { HOLISTIC_ID } from '../rubric/holistic';
import { forkRubricIssue } from '../rubric/fork';
import { explainIssue, primaryIssues } from '../rubric/zodIssue';
import { parseGrpoConfig } from './config';
import { DEFAULT_JUDGE, judgeChoiceSchema, keyFieldIn } from './judgeChoice';
import { judgeBiasSchema, unknownBiasCriteria } from './judgeBias';
import { externalGradingIssue, externalJudgeKeyField } from './externalGrading';

/** A required field's message when it is absent: what the page expects there. */
const required = (what: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? `is required (${what})` : undefined) });

export const experimentSchema = z
  .object({
    model: z.string(required('a model id, e.g. "embedded/tiny-gpt2-byte" or "hf:owner/name"')).min(1).max(200),
    prompts: z.array(z.string().min(1).max(4000), required('a list of 1 to 10,000 prompts')).min(1, 'needs at least one prompt').max(10000),
    rubric: z.unknown().refine((v) => v !== undefined, 'is required (a rubric with a name and criteria)'),
    /** Optional clean rubric scored alongside (never trained on), e.g. to expose reward hacking. */
    held_out_rubric: z.unknown().optional(),
    config: z.record(z.string(), z.unknown()).default({}),
    /** Who answers judge-question criteria (default: rules only). Never carries an API key. */
    judge: judgeChoiceSchema.optional(),
    /** The bias sandbox: a declared, seeded bias over the trained rubric's verdicts (src/rubric/bias.ts); absent = off. */
    judge_bias: judgeBiasSchema.optional(),
  })
  .strict();

export type Experiment = z.output<typeof experimentSchema>;

export interface ExperimentIssue {
  /** Where, as keys: ["prompts", 3], ["judge", "model"], [] for the whole experiment. */
  path: (string | number)[];
  /** What is wrong and what was expected, without the field's name (see issueLabels.ts). */
  message: string;
}

export class ExperimentError extends Error {
  readonly issues: ExperimentIssue[];
  constructor(issues: ExperimentIssue[] | string) {
    const list = typeof issues === 'string' ? [{ path: [], message: issues }] : issues;
    super(list.map((i) => `${i.path.join('.') || 'experiment'}: ${i.message}`).join('\n'));
    this.name = 'ExperimentError';
    this.issues = list;
  }
}

/** The held-out rubric's problems (a RubricError, told apart from the trained rubric's). */
export class HeldOutRubricError extends RubricError {
  override name = 'HeldOutRubricError';
}

/** holistic_likert (RaR's implicit judge, src/rubric/holistic.ts) needs a judge that can give a score, and its criterion id free. */
export function holisticIssue(method: string, judgeKind: string, criterionIds: readonly string[]): ExperimentIssue | null {
  if (method !== 'holistic_likert') return null;
  if (judgeKind === 'rules') {
    return { path: ['judge'], message: 'reward_aggregation "holistic_likert" needs a judge (self, another model or a remote endpoint) to give the 1–5 score: the rules alone cannot' };
  }
  if (criterionIds.includes(HOLISTIC_ID)) {
    return { path: ['rubric'], message: `has a criterion with id "${HOLISTIC_ID}", the holistic judge's own: rename it to use reward_aggregation "holistic_likert"` };
  }
  return null;
}

/** Validates every part (rubric and config too) before anything is loaded or trained. */
export function parseExperiment(input: unknown) {
  const judgeKey = typeof input === 'object' && input !== null ? keyFieldIn((input as { judge?: unknown }).judge) : null;
  if (judgeKey) throw new ExperimentError([{ path: ['judge'], message: judgeKey }]);
  const biasKey = typeof input === 'object' && input !== null ? keyFieldIn((input as { judge_bias?: unknown }).judge_bias) : null;
  if (biasKey) throw new ExperimentError([{ path: ['judge_bias'], message: biasKey }]);
  const externalKey = typeof input === 'object' && input !== null ? externalJudgeKeyField((input as { config?: unknown }).config) : null;
  if (externalKey) throw new ExperimentError([{ path: ['config', 'judge_external'], message: externalKey }]);
  const parsed = experimentSchema.safeParse(input);
  if (!parsed.success) {
    throw new ExperimentError(
      primaryIssues(parsed.error.issues).map((i) =>
        i.code === 'unrecognized_keys' && i.path.length === 0
          ? { path: [], message: `has unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')} (expected: ${Object.keys(experimentSchema.shape).join(', ')})` }
          : { path: i.path as (string | number)[], message: explainIssue(i, input) },
      ),
    );
  }
  const rubric = parseRubric(parsed.data.rubric);
  let heldOutRubric = null;
  try {
    heldOutRubric = parsed.data.held_out_rubric === undefined ? null : parseRubric(parsed.data.held_out_rubric);
  } catch (e) {
    throw e instanceof RubricError ? new HeldOutRubricError(e.issues) : e;
  }
  const config = parseGrpoConfig(parsed.data.config);
  const judge = parsed.data.judge ?? DEFAULT_JUDGE;
  const judgeBias = parsed.data.judge_bias ?? null;
  const unknown = judgeBias && unknownBiasCriteria(judgeBias, rubric.criteria.map((c) => c.id));
  if (unknown) throw new ExperimentError([{ path: ['judge_bias', 'criteria'], message: unknown }]);
  const holistic = holisticIssue(config.reward_aggregation.method, judge.kind, rubric.criteria.map((c) => c.id));
  if (holistic) throw new ExperimentError([holistic]);
  const design = judgeDesignIssue(judgeDesignOf(config), judge.kind);
  if (design) throw new ExperimentError([{ path: ['config', design.field], message: design.message }]);
  const evidence = evidenceJudgeIssue(config.judge_evidence_required, judge.kind, config.judge_verdict);
  if (evidence) throw new ExperimentError([{ path: ['judge'], message: evidence }]);
  const external = externalGradingIssue(config, judge);
  if (external) throw new ExperimentError([{ path: ['config', external.field], message: external.message }]);
  const fork = config.reward_aggregation.method === 'fork_precision_recall' ? forkRubricIssue(rubric) : null;
  if (fork) throw new ExperimentError([{ path: ['rubric'], message: fork }]);
  const budget = config.reward_aggregation.irt_judge_budget;
  if (budget !== undefined && budget !== null && config.judge_scope === 'checklist') {
    throw new ExperimentError([{ path: ['config', 'judge_scope'], message: 'judge_scope "checklist" and an irt_judge_budget do not go together: the budget asks one judge question per completion per round, so a checklist call would only ever see one criterion. Leave irt_judge_budget empty, or use judge_scope "per_criterion"' }]);
  }
  if (budget !== undefined && budget !== null && config.reward_aggregation.method !== 'irt_ability') {
    throw new ExperimentError([{ path: ['config', 'reward_aggregation', 'irt_judge_budget'], message: `the judge budget chooses criteria by the IRT item table, which only reward_aggregation "irt_ability" fits; with "${config.reward_aggregation.method}" leave it empty` }]);
  }
  return { experiment: parsed.data, rubric, heldOutRubric, config, judge, judgeBias };
}
