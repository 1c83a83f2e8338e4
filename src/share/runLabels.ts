// Human labels in run files (the rubric lab, issue 12). In IndexedDB labels live with the rubric
// version and name rollouts "runId/step/group/index" (src/store/schema.ts); a run file carries the
// labels of its own rollouts, per rubric version, named "step/group/index" (a run's id is local
// to one browser). Reading checks every label against the file: its version is one of the run's
// rubric versions, its rollout is in the file, its criterion is in that version's rubric, and no
// rollout (or verdict) is labelled twice — otherwise the file is refused, naming the label.
// Share links do not carry labels: a link carries an experiment, not its rollouts, so a label
// would name a rollout the link's reader does not have.
import { z } from 'zod';
import type { RubricLabels } from '../store/schema';

/** A rollout as a run file's labels name it: "step/group/index". */
export type FileRolloutKey = string;

export interface RunFileLabels {
  /** The rubric version the labels judge (one of the file's rubric_versions). */
  version: string;
  marks: { rollout: FileRolloutKey; label: 'better' | 'worse' }[];
  verdicts: { rollout: FileRolloutKey; criterion: string; score: number; correct: boolean }[];
}

/** Labels per run file: a version's at most 100 000 marks and verdicts each (a run holds far fewer rollouts). */
const MAX_LABELS = 100_000;
const key = z.string().regex(/^\d{1,9}\/\d{1,9}\/\d{1,9}$/, 'must be "step/group/index"');

export const runLabelsSchema = z
  .array(
    z.strictObject({
      version: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256'),
      marks: z.array(z.strictObject({ rollout: key, label: z.enum(['better', 'worse']) })).max(MAX_LABELS),
      verdicts: z.array(z.strictObject({ rollout: key, criterion: z.string().min(1).max(200), score: z.number().min(0).max(1), correct: z.boolean() })).max(MAX_LABELS),
    }),
  )
  .max(1000);

const fileKey = (r: { step: number; group: number; index: number }): FileRolloutKey => `${r.step}/${r.group}/${r.index}`;

/**
 * The labels of run `runId` for a run file: per version, only those naming this run's rollouts
 * that the file holds (`rollouts`), with the run id taken off. Versions left with no label are dropped.
 */
export function labelsForFile(runId: string, byVersion: ReadonlyMap<string, RubricLabels>, rollouts: readonly { step: number; group: number; index: number }[]): RunFileLabels[] {
  const prefix = `${runId}/`;
  const held = new Set(rollouts.map(fileKey));
  const local = (k: string) => (k.startsWith(prefix) && held.has(k.slice(prefix.length)) ? k.slice(prefix.length) : null);
  const out: RunFileLabels[] = [];
  for (const [version, labels] of byVersion) {
    const marks = labels.marks.flatMap((m) => {
      const rollout = local(m.rollout);
      return rollout ? [{ rollout, label: m.label }] : [];
    });
    const verdicts = labels.verdicts.flatMap((v) => {
      const rollout = local(v.rollout);
      return rollout ? [{ rollout, criterion: v.criterion, score: v.score, correct: v.correct }] : [];
    });
    if (marks.length || verdicts.length) out.push({ version, marks, verdicts });
  }
  return out;
}

/** A run file's labels as the store keeps them, for a run stored under `runId`. */
export function labelsFromFile(runId: string, labels: RunFileLabels): RubricLabels {
  const group = (k: string) => `${runId}/${k.slice(0, k.lastIndexOf('/'))}`;
  return {
    marks: labels.marks.map((m) => ({ rollout: `${runId}/${m.rollout}`, group: group(m.rollout), label: m.label })),
    verdicts: labels.verdicts.map((v) => ({ rollout: `${runId}/${v.rollout}`, criterion: v.criterion, score: v.score, correct: v.correct })),
  };
}

/**
 * What is wrong with a file's labels (empty when nothing): checked against its rubric versions
 * (version → criterion ids) and its rollouts.
 */
export function runLabelsProblems(
  labels: readonly RunFileLabels[],
  criteriaOf: ReadonlyMap<string, readonly string[]>,
  rollouts: readonly { step: number; group: number; index: number }[],
): string[] {
  const held = new Set(rollouts.map(fileKey));
  const problems: string[] = [];
  const seenVersions = new Set<string>();
  labels.forEach((l, i) => {
    const at = `labels[${i}]`;
    const criteria = criteriaOf.get(l.version);
    if (!criteria) return void problems.push(`${at}: version ${l.version.slice(0, 12)}… is not one of the run's rubric versions`);
    if (seenVersions.has(l.version)) problems.push(`${at}: version ${l.version.slice(0, 12)}… is labelled twice`);
    seenVersions.add(l.version);
    const marked = new Set<string>();
    l.marks.forEach((m, j) => {
      if (!held.has(m.rollout)) problems.push(`${at}.marks[${j}]: rollout ${m.rollout} is not in the file`);
      if (marked.has(m.rollout)) problems.push(`${at}.marks[${j}]: rollout ${m.rollout} is marked twice`);
      marked.add(m.rollout);
    });
    const judged = new Set<string>();
    l.verdicts.forEach((v, j) => {
      if (!held.has(v.rollout)) problems.push(`${at}.verdicts[${j}]: rollout ${v.rollout} is not in the file`);
      if (!criteria.includes(v.criterion)) problems.push(`${at}.verdicts[${j}]: criterion "${v.criterion}" is not in that rubric version`);
      const k = `${v.rollout}\n${v.criterion}`;
      if (judged.has(k)) problems.push(`${at}.verdicts[${j}]: the verdict of "${v.criterion}" on rollout ${v.rollout} is labelled twice`);
      judged.add(k);
    });
  });
  return problems.slice(0, 10);
}
