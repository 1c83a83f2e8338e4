// The lessons: every one a valid experiment and a working link, and each one's rubric and
// settings actually showing what its text claims (checked with the real judge and aggregations).
import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { essentialGated, judgeWithRules, scoresOf, strictAllRequired, weightedMean, type Rubric } from '../../../src/rubric';
import { CONTROL_IDS, decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { CLEAN_HELD_OUT_RUBRIC, LESSONS, lessonById } from '../../../src/share/lessons';

const parsed = (id: string) => parseExperiment(lessonById(id)!.shared.experiment);
const score = (rubric: Rubric, completion: string) => scoresOf(rubric, judgeWithRules(rubric, 'p', completion));

/** The settings two lessons differ in. */
function configDiff(a: string, b: string): string[] {
  const ca = parsed(a).config as Record<string, unknown>;
  const cb = parsed(b).config as Record<string, unknown>;
  return Object.keys(ca).filter((k) => JSON.stringify(ca[k]) !== JSON.stringify(cb[k]));
}

describe('every lesson', () => {
  it('covers the four lessons of the issue, with unique ids', () => {
    expect(new Set(LESSONS.map((l) => l.number))).toEqual(new Set([1, 2, 3, 4]));
    expect(new Set(LESSONS.map((l) => l.id)).size).toBe(LESSONS.length);
  });

  it.each(LESSONS.map((l) => [l.id, l] as const))('%s is a valid experiment and a working share link', (id, lesson) => {
    const { experiment, rubric, config } = parseExperiment(lesson.shared.experiment);
    expect(rubric.criteria.length).toBeGreaterThan(0);
    expect(config.generation_batch_size % config.num_generations).toBe(0);
    expect(experiment.prompts.length * config.num_generations).toBeGreaterThanOrEqual(config.generation_batch_size);
    expect(lesson.shared.lesson?.id).toBe(id);
    expect(lesson.shared.lesson!.guidance.length).toBeGreaterThan(50);
    expect(lesson.explanation.length).toBeGreaterThan(100);
    for (const c of lesson.shared.lesson!.hidden_controls) expect(CONTROL_IDS).toContain(c);
    expect(decodeShareLink(encodeShareLink(lesson.shared))).toEqual(lesson.shared);
    for (const other of lesson.compare_with) {
      expect(lessonById(other)?.number).toBe(lesson.number);
      expect(lessonById(other)!.compare_with).toContain(id);
    }
  });

  it('each lesson has its own copy of shared constants', () => {
    const a = lessonById('reward-hacking')!.shared.experiment;
    const b = lessonById('reward-hacking-gated')!.shared.experiment;
    (a.rubric as { name: string }).name = 'edited';
    a.prompts.push('edited');
    expect((b.rubric as { name: string }).name).not.toBe('edited');
    expect(b.prompts).not.toContain('edited');
    (a.rubric as { name: string }).name = (b.rubric as { name: string }).name;
    a.prompts.pop();
  });

  it('does not hide the settings it is about', () => {
    expect(lessonById('zero-variance')!.shared.lesson!.hidden_controls).not.toContain('scale_rewards');
    expect(lessonById('clipping')!.shared.lesson!.hidden_controls).not.toContain('epsilon_high');
    expect(lessonById('reward-hacking')!.shared.lesson!.hidden_controls).not.toContain('reward_aggregation');
    expect(lessonById('grpo-basics')!.shared.lesson!.hidden_controls).not.toContain('num_generations');
  });
});

describe('lesson 2: reward hacking', () => {
  const hacked = 'This is a great, great, amazing and wonderful answer that keeps going with many more words so the judge thinks it is very detailed.';
  const clean = 'The sea is wide and salty.';

  it('the biased judge prefers the hacked answer; the held-out clean judge prefers the clean one', () => {
    const { rubric, heldOutRubric } = parsed('reward-hacking');
    expect(heldOutRubric).not.toBeNull();
    expect(weightedMean(rubric, score(rubric, hacked))!).toBeGreaterThan(weightedMean(rubric, score(rubric, clean))!);
    expect(weightedMean(heldOutRubric!, score(heldOutRubric!, hacked))!).toBeLessThan(weightedMean(heldOutRubric!, score(heldOutRubric!, clean))!);
    expect(lessonById('reward-hacking')!.shared.experiment.held_out_rubric).toEqual(CLEAN_HELD_OUT_RUBRIC);
  });

  it('essential gating takes the length loophole away', () => {
    const { rubric, config } = parsed('reward-hacking-gated');
    expect(config.reward_aggregation.method).toBe('essential_gated');
    const cap = config.reward_aggregation.gate_cap ?? 0;
    expect(essentialGated(rubric, score(rubric, hacked), { cap })).toBe(cap);
    expect(essentialGated(rubric, score(rubric, clean), { cap })!).toBeGreaterThan(cap);
  });

  it('the variants differ only in the aggregation', () => {
    expect(configDiff('reward-hacking', 'reward-hacking-gated')).toEqual(['reward_aggregation']);
    expect(configDiff('reward-hacking', 'reward-hacking-dropout')).toEqual(['reward_aggregation']);
    expect(parsed('reward-hacking-dropout').config.reward_aggregation).toEqual({ method: 'rubric_dropout', dropout_p: 0.5 });
  });
});

describe('lesson 3: zero-variance groups', () => {
  it('all-or-nothing rewards: a group of equal outcomes has zero std', () => {
    const { rubric, config } = parsed('zero-variance');
    expect(config.reward_aggregation.method).toBe('strict_all_required');
    const rewards = ['Is it big?', 'It is big.', 'Tell me, is the sea very very very big and wide and blue and deep?', 'Blue?'].map((c) =>
      strictAllRequired(rubric, score(rubric, c)),
    );
    expect(rewards).toEqual([1, 0, 0, 1]);
    expect(config.num_generations).toBe(4);
  });

  it('the pair differs only in scale_rewards', () => {
    expect(configDiff('zero-variance', 'zero-variance-none')).toEqual(['scale_rewards']);
    expect(parsed('zero-variance').config.scale_rewards).toBe('group');
    expect(parsed('zero-variance-none').config.scale_rewards).toBe('none');
  });
});

describe('lesson 4: clipping', () => {
  it('several updates per batch, so the ratio can leave 1 and clip', () => {
    expect(parsed('clipping').config.num_iterations).toBeGreaterThan(1);
    expect(parsed('clipping').config.epsilon_high).toBe(0.28);
    expect(parsed('clipping-symmetric').config.epsilon_high).toBeNull();
    expect(configDiff('clipping', 'clipping-symmetric')).toEqual(['epsilon_high']);
  });
});

describe('lesson 1: basics', () => {
  it('runs on the embedded model with the default advantage settings', () => {
    const { experiment, config } = parsed('grpo-basics');
    expect(experiment.model).toBe('embedded/tiny-gpt2-byte');
    expect(config.scale_rewards).toBe('group');
    expect(config.num_iterations).toBe(1);
  });
});
