// Human labels while a run trains (the rubric lab, issue 12): the rollout inspector marks a rollout
// better or worse and a verdict right or wrong, stored with the rubric version like the saved
// run's report does (RunsLibrary → RunStore), so the report's AUROC, pairwise accuracy and
// agreement count them. Keys are the store's: "runId/step/group/index", groups "runId/step/group".
import type { RolloutRecord } from '../../rl/grpoStep';
import type { RubricLabels } from '../../store';
import type { RunsLibrary } from './runs.svelte';

type Library = Pick<RunsLibrary, 'labels' | 'markRollout' | 'labelVerdict' | 'error'>;
type Key = Pick<RolloutRecord, 'step' | 'group' | 'index'>;

export const labelKey = (runId: string, r: Key): string => `${runId}/${r.step}/${r.group}/${r.index}`;
export const labelGroup = (runId: string, r: Key): string => `${runId}/${r.step}/${r.group}`;

export class LiveLabels {
  /** Labels by rubric version, as loaded or last saved. */
  byVersion = $state.raw<Record<string, RubricLabels>>({});
  error = $state<string | null>(null);
  private loading = new Set<string>();

  constructor(private readonly library: Library) {}

  /** Loads a version's labels once (later reads come from memory; every change saves through the store). */
  load(version: string): void {
    if (this.byVersion[version] || this.loading.has(version)) return;
    this.loading.add(version);
    void this.library.labels(version).then((l) => {
      this.loading.delete(version);
      if (l) this.byVersion = { ...this.byVersion, [version]: l };
      else this.error = this.library.error;
    });
  }

  markOf(version: string, runId: string, r: Key): 'better' | 'worse' | null {
    const key = labelKey(runId, r);
    return this.byVersion[version]?.marks.find((m) => m.rollout === key)?.label ?? null;
  }

  verdictOf(version: string, runId: string, r: Key, criterion: string): boolean | null {
    const key = labelKey(runId, r);
    return this.byVersion[version]?.verdicts.find((v) => v.rollout === key && v.criterion === criterion)?.correct ?? null;
  }

  /** Marks `r` better or worse; the same mark again clears it. */
  async mark(version: string, runId: string, r: Key, label: 'better' | 'worse'): Promise<void> {
    const next = this.markOf(version, runId, r) === label ? null : label;
    this.keep(version, await this.library.markRollout(version, { rollout: labelKey(runId, r), group: labelGroup(runId, r) }, next));
  }

  /** Marks the judge's verdict of `criterion` on `r` right, wrong, or (null) unlabelled. */
  async verdict(version: string, runId: string, r: Key, criterion: string, score: number, correct: boolean | null): Promise<void> {
    this.keep(version, await this.library.labelVerdict(version, { rollout: labelKey(runId, r), criterion, score }, correct));
  }

  /** Marks and verdicts labelled for `runId` under `version`. */
  counts(version: string, runId: string): { marks: number; verdicts: number } {
    const l = this.byVersion[version];
    const mine = (k: string) => k.startsWith(`${runId}/`);
    return { marks: l?.marks.filter((m) => mine(m.rollout)).length ?? 0, verdicts: l?.verdicts.filter((v) => mine(v.rollout)).length ?? 0 };
  }

  private keep(version: string, labels: RubricLabels | null): void {
    if (labels) {
      this.byVersion = { ...this.byVersion, [version]: labels };
      this.error = null;
    } else this.error = this.library.error;
  }
}

const shared = new WeakMap<Library, LiveLabels>();

/**
 * The one LiveLabels of a library: the rollout inspector saves labels through it and the judge
 * meta-evaluation panel reads the same state, so the panel's agreement follows each new label.
 */
export function liveLabelsOf(library: Library): LiveLabels {
  let live = shared.get(library);
  if (!live) shared.set(library, (live = new LiveLabels(library)));
  return live;
}
