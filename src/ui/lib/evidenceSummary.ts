// The run view's summary of evidence-required credit (src/rubric/evidenceCredit.ts): per
// criterion over the run's steps, the judge's passes, those withheld for lack of a quote found in
// the response, and those the vacuous-credit probe flagged (the pass survived deleting its quote).
import type { EvidenceMetrics } from '../../rubric/evidenceCredit';

export interface EvidenceRow {
  criterion_id: string;
  passes: number;
  withheld: number;
  probed: number;
  vacuous: number;
  /** vacuous / probed; null when nothing was probed. */
  vacuous_rate: number | null;
}

export interface EvidenceSummary {
  /** Steps that carried evidence counts. */
  steps: number;
  rows: EvidenceRow[];
  /** The last such step's totals. */
  last: { step: number; passes: number; withheld: number; probed: number; vacuous: number };
}

/** Null when no step carries evidence counts (the option was off). Rows in first-seen order. */
export function evidenceSummary(metrics: readonly { step: number; evidence?: EvidenceMetrics }[]): EvidenceSummary | null {
  const withEvidence = metrics.filter((m): m is { step: number; evidence: EvidenceMetrics } => m.evidence !== undefined);
  if (withEvidence.length === 0) return null;
  const rows = new Map<string, EvidenceRow>();
  for (const m of withEvidence) {
    for (const [id, c] of Object.entries(m.evidence.by_criterion)) {
      const row = rows.get(id) ?? { criterion_id: id, passes: 0, withheld: 0, probed: 0, vacuous: 0, vacuous_rate: null };
      row.passes += c.passes;
      row.withheld += c.withheld;
      row.probed += c.probed;
      row.vacuous += c.vacuous;
      rows.set(id, row);
    }
  }
  const last = withEvidence[withEvidence.length - 1];
  return {
    steps: withEvidence.length,
    rows: [...rows.values()].map((r) => ({ ...r, vacuous_rate: r.probed ? r.vacuous / r.probed : null })),
    last: { step: last.step, passes: last.evidence.passes, withheld: last.evidence.withheld, probed: last.evidence.probed, vacuous: last.evidence.vacuous },
  };
}
