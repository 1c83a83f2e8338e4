// The glossary covers the words the page shows: every chart title and legend label, every TRL
// option the settings show (there, its own help counts), every loss type; its lessons exist;
// and lesson texts name metrics the way the charts do.
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { GRPO_DEFAULTS } from '../../../src/rl/config';
import { GLOSSARY, chartTerms, chartTipText, glossaryEntry } from '../../../src/share/glossary';
import { TRY_THIS } from '../../../src/share/lessonPath';
import { LESSONS, lessonById } from '../../../src/share/lessons';
import { ALL_OPTIONS } from '../../../src/ui/lib/settingsCatalog';
import { buildCharts } from '../../../src/ui/lib/series';

/** Legend words that are plain statistics of the chart's own quantity, not terms. */
const PLAIN_LABELS = new Set(['mean', 'min', 'max', 'sampling', 'training']);
const CRITERIA = ['crit-a', 'crit-b'];

/** One step with every optional part present, so every chart the page can draw is built. */
function everyChart() {
  const rewards = { reward: 0.5, reward_std: 0.2, strict_completion_rate: 0.4, criterion_pass_rate: { 'crit-a': 0.5, 'crit-b': 0.25 } };
  const step = {
    step: 0,
    rewards,
    held_out: rewards,
    completions: { mean_length: 10, min_length: 2, max_length: 20 },
    exploration: { generation_rounds: 2, extra_sampled_tokens: 10, sampled_tokens: 50, scaffold_prob: 0.5, scaffold_logprob_gap: 0.3 },
    frac_reward_zero_std: 0.25,
    unexplored_criteria: 1,
    suppressed_criteria: 0,
    distillation: { divergence: 0.3, top1_agreement: 0.5, retained_tokens: 10, completion_tokens: 12, loss: 0.25 },
    schedule: { phase: 'sft', on_policy: false, sft_kept: 3 },
    kl: 0.01,
    entropy: 2,
    clip_ratio_low: 0.01,
    clip_ratio_high: 0.02,
    clip_ratio_region: 0.03,
    sampling_tokens_per_second: 100,
    training_tokens_per_second: 200,
  } as unknown as StepMetrics;
  return buildCharts([step], CRITERIA, 0);
}

const words = (text: string) => text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? [];
// A nested setting (distillation.teacher_weights) is named in lesson texts by its last part.
const settingKeys = new Set(ALL_OPTIONS.flatMap((o) => [o.key.replace(/^reward_aggregation\./, ''), o.key.split('.').pop()!]));

describe('the glossary', () => {
  it('has unique terms and one plain line each', () => {
    expect(new Set(GLOSSARY.map((e) => e.term)).size).toBe(GLOSSARY.length);
    for (const e of GLOSSARY) {
      expect(e.definition.length, e.term).toBeGreaterThan(20);
      expect(e.definition.length, e.term).toBeLessThan(180);
      expect(e.definition, e.term).not.toMatch(/\n/);
    }
  });

  it('points only at lessons that exist', () => {
    for (const e of GLOSSARY) if (e.lesson) expect(lessonById(e.lesson), `${e.term} → ${e.lesson}`).toBeDefined();
  });

  it('gives each word one meaning (no word is two terms)', () => {
    const seen = new Map<string, string>();
    for (const e of GLOSSARY) for (const w of [e.term, ...(e.shown_as ?? [])]) {
      const key = w.toLowerCase();
      expect(seen.get(key) ?? e.term, `"${w}"`).toBe(e.term);
      seen.set(key, e.term);
    }
  });

  it('explains every chart title and legend label', () => {
    const charts = everyChart();
    expect(charts.map((c) => c.id)).toEqual(expect.arrayContaining(['reward', 'strict', 'clip', 'dynamic-sampling', 'scaffold', 'criteria-diagnostics', 'distillation', 'schedule']));
    for (const chart of charts) {
      expect(glossaryEntry(chart.title), `chart title "${chart.title}"`).toBeDefined();
      for (const line of chart.lines) {
        if (CRITERIA.includes(line.label) || PLAIN_LABELS.has(line.label)) continue;
        expect(glossaryEntry(line.label), `legend "${line.label}" of "${chart.title}"`).toBeDefined();
      }
      expect(chartTipText(chart.title, chart.lines.map((l) => l.label))).toContain(glossaryEntry(chart.title)!.definition);
    }
  });

  it('gives a chart\'s tooltip each of its terms once, title first', () => {
    const clip = everyChart().find((c) => c.id === 'clip')!;
    expect(chartTerms(clip.title, clip.lines.map((l) => l.label)).map((e) => e.term)).toEqual(['clip ratio', 'clip_ratio_low', 'clip_ratio_high', 'clip_ratio_region']);
    const reward = everyChart().find((c) => c.id === 'reward')!;
    expect(chartTerms(reward.title, reward.lines.map((l) => l.label)).map((e) => e.term)).toEqual(['reward', 'held-out reward', 'reward_std']);
  });

  it('covers every TRL option of GRPO_DEFAULTS the settings show: by its own help there, or an entry here', () => {
    const missing = Object.keys(GRPO_DEFAULTS).filter((key) => {
      const shown = ALL_OPTIONS.filter((o) => o.key === key || o.key.startsWith(`${key}.`));
      if (shown.length === 0) return false; // not a setting the page shows
      return !(shown.every((o) => o.help.trim().length > 10) || glossaryEntry(key));
    });
    expect(missing).toEqual([]);
    // And the page shows the options the lessons are about.
    for (const key of ['beta', 'epsilon', 'epsilon_high', 'num_iterations', 'num_generations', 'scale_rewards', 'loss_type']) {
      expect(ALL_OPTIONS.some((o) => o.key === key), key).toBe(true);
      expect(glossaryEntry(key)?.kind, key).toBe('setting');
    }
  });

  it('explains every loss type the settings offer', () => {
    const lossTypes = ALL_OPTIONS.find((o) => o.key === 'loss_type')!.values!;
    for (const v of lossTypes) expect(glossaryEntry(v)?.kind, v).toBe('loss type');
  });

  it('knows every TRL name the lesson texts use, and the metrics among them are what the charts say', () => {
    const chartWords = new Set(everyChart().flatMap((c) => [c.title, ...c.lines.map((l) => l.label)]).map((w) => w.toLowerCase()));
    for (const lesson of LESSONS) {
      const text = [lesson.explanation, lesson.shared.lesson!.guidance, TRY_THIS[lesson.id] ?? ''].join(' ');
      // A lesson's own criterion ids are names it defines, not TRL names.
      const experiment = lesson.shared.experiment as { rubric?: { criteria?: { id: string }[] }; held_out_rubric?: { criteria?: { id: string }[] } };
      const criterionIds = new Set([...(experiment.rubric?.criteria ?? []), ...(experiment.held_out_rubric?.criteria ?? [])].map((c) => c.id));
      for (const w of words(text)) {
        if (criterionIds.has(w)) continue;
        const entry = glossaryEntry(w);
        // A setting's own help explains it; a rubric aggregation's name is a value of one.
        if (!entry && settingKeys.has(w)) continue;
        expect(entry, `"${w}" in lesson ${lesson.id}`).toBeDefined();
        if (entry!.kind === 'metric') expect(chartWords.has(w), `metric ${w} (lesson ${lesson.id}) is not written so on any chart`).toBe(true);
      }
    }
  });
});
