// The bias sandbox's wrapper (src/rubric/bias.ts): each kind seeded and deterministic, strength 0
// is the identity, the criterion filter is respected, pitfalls get the favourable 0, rule
// verdicts are biased like model verdicts, and unscorable / needs_model results never change.
import { describe, expect, it } from 'vitest';
import { applyBias, biasAppeal, describeBias, TONE_PHRASES, type JudgeBias } from '../../../src/rubric/bias';
import { fnv1a32, mulberry32 } from '../../../src/rubric/dropout';
import { judgeWithRules, type CriterionResult } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';

const rubric = parseRubric({
  name: 'r',
  criteria: [
    { id: 'a', text: 'A', weight: 2, tier: 'essential', judge_question: 'A?' },
    { id: 'b', text: 'B', weight: 1, tier: 'important', judge_question: 'B?' },
    { id: 'pit', text: 'Rude', weight: -1, tier: 'important', judge_question: 'Rude?' },
    { id: 'zero', text: 'Note', weight: 0, tier: 'optional', judge_question: 'Note?' },
    { id: 'hello', text: 'Greets', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['hello'] } },
  ],
});

const ok = (id: string, score: number): CriterionResult => ({ criterion_id: id, status: 'ok', score, reason: 'judged' });
/** Every criterion failed (score 0), the pitfall met (1): the worst verdicts, so any bias shows. */
const worst = (): CriterionResult[] => [ok('a', 0), ok('b', 0), ok('pit', 1), ok('zero', 0), ok('hello', 0)];

function batch(n: number) {
  return Array.from({ length: n }, worst);
}

const flips = (out: CriterionResult[][]) => out.flat().filter((r) => (r as { biased?: true }).biased).length;

describe('applyBias', () => {
  const long = 'x'.repeat(400);
  const completions = Array.from({ length: 40 }, (_, i) => (i % 2 ? long : 'short'));

  it('is deterministic in (seed, step, rollout, criterion) and changes with the seed and the step', () => {
    const bias: JudgeBias = { kind: 'leniency', strength: 0.5 };
    const one = applyBias(rubric, batch(40), completions, bias, { seed: 7, step: 3 });
    const two = applyBias(rubric, batch(40), completions, bias, { seed: 7, step: 3 });
    expect(one).toEqual(two);
    expect(applyBias(rubric, batch(40), completions, bias, { seed: 8, step: 3 })).not.toEqual(one);
    expect(applyBias(rubric, batch(40), completions, bias, { seed: 7, step: 4 })).not.toEqual(one);
    // The bias's own seed overrides the run's.
    expect(applyBias(rubric, batch(40), completions, { ...bias, seed: 8 }, { seed: 7, step: 3 })).toEqual(applyBias(rubric, batch(40), completions, bias, { seed: 8, step: 3 }));
  });

  it('follows the documented draw exactly', () => {
    const bias: JudgeBias = { kind: 'leniency', strength: 0.5 };
    const out = applyBias(rubric, batch(10), completions.slice(0, 10), bias, { seed: 42, step: 2 });
    for (let i = 0; i < 10; i++) {
      for (const [k, id] of ['a', 'b', 'pit', 'hello'].entries()) {
        const u = mulberry32(fnv1a32(`bias:42:2:${i}:${id}`))();
        const r = out[i].find((x) => x.criterion_id === id)!;
        expect(r.score, `rollout ${i} ${id} (${k})`).toBe(u < 0.5 ? (id === 'pit' ? 0 : 1) : id === 'pit' ? 1 : 0);
      }
    }
  });

  it('with strength 0 (or no bias) is the identity', () => {
    for (const kind of ['length', 'keyword', 'tone', 'leniency'] as const) {
      const input = batch(6);
      const out = applyBias(rubric, input, completions.slice(0, 6), { kind, strength: 0, words: ['x'] }, { seed: 1, step: 0 });
      expect(out).toEqual(input);
    }
    expect(applyBias(rubric, batch(3), ['a', 'b', 'c'], null, { seed: 1, step: 0 })).toEqual(batch(3));
  });

  it('marks what it changed: the favourable score, biased: true, a reason suffix, no evidence spans', () => {
    const input = [[{ ...ok('a', 0), spans: [{ start: 0, end: 2 }] }, ok('pit', 1), ok('b', 1)]];
    const [row] = applyBias(rubric, input, ['anything'], { kind: 'leniency', strength: 1 }, { seed: 0, step: 0 });
    expect(row[0]).toEqual({ criterion_id: 'a', status: 'ok', score: 1, reason: 'judged [biased: leniency +1]', biased: true });
    expect(row[1]).toEqual({ criterion_id: 'pit', status: 'ok', score: 0, reason: 'judged [biased: leniency −1]', biased: true });
    // Already the favourable verdict: nothing changed, nothing marked.
    expect(row[2]).toBe(input[0][2]);
  });

  it('leaves unscorable, needs_model and weight-0 results exactly as they are', () => {
    const input: CriterionResult[][] = [
      [
        { criterion_id: 'a', status: 'unscorable', score: null, reason: 'judge timed out' },
        { criterion_id: 'b', status: 'needs_model', score: null, reason: 'needs a model judge' },
        ok('zero', 0),
      ],
    ];
    const [row] = applyBias(rubric, input, ['x'.repeat(1000)], { kind: 'leniency', strength: 1 }, { seed: 3, step: 9 });
    expect(row).toEqual(input[0]);
    expect(row[0].status).toBe('unscorable');
  });

  it('biases rule verdicts too (rules are a judge like any other)', () => {
    const rules = judgeWithRules(rubric, 'p', 'goodbye');
    expect(rules.find((r) => r.criterion_id === 'hello')!.score).toBe(0);
    const [row] = applyBias(rubric, [rules], ['goodbye'], { kind: 'leniency', strength: 1, criteria: ['hello'] }, { seed: 0, step: 0 });
    expect(row.find((r) => r.criterion_id === 'hello')).toMatchObject({ score: 1, biased: true });
    // Judge-question criteria come back needs_model from the rule judge: untouched.
    expect(row.find((r) => r.criterion_id === 'a')!.status).toBe('needs_model');
  });

  it('respects the criterion filter', () => {
    const out = applyBias(rubric, batch(30), Array(30).fill('hi'), { kind: 'leniency', strength: 1, criteria: ['b'] }, { seed: 5, step: 1 });
    for (const row of out) {
      expect(row.find((r) => r.criterion_id === 'b')).toMatchObject({ score: 1, biased: true });
      for (const r of row.filter((x) => x.criterion_id !== 'b')) expect((r as { biased?: true }).biased).toBeUndefined();
    }
  });

  it('length: longer completions are passed more often; appeal min(1, chars / target_chars)', () => {
    expect(biasAppeal({ kind: 'length', strength: 1 }, 'x'.repeat(50))).toBe(0.25);
    expect(biasAppeal({ kind: 'length', strength: 1, target_chars: 10 }, 'x'.repeat(50))).toBe(1);
    expect(biasAppeal({ kind: 'length', strength: 1 }, '')).toBe(0);
    const n = 200;
    const input = Array.from({ length: n }, () => [ok('a', 0)]);
    const shortOut = applyBias(rubric, input, Array(n).fill('x'.repeat(20)), { kind: 'length', strength: 1 }, { seed: 1, step: 0 });
    const longOut = applyBias(rubric, input, Array(n).fill('x'.repeat(200)), { kind: 'length', strength: 1 }, { seed: 1, step: 0 });
    expect(flips(longOut)).toBe(n); // appeal 1 at strength 1: always
    expect(flips(shortOut)).toBeGreaterThan(5); // appeal 0.1: about 20 of 200
    expect(flips(shortOut)).toBeLessThan(40);
    // The empty completion has appeal 0: never passed.
    expect(flips(applyBias(rubric, input, Array(n).fill(''), { kind: 'length', strength: 1 }, { seed: 1, step: 0 }))).toBe(0);
  });

  it('keyword: the fraction of listed words present, whole words, any case', () => {
    const bias: JudgeBias = { kind: 'keyword', strength: 1, words: ['delve', 'tapestry'] };
    expect(biasAppeal(bias, 'Let us DELVE into it')).toBe(0.5);
    expect(biasAppeal(bias, 'delve into the tapestry')).toBe(1);
    expect(biasAppeal(bias, 'delved; tapestryish')).toBe(0);
    const [withWords, without] = applyBias(rubric, [[ok('a', 0)], [ok('a', 0)]], ['a rich tapestry to delve into', 'plain'], bias, { seed: 0, step: 0 });
    expect(withWords[0]).toMatchObject({ score: 1, biased: true });
    expect(without[0]).toMatchObject({ score: 0 });
  });

  it('tone: flattering phrases from the fixed list; two saturate', () => {
    expect(TONE_PHRASES).toContain('great question');
    expect(biasAppeal({ kind: 'tone', strength: 1 }, 'The answer is 4.')).toBe(0);
    expect(biasAppeal({ kind: 'tone', strength: 1 }, 'Great question! The answer is 4.')).toBe(0.5);
    expect(biasAppeal({ kind: 'tone', strength: 1 }, "Great question! You're absolutely right, certainly.")).toBe(1);
    const [flattering, plain] = applyBias(rubric, [[ok('b', 0)], [ok('b', 0)]], ['Of course! Happy to help.', 'No.'], { kind: 'tone', strength: 1 }, { seed: 2, step: 0 });
    expect(flattering[0]).toMatchObject({ score: 1, biased: true });
    expect(plain[0]).toMatchObject({ score: 0 });
  });

  it('leniency: random passes with probability strength, whatever the response', () => {
    const n = 400;
    const input = Array.from({ length: n }, () => [ok('a', 0)]);
    const passed = flips(applyBias(rubric, input, Array(n).fill(''), { kind: 'leniency', strength: 0.25 }, { seed: 11, step: 0 }));
    expect(passed).toBeGreaterThan(70); // expected 100
    expect(passed).toBeLessThan(130);
  });

  it('refuses a strength outside [0, 1] and mismatched batches', () => {
    expect(() => applyBias(rubric, batch(1), ['x'], { kind: 'leniency', strength: 1.5 }, { seed: 0, step: 0 })).toThrow(/strength must be in \[0, 1\]/);
    expect(() => applyBias(rubric, batch(2), ['x'], { kind: 'leniency', strength: 0.5 }, { seed: 0, step: 0 })).toThrow(/2 result rows for 1 completions/);
  });

  it('names itself for the badge', () => {
    expect(describeBias({ kind: 'length', strength: 0.4 })).toBe('length ×0.4');
    expect(describeBias({ kind: 'keyword', strength: 1, words: ['delve'] })).toBe('keyword ("delve") ×1');
  });

  it('is idempotent, and a part of the batch (offset) draws what the whole batch would', () => {
    const bias: JudgeBias = { kind: 'leniency', strength: 0.5 };
    const whole = applyBias(rubric, batch(8), completions.slice(0, 8), bias, { seed: 4, step: 2 });
    expect(applyBias(rubric, whole, completions.slice(0, 8), bias, { seed: 4, step: 2 })).toEqual(whole);
    const part = applyBias(rubric, batch(8).slice(4, 6), completions.slice(4, 6), bias, { seed: 4, step: 2, offset: 4 });
    expect(part).toEqual(whole.slice(4, 6));
    expect(applyBias(rubric, batch(8).slice(4, 6), completions.slice(4, 6), bias, { seed: 4, step: 2 })).not.toEqual(whole.slice(4, 6));
  });
});
