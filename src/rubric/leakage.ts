// Criterion leakage (PaperGym, seed 000 #49): a criterion that the prompt alone satisfies can be
// earned by paraphrasing the question. The probe: for each prompt, the "response" is the prompt
// itself (an answer that only restates the question, with nothing of its own). Every positive
// content criterion is judged on it — judge questions by the given judge, and the rules that look
// for content (contains, regex expecting a match) here — and one met (score >= threshold) on at
// least `minShare` of the prompts is reported as leaking. Format rules (length, count, starts or
// ends with, capitals, JSON, not_contains) are not probed: any short text meets them, which says
// nothing about the question giving the answer away.
import { DEFAULT_PASS_THRESHOLD } from './aggregate';
import { judgeRollouts, type Judge } from './judge';
import type { LintFinding } from './lint';
import { isRuleCriterion, type Criterion, type Rubric } from './schema';

export interface LeakageOptions {
  /** Scores judge_question criteria; without one only rule criteria are probed. */
  judge?: Judge;
  /** Met means score >= threshold. Default 0.5. */
  threshold?: number;
  /** Report a criterion met by the echo on at least this share of the prompts. Default 0.5. */
  minShare?: number;
  signal?: AbortSignal;
}

export interface LeakageRow {
  /** 1-based, as shown. */
  criterion: number;
  /** Prompts whose echo meets the criterion, and the prompts it could be judged on. */
  met: number;
  judged: number;
}

/** A criterion about what the response says (not its format). */
function isContent(c: Criterion): boolean {
  if (!isRuleCriterion(c)) return true;
  return c.rule.kind === 'contains' || (c.rule.kind === 'regex' && c.rule.expect === 'match');
}

/** Per positive content criterion, how many prompt echoes meet it; and the findings for the leaking ones. */
export async function checkLeakage(
  rubric: Rubric,
  rubricVersion: string,
  prompts: readonly string[],
  options: LeakageOptions = {},
): Promise<{ rows: LeakageRow[]; findings: LintFinding[] }> {
  const threshold = options.threshold ?? DEFAULT_PASS_THRESHOLD;
  const minShare = options.minShare ?? 0.5;
  if (!(minShare > 0 && minShare <= 1)) throw new RangeError(`minShare must be in (0, 1], got ${minShare}`);
  const keep = rubric.criteria.map((c) => c.weight > 0 && isContent(c));
  const results = await judgeRollouts(
    rubric,
    rubricVersion,
    prompts.map((p) => ({ prompt: p, completion: p })),
    { modelJudge: options.judge, keep: prompts.map(() => keep), signal: options.signal },
  );
  const rows: LeakageRow[] = [];
  const findings: LintFinding[] = [];
  rubric.criteria.forEach((c, k) => {
    if (!keep[k]) return;
    let met = 0;
    let judged = 0;
    for (const perPrompt of results) {
      const r = perPrompt.find((x) => x.criterion_id === c.id);
      if (r?.status !== 'ok') continue;
      judged++;
      if (r.score >= threshold) met++;
    }
    rows.push({ criterion: k + 1, met, judged });
    if (judged > 0 && met / judged >= minShare) {
      findings.push({
        code: 'leakage',
        criterion: k + 1,
        message: `An answer that only repeats the prompt meets it on ${met} of ${judged} prompts: it can be earned by paraphrasing the question.`,
        suggestion: 'Ask for something the prompt does not already contain (a reason, a result, a specific step).',
      });
    }
  });
  return { rows, findings };
}
