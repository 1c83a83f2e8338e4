// The lesson experiments' figures (scripts/page/lessonFigures.ts) on hand-made step series:
// windows, spreads over seeds, the reward-hacking gap on one yardstick, and the README table.
import { describe, expect, it } from 'vitest';
import {
  early,
  formatSpread,
  late,
  lessonTable,
  runFigures,
  spread,
  summariseLessonRuns,
  windowSize,
  type LessonRun,
  type StepFigures,
} from '../../../scripts/page/lessonFigures';
import type { RewardMetrics } from '../../../src/rl/metrics';

function rewards(reward: number | null, pass: Record<string, number>, weightedMean = reward): RewardMetrics {
  return {
    reward,
    reward_std: 0,
    criterion_pass_rate: pass,
    criterion_mean_score: pass,
    strict_completion_rate: 0,
    unscorable: 0,
    aggregations: { weighted_mean: weightedMean },
  };
}

function step(i: number, over: Partial<StepFigures> = {}): StepFigures {
  return {
    step: i,
    rewards: rewards(0, {}),
    held_out: null,
    frac_reward_zero_std: 0,
    entropy: 1,
    clip_ratio_low: 0,
    clip_ratio_high: 0,
    step_seconds: 10,
    completions: { mean_length: 20 },
    ...over,
  };
}

describe('windows', () => {
  it('uses max(1, min(3, floor(n / 3))) steps', () => {
    expect([1, 2, 3, 5, 6, 8, 9, 30].map(windowSize)).toEqual([1, 1, 1, 1, 2, 2, 3, 3]);
  });

  it('averages the first and last window, skipping missing values', () => {
    const xs = [1, 2, 3, 4, 5, 6];
    // w = 2: early (1 + 2) / 2, late (5 + 6) / 2
    expect(early(xs)).toBe(1.5);
    expect(late(xs)).toBe(5.5);
    expect(early([null, 4, 0, 0, 0, 0])).toBe(4);
    expect(late([])).toBeNull();
  });
});

describe('spread over seeds', () => {
  it('gives mean, min, max and how many runs had a value', () => {
    expect(spread([0.2, null, 0.4, 0.9])).toEqual({ mean: 0.5, min: 0.2, max: 0.9, n: 3 });
    expect(spread([null])).toEqual({ mean: null, min: null, max: null, n: 0 });
    expect(formatSpread(spread([0.2, 0.4]))).toBe('0.30 [0.20, 0.40]');
    expect(formatSpread(spread([0.25]))).toBe('0.25');
    expect(formatSpread(spread([]))).toBe('n/a');
  });
});

describe('reward hacking figures', () => {
  // Proxy (weighted mean of the trained rubric) rises 0.2 → 0.7, the held-out score falls 0.6 → 0.3;
  // the trained reward (here a gated one) differs from the proxy, and the gap must use the proxy.
  const proxy = [0.2, 0.3, 0.5, 0.7];
  const gold = [0.6, 0.5, 0.4, 0.3];
  const run: LessonRun = {
    lesson: 'reward-hacking-gated',
    seed: 1,
    metrics: proxy.map((p, i) =>
      step(i, {
        rewards: rewards(0, { enthusiastic: i / 4, concise: 1 }, p),
        held_out: rewards(gold[i], { concise: 1 }),
      }),
    ),
  };

  it('measures the proxy − held-out gap early and late and the biased criteria only', () => {
    const f = runFigures(run);
    // 4 steps: w = 1
    expect(f['gap early']).toBeCloseTo(-0.4, 12);
    expect(f['gap late']).toBeCloseTo(0.4, 12);
    expect(f['gap change']).toBeCloseTo(0.8, 12);
    expect(f['held-out late']).toBeCloseTo(0.3, 12);
    expect(f['enthusiastic pass late']).toBe(0.75);
    expect(f).not.toHaveProperty('concise pass late');
    // The trained reward is flat 0 → the onset rule (proxy = trained reward) finds no onset.
    expect(f['onset step']).toBeNull();
  });

  it('finds the onset when the trained reward rises while the held-out score falls', () => {
    const plain = { ...run, lesson: 'reward-hacking', metrics: run.metrics.map((m, i) => ({ ...m, rewards: rewards(proxy[i], {}, proxy[i]) })) };
    expect(runFigures(plain)['onset step']).toBe(2);
  });
});

describe('a judge bias over the same rubric (bias sandbox lessons)', () => {
  // Trained and held-out rubrics share every id: the bias shows as a per-criterion pass-rate gap.
  const run: LessonRun = {
    lesson: 'vacuous-credit',
    seed: 1,
    metrics: [0, 1, 2].map((i) =>
      step(i, {
        rewards: rewards(0.5, { concise: 0.25, vivid: 0.5 + i / 8 }),
        held_out: rewards(0.2, { concise: 0.25, vivid: 0.125 }),
        completions: { mean_length: 30 + i },
      }),
    ),
  };

  it('reports the gap of the criteria the bias changed, not of the honest ones, and the answer length', () => {
    const f = runFigures(run);
    // vivid: gaps 0.375, 0.5, 0.625 → mean 0.5; concise never differs → no column.
    expect(f['vivid gap']).toBeCloseTo(0.5, 12);
    expect(f).not.toHaveProperty('concise gap');
    expect(f['length early']).toBe(30);
    expect(f['length late']).toBe(32);
    expect(f['gap early']).toBeCloseTo(0.3, 12);
  });
});

describe('other lessons', () => {
  it('distillation: divergence, top-1 agreement and the held-out (measured only) reward, early and late', () => {
    const d = (divergence: number | null, top1: number | null) => ({ divergence, top1_agreement: top1, retained_tokens: 32, completion_tokens: 32, loss: divergence ?? 0 });
    const metrics = [
      step(0, { rewards: rewards(null, {}), held_out: rewards(0.25, {}), distillation: d(0.4, 0.5) }),
      step(1, { rewards: rewards(null, {}), held_out: rewards(0.5, {}), distillation: d(0.3, 0.6) }),
      step(2, { rewards: rewards(null, {}), held_out: null, distillation: d(null, null) }),
      step(3, { rewards: rewards(null, {}), held_out: rewards(0.75, {}), distillation: d(0.1, 0.9) }),
    ];
    const f = runFigures({ lesson: 'distill-teacher', seed: 1, metrics });
    // 4 steps: w = 1
    expect(f['divergence early']).toBe(0.4);
    expect(f['divergence late']).toBe(0.1);
    expect(f['top-1 early']).toBe(0.5);
    expect(f['top-1 late']).toBe(0.9);
    expect(f['held-out early']).toBe(0.25);
    expect(f['held-out late']).toBe(0.75);
    expect(f['held-out change']).toBe(0.5);
    // Steps saved without distillation metrics have no divergence.
    expect(runFigures({ lesson: 'distill-self-rubric', seed: 1, metrics: [step(0), step(1)] })['divergence late']).toBeNull();
  });

  it('zero-variance: the zero-std fraction early and late', () => {
    const f = runFigures({ lesson: 'zero-variance-none', seed: 1, metrics: [1, 1, 0.5, 0.25].map((z, i) => step(i, { frac_reward_zero_std: z })) });
    expect(f['zero-std early']).toBe(1);
    expect(f['zero-std late']).toBe(0.25);
  });

  it('clipping: mean clip ratios and the entropy change', () => {
    const f = runFigures({
      lesson: 'clipping-symmetric',
      seed: 1,
      metrics: [2, 1.8, 1.6, 1.2, 1.0, 0.8].map((e, i) => step(i, { entropy: e, clip_ratio_high: i % 2 ? 0.1 : 0.05 })),
    });
    expect(f['clip_high mean']).toBeCloseTo(0.075, 12);
    // w = 2: early 1.9, late 0.9
    expect(f['entropy change']).toBeCloseTo(-1, 12);
  });
});

describe('the table', () => {
  it('one row per lesson with its seeds, steps and figures', () => {
    const runs: LessonRun[] = [1, 2].map((seed) => ({
      lesson: 'grpo-basics',
      seed,
      metrics: [0.1, 0.2, 0.3 + seed / 10].map((r, i) => step(i, { rewards: rewards(r, {}) })),
    }));
    const [s] = summariseLessonRuns(runs);
    expect(s.seeds).toEqual([1, 2]);
    expect(s.steps).toBe(3);
    // seed 1: late 0.4 − early 0.1 = 0.3; seed 2: 0.5 − 0.1 = 0.4
    expect(s.figures['reward change'].mean).toBeCloseTo(0.35, 12);
    const md = lessonTable([s], 'SwiftShader');
    expect(md).toContain('Adapter: SwiftShader');
    expect(md).toContain('| grpo-basics | 1, 2 | 3 | 10 | reward early 0.10 [0.10, 0.10]; reward late 0.45 [0.40, 0.50]; reward change 0.35 [0.30, 0.40] |');
  });
});
