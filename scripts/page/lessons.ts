// In-page side of scripts/experiments/lessons.mjs: the lessons' own experiments (Node cannot import
// src/share/lessons.ts) and the summary of a finished set of runs (scripts/page/lessonFigures.ts).
import type { GpuRuntime } from '../../src/gpu/runtime';
import { LESSONS } from '../../src/share/lessons';
import { summariseLessonRuns, lessonTable, type LessonRun } from './lessonFigures';

export function lessonExperiments(_rt: GpuRuntime, request: { ids?: string[] }) {
  const unknown = (request.ids ?? []).filter((id) => !LESSONS.some((l) => l.id === id));
  if (unknown.length) throw new Error(`unknown lesson ${unknown.join(', ')}; lessons: ${LESSONS.map((l) => l.id).join(', ')}`);
  // In the order asked for (the runs go in that order), else the lessons' own order.
  const chosen = request.ids?.length ? request.ids.map((id) => LESSONS.find((l) => l.id === id)!) : [...LESSONS];
  return chosen.map((l) => ({
    id: l.id,
    title: l.title,
    experiment: l.shared.experiment,
  }));
}

export function summarise(_rt: GpuRuntime, request: { runs: LessonRun[]; adapter: string }) {
  const summaries = summariseLessonRuns(request.runs);
  return { summaries, markdown: lessonTable(summaries, request.adapter) };
}
