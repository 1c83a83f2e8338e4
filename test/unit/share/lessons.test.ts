// The lessons: every one a valid experiment and a working link, and each one's rubric and
// settings actually showing what its text claims (checked with the real judge and aggregations).
import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { essentialGated, judgeWithRules, scoresOf, strictAllRequired, weightedMean, type Rubric } from '../../../src/rubric';
import { CONTROL_IDS, decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { CLEAN_HELD_OUT_RUBRIC, LENGTH_BIAS, LENIENT_BIAS, LESSONS, lessonById } from '../../../src/share/lessons';
import { applyBias } from '../../../src/rubric/bias';
import { exploitFindings, runAdversarialProbe } from '../../../src/rubric/adversarial';
import { criterionDiagnostics } from '../../../src/rl/credit/criteria';
import methodsExperiment from '../../../scripts/experiments/methods.experiment.json';
import { checkLeakage } from '../../../src/rubric/leakage';
import { lintRubric } from '../../../src/rubric/lint';

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
    expect(new Set(LESSONS.map((l) => l.number))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8]));
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

  // The embedded model is byte-level: one token per ASCII character, so max_completion_length
  // tokens hold at most ceil(L / 2) one-letter words. A "at least n words" rule needs 2n − 1
  // characters; an "at most n words" rule can only fail when more than n words fit (issue 16: a
  // 25-word minimum in 48 characters was unreachable, a 20-word maximum always met).
  it.each(LESSONS.map((l) => [l.id, l] as const))('%s: every word-count rule can pass and fail within the completion length', (_id, lesson) => {
    const { rubric, heldOutRubric, config } = parseExperiment(lesson.shared.experiment);
    const L = config.max_completion_length;
    let checked = 0;
    for (const c of [...rubric.criteria, ...(heldOutRubric?.criteria ?? [])]) {
      const rule = ('rule' in c ? c.rule : undefined) as { kind: string; unit?: string; min?: number; max?: number } | undefined;
      if (rule?.kind !== 'length' || rule.unit !== 'words') continue;
      checked++;
      if (rule.min !== undefined) expect(2 * rule.min - 1, `${c.id} min`).toBeLessThanOrEqual(L);
      if (rule.max !== undefined) expect(rule.max, `${c.id} max`).toBeLessThan(Math.ceil(L / 2));
    }
    // Lessons 1–4 all have word-count rules (the check above is not empty for them).
    if (lesson.number <= 4) expect(checked).toBeGreaterThan(0);
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
  // Answers the embedded model can write within the lesson's 40 characters (byte-level: one token
  // per ASCII character), like the ones it samples: a rambling one cut off at the limit, a short one.
  const hacked = 'It is a great sea and it is so big and';
  const clean = 'The sea is salty.';

  /** The trained (proxy) reward's expectation over the bias's draws: the mean over 400 seeds of the biased weighted mean. */
  function expectedProxy(id: string, completion: string): number {
    const { rubric, judgeBias } = parsed(id);
    const results = judgeWithRules(rubric, 'p', completion);
    let sum = 0;
    for (let seed = 0; seed < 400; seed++) sum += weightedMean(rubric, scoresOf(rubric, applyBias(rubric, [results], [completion], judgeBias, { seed, step: 0 })[0]))!;
    return sum / 400;
  }

  it('the answers fit the lesson\'s completion length', () => {
    const { config } = parsed('reward-hacking');
    expect(hacked.length).toBeLessThanOrEqual(config.max_completion_length);
    expect(clean.length).toBeLessThanOrEqual(config.max_completion_length);
  });

  it('the bias is a declared judge wrapper over an honest rubric; gold is that rubric judged clean', () => {
    const { rubric, heldOutRubric, judgeBias } = parsed('reward-hacking');
    expect(judgeBias).toEqual(LENGTH_BIAS);
    expect(rubric.criteria).toEqual(heldOutRubric!.criteria);
    expect(lessonById('reward-hacking')!.shared.experiment.held_out_rubric).toEqual(CLEAN_HELD_OUT_RUBRIC);
    // "at most 7 words" (the essential) is judged honestly: gating acts on a verdict the bias never touches.
    const essential = rubric.criteria.filter((c) => c.tier === 'essential').map((c) => c.id);
    expect(essential).toEqual(['concise']);
    expect(judgeBias!.criteria).not.toContain('concise');
  });

  it('the biased judge prefers the hacked answer on average; the gold judge prefers the clean one', () => {
    const { heldOutRubric } = parsed('reward-hacking');
    expect(expectedProxy('reward-hacking', hacked)).toBeGreaterThan(expectedProxy('reward-hacking', clean) + 0.03);
    expect(weightedMean(heldOutRubric!, score(heldOutRubric!, hacked))!).toBeLessThan(weightedMean(heldOutRubric!, score(heldOutRubric!, clean))!);
  });

  it('essential gating takes the length loophole away', () => {
    const { rubric, config, judgeBias } = parsed('reward-hacking-gated');
    expect(config.reward_aggregation.method).toBe('essential_gated');
    const cap = config.reward_aggregation.gate_cap ?? 0;
    for (let seed = 0; seed < 50; seed++) {
      const biased = applyBias(rubric, [judgeWithRules(rubric, 'p', hacked)], [hacked], judgeBias, { seed, step: 0 })[0];
      expect(essentialGated(rubric, scoresOf(rubric, biased), { cap })).toBe(cap);
    }
    expect(essentialGated(rubric, score(rubric, clean), { cap })!).toBeGreaterThan(cap);
  });

  it('the variants differ only in the aggregation', () => {
    expect(configDiff('reward-hacking', 'reward-hacking-gated')).toEqual(['reward_aggregation']);
    expect(configDiff('reward-hacking', 'reward-hacking-dropout')).toEqual(['reward_aggregation']);
    expect(parsed('reward-hacking-dropout').config.reward_aggregation).toEqual({ method: 'rubric_dropout', dropout_p: 0.5 });
    for (const id of ['reward-hacking-gated', 'reward-hacking-dropout']) expect(parsed(id).judgeBias).toEqual(LENGTH_BIAS);
  });

  it('the onset lesson is the plain experiment, read for its onset', () => {
    expect(lessonById('hacking-onset')!.shared.experiment).toEqual(lessonById('reward-hacking')!.shared.experiment);
  });

  it('the vacuous-credit lesson: a lenient judge over the same rubric, and the adversarial probe flags its word-list criteria', async () => {
    const { rubric, judgeBias, heldOutRubric } = parsed('vacuous-credit');
    expect(judgeBias).toEqual(LENIENT_BIAS);
    expect(judgeBias!.kind).toBe('leniency');
    expect(heldOutRubric!.criteria).toEqual(rubric.criteria);
    // Leniency credits an answer with nothing in it: the empty answer passes "vivid" under some draws.
    const empty = judgeWithRules(rubric, 'p', '');
    const passes = Array.from({ length: 100 }, (_, seed) => applyBias(rubric, [empty], [''], judgeBias, { seed, step: 0 })[0].find((r) => r.criterion_id === 'vivid')!.score);
    expect(passes.filter((s) => s === 1).length).toBeGreaterThan(30);
    expect(passes.filter((s) => s === 1).length).toBeLessThan(70);
    // The rubric check's probe (rules only, as the page runs it): keyword stuffing earns both content criteria.
    const report = await runAdversarialProbe(rubric, 'lint', { prompt: 'Describe the sea.' });
    // The counts the lesson's guidance quotes.
    expect(report.by_criterion.filter((c) => c.exploited > 0).map((c) => [c.criterion_id, c.exploited, c.judged])).toEqual([
      ['vivid', 1, 6],
      ['reader', 5, 6],
    ]);
    expect(lessonById('vacuous-credit')!.shared.lesson!.guidance).toContain('1 of 6 earns "vivid"');
    expect(exploitFindings(rubric, report).map((f) => f.criterion)).toEqual([3, 4]);
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

describe('lesson 5: which tokens earned the reward?', () => {
  it('spreads the advantage by evidence spans and CoRT, one update per batch, and shows those settings', () => {
    const { config } = parsed('token-credit');
    expect(config.span_credit).toBeGreaterThan(0);
    expect(config.cort_credit).toBe(true);
    expect(config.importance_sampling_level).toBe('token');
    const hidden = lessonById('token-credit')!.shared.lesson!.hidden_controls;
    for (const c of ['span_credit', 'cort_credit', 'cort_weight_min', 'cort_weight_max']) expect(hidden).not.toContain(c);
    expect(hidden).toContain('scaffold_fraction');
  });

  it('its criteria point at a few characters of an answer the model wrote (the spans the heatmap colours)', () => {
    const { rubric } = parsed('token-credit');
    const answer = 'Life is better with it. It makes'; // sampled in the lesson's run
    const results = judgeWithRules(rubric, 'p', answer);
    const spanOf = (id: string) => {
      const r = results.find((x) => x.criterion_id === id)!;
      return r.status === 'ok' ? r.spans : undefined;
    };
    expect(spanOf('is')).toEqual([{ start: 5, end: 7 }]);
    expect(spanOf('stop')).toEqual([{ start: 22, end: 23 }]);
    // An answer meeting none of them has no span: its tokens keep an even share.
    expect(judgeWithRules(rubric, 'p', 'Read a little about cooking befo').filter((r) => r.status === 'ok' && r.spans && r.score >= 0.5)).toEqual([]);
  });

  it('is small: 2 prompts × 4 answers of at most 32 tokens per step', () => {
    const { config } = parsed('token-credit');
    expect(config.generation_batch_size).toBe(8);
    expect(config.max_completion_length).toBeLessThanOrEqual(32);
  });
});

describe('lesson 6: unexplored criteria', () => {
  it('is the methods comparison\'s rubric and sizes with rubric scaffolding on (its text quotes those runs)', () => {
    const { rubric, config } = parsed('unexplored-criteria');
    const measured = parseExperiment(methodsExperiment);
    expect(rubric.criteria).toEqual(measured.rubric.criteria);
    for (const k of ['num_generations', 'generation_batch_size', 'max_completion_length', 'learning_rate', 'loss_type'] as const) expect(config[k], k).toEqual(measured.config[k]);
    expect(Math.floor(config.scaffold_fraction * config.num_generations)).toBe(2);
    const hidden = lessonById('unexplored-criteria')!.shared.lesson!.hidden_controls;
    for (const c of ['scaffold_fraction', 'scaffold_prob_start', 'scaffold_decay_steps', 'cripo_flip']) expect(hidden).not.toContain(c);
  });

  it('a group of answers like the model\'s leaves criteria unexplored, and a met criterion with a negative advantage is suppressed', () => {
    const { rubric } = parsed('unexplored-criteria');
    const answers = ['The sea is big.', 'The small animals live', 'Read a little about it', 'Honestly, it is amazing.'];
    const scored = answers.map((a) => scoresOf(rubric, judgeWithRules(rubric, 'p', a)));
    const rewards = scored.map((s) => weightedMean(rubric, s)!);
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const d = criterionDiagnostics(rubric.criteria, scored.map((scores, i) => ({ group: 0, advantage: rewards[i] - mean, scores, reward: rewards[i] })), 1, 0.5);
    expect(d.unexplored[0]).toEqual(['you']);
    // "The small animals live" meets "the" alone: below the group mean, so "the" is suppressed there.
    expect(d.suppressed[1]).toEqual(['the']);
  });
});

describe('lesson 8: is my rubric any good?', () => {
  const lesson = () => parsed('rubric-quality');

  it('the rubric check finds leakage in on_topic and complete: each prompt restated meets them (the prompts end with a full stop)', async () => {
    const { rubric, experiment } = lesson();
    const { rows, findings } = await checkLeakage(rubric, 'v', experiment.prompts);
    expect(findings.map((f) => f.criterion)).toEqual([1, 4]);
    expect(rows.find((r) => r.criterion === 1)).toEqual({ criterion: 1, met: experiment.prompts.length, judged: experiment.prompts.length });
    // Its other problems are invisible to the static check: no finding names them.
    expect(lintRubric(rubric)).toEqual([]);
  });

  it('brief is met by most answers of the lesson\'s length; finished and complete agree on every ending but "!" and "?"', () => {
    const { rubric } = lesson();
    const at = (id: string, text: string) => score(rubric, text)[rubric.criteria.findIndex((c) => c.id === id)];
    for (const text of ['The sea is salty.', 'It is a great sea and it is so big and', 'The moon is a big round rock in the sky'])
      expect(at('brief', text)).toBe(1);
    expect(at('brief', 'a b c d e f g h i j k l m n o p q r s')).toBe(0);
    for (const text of ['The sea is salty.', 'The sea is salty', 'Rain falls. It is wet. ', 'Trees grow'])
      expect(at('finished', text)).toBe(at('complete', text));
    expect([at('finished', 'Is it?'), at('complete', 'Is it?')]).toEqual([0, 1]);
  });
});
