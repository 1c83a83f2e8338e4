// The probe judge's training data from the user's labels (src/rubric/labels.ts, stored with the
// rubric version). A verdict label says the judge's call on (rollout, criterion) was right or
// wrong; the person's own call, the probe's target, is
//
//   yes  ⇔  (judge said met, score ≥ 0.5) XOR (marked wrong)
//
// Better/worse marks are not used: they judge the whole response, and turning them into
// per-criterion targets would claim that a better response meets every criterion (and a worse
// one none), which the labels do not say. Rule criteria are left out (the rule judge scores
// them, never the probe). A criterion's probe needs at least PROBE_MIN_PER_CLASS labels of each
// answer: with fewer, a direction in hundreds of hidden dimensions is fitted to one or two
// points and the judge would be noise that looks like a verdict.
import type { VerdictLabel } from './labels';

/** Labels of each answer ("yes" and "no") a criterion's probe needs, at least. */
export const PROBE_MIN_PER_CLASS = 3;

const THRESHOLD = 0.5;

/** The person's call on a labelled verdict: the judge's, flipped when marked wrong. */
export const labelTarget = (label: Pick<VerdictLabel, 'score' | 'correct'>): boolean => (label.score >= THRESHOLD) !== !label.correct;

export interface ProbeExample {
  criterion_id: string;
  prompt: string;
  completion: string;
  /** The person's call: the criterion is met. */
  target: boolean;
}

export interface ProbeExamples {
  examples: ProbeExample[];
  /** Labels whose rollout is no longer stored (pruned or deleted run): left out. */
  missing: number;
  /** Labels of criteria the probe does not judge (rule criteria, criteria not in the rubric). */
  ignored: number;
}

/**
 * Examples from verdict labels, in label order; `texts` gives a labelled rollout's prompt and
 * completion (undefined when it is gone); `questionIds` are the criteria a probe judges.
 */
export function probeExamples(
  labels: readonly VerdictLabel[],
  texts: (rollout: string) => { prompt: string; completion: string } | undefined,
  questionIds: ReadonlySet<string>,
): ProbeExamples {
  const examples: ProbeExample[] = [];
  let missing = 0;
  let ignored = 0;
  for (const l of labels) {
    if (!questionIds.has(l.criterion)) {
      ignored++;
      continue;
    }
    const t = texts(l.rollout);
    if (!t) {
      missing++;
      continue;
    }
    examples.push({ criterion_id: l.criterion, prompt: t.prompt, completion: t.completion, target: labelTarget(l) });
  }
  return { examples, missing, ignored };
}

export class ProbeLabelError extends Error {
  override name = 'ProbeLabelError';
  constructor(
    readonly criterion: string,
    readonly yes: number,
    readonly no: number,
  ) {
    super(
      `criterion "${criterion}": the probe judge needs at least ${PROBE_MIN_PER_CLASS} "yes" and ${PROBE_MIN_PER_CLASS} "no" labels to be trained, ` +
        `it has ${yes} yes and ${no} no. Mark more of its verdicts right or wrong under "Human labels" (a run's rubric report, in Runs), or pick another judge`,
    );
  }
}

/** Per criterion (in `criteria` order), its examples; throws ProbeLabelError for the first with too few. */
export function examplesByCriterion(examples: readonly ProbeExample[], criteria: readonly string[]): Map<string, ProbeExample[]> {
  const by = new Map<string, ProbeExample[]>(criteria.map((c) => [c, []]));
  for (const e of examples) by.get(e.criterion_id)?.push(e);
  for (const [criterion, list] of by) {
    const yes = list.filter((e) => e.target).length;
    const no = list.length - yes;
    if (yes < PROBE_MIN_PER_CLASS || no < PROBE_MIN_PER_CLASS) throw new ProbeLabelError(criterion, yes, no);
  }
  return by;
}
