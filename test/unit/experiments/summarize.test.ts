// scripts/experiments/summarize.mjs: the pure side of the methods comparison (which options each
// run gets, what a run's record keeps, mean ± spread over seeds, the paired difference to the
// baseline and the markdown table).
import { describe, expect, it } from 'vitest';
import {
  allCriteriaMet,
  markdownTable,
  meanSpread,
  methodExperiment,
  METHODS,
  parseMethodList,
  parseSeeds,
  runRecord,
  summarize,
  type RunRecord,
} from '../../../scripts/experiments/summarize.mjs';
import base from '../../../scripts/experiments/methods.experiment.json';
import { parseExperiment } from '../../../src/rl/experiment';

const criteria = [
  { weight: 1 },
  { weight: 2 },
  { weight: -1 }, // a pitfall: met when NOT detected
];

function step(step: number, reward: number, extra: Record<string, unknown> = {}) {
  return {
    step,
    rewards: { reward, strict_completion_rate: reward / 2 },
    unexplored_criteria: 2,
    suppressed_criteria: step,
    entropy: 1 - step / 10,
    frac_reward_zero_std: 0,
    step_seconds: step === 0 ? 100 : 10,
    ...extra,
  };
}

function result(rewards: number[], rollouts: unknown[] = []) {
  return { status: 'paused', steps: rewards.length, metrics: rewards.map((r, i) => step(i, r)), rollouts, errors: [] };
}

describe('the runs', () => {
  it('every method is a valid experiment that differs from the baseline only in its options (and the seed)', () => {
    const plain = parseExperiment(methodExperiment(base, 'baseline', 3)).config as Record<string, unknown>;
    expect(plain.seed).toBe(3);
    for (const [name, options] of Object.entries(METHODS)) {
      const { config } = parseExperiment(methodExperiment(base, name, 3));
      const c = config as Record<string, unknown>;
      const differing = Object.keys(c).filter((k) => JSON.stringify(c[k]) !== JSON.stringify(plain[k]));
      expect(differing.sort(), name).toEqual(Object.keys(options).sort());
    }
    // The base experiment is not changed by building a run from it.
    expect(base.config.seed).toBe(1);
  });

  it('refuses an unknown method, naming the known ones', () => {
    expect(() => methodExperiment(base, 'herl_typo', 1)).toThrow(/unknown method "herl_typo"; known: baseline, span_credit/);
    expect(() => parseMethodList('span_credit,nope')).toThrow(/unknown method "nope"/);
    expect(() => parseMethodList(',')).toThrow(/names no method/);
  });

  it('always runs the baseline first, once', () => {
    expect(parseMethodList('cort_credit,baseline,cort_credit')).toEqual(['baseline', 'cort_credit']);
    expect(parseMethodList(undefined)[0]).toBe('baseline');
  });

  it('reads --seeds as a count or a list', () => {
    expect(parseSeeds(undefined)).toEqual([1, 2]);
    expect(parseSeeds('3')).toEqual([1, 2, 3]);
    expect(parseSeeds('7,11')).toEqual([7, 11]);
    expect(() => parseSeeds('1,x')).toThrow(/--seeds/);
    expect(() => parseSeeds('4,4')).toThrow(/repeats/);
  });
});

describe('a run record', () => {
  it('meets every criterion only with all positive ones at or above the threshold and no pitfall', () => {
    const rollouts = [
      { reward: 1, scores: [1, 0.5, 0] }, // all met
      { reward: 1, scores: [1, 1, 1] }, // pitfall detected
      { reward: 0.5, scores: [0.4, 1, 0] }, // first below 0.5
      { reward: null, scores: [null, null, null] }, // unscorable
    ];
    expect(allCriteriaMet(rollouts, criteria)).toBe(0.25);
    expect(allCriteriaMet([], criteria)).toBeNull();
  });

  it('keeps the series and the last step, averaging the tail and skipping step 0\'s compile time', () => {
    const r = runRecord('span_credit', 2, result([0.1, 0.2, 0.3, 0.6], [{ reward: 1, scores: [1, 1, 0] }]), criteria, 123);
    expect(r.reward).toEqual([0.1, 0.2, 0.3, 0.6]);
    expect(r.final!.reward).toBe(0.6);
    expect(r.final!.reward_last3).toBeCloseTo((0.2 + 0.3 + 0.6) / 3, 12);
    expect(r.final!.strict_completion_last3).toBeCloseTo((0.1 + 0.15 + 0.3) / 3, 12);
    expect(r.final!.all_criteria_met).toBe(1);
    expect(r.final!.suppressed_per_step).toBe(1.5);
    expect(r.final!.step_seconds).toBe(10);
    expect(r.final!.entropy).toBeCloseTo(0.7, 12);
  });

  it('a run that took no step has no final figures', () => {
    expect(runRecord('cort_credit', 1, { status: 'failed', steps: 0, metrics: [], rollouts: [], errors: ['boom'] }, criteria, 5).final).toBeNull();
  });
});

describe('the summary', () => {
  it('is the mean and sample sd over seeds', () => {
    expect(meanSpread([1, 3])).toEqual({ mean: 2, sd: Math.SQRT2, n: 2 });
    expect(meanSpread([0.5])).toEqual({ mean: 0.5, sd: 0, n: 1 });
    expect(meanSpread([null, Number.NaN])).toBeNull();
  });

  it('pairs each method with the baseline of the same seed, and counts failed runs apart', () => {
    const records: RunRecord[] = [
      runRecord('baseline', 1, result([0.2, 0.2, 0.2]), criteria, 1),
      runRecord('baseline', 2, result([0.4, 0.4, 0.4]), criteria, 1),
      runRecord('cort_credit', 1, result([0.3, 0.3, 0.3]), criteria, 1),
      runRecord('cort_credit', 2, result([0.3, 0.3, 0.3]), criteria, 1),
      runRecord('cort_credit', 3, result([0.9, 0.9, 0.9]), criteria, 1), // no baseline for seed 3: not paired
      runRecord('scaffold', 1, { status: 'failed', steps: 0, metrics: [], rollouts: [], errors: ['x'] }, criteria, 1),
    ];
    const rows = summarize(records);
    expect(rows.map((r) => r.method)).toEqual(['baseline', 'cort_credit', 'scaffold']);
    expect(rows[0].reward_vs_baseline).toBeNull();
    expect(rows[0].reward!.mean).toBeCloseTo(0.3, 12);
    const cort = rows[1];
    expect(cort.seeds).toEqual([1, 2, 3]);
    expect(cort.reward!.mean).toBeCloseTo(0.5, 12);
    // Paired: (0.3 − 0.2, 0.3 − 0.4) = (+0.1, −0.1): mean 0, sd √0.02.
    expect(cort.reward_vs_baseline!.mean).toBeCloseTo(0, 12);
    expect(cort.reward_vs_baseline!.sd).toBeCloseTo(Math.sqrt(0.02), 12);
    expect(cort.reward_vs_baseline!.n).toBe(2);
    expect(rows[2]).toMatchObject({ failed: 1, seeds: [], reward: null });

    const table = markdownTable(rows).split('\n');
    expect(table).toHaveLength(2 + 3);
    expect(table[0]).toMatch(/^\| method \| seeds \| reward, last step/);
    expect(table[3]).toContain('| cort_credit | 3 | 0.500 ± 0.346 |');
    expect(table[3]).toContain('| 0.000 ± 0.141 |');
    expect(table[4]).toMatch(/^\| scaffold \| 0 \(1 failed\) \| n\/a \|/);
    // One seed: the value alone (no "± 0" that would read as no spread).
    const one = markdownTable(summarize(records.filter((r) => r.seed === 1))).split('\n');
    expect(one[3]).toContain('| cort_credit | 1 | 0.300 | 0.300 | +0.100 |');
  });
});
