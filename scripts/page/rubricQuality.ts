// "Is my rubric any good?" (the rubric lab's lesson, issue 12), measured: the lesson's run is
// scored with the page's own tools — measureRubric over every stored rollout (per criterion the
// met rate, within-group variance and flag; Pearson correlations and the redundant pairs) and
// checkLeakage over the prompts (each prompt echoed as its own answer, rule criteria only) — so
// scripts/experiments/lessons.mjs can tabulate what the lesson text claims over several seeds.
import type { GpuRuntime } from '../../src/gpu/runtime';
import { checkLeakage } from '../../src/rubric/leakage';
import { lintRubric } from '../../src/rubric/lint';
import { measureRubric } from '../../src/rubric/measure';
import { parseRubric } from '../../src/rubric/schema';

export interface RubricQuality {
  criteria: { id: string; flag: string; met_rate: number | null; within_group_variance: number | null }[];
  /** Every pair's correlation (ids joined by "~"), null where undefined (a constant criterion). */
  correlation: Record<string, number | null>;
  redundant: string[];
  /** Criterion id → prompts whose echo meets it, of the prompts judged. */
  leakage: Record<string, { met: number; judged: number }>;
  /** The static check's finding codes (lintRubric), leakage apart. */
  lint: string[];
  rollouts: number;
  groups: number;
}

/** Measures a run file's rubric on its rollouts (all steps), and its prompts for leakage. */
export async function measureLessonRun(_rt: GpuRuntime, request: { runFile: string }): Promise<RubricQuality> {
  const doc = JSON.parse(request.runFile) as { experiment: { rubric: unknown; prompts: string[] }; rollouts: { step: number; group: number; scores: (number | null)[] }[] };
  const rubric = parseRubric(doc.experiment.rubric);
  const m = measureRubric(rubric, doc.rollouts);
  const ids = rubric.criteria.map((c) => c.id);
  const correlation: Record<string, number | null> = {};
  ids.forEach((a, j) => ids.forEach((b, k) => k > j && (correlation[`${a}~${b}`] = m.correlation[j][k])));
  const leak = await checkLeakage(rubric, 'lesson', doc.experiment.prompts);
  return {
    criteria: m.criteria.map((c, k) => ({ id: ids[k], flag: c.flag, met_rate: c.metRate, within_group_variance: c.withinGroupVariance })),
    correlation,
    redundant: m.redundant.map((p) => `${ids[p.a]}~${ids[p.b]}`),
    leakage: Object.fromEntries(leak.rows.map((r) => [ids[r.criterion - 1], { met: r.met, judged: r.judged }])),
    lint: lintRubric(rubric).map((f) => f.code),
    rollouts: m.rollouts,
    groups: m.groups,
  };
}

/** The table's figures: per criterion met rate, within-group variance and "saturated" (1/0); r per pair; leak share. */
export function qualityFigures(q: RubricQuality): Record<string, number | null> {
  const f: Record<string, number | null> = {};
  for (const c of q.criteria) {
    f[`${c.id} met`] = c.met_rate;
    f[`${c.id} within-var`] = c.within_group_variance;
    f[`${c.id} saturated`] = c.flag === 'saturated' ? 1 : 0;
  }
  for (const [pair, r] of Object.entries(q.correlation)) f[`r ${pair}`] = r;
  for (const [id, l] of Object.entries(q.leakage)) f[`${id} leak share`] = l.judged ? l.met / l.judged : null;
  return f;
}
