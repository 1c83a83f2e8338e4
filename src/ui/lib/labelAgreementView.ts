// Agreement with a person's labels in the run view's judge meta-evaluation panel: the verdicts the
// rollout inspector labelled right or wrong (src/ui/lib/liveLabels.svelte.ts), stored per rubric
// version, turned into judge-vs-person pairs for judgeMeta's labelAgreement. A label keeps the
// judge's score; the person's own verdict is the judge's (met = score >= threshold) when marked
// right and the other one when marked wrong. Rows follow the rubric's criterion order; criteria
// only the labels name (a version's since-removed criterion) come after.
import { labelAgreement, type LabelAgreement, type LabelledVerdict } from '../../rubric/judgeMeta';
import type { RubricLabels } from '../../store';

export interface LabelAgreementRow extends LabelAgreement {
  /** Why κ is shown as "—"; null when κ is defined. */
  kappa_note: string | null;
}

/** The verdict labels of `versions` (in that order), as judge-vs-person pairs. */
export function labelledVerdicts(labels: Readonly<Record<string, RubricLabels | undefined>>, versions: readonly string[], threshold: number): LabelledVerdict[] {
  return [...new Set(versions)].flatMap((v) =>
    (labels[v]?.verdicts ?? []).map((l) => ({ criterion_id: l.criterion, score: l.score, label: l.score >= threshold === l.correct })),
  );
}

/** Why Cohen's κ is undefined for a row, in the panel's words; null when it is defined. */
export function kappaNote(a: LabelAgreement): string | null {
  if (a.kappa !== null) return null;
  if (a.n === 0) return 'no scored verdicts';
  // p_e = 1 only when judge and person both say "met" on every item, or both "not met".
  return `judge and labels both say ${a.tp === a.n ? 'met' : 'not met'} on all ${a.n}: chance agreement is 1`;
}

/** Per criterion, the judge against the labels; [] when nothing is labelled. */
export function labelAgreementView(
  criteria: readonly string[],
  labels: Readonly<Record<string, RubricLabels | undefined>>,
  versions: readonly string[],
  threshold: number,
): LabelAgreementRow[] {
  const rows = labelAgreement(labelledVerdicts(labels, versions, threshold), threshold);
  const rank = (id: string) => {
    const k = criteria.indexOf(id);
    return k < 0 ? criteria.length : k;
  };
  return rows.sort((a, b) => rank(a.criterion_id) - rank(b.criterion_id)).map((a) => ({ ...a, kappa_note: kappaNote(a) }));
}
