// Rubric lineage in share links (issue 12). When a run's rubric evolved (rubric_evolution), the
// Share button's link either
//   pin:   carries the pinned version's rubric (the final one, or one the visitor chose) as the
//          experiment's rubric, opened with rubric_evolution off, and the lineage summary up to
//          that version (version ids, parent, first step, strategy, reason: never rollouts,
//          labels or keys), so the recipient trains on that rubric and sees where it came from;
//   allow: carries the experiment as is: the starting rubric and the rubric_evolution settings.
// The link's schema checks the lineage's shape (src/share/link.ts); checkLinkRubricLineage checks
// on opening that the link's rubric is the version the lineage says it is (a SHA-256, async).
import type { Experiment } from '../rl/experiment';
import type { StepMetrics } from '../rl/grpoStep';
import { parseRubric, rubricVersion, type Rubric } from '../rubric';
import { rubricLineage, type LineageEntry } from '../rubric/evolve';
import { ShareLinkError, type Shared } from './link';

/** One version a run trained on: its lineage entry and its rubric. */
export interface RunRubricVersion {
  entry: LineageEntry;
  rubric: Rubric;
}

/**
 * The rubric versions a run's evolution made, oldest first (the starting rubric, then every
 * accepted rubric_evolution version), or null when its rubric never evolved (or its steps do not
 * say which version they used, or an accepted version's rubric is missing).
 *
 * Evolution only: a version the black-box teacher induced (metrics.teacher_rubric) is no link
 * lineage. Its steps name it in rubric_version too, but a link carries that run as its experiment
 * (the base rubric and the teacher), whose recipient induces from the base again; pinning an
 * induced version would induce on top of it. So a run whose rubric changed by induction (an
 * induced event, or a step judged with a version no accepted evolution made) has null here.
 */
export function runRubricVersions(
  startRubric: unknown,
  metrics: readonly Pick<StepMetrics, 'step' | 'rubric_version' | 'rubric_evolution' | 'teacher_rubric'>[],
): RunRubricVersion[] | null {
  const steps = [...metrics].sort((a, b) => a.step - b.step);
  const start = steps[0]?.rubric_version;
  if (!start) return null;
  if (steps.some((m) => m.teacher_rubric?.outcome === 'induced')) return null;
  const lineage = rubricLineage(start, steps.map((m) => m.rubric_evolution));
  if (lineage.length < 2) return null;
  // Every step was judged with the version the lineage had in force at it (first_step order).
  const inForce = (step: number) => lineage.filter((l) => l.first_step <= step).at(-1)!.version;
  if (steps.some((m) => m.rubric_version !== undefined && m.rubric_version !== inForce(m.step))) return null;
  const rubrics = new Map<string, Rubric>([[start, parseRubric(startRubric)]]);
  for (const m of steps) {
    const e = m.rubric_evolution;
    if (e?.outcome === 'accepted' && e.version && e.rubric) rubrics.set(e.version, e.rubric);
  }
  if (!lineage.every((l) => rubrics.has(l.version))) return null;
  return lineage.map((entry) => ({ entry, rubric: rubrics.get(entry.version)! }));
}

/** A version in a few characters, as the page shows it. */
export const shortVersion = (version: string): string => version.slice(0, 8);

/** What the Share button puts in a link for an experiment whose rubric_evolution is on. */
export interface LineageShare {
  experiment: Experiment;
  rubric_lineage: NonNullable<Shared['rubric_lineage']>;
  /** The pinned version (pin with a lineage), for the page's message. */
  pinned: string | null;
}

/**
 * The experiment and rubric_lineage of a link. `versions`: the run's (runRubricVersions), used
 * only when it started from this experiment's rubric (else the run describes another rubric and
 * the link pins the experiment's own). `pinned`: a version among them (default: the final one).
 */
export async function shareRubricLineage(experiment: Experiment, mode: 'pin' | 'allow', versions: readonly RunRubricVersion[] | null, pinned?: string): Promise<LineageShare> {
  if (mode === 'allow') return { experiment, rubric_lineage: { mode }, pinned: null };
  const off = { ...experiment, config: { ...experiment.config, rubric_evolution: 'off' } } as Experiment;
  const own = versions?.length ? await rubricVersion(parseRubric(experiment.rubric)) : null;
  if (!versions?.length || versions[0].entry.version !== own) return { experiment: off, rubric_lineage: { mode }, pinned: null };
  const at = pinned === undefined ? versions.length - 1 : versions.findIndex((v) => v.entry.version === pinned);
  if (at < 0) throw new RangeError(`version ${shortVersion(pinned!)}… is not one of the run's rubric versions`);
  // The chain from the start to the pinned version: a version chosen mid-run leaves out what came after it.
  const chain = versions.slice(0, at + 1).map((v) => v.entry);
  return { experiment: { ...off, rubric: versions[at].rubric } as Experiment, rubric_lineage: { mode, versions: chain }, pinned: chain[at].version };
}

/**
 * Checks, on opening a link, that its rubric is the version its lineage names: pin, the last
 * (pinned) version; allow, the first (starting) one. Throws a ShareLinkError naming the problem.
 */
export async function checkLinkRubricLineage(shared: Shared): Promise<void> {
  const versions = shared.rubric_lineage?.versions;
  if (!versions?.length) return;
  const pin = shared.rubric_lineage!.mode === 'pin';
  const named = pin ? versions[versions.length - 1].version : versions[0].version;
  const actual = await rubricVersion(parseRubric(shared.experiment.rubric));
  if (actual !== named) {
    throw new ShareLinkError(
      'invalid',
      `Rubric lineage: the link's rubric (version ${shortVersion(actual)}…) is not its ${pin ? 'pinned' : 'starting'} version ${shortVersion(named)}…: the link was edited or damaged`,
    );
  }
}
