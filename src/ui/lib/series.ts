// Chart data from step metrics: which charts, which lines, and TensorBoard-style smoothing
// (a debiased exponential moving average that skips missing points).
import type { StepMetrics } from '../../rl/grpoStep';

export type Value = number | null;

/** Debiased EMA: s_t = w·s_{t−1} + (1−w)·x_t, divided by 1 − w^n (n = points seen). w = 0: raw. */
export function smooth(values: readonly Value[], weight: number): Value[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1), got ${weight}`);
  let last = 0;
  let n = 0;
  return values.map((x) => {
    if (x === null || !Number.isFinite(x)) return null;
    last = last * weight + (1 - weight) * x;
    n++;
    return weight === 0 ? x : last / (1 - weight ** n);
  });
}

export interface LineSpec {
  label: string;
  color: string;
  dash?: boolean;
}

export interface ChartData {
  id: string;
  title: string;
  /** What the y axis measures, for the chart's accessible description. */
  unit: string;
  lines: LineSpec[];
  x: number[];
  ys: Value[][];
  /** Indices of two lines drawn as a filled band (low, high); they are hidden from the legend. */
  band?: [number, number];
  note?: string;
  /** Shown (and said) instead of "no data yet" when steps exist but no line has a value. */
  empty?: string;
  /** A vertical line at step x, named in the chart's text alternative (e.g. the hacking onset). */
  marker?: { x: number; label: string };
  /** More such lines (e.g. each rubric version rubric_evolution accepted). */
  markers?: { x: number; label: string }[];
}

/**
 * Online rubric evolution on the reward chart: a marker at the first step of each version the run
 * accepted, at the first step it judged (x = s + 1 for a decision after 0-based step s; the label counts steps from 1, as the page does).
 */
export function rubricEvolutionMarkers(metrics: readonly StepMetrics[]): { x: number; label: string }[] {
  return metrics.flatMap((m) => {
    const e = m.rubric_evolution;
    if (e?.outcome !== 'accepted' || !e.version) return [];
    const what = [e.removed.length ? `−${e.removed.join(', −')}` : '', e.added.length ? `+${e.added.join(', +')}` : ''].filter(Boolean).join(' ');
    return [{ x: e.step + 1, label: `rubric version ${e.version.slice(0, 8)} after step ${e.step + 1} (${e.strategy}${what ? `: ${what}` : ''})` }];
  });
}

// Okabe–Ito hues (colour-blind safe), darkened where needed so every line has at least 3:1
// contrast on the white chart background (WCAG 1.4.11); lines also differ by dash.
export const PALETTE = ['#0072B2', '#D55E00', '#007a5a', '#a8457f', '#b06a00', '#2b7fb8', '#5b5b5b', '#8c6d00'];

const num = (x: number | null | undefined): Value => (typeof x === 'number' && Number.isFinite(x) ? x : null);

export function buildCharts(metrics: readonly StepMetrics[], criterionIds: readonly string[], weight: number): ChartData[] {
  const x = metrics.map((m) => m.step);
  const s = (f: (m: StepMetrics) => number | null | undefined) => smooth(metrics.map((m) => num(f(m))), weight);
  const mean = s((m) => m.rewards.reward);
  const std = s((m) => m.rewards.reward_std);
  const lo = mean.map((v, i) => (v === null || std[i] === null ? null : v - std[i]!));
  const hi = mean.map((v, i) => (v === null || std[i] === null ? null : v + std[i]!));
  const hasHeldOut = metrics.some((m) => m.held_out);
  const hasKl = metrics.some((m) => m.kl !== null);
  const evolution = rubricEvolutionMarkers(metrics);
  const ids = criterionIds.length ? criterionIds : [...new Set(metrics.flatMap((m) => Object.keys(m.rewards.criterion_pass_rate)))];
  // Steps without any reward (a judge that fails every call) are not "no data yet".
  // Pure distillation judges nothing (no judge_failures): no reward by design, not a judge failure.
  const pureDistillation = metrics.length > 0 && metrics.every((m) => m.distillation && !m.judge_failures);
  const noReward = pureDistillation
    ? 'Pure distillation judges nothing, so there is no reward: the distillation chart shows the training signal (a held-out rubric would still be scored).'
    : 'No reward could be computed: every rollout was unscorable (see the judge warning).';
  return [
    {
      id: 'reward',
      title: 'Reward (mean ± std)',
      unit: 'reward',
      lines: [
        { label: 'reward mean', color: PALETTE[0] },
        ...(hasHeldOut ? [{ label: 'held-out reward', color: PALETTE[1], dash: true }] : []),
        { label: 'mean − std', color: PALETTE[0] },
        { label: 'mean + std', color: PALETTE[0] },
      ],
      x,
      ys: [mean, ...(hasHeldOut ? [s((m) => m.held_out?.reward)] : []), lo, hi],
      band: hasHeldOut ? [2, 3] : [1, 2],
      empty: noReward,
      ...(evolution.length ? { markers: evolution, note: `The rubric evolved: ${evolution.map((m) => m.label).join('; ')}.` } : {}),
    },
    ...distillationChart(metrics, x, s),
    ...scheduleChart(metrics, x, s),
    {
      id: 'pass-rates',
      title: 'Criterion pass rates',
      unit: 'fraction of completions meeting the criterion',
      lines: ids.map((id, i) => ({ label: id, color: PALETTE[i % PALETTE.length] })),
      x,
      ys: ids.map((id) => s((m) => m.rewards.criterion_pass_rate[id])),
      empty: 'No criterion could be scored: every verdict failed (see the judge warning).',
    },
    {
      id: 'strict',
      title: 'Strict completion rate',
      unit: 'fraction meeting every required criterion and no pitfall',
      lines: [
        { label: 'strict completion', color: PALETTE[2] },
        { label: 'frac_reward_zero_std', color: PALETTE[6], dash: true },
      ],
      x,
      ys: [s((m) => m.rewards.strict_completion_rate), s((m) => m.frac_reward_zero_std)],
    },
    {
      id: 'kl',
      title: 'KL to the reference',
      unit: 'nats per token',
      lines: [{ label: 'kl', color: PALETTE[3] }],
      x,
      ys: [s((m) => m.kl)],
      note: hasKl || metrics.length === 0 ? undefined : 'beta = 0: no reference model, so no KL.',
    },
    {
      id: 'entropy',
      title: 'Entropy',
      unit: 'nats per token',
      lines: [{ label: 'entropy', color: PALETTE[4] }],
      x,
      ys: [s((m) => m.entropy)],
    },
    {
      id: 'clip',
      title: 'Clip ratios',
      unit: 'fraction of tokens clipped',
      lines: [
        { label: 'clip_ratio_low', color: PALETTE[1] },
        { label: 'clip_ratio_high', color: PALETTE[0] },
        { label: 'clip_ratio_region', color: PALETTE[6], dash: true },
      ],
      x,
      ys: [s((m) => m.clip_ratio_low), s((m) => m.clip_ratio_high), s((m) => m.clip_ratio_region)],
    },
    {
      id: 'length',
      title: 'Completion length',
      unit: 'tokens',
      lines: [
        { label: 'mean', color: PALETTE[0] },
        { label: 'min', color: PALETTE[5], dash: true },
        { label: 'max', color: PALETTE[1], dash: true },
      ],
      x,
      ys: [s((m) => m.completions.mean_length), s((m) => m.completions.min_length), s((m) => m.completions.max_length)],
    },
    {
      id: 'throughput',
      title: 'Tokens per second',
      unit: 'tokens/s',
      lines: [
        { label: 'sampling', color: PALETTE[2] },
        { label: 'training', color: PALETTE[3] },
      ],
      x,
      ys: [s((m) => m.sampling_tokens_per_second), s((m) => m.training_tokens_per_second)],
    },
    ...explorationCharts(metrics, x, s),
    ...criteriaDiagnosticsChart(metrics, x, s),
  ];
}

/** On-policy distillation (src/rl/distill/), next to the reward, for runs that distil. */
function distillationChart(metrics: readonly StepMetrics[], x: number[], s: (f: (m: StepMetrics) => number | null | undefined) => Value[]): ChartData[] {
  if (!metrics.some((m) => m.distillation)) return [];
  const last = [...metrics].reverse().find((m) => m.distillation)!.distillation!;
  return [
    {
      id: 'distillation',
      title: 'Distillation: divergence and agreement',
      unit: 'divergence per token (nats); agreement and retained share as fractions',
      lines: [
        { label: 'divergence', color: PALETTE[4] },
        { label: 'top-1 agreement', color: PALETTE[2], dash: true },
        { label: 'retained share', color: PALETTE[6], dash: true },
      ],
      x,
      ys: [
        s((m) => m.distillation?.divergence),
        s((m) => m.distillation?.top1_agreement),
        s((m) => (m.distillation && m.distillation.completion_tokens > 0 ? m.distillation.retained_tokens / m.distillation.completion_tokens : null)),
      ],
      note: `Measured on the batch's completions before each update. Retained tokens at the last step: ${last.retained_tokens} of ${last.completion_tokens}${last.completion_tokens > 0 ? ` (${Math.round((100 * last.retained_tokens) / last.completion_tokens)}%)` : ''}.`,
      ...(phaseMarkers(metrics).length ? { markers: phaseMarkers(metrics) } : {}),
    },
  ];
}

const PHASE_NAMES = { distill: 'distillation', sft: 'rejection-sampling SFT', rl: 'GRPO' } as const;

/** A marker at the first step of each phase of the run's schedule (src/rl/distill/schedule.ts). */
export function phaseMarkers(metrics: readonly StepMetrics[]): { x: number; label: string }[] {
  let previous: string | null = null;
  return metrics.flatMap((m) => {
    const phase = m.schedule?.phase ?? null;
    if (phase === null || phase === previous) return [];
    previous = phase;
    return [{ x: m.step, label: `${PHASE_NAMES[phase]} from step ${m.step + 1}` }];
  });
}

/** The schedule's phases and GKD's on-policy draws, for runs with a schedule or lmbda < 1. */
function scheduleChart(metrics: readonly StepMetrics[], x: number[], s: (f: (m: StepMetrics) => number | null | undefined) => Value[]): ChartData[] {
  const scheduled = metrics.some((m) => m.schedule?.phase);
  const teacherSampled = metrics.some((m) => m.schedule?.on_policy === false);
  if (!scheduled && !teacherSampled) return [];
  const markers = phaseMarkers(metrics);
  const offPolicy = metrics.filter((m) => m.schedule?.on_policy === false).length;
  const last = metrics[metrics.length - 1]?.schedule;
  return [
    {
      id: 'schedule',
      title: 'Schedule: phases and who sampled',
      unit: 'rollouts kept by RuFT\'s rejection; 1 = the student sampled the batch, 0 = the teacher did',
      lines: [
        { label: 'SFT rollouts kept', color: PALETTE[0] },
        { label: 'on-policy batch', color: PALETTE[1], dash: true },
      ],
      x,
      ys: [s((m) => m.schedule?.sft_kept), s((m) => (m.schedule?.on_policy === null || m.schedule?.on_policy === undefined ? null : m.schedule.on_policy ? 1 : 0))],
      note: [
        last?.phase ? `The last step was in its ${PHASE_NAMES[last.phase]} phase.` : '',
        markers.length ? `Phases: ${markers.map((m) => m.label).join('; ')}.` : '',
        teacherSampled ? `${offPolicy} of ${metrics.length} steps trained on the teacher's samples (lmbda).` : '',
      ]
        .filter(Boolean)
        .join(' '),
      ...(markers.length ? { markers } : {}),
    },
  ];
}

/** CriPO's diagnostics (src/rl/credit/criteria.ts), for runs that recorded them. */
function criteriaDiagnosticsChart(metrics: readonly StepMetrics[], x: number[], s: (f: (m: StepMetrics) => number | null | undefined) => Value[]): ChartData[] {
  if (!metrics.some((m) => m.unexplored_criteria !== undefined)) return [];
  return [
    {
      id: 'criteria-diagnostics',
      title: 'Unexplored and suppressed criteria (CriPO)',
      unit: 'criteria, summed over the step\'s groups',
      lines: [
        { label: 'unexplored (no completion meets it)', color: PALETTE[1] },
        { label: 'suppressed (met, negative advantage)', color: PALETTE[3], dash: true },
      ],
      x,
      ys: [s((m) => m.unexplored_criteria), s((m) => m.suppressed_criteria)],
    },
  ];
}

/** Guided exploration's charts (src/rl/explore/), only for runs that used it. */
function explorationCharts(metrics: readonly StepMetrics[], x: number[], s: (f: (m: StepMetrics) => number | null | undefined) => Value[]): ChartData[] {
  const charts: ChartData[] = [];
  if (metrics.some((m) => (m.exploration?.generation_rounds ?? 1) > 1)) {
    charts.push({
      id: 'dynamic-sampling',
      title: 'Dynamic sampling cost',
      unit: 'completion tokens sampled per step',
      lines: [
        { label: 'extra (resampling)', color: PALETTE[1] },
        { label: 'all sampled', color: PALETTE[0], dash: true },
      ],
      x,
      ys: [s((m) => m.exploration?.extra_sampled_tokens), s((m) => m.exploration?.sampled_tokens)],
      note: 'Groups whose completions all got the same reward were sampled again with other prompts (dynamic_sampling).',
    });
  }
  if (metrics.some((m) => (m.exploration?.scaffold_prob ?? 0) > 0)) {
    charts.push({
      id: 'scaffold',
      title: 'Rubric scaffolding',
      unit: 'probability, and nats per token for the log-prob gap',
      lines: [
        { label: 'scaffold probability', color: PALETTE[2] },
        { label: 'log-prob gap', color: PALETTE[3], dash: true },
      ],
      x,
      ys: [s((m) => m.exploration?.scaffold_prob), s((m) => m.exploration?.scaffold_logprob_gap)],
      note: 'Scaffolded completions are trained under the original prompt; the gap is how far the two prompts\' log-probs of those completions differ.',
    });
  }
  if (metrics.some((m) => m.exploration?.herl_revised !== undefined || m.exploration?.guidance_groups !== undefined)) {
    charts.push({
      id: 'guided-rollouts',
      title: 'Hindsight and on-demand guidance',
      unit: 'completions per step',
      lines: [
        { label: 'revised (HeRL)', color: PALETTE[0] },
        { label: 'revisions that improved', color: PALETTE[0], dash: true },
        { label: 'on-demand kept', color: PALETTE[2] },
        { label: 'on-demand dropped', color: PALETTE[3], dash: true },
      ],
      x,
      ys: [s((m) => m.exploration?.herl_revised), s((m) => m.exploration?.herl_improved), s((m) => m.exploration?.guidance_kept), s((m) => m.exploration?.guidance_dropped)],
      note: 'Extra guided completions, trained under the original prompt: revisions of failed answers (herl_fraction), and for groups that all failed, guided completions kept only when they beat the group\'s mean (guidance_on_demand).',
    });
  }
  return charts;
}

/** "reward mean 0.42" for the last step with a value: the chart's text alternative. */
export function lastValues(chart: ChartData): string {
  const parts = chart.lines.flatMap((line, i) => {
    if (chart.band && (i === chart.band[0] || i === chart.band[1])) return [];
    const ys = chart.ys[i];
    for (let j = ys.length - 1; j >= 0; j--) if (ys[j] !== null) return [`${line.label} ${formatNumber(ys[j]!)} at step ${chart.x[j]}`];
    return [];
  });
  if (parts.length) return parts.join('; ');
  return chart.x.length ? (chart.empty ?? 'no value at any step') : 'no data yet';
}

export function formatNumber(x: number): string {
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1000) return x.toFixed(0);
  if (a >= 0.01) return x.toFixed(3).replace(/\.?0+$/, '');
  return x.toExponential(2);
}

/** Another run's reward curve drawn over the reward chart (A/B comparison). */
export interface Overlay {
  label: string;
  metrics: readonly StepMetrics[];
}

/**
 * The reward chart with each overlay's (smoothed) reward mean added as a dashed line. The x axis
 * becomes the union of every run's steps; a run without a step there has no point (null).
 */
export function withOverlays(chart: ChartData, overlays: readonly Overlay[], weight: number): ChartData {
  if (overlays.length === 0) return chart;
  const x = [...new Set([...chart.x, ...overlays.flatMap((o) => o.metrics.map((m) => m.step))])].sort((a, b) => a - b);
  const at = (steps: readonly number[], ys: readonly Value[]): Value[] => {
    const byStep = new Map(steps.map((s, i) => [s, ys[i]]));
    return x.map((s) => byStep.get(s) ?? null);
  };
  const lines = [...chart.lines, ...overlays.map((o, i) => ({ label: o.label, color: PALETTE[(i + 3) % PALETTE.length], dash: true }))];
  const ys = [
    ...chart.ys.map((y) => at(chart.x, y)),
    ...overlays.map((o) => at(o.metrics.map((m) => m.step), smooth(o.metrics.map((m) => num(m.rewards.reward)), weight))),
  ];
  return { ...chart, lines, x, ys };
}
