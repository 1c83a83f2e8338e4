// The runs saved in IndexedDB, as the runs list sees them: each with its size, the storage the
// page uses, and what reopening, renaming, deleting, comparing and exporting a run need. The
// trainer worker writes runs; this side reads them, renames and deletes (the same database).
import { GRPO_DEFAULTS } from '../../rl/config';
import type { RolloutRecord, StepMetrics } from '../../rl/grpoStep';
import { evolvedRubricVersions, type RunFileInput } from '../../share/runFile';
import { RunStore, type PruneEstimate, type PrunePlan, type RolloutStepUsage, type RunInfo, type RubricLabels, type RunRecord, type StorageUsage, type StoredRollout } from '../../store';
import { heldRunIds } from '../../store/liveness';
import { parseRubric } from '../../rubric/schema';
import { rubricVersion } from '../../rubric/version';
import { labelsForFile } from '../../share/runLabels';

/** A run opened for viewing: from the store (runId) or from an imported file (runId null). */
export interface RunView {
  runId: string | null;
  name: string;
  experiment: Record<string, unknown>;
  metrics: StepMetrics[];
  rollouts: RolloutRecord[];
}

/** Compared runs' reward curves, at most this many. */
export const MAX_COMPARE = 3;

/** Rollouts without the store's bookkeeping fields (a run file's schema is strict). */
function plain(rollouts: readonly StoredRollout[]): RolloutRecord[] {
  return rollouts.map(({ runId: _runId, bytes: _bytes, ...r }) => r);
}

/** Only the options that differ from the defaults, as the builder keeps them. */
export function changedOptions(config: Record<string, unknown>): Record<string, unknown> {
  const defaults = GRPO_DEFAULTS as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(config).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(defaults[k])));
}

export class RunsLibrary {
  runs = $state.raw<RunInfo[]>([]);
  usage = $state.raw<StorageUsage | null>(null);
  /**
   * Ids of the runs some tab or worker holds open now (their Web Locks), as of the last refresh;
   * null where the browser cannot tell. A run stored as 'running' that is not held was interrupted.
   */
  held = $state.raw<Set<string> | null>(null);
  /** The last failure (opening the database, renaming, deleting...), for the user. */
  error = $state<string | null>(null);
  private store: Promise<RunStore> | null = null;

  constructor(private readonly database?: string) {}

  private open(): Promise<RunStore> {
    this.store ??= RunStore.open({ name: this.database }).catch((e) => {
      this.store = null;
      throw e;
    });
    return this.store;
  }

  /** Runs a store call, reporting its failure in `error`; null when it failed. */
  private async guard<T>(what: string, body: (store: RunStore) => Promise<T>): Promise<T | null> {
    try {
      const out = await body(await this.open());
      this.error = null;
      return out;
    } catch (e) {
      this.error = `Could not ${what}: ${(e as Error).message}`;
      return null;
    }
  }

  async refresh(): Promise<void> {
    await this.guard('read the saved runs', async (store) => {
      // Locks first: a run that closes meanwhile has saved its final status before letting go.
      const held = await heldRunIds();
      this.runs = await store.listRuns();
      this.held = held;
      this.usage = await store.storageEstimate();
    });
  }

  async rename(id: string, name: string): Promise<boolean> {
    const ok = await this.guard('rename the run', (store) => store.renameRun(id, name));
    await this.refresh();
    return ok !== null;
  }

  async remove(id: string): Promise<boolean> {
    const ok = await this.guard('delete the run', (store) => store.deleteRun(id));
    await this.refresh();
    return ok !== null;
  }

  /** The run's stored rollouts per step with their sizes (what the prune controls estimate from); null on failure. */
  async rolloutUsage(id: string): Promise<RolloutStepUsage[] | null> {
    return this.guard('read the run\'s rollouts', (store) => store.rolloutUsageByStep(id));
  }

  /**
   * Prunes a run: rollouts of the steps before plan.rolloutsBeforeStep, checkpoints beyond the
   * newest plan.keepCheckpoints. Returns what was freed (null, with `error`, when it failed).
   */
  async prune(id: string, plan: PrunePlan): Promise<PruneEstimate | null> {
    const out = await this.guard('free space', async (store) => {
      const none = { deleted: 0, bytes: 0 };
      const rollouts = plan.rolloutsBeforeStep !== undefined ? await store.pruneRolloutsBefore(id, plan.rolloutsBeforeStep) : none;
      const checkpoints = plan.keepCheckpoints !== undefined ? await store.pruneCheckpoints(id, plan.keepCheckpoints) : none;
      return { rollouts, checkpoints, bytes: rollouts.bytes + checkpoints.bytes };
    });
    // The sizes changed (even after a failure half way: each prune is its own transaction).
    const failure = this.error;
    await this.refresh();
    if (out === null) this.error = failure;
    return out;
  }

  /** The experiment a stored run trains (the same one the trainer rebuilds to resume it). */
  async experimentOf(store: RunStore, run: RunRecord): Promise<Record<string, unknown>> {
    const rubric = await store.rubric(run.experiment.rubricVersion);
    if (!rubric) throw new Error(`run "${run.name}" refers to a rubric version that is not stored`);
    const heldOut = run.experiment.heldOutRubricVersion ? await store.rubric(run.experiment.heldOutRubricVersion) : null;
    return {
      model: run.experiment.modelId,
      prompts: [...run.experiment.prompts],
      rubric,
      ...(heldOut ? { held_out_rubric: heldOut } : {}),
      ...(run.experiment.judge ? { judge: run.experiment.judge } : {}),
      ...(run.experiment.judgeBias ? { judge_bias: run.experiment.judgeBias } : {}),
      config: changedOptions(run.experiment.config as unknown as Record<string, unknown>),
    };
  }

  /** A stored run's experiment, metrics and rollouts; null (with `error`) when it cannot be read. */
  async view(id: string): Promise<RunView | null> {
    return this.guard('open the run', async (store) => {
      const run = await store.getRun(id);
      if (!run) throw new Error('it is no longer saved');
      return {
        runId: id,
        name: run.name,
        experiment: await this.experimentOf(store, run),
        metrics: await store.metrics(id),
        rollouts: plain(await store.rollouts(id)),
      };
    });
  }

  /** The human labels stored with a rubric version (null, with `error`, when they cannot be read). */
  async labels(version: string): Promise<RubricLabels | null> {
    return this.guard('read the labels', (store) => store.labels(version));
  }

  /** Marks a rollout better or worse (null clears); the labels after the change. */
  async markRollout(version: string, mark: { rollout: string; group: string }, label: 'better' | 'worse' | null): Promise<RubricLabels | null> {
    return this.guard('save the label', (store) => store.markRollout(version, mark, label));
  }

  /** Marks a judge verdict right or wrong (null clears); the labels after the change. */
  async labelVerdict(version: string, verdict: { rollout: string; criterion: string; score: number }, correct: boolean | null): Promise<RubricLabels | null> {
    return this.guard('save the label', (store) => store.labelVerdict(version, verdict, correct));
  }

  /** Metrics of each run, for comparing reward curves. */
  async metricsOf(ids: readonly string[]): Promise<{ id: string; name: string; metrics: StepMetrics[] }[]> {
    const out = await this.guard('read the compared runs', (store) =>
      Promise.all(ids.map(async (id) => ({ id, name: (await store.getRun(id))?.name ?? id, metrics: await store.metrics(id) }))),
    );
    return out ?? [];
  }

  /** What a run file of the stored run holds; with its newest checkpoint when asked. */
  async fileInput(id: string, withCheckpoint: boolean): Promise<RunFileInput | null> {
    return this.guard('export the run', async (store) => {
      const run = await store.getRun(id);
      if (!run) throw new Error('it is no longer saved');
      const experiment = await this.experimentOf(store, run);
      const input: RunFileInput = {
        name: run.name,
        experiment: experiment as unknown as RunFileInput['experiment'],
        metrics: await store.metrics(id),
        rollouts: plain(await store.rollouts(id)),
      };
      // The probe judge's weights travel in the run file (never in a link): src/rubric/probeSet.ts.
      const probe = run.experiment.judge?.kind === 'probe' ? await store.probe(run.experiment.rubricVersion) : null;
      if (probe) input.probe = probe;
      // rubric_evolution and the black-box teacher: every version the run trained on, with its lineage (an induced one with its provenance).
      const evolved = evolvedRubricVersions(experiment.rubric, input.metrics);
      if (evolved) input.rubric_versions = evolved;
      // Human labels of this run's rollouts, for each rubric version the file holds (src/share/runLabels.ts).
      const held = input.rubric_versions ? await Promise.all(input.rubric_versions.map((e) => rubricVersion(parseRubric(e.rubric)))) : [run.experiment.rubricVersion];
      const labels = labelsForFile(id, new Map(await Promise.all(held.map(async (v) => [v, await store.labels(v)] as const))), input.rollouts);
      if (labels.length) input.labels = labels;
      if (withCheckpoint) {
        const checkpoint = await store.latestCheckpoint(id);
        if (checkpoint) input.checkpoint = { step: checkpoint.step, files: checkpoint.files };
      }
      return input;
    });
  }

  close(): void {
    void this.store?.then((s) => s.close()).catch(() => {});
    this.store = null;
  }
}
