// Distillation's training modes (issue 11): GKD's lmbda draw, the schedules' phases, RuFT's
// rejection, the entropy token selection on known entropies, the special-token support mask,
// the EMA teacher's update against float64, and the options through config, memory plan, CSV,
// run files, charts and the TRL export.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { GrpoConfigError, parseGrpoConfig } from '../../../src/rl/config';
import { onPolicyBatch, phaseAdvantages, ruftAdvantages, scheduleMetrics, schedulePhase, stepDistillation, stepMode } from '../../../src/rl/distill/schedule';
import { distillEntropyMask, excludedVector, ownEntropySelection, specialTokenIds, withSpecialTokens } from '../../../src/rl/distill/selection';
import { emaStep64, emaStepF32, needsEmaTeacher, selfTeacherWeights } from '../../../src/rl/distill/ema';
import { distillSupport } from '../../../src/ops/distill.reference';
import { planMemory } from '../../../src/rl/memoryPlan';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { buildCharts, phaseMarkers } from '../../../src/ui/lib/series';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl } from '../../../src/share/trlExport';
import { getPath, setPath } from '../../../src/ui/lib/settingsCatalog';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import type { Transformer } from '../../../src/model/transformer';
import { metrics as storeMetrics } from '../store/fixtures';

const distill = (extra: Record<string, unknown>) => parseGrpoConfig({ max_steps: 20, distillation: { teacher: 'self_rubric', ...extra } });

describe("GKD's lmbda: whether the student samples a step's batch", () => {
  it('is a seeded draw per (seed, step): the same every time, different across seeds', () => {
    const draws = (seed: number) => Array.from({ length: 64 }, (_, step) => onPolicyBatch(seed, step, 0.5));
    expect(draws(7)).toEqual(draws(7));
    expect(draws(7)).not.toEqual(draws(8));
  });

  it('is on-policy with probability lmbda, always at 1 and never at 0', () => {
    for (const lmbda of [0.2, 0.5, 0.8]) {
      const n = 4000;
      const on = Array.from({ length: n }, (_, step) => onPolicyBatch(3, step, lmbda)).filter(Boolean).length;
      // Binomial: 4 standard deviations is at most 0.032 at n = 4000.
      expect(Math.abs(on / n - lmbda), `lmbda ${lmbda}`).toBeLessThan(0.032);
    }
    expect(Array.from({ length: 100 }, (_, s) => onPolicyBatch(1, s, 1)).every(Boolean)).toBe(true);
    expect(Array.from({ length: 100 }, (_, s) => onPolicyBatch(1, s, 0)).some(Boolean)).toBe(false);
    expect(() => onPolicyBatch(1, 0, 1.5)).toThrow(/lmbda must be in \[0, 1\]/);
  });

  it('only draws for a pure distillation step: a mixed step and a step without a teacher are the student\'s', () => {
    const pure = distill({ mode: 'pure', lmbda: 0 });
    expect(stepMode(pure, 4).onPolicy).toBe(false);
    expect(stepMode(parseGrpoConfig({}), 4).onPolicy).toBe(true);
    // distill_then_rl: its distill phase is pure (the teacher may sample), its RL phase is the student's.
    const sched = distill({ lmbda: 0, schedule: { kind: 'distill_then_rl', distill_steps: 3 } });
    expect([0, 1, 2, 3, 4].map((s) => stepMode(sched, s).onPolicy)).toEqual([false, false, false, true, true]);
  });

  it('below 1 is refused without a teacher that can sample, and with a mixed GRPO term', () => {
    expect(() => parseGrpoConfig({ distillation: { lmbda: 0.5 } })).toThrow(/lmbda: below 1 the teacher samples some batches: only the self_rubric and model teachers can/);
    expect(() => distill({ lmbda: 0.5, mode: 'mixed' })).toThrow(GrpoConfigError);
    expect(() => distill({ lmbda: 0.5, mode: 'mixed' })).toThrow(/needs distillation mode "pure"/);
    expect(distill({ lmbda: 0.5, mode: 'pure' }).distillation.lmbda).toBe(0.5);
    expect(distill({ lmbda: 0.5, schedule: { kind: 'distill_then_rl', distill_steps: 2 } }).distillation.lmbda).toBe(0.5);
  });
});

describe('the schedules: which phase a step is in', () => {
  it('distill_then_rl: distill_steps of pure distillation, then GRPO with the teacher off', () => {
    const cfg = distill({ mode: 'mixed', schedule: { kind: 'distill_then_rl', distill_steps: 3 } });
    expect([0, 1, 2, 3, 10].map((s) => schedulePhase(cfg.distillation, s))).toEqual(['distill', 'distill', 'distill', 'rl', 'rl']);
    expect(stepDistillation(cfg.distillation, 2)).toMatchObject({ teacher: 'self_rubric', mode: 'pure' });
    expect(stepDistillation(cfg.distillation, 3)).toMatchObject({ teacher: 'off' });
  });

  it('ruft: sft_steps of rejection-sampling SFT (no teacher), then the configured run', () => {
    const cfg = parseGrpoConfig({ max_steps: 20, distillation: { teacher: 'self_rubric', schedule: { kind: 'ruft', sft_steps: 2, min_reward: 0.5 } } });
    expect([0, 1, 2].map((s) => schedulePhase(cfg.distillation, s))).toEqual(['sft', 'sft', 'rl']);
    expect(stepDistillation(cfg.distillation, 1).teacher).toBe('off');
    expect(stepDistillation(cfg.distillation, 2)).toEqual(cfg.distillation);
    // No teacher at all: a plain RuFT warm start before GRPO.
    const plain = parseGrpoConfig({ max_steps: 20, distillation: { schedule: { kind: 'ruft', sft_steps: 4 } } });
    expect(schedulePhase(plain.distillation, 3)).toBe('sft');
    expect(schedulePhase(plain.distillation, 4)).toBe('rl');
  });

  it('no schedule: no phase, the settings as configured', () => {
    const cfg = distill({});
    expect(schedulePhase(cfg.distillation, 5)).toBeNull();
    expect(stepDistillation(cfg.distillation, 5)).toBe(cfg.distillation);
    expect(() => schedulePhase(cfg.distillation, -1)).toThrow(/non-negative integer/);
  });

  it('refuses schedules that never reach GRPO or have nothing to distil', () => {
    expect(() => parseGrpoConfig({ max_steps: 5, distillation: { schedule: { kind: 'distill_then_rl', distill_steps: 2 } } })).toThrow(/distill_then_rl needs a teacher/);
    expect(() => distill({ schedule: { kind: 'distill_then_rl', distill_steps: 20 } })).toThrow(/must be less than max_steps \(20\)/);
    expect(() => parseGrpoConfig({ max_steps: 20, distillation: { teacher: 'criterion_injection', schedule: { kind: 'distill_then_rl', distill_steps: 2 } } })).toThrow(/the criterion_injection teacher cannot do/);
    expect(() => distill({ mode: 'pure', schedule: { kind: 'ruft', sft_steps: 2 } })).toThrow(/with distillation mode "pure" there is no GRPO phase/);
  });

  it("RuFT's rejection: advantage 1 on rollouts at or above min_reward, 0 elsewhere (no reward: 0)", () => {
    expect(Array.from(ruftAdvantages([1, 0.5, 0.49, null, NaN], 0.5))).toEqual([1, 1, 0, 0, 0]);
    const cfg = parseGrpoConfig({ max_steps: 20, distillation: { schedule: { kind: 'ruft', sft_steps: 2, min_reward: 1 } } });
    const kernel = Float32Array.from([0.3, -0.3]);
    expect(Array.from(phaseAdvantages(cfg.distillation, 'sft', [1, 0.2], kernel))).toEqual([1, 0]);
    expect(phaseAdvantages(cfg.distillation, 'rl', [1, 0.2], kernel)).toBe(kernel);
  });

  it('shows the phase and who sampled in the step metrics, only for runs with a teacher or a schedule', () => {
    const sched = distill({ mode: 'pure', lmbda: 0, schedule: { kind: 'distill_then_rl', distill_steps: 1 } });
    expect(scheduleMetrics(sched, stepMode(sched, 0), null)).toEqual({ phase: 'distill', on_policy: false, sft_kept: null });
    expect(scheduleMetrics(sched, stepMode(sched, 1), null)).toEqual({ phase: 'rl', on_policy: null, sft_kept: null });
    const plain = parseGrpoConfig({});
    expect(scheduleMetrics(plain, stepMode(plain, 0), null)).toBeUndefined();
  });
});

describe('token selection for the divergence', () => {
  // Known entropies of one micro-batch: two rows of 4 positions, the completion at positions 1-3.
  const entropy = Float32Array.from([9, 0.1, 2.0, 0.5, 9, 3.0, 0.2, 1.0]);
  const mask = Float32Array.from([0, 1, 1, 1, 0, 1, 1, 1]);

  it("its own quantile keeps the student's highest-entropy completion tokens", () => {
    const d = { top_entropy_quantile: 0.5 };
    expect(ownEntropySelection(d)).toBe(true);
    // Completion entropies 0.1 2 0.5 3 0.2 1: the median (linear interpolation) is 0.75; kept: 2, 3, 1.
    expect(Array.from(distillEntropyMask(d, entropy, mask, null)!)).toEqual([0, 0, 1, 0, 0, 1, 0, 1]);
    // The top third: threshold at the 2/3 quantile of six = 1.5 (between 1 and 2).
    expect(Array.from(distillEntropyMask({ top_entropy_quantile: 1 / 3 }, entropy, mask, null)!)).toEqual([0, 0, 1, 0, 0, 1, 0, 0]);
  });

  it('without its own quantile it is the policy loss\'s mask (or none)', () => {
    const policy = Float32Array.from([0, 1, 0, 0, 0, 0, 0, 1]);
    expect(ownEntropySelection({ top_entropy_quantile: null })).toBe(false);
    expect(ownEntropySelection({ top_entropy_quantile: 1 })).toBe(false);
    expect(distillEntropyMask({ top_entropy_quantile: null }, null, mask, policy)).toBe(policy);
    expect(distillEntropyMask({ top_entropy_quantile: null }, null, mask, null)).toBeNull();
    expect(() => distillEntropyMask({ top_entropy_quantile: 0.5 }, null, mask, null)).toThrow(/needs the pass's entropies/);
  });

  it("masks the tokenizer's special tokens out of the teacher's top-K support (the kernel's excluded vector)", () => {
    const byte = { bosTokenId: 256, eosTokenId: 257, padTokenId: 258 };
    expect(specialTokenIds(byte, 259)).toEqual([256, 257, 258]);
    expect(specialTokenIds({ bosTokenId: null, eosTokenId: 5, padTokenId: 5 }, 10)).toEqual([5]);
    expect(Array.from(excludedVector([1, 3], 5))).toEqual([0, 1, 0, 1, 0]);
    expect(() => excludedVector([7], 5)).toThrow(/outside the vocabulary of 5/);
    const teacher = (mask: boolean): { options: { mask_special_tokens: boolean }; excludedIds?: readonly number[] } => ({ options: { mask_special_tokens: mask } });
    expect(withSpecialTokens(teacher(true), { bosTokenId: null, eosTokenId: 3, padTokenId: 4 }, 5)?.excludedIds).toEqual([3, 4]);
    expect(withSpecialTokens(teacher(false), byte, 259)?.excludedIds).toBeUndefined();
    // The float64 twin's support (ids ascending): EOS (id 3) is the teacher's most likely token; masked, the next one takes its place.
    const problem = { rows: 1, vocab: 5, beta: 1, temperature: 1, topK: 2, student: [0, 0, 0, 0, 0], teacher: [1, 2, 0, 5, 0] };
    expect(distillSupport(problem, 0)).toEqual([1, 3]);
    expect(distillSupport({ ...problem, excludedIds: [3, 4] }, 0)).toEqual([0, 1]);
    expect(() => distill({ mask_special_tokens: true })).toThrow(/needs distillation.top_k/);
    expect(distill({ mask_special_tokens: true, top_k: 4 }).distillation.mask_special_tokens).toBe(true);
  });
});

describe('the EMA teacher', () => {
  it("its float32 update follows the float64 formula over many steps (a drifting policy)", () => {
    let ema32: ArrayLike<number> = Float32Array.from([0.5, -1.25, 3, 1e-3]);
    let ema64: ArrayLike<number> = Float64Array.from(ema32);
    const decay = 0.9;
    for (let t = 0; t < 200; t++) {
      const policy = Float32Array.from([Math.sin(t / 7), Math.cos(t / 5) * 2, 3 - t / 100, 1e-3 * t]);
      ema32 = emaStepF32(ema32, policy, decay);
      ema64 = emaStep64(ema64, policy, decay);
    }
    for (let i = 0; i < 4; i++) expect(Math.abs(ema32[i] - ema64[i]), `value ${i}`).toBeLessThan(1e-5 * Math.max(1, Math.abs(ema64[i])));
  });

  it('is decay^k of the way back to its start under a constant policy, and the policy itself at decay 0', () => {
    let ema: ArrayLike<number> = Float64Array.from([2]);
    for (let k = 0; k < 10; k++) ema = emaStep64(ema, [0], 0.8);
    expect(ema[0]).toBeCloseTo(2 * 0.8 ** 10, 12);
    expect(Array.from(emaStepF32([5, 6], [1, 2], 0))).toEqual([1, 2]);
    expect(() => emaStep64([1], [1, 2], 0.5)).toThrow(/1 teacher values for 2 policy values/);
  });

  it('is loaded for the self teachers with teacher_weights "ema", is refused under LoRA, and counts one more copy of the weights', () => {
    expect(needsEmaTeacher(distill({ teacher_weights: 'ema' }))).toBe(true);
    expect(needsEmaTeacher(distill({ teacher_weights: 'live' }))).toBe(false);
    expect(() => parseGrpoConfig({ use_peft: true, distillation: { teacher: 'self_rubric', teacher_weights: 'ema' } })).toThrow(/the ema teacher is a separate full copy/);
    const policy = { name: 'policy' } as unknown as Transformer;
    const ema = { name: 'ema' } as unknown as Transformer;
    expect(selfTeacherWeights({ model: policy, reference: null, ema }, 'ema')).toBe(ema);
    expect(selfTeacherWeights({ model: policy, reference: null, ema }, 'live')).toBe(policy);
    expect(() => selfTeacherWeights({ model: policy, reference: null }, 'ema')).toThrow(/ema teacher's weights were not loaded/);
    const embedded = JSON.parse(readFileSync('public/models/tiny-gpt2-byte/config.json', 'utf8'));
    const limits = { maxBufferSize: 1 << 30, maxStorageBufferBindingSize: 1 << 30 } as GPUSupportedLimits;
    const plan = (d: Record<string, unknown>) => planMemory(embedded, ['Describe the sea.'], parseGrpoConfig({ max_completion_length: 32, distillation: { teacher: 'self_rubric', ...d } }), limits, undefined, [{ text: 'Names a colour', weight: 1 } as never]).estimate;
    const live = plan({ teacher_weights: 'live' });
    const withEma = plan({ teacher_weights: 'ema' });
    expect(withEma.referenceModel - live.referenceModel).toBe(live.weights);
    expect(withEma.total).toBeGreaterThan(live.total);
  });
});

describe('the modes in settings, exports and charts', () => {
  const step = (s: number, schedule: StepMetrics['schedule']): StepMetrics => ({ ...storeMetrics(s), schedule });
  const steps = [step(0, { phase: 'sft', on_policy: null, sft_kept: 3 }), step(1, { phase: 'sft', on_policy: null, sft_kept: 5 }), step(2, { phase: 'rl', on_policy: null, sft_kept: null })];

  it('writes the phase, who sampled and RuFT\'s kept rollouts to CSV and run files', () => {
    expect(metricColumns(steps)).toEqual(expect.arrayContaining(['schedule/phase', 'schedule/on_policy', 'schedule/sft_kept']));
    const csv = metricsToCsv(steps).trim().split(/\r?\n/);
    const at = csv[0].split(',').indexOf('schedule/phase');
    expect(csv.slice(1).map((l) => l.split(',')[at])).toEqual(['sft', 'sft', 'rl']);
    expect(metricColumns([storeMetrics(0)])).not.toContain('schedule/phase');
  });

  it('marks the first step of each phase on a schedule chart', () => {
    expect(phaseMarkers(steps)).toEqual([
      { x: 0, label: 'rejection-sampling SFT from step 1' },
      { x: 2, label: 'GRPO from step 3' },
    ]);
    const chart = buildCharts(steps, [], 0).find((c) => c.id === 'schedule')!;
    expect(chart.note).toContain('The last step was in its GRPO phase.');
    expect(chart.ys[0].slice(0, 2)).toEqual([3, 5]);
    expect(buildCharts([storeMetrics(0)], [], 0).some((c) => c.id === 'schedule')).toBe(false);
  });

  it('sets nested schedule settings at any depth', () => {
    const c = setPath({ distillation: { teacher: 'self_rubric' } }, 'distillation.schedule.kind', 'ruft');
    expect(c).toEqual({ distillation: { teacher: 'self_rubric', schedule: { kind: 'ruft' } } });
    expect(getPath(c, 'distillation.schedule.kind')).toBe('ruft');
    expect(setPath(c, 'distillation.schedule.kind', undefined)).toEqual({ distillation: { teacher: 'self_rubric' } });
    expect(parseGrpoConfig(c).distillation.schedule).toEqual({ kind: 'ruft', distill_steps: 10, sft_steps: 10, min_reward: 1 });
  });

  it('names lmbda in the GKD line of the TRL export and says what TRL lacks', async () => {
    const experiment = (distillation: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, max_steps: 20, distillation } });
    const pure = await exportToTrl(experiment({ teacher: 'self_rubric', mode: 'pure', lmbda: 0.25, teacher_weights: 'ema', top_k: 8, mask_special_tokens: true, top_entropy_quantile: 0.2 }));
    const script = pure.files['train_grpo.py'];
    expect(script).toMatch(/GKDConfig\(lmbda=0\.25, beta=0\.5/);
    expect(script).toContain('distillation top_entropy_quantile 0.2: GKDTrainer distils every completion token; not applied');
    expect(script).toContain('distillation mask_special_tokens');
    expect(script).toContain('teacher_weights "ema" (ema_decay 0.99)');
    const ruft = (await exportToTrl(experiment({ schedule: { kind: 'ruft', sft_steps: 3, min_reward: 0.75 } }))).files['train_grpo.py'];
    expect(ruft).toContain('schedule ruft (sft_steps 3, min_reward 0.75)');
    const then = (await exportToTrl(experiment({ teacher: 'self_rubric', schedule: { kind: 'distill_then_rl', distill_steps: 4 } }))).files['train_grpo.py'];
    expect(then).toContain('GKDTrainer for 4 steps, then this GRPO script');
  });

  it('keeps the schedule in a run file (read back as written)', async () => {
    const back = await readRunFile(await runFileJson({ name: 'r', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [storeMetrics(5), ...steps], rollouts: [] }));
    expect(back.metrics.map((m) => m.schedule)).toEqual([undefined, ...steps.map((m) => m.schedule)]);
  });
});
