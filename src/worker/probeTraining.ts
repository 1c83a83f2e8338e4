// The probe judge's training data, read from the store when a run with judge kind "probe" opens:
// the verdict labels kept with the rubric version, joined with the labelled rollouts' texts
// (labels name rollouts "runId/step/group/index"; rollouts of pruned steps or deleted runs are
// gone and left out). The fitted probes go back to the rubric version.
import type { ContextOptions } from '../rl/context';
import type { Rubric } from '../rubric';
import { questionIds } from '../rubric/judgeMeta';
import { probeExamples } from '../rubric/probeLabels';
import type { RunStore } from '../store';

export async function probeTrainingFromStore(store: RunStore, version: string, rubric: Rubric): Promise<NonNullable<ContextOptions['probe']>> {
  const labels = await store.labels(version);
  // Read each labelled (run, step) once.
  const steps = new Map<string, { runId: string; step: number }>();
  for (const l of labels.verdicts) {
    const parts = l.rollout.split('/');
    const step = Number(parts[parts.length - 3]);
    const runId = parts.slice(0, -3).join('/');
    if (runId && Number.isInteger(step)) steps.set(`${runId}/${step}`, { runId, step });
  }
  const texts = new Map<string, { prompt: string; completion: string }>();
  for (const { runId, step } of steps.values()) {
    const rollouts = await store.rollouts(runId, { step }).catch(() => []); // a deleted run: its labels are left out
    for (const r of rollouts) texts.set(`${runId}/${r.step}/${r.group}/${r.index}`, { prompt: r.prompt, completion: r.completion });
  }
  const { examples } = probeExamples(labels.verdicts, (key) => texts.get(key), questionIds(rubric));
  return { examples, onTrained: (set) => store.saveProbe(version, set) };
}
