// The figures each lesson's claim is about, computed from headless runs (scripts/experiments/lessons.mjs),
// and their summary over seeds as a markdown table for the README. Pure: no GPU, no DOM; the Node
// unit test (test/unit/share/lessonFigures.test.ts) checks it on hand-made series.
//
// Windows: "early" is the mean over the first w logged steps, "late" over the last w, with
// w = max(1, min(3, floor(n / 3))) for n steps, so a short run still has disjoint windows.
import { runHackingOnset } from '../../src/rl/hackingOnset';
import type { StepMetrics } from '../../src/rl/grpoStep';
import { qualityFigures, type RubricQuality } from './rubricQuality';

/** What one run keeps of a step (the full StepMetrics also fit). */
export type StepFigures = Pick<StepMetrics, 'step' | 'rewards' | 'held_out' | 'frac_reward_zero_std' | 'entropy' | 'clip_ratio_low' | 'clip_ratio_high' | 'step_seconds'> & Partial<Pick<StepMetrics, 'distillation' | 'rubric_evolution'>> & {
  completions: Pick<StepMetrics['completions'], 'mean_length'>;
};

export interface LessonRun {
  lesson: string;
  seed: number;
  metrics: StepFigures[];
  /** "Is my rubric any good?": the run's rubric measured on all its rollouts (scripts/page/rubricQuality.ts). */
  rubric_quality?: RubricQuality;
}

/** One figure of a run: a name the table shows and its value (null: not measurable in this run). */
export type Figures = Record<string, number | null>;

export interface Spread {
  mean: number | null;
  min: number | null;
  max: number | null;
  /** Runs with a value. */
  n: number;
}

export interface LessonSummary {
  lesson: string;
  seeds: number[];
  /** Steps per run (min over seeds: a run that failed early shows here). */
  steps: number;
  seconds_per_step: number | null;
  figures: Record<string, Spread>;
}

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

export function mean(xs: readonly (number | null | undefined)[]): number | null {
  const v = xs.filter(finite);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

/** Window size for n steps: max(1, min(3, floor(n / 3))). */
export function windowSize(n: number): number {
  return Math.max(1, Math.min(3, Math.floor(n / 3)));
}

/** Mean of the first / last w values of a series (w = windowSize(length)). */
export function early(xs: readonly (number | null | undefined)[]): number | null {
  return mean(xs.slice(0, windowSize(xs.length)));
}
export function late(xs: readonly (number | null | undefined)[]): number | null {
  return xs.length ? mean(xs.slice(-windowSize(xs.length))) : null;
}

export function spread(values: readonly (number | null)[]): Spread {
  const v = values.filter(finite);
  if (!v.length) return { mean: null, min: null, max: null, n: 0 };
  return { mean: mean(v), min: Math.min(...v), max: Math.max(...v), n: v.length };
}

const diff = (a: number | null, b: number | null) => (finite(a) && finite(b) ? a - b : null);

/** The lesson family an id belongs to (a lesson and its variants share the claim's figures). */
export function family(lesson: string): 'basics' | 'hacking' | 'zero' | 'clipping' | 'distill' | 'evolution' | 'other' {
  if (lesson.startsWith('rubric-evolution')) return 'evolution';
  if (lesson.startsWith('grpo-basics')) return 'basics';
  if (lesson.startsWith('reward-hacking') || lesson === 'hacking-onset' || lesson === 'vacuous-credit') return 'hacking';
  if (lesson.startsWith('zero-variance')) return 'zero';
  if (lesson.startsWith('clipping')) return 'clipping';
  if (lesson.startsWith('distill-')) return 'distill';
  return 'other';
}

/** Criteria of the trained rubric that the held-out rubric does not have: the judge's biases. */
function biasedCriteria(ms: readonly StepFigures[]): string[] {
  const first = ms.find((m) => m.held_out);
  if (!first?.held_out) return [];
  return Object.keys(first.rewards.criterion_pass_rate).filter((id) => !(id in first.held_out!.criterion_pass_rate));
}

/** Criteria both rubrics have whose proxy and gold pass rates differ at some step (a judge bias's criteria). */
function sharedGapCriteria(ms: readonly StepFigures[]): string[] {
  const ids = new Set<string>();
  for (const m of ms) {
    if (!m.held_out) continue;
    for (const [id, p] of Object.entries(m.rewards.criterion_pass_rate)) {
      const g = m.held_out.criterion_pass_rate[id];
      if (finite(p) && finite(g) && Math.abs(p - g) > 1e-9) ids.add(id);
    }
  }
  return [...ids];
}

/**
 * The figures of one run. Reward hacking uses the trained rubric's plain weighted mean
 * (rewards.aggregations.weighted_mean) as the proxy, so plain, gated and dropout runs are compared
 * on one yardstick; `gap` = proxy − held-out score.
 */
export function runFigures(run: LessonRun): Figures {
  const ms = run.metrics;
  const reward = ms.map((m) => m.rewards.reward);
  const f: Figures = {};
  if (run.rubric_quality) Object.assign(f, qualityFigures(run.rubric_quality));
  switch (family(run.lesson)) {
    case 'basics':
      f['reward early'] = early(reward);
      f['reward late'] = late(reward);
      f['reward change'] = diff(f['reward late'], f['reward early']);
      break;
    case 'hacking': {
      const proxy = ms.map((m) => m.rewards.aggregations.weighted_mean ?? null);
      const gold = ms.map((m) => m.held_out?.reward ?? null);
      const gap = ms.map((_, i) => diff(proxy[i], gold[i]));
      f['proxy late'] = late(proxy);
      f['held-out early'] = early(gold);
      f['held-out late'] = late(gold);
      f['gap early'] = early(gap);
      f['gap late'] = late(gap);
      f['gap change'] = diff(f['gap late'], f['gap early']);
      const len = ms.map((m) => m.completions?.mean_length ?? null);
      f['length early'] = early(len);
      f['length late'] = late(len);
      // A judge bias over the trained rubric (the bias sandbox) leaves the ids alike: the gap per
      // shared criterion (proxy pass rate − gold pass rate, mean over the steps) shows where it pays.
      for (const id of sharedGapCriteria(ms)) {
        f[`${id} gap`] = mean(ms.map((m) => diff(m.rewards.criterion_pass_rate[id] ?? null, m.held_out?.criterion_pass_rate[id] ?? null)));
      }
      for (const id of biasedCriteria(ms)) {
        const pass = ms.map((m) => m.rewards.criterion_pass_rate[id] ?? null);
        f[`${id} pass early`] = early(pass);
        f[`${id} pass late`] = late(pass);
      }
      const onset = runHackingOnset(ms as StepMetrics[]);
      f['onset step'] = onset ? onset.step : null;
      break;
    }
    case 'zero': {
      const zero = ms.map((m) => m.frac_reward_zero_std);
      f['zero-std early'] = early(zero);
      f['zero-std late'] = late(zero);
      f['reward early'] = early(reward);
      f['reward late'] = late(reward);
      break;
    }
    case 'clipping': {
      const ent = ms.map((m) => m.entropy);
      f['clip_high mean'] = mean(ms.map((m) => m.clip_ratio_high));
      f['clip_low mean'] = mean(ms.map((m) => m.clip_ratio_low));
      f['entropy early'] = early(ent);
      f['entropy late'] = late(ent);
      f['entropy change'] = diff(f['entropy late'], f['entropy early']);
      f['reward change'] = diff(late(reward), early(reward));
      break;
    }
    case 'distill': {
      // Pure distillation judges nothing: the rubric is the held-out rubric, measured only.
      const div = ms.map((m) => m.distillation?.divergence ?? null);
      const top1 = ms.map((m) => m.distillation?.top1_agreement ?? null);
      const gold = ms.map((m) => m.held_out?.reward ?? null);
      f['divergence early'] = early(div);
      f['divergence late'] = late(div);
      f['top-1 early'] = early(top1);
      f['top-1 late'] = late(top1);
      f['held-out early'] = early(gold);
      f['held-out late'] = late(gold);
      f['held-out change'] = diff(f['held-out late'], f['held-out early']);
      break;
    }
    case 'evolution': {
      // Rubric evolution: the trained reward changes meaning at an accepted version, so the
      // held-out (starting) rubric is the yardstick; zero-std groups and the reward spread show
      // whether the new criterion tells answers apart.
      const zero = ms.map((m) => m.frac_reward_zero_std);
      const std = ms.map((m) => m.rewards.reward_std);
      const gold = ms.map((m) => m.held_out?.reward ?? null);
      const accepted = ms.filter((m) => m.rubric_evolution?.outcome === 'accepted');
      f['zero-std early'] = early(zero);
      f['zero-std late'] = late(zero);
      f['reward std early'] = early(std);
      f['reward std late'] = late(std);
      f['held-out early'] = early(gold);
      f['held-out late'] = late(gold);
      f['accepted versions'] = accepted.length;
      f['first accepted after step'] = accepted.length ? accepted[0].step : null;
      break;
    }
    default:
      f['reward early'] = early(reward);
      f['reward late'] = late(reward);
  }
  return f;
}

/** Groups runs by lesson (in first-seen order) and summarises each figure over the seeds. */
export function summariseLessonRuns(runs: readonly LessonRun[]): LessonSummary[] {
  const byLesson = new Map<string, LessonRun[]>();
  for (const r of runs) byLesson.set(r.lesson, [...(byLesson.get(r.lesson) ?? []), r]);
  return [...byLesson].map(([lesson, rs]) => {
    const perRun = rs.map(runFigures);
    const names = [...new Set(perRun.flatMap((f) => Object.keys(f)))];
    return {
      lesson,
      seeds: rs.map((r) => r.seed),
      steps: Math.min(...rs.map((r) => r.metrics.length)),
      seconds_per_step: mean(rs.flatMap((r) => r.metrics.map((m) => m.step_seconds))),
      figures: Object.fromEntries(names.map((n) => [n, spread(perRun.map((f) => f[n] ?? null))])),
    };
  });
}

/** "0.31 [0.28, 0.35]" (mean [min, max] over seeds); "n/a" when no run measured it. */
export function formatSpread(s: Spread, digits = 2): string {
  if (s.mean === null) return 'n/a';
  const d = (x: number) => x.toFixed(digits);
  return s.n > 1 ? `${d(s.mean)} [${d(s.min!)}, ${d(s.max!)}]` : d(s.mean);
}

/** The README table: one row per lesson, its figures as "name mean [min, max]". */
export function lessonTable(summaries: readonly LessonSummary[], adapter: string): string {
  const rows = summaries.map((s) => {
    const figs = Object.entries(s.figures)
      .map(([name, sp]) => `${name} ${formatSpread(sp, name === 'onset step' ? 1 : 2)}${name === 'onset step' ? ` (${sp.n}/${s.seeds.length} runs)` : ''}`)
      .join('; ');
    return `| ${s.lesson} | ${s.seeds.join(', ')} | ${s.steps} | ${s.seconds_per_step === null ? 'n/a' : s.seconds_per_step.toFixed(0)} | ${figs} |`;
  });
  return [
    `Adapter: ${adapter}. Figures: mean [min, max] over the seeds; early/late = mean of the first/last w steps, w = max(1, min(3, ⌊steps/3⌋)).`,
    '',
    '| lesson | seeds | steps | s/step | figures |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
