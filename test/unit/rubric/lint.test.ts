// Static rubric lint: a positive and a negative case for every finding, the fixes, and the
// leakage probe with a fake judge.
import { describe, expect, it } from 'vitest';
import { checkLeakage } from '../../../src/rubric/leakage';
import { compoundParts, invertedRule, lintRubric, similarity, type LintCode } from '../../../src/rubric/lint';
import { parseRubric, type Rubric } from '../../../src/rubric/schema';
import type { CriterionResult, Judge, JudgeRequest } from '../../../src/rubric/judge';
import { checkRule } from '../../../src/rubric/rules';
import { rule } from './fixtures';

type Raw = Record<string, unknown>;
const q = (id: string, text: string, weight = 1, question = `Does the response ${text.toLowerCase()}?`): Raw => ({ id, text, weight, tier: 'important', judge_question: question });
const r = (id: string, text: string, ruleRaw: Raw, weight = 1): Raw => ({ id, text, weight, tier: 'important', rule: ruleRaw });
const rubric = (...criteria: Raw[]): Rubric => parseRubric({ name: 'lint', criteria });
const codes = (rb: Rubric, code: LintCode) => lintRubric(rb).filter((f) => f.code === code);

describe('compound criteria', () => {
  it('flags two checks joined by "and", and the split fix makes one judge question each with the weight shared', () => {
    const rb = rubric(q('a', 'Is concise and cites a source', 2, 'Is the response concise and does it cite a source?'), q('b', 'Names the capital'));
    const [f] = codes(rb, 'compound');
    expect(f.criterion).toBe(1);
    expect(f.fix?.replacement.map((c) => [c.id, c.text, c.weight])).toEqual([
      ['a_1', 'Is concise', 1],
      ['a_2', 'Cites a source', 1],
    ]);
    expect(f.fix?.replacement.map((c) => ('judge_question' in c ? c.judge_question : ''))).toEqual(['Is the response concise?', 'Does it cite a source?']);
    // The replacement is a valid rubric.
    expect(() => parseRubric({ name: 'x', criteria: [...f.fix!.replacement, rb.criteria[1]] })).not.toThrow();
  });
  it('flags "or" and ";" too; a rule criterion gets the finding without a split fix', () => {
    expect(compoundParts('Gives an example or shows a formula')).toEqual(['Gives an example', 'shows a formula']);
    expect(compoundParts('Greets the user; signs off')).toEqual(['Greets the user', 'signs off']);
    const [f] = codes(rubric(r('a', 'Mentions Paris and gives the population', { kind: 'contains', terms: ['Paris'] })), 'compound');
    expect(f.fix).toBeUndefined();
  });
  it('does not flag a single check with a two-item object ("salt and pepper", "one or two sentences")', () => {
    expect(compoundParts('Mentions salt and pepper')).toEqual([]);
    expect(compoundParts('Says one or two sentences')).toEqual([]);
    expect(compoundParts('Names the cat and the dog')).toEqual([]);
    expect(codes(rubric(q('a', 'Mentions salt and pepper'), q('b', 'Names the capital')), 'compound')).toEqual([]);
  });
});

describe('vague and unverifiable wording', () => {
  it('flags vague words in a judged criterion', () => {
    const [f] = codes(rubric(q('a', 'Gives a good explanation')), 'vague');
    expect(f.criterion).toBe(1);
    expect(f.message).toContain('"good"');
  });
  it('does not flag concrete wording, nor a word that only contains a vague one ("goodbye"), nor a rule criterion', () => {
    expect(codes(rubric(q('a', 'Says goodbye at the end')), 'vague')).toEqual([]);
    expect(codes(rubric(r('a', 'A good length', { kind: 'length', unit: 'words', max: 50 })), 'vague')).toEqual([]);
  });
  it('flags states of mind; not observable actions', () => {
    expect(codes(rubric(q('a', 'Understands the question')), 'unverifiable')[0].message).toContain('"understands"');
    expect(codes(rubric(q('a', 'Explains why the sky is blue')), 'unverifiable')).toEqual([]);
  });
});

describe('near-duplicate criteria', () => {
  it('similarity is the Dice coefficient of character trigrams (hand-computed)', () => {
    // " ab " has trigrams " ab", "ab "; " abc " has " ab", "abc", "bc ": one shared → 2·1 / (2 + 3).
    expect(similarity('ab', 'abc')).toBeCloseTo(2 / 5, 12);
    expect(similarity('Cites a source.', 'cites a SOURCE')).toBe(1);
  });
  it('flags a later criterion whose text nearly repeats an earlier one, with a remove fix', () => {
    const [f] = codes(rubric(q('a', 'Cites at least one source'), q('b', 'Cites at least one sources'), q('c', 'Names the capital')), 'near_duplicate');
    expect(f.criterion).toBe(2);
    expect(f.message).toContain('criterion 1');
    expect(f.fix?.replacement).toEqual([]);
  });
  it('flags two criteria with the same rule under different texts', () => {
    const rb = rubric(r('a', 'Short', { kind: 'length', unit: 'words', max: 20 }), r('b', 'Brief answer', { kind: 'length', unit: 'words', max: 20 }));
    expect(codes(rb, 'near_duplicate')[0].message).toContain('same rule');
  });
  it('does not flag different checks', () => {
    expect(codes(rubric(q('a', 'Cites at least one source'), q('b', 'Names the capital city')), 'near_duplicate')).toEqual([]);
  });
});

describe('weights', () => {
  it('flags a penalty-dominated rubric', () => {
    const rb = rubric(q('a', 'Names the capital'), r('b', 'Uses jargon', { kind: 'contains', terms: ['synergy'] }, -1), r('c', 'Shouts', { kind: 'all_caps' }, -1));
    const [f] = codes(rb, 'all_penalty');
    expect(f.criterion).toBeNull();
    expect(f.message).toContain('2 of 3');
  });
  it('does not flag a rubric with more to earn than to lose', () => {
    const rb = rubric(q('a', 'Names the capital', 3), r('b', 'Uses jargon', { kind: 'contains', terms: ['synergy'] }, -1), r('c', 'Shouts', { kind: 'all_caps' }, -1));
    expect(codes(rb, 'all_penalty')).toEqual([]);
  });
  it('flags a weight above twice all other positive weights together (over 2/3 of the total), with a fix to twice their sum', () => {
    const [f] = codes(rubric(q('a', 'Names the capital', 7), q('b', 'Gives the population', 2), q('c', 'Gives the area', 1)), 'dominant_weight');
    expect(f.criterion).toBe(1);
    expect(f.fix?.replacement[0].weight).toBe(6);
  });
  it('does not flag a weight exactly twice the others, a 2:1 pair, or a single criterion', () => {
    expect(codes(rubric(q('a', 'Names the capital', 6), q('b', 'Gives the population', 2), q('c', 'Gives the area', 1)), 'dominant_weight')).toEqual([]);
    expect(codes(rubric(q('a', 'Names the capital', 2), q('b', 'Gives the population', 1)), 'dominant_weight')).toEqual([]);
    expect(codes(rubric(q('a', 'Names the capital', 3)), 'dominant_weight')).toEqual([]);
  });
});

describe('text vs rule', () => {
  it('flags a pitfall whose text reads as the good behaviour; the fix inverts the rule and the sign', () => {
    const rb = rubric(q('a', 'Names the capital'), r('b', 'Does not use jargon', { kind: 'contains', terms: ['synergy'] }, -2));
    const [f] = codes(rb, 'penalty_reads_positive');
    expect(f.criterion).toBe(2);
    const fixed = f.fix!.replacement[0] as { weight: number; rule: { kind: string } };
    expect([fixed.weight, fixed.rule.kind]).toEqual([2, 'not_contains']);
    // all_caps has no inverse: the finding comes without a fix.
    expect(codes(rubric(q('a', 'Names the capital'), r('b', 'Does not shout in capitals', { kind: 'all_caps' }, -1)), 'penalty_reads_positive')[0].fix).toBeUndefined();
  });
  it('does not flag a pitfall that names the bad behaviour', () => {
    expect(codes(rubric(q('a', 'Names the capital'), r('b', 'Shouts in capitals', { kind: 'all_caps' }, -1)), 'penalty_reads_positive')).toEqual([]);
  });
  it('inverted rules pass exactly when the original fails', () => {
    for (const raw of [{ kind: 'contains', terms: ['a', 'b'], match: 'all' }, { kind: 'contains', terms: ['a', 'b'] }, { kind: 'regex', pattern: '^x' }]) {
      const original = rule(raw);
      const inverse = invertedRule(original)!;
      for (const text of ['', 'a', 'b', 'a b', 'xa', 'q']) expect(checkRule(inverse, text)).toMatchObject({ score: 1 - (checkRule(original, text) as { score: number }).score });
    }
  });
  it('flags "does not" text over a contains rule, "mentions" over a not_contains rule, and numbers or units the bounds do not have', () => {
    const rb = rubric(
      r('a', 'Does not mention the price', { kind: 'contains', terms: ['price'] }),
      r('b', 'Mentions the price', { kind: 'not_contains', terms: ['price'] }),
      r('c', 'Uses at most 20 words', { kind: 'length', unit: 'words', max: 30 }),
      r('d', 'At most 100 characters', { kind: 'length', unit: 'words', max: 100 }),
    );
    const found = codes(rb, 'rule_text_mismatch');
    expect(found.map((f) => f.criterion)).toEqual([1, 2, 3, 4]);
    expect(found[2].message).toContain('says 20 words');
    expect(found[3].message).toContain('counts characters but the rule counts words');
    expect((found[0].fix!.replacement[0] as { rule: { kind: string } }).rule.kind).toBe('not_contains');
  });
  it('does not flag text and rules that agree', () => {
    const rb = rubric(
      r('a', 'Mentions the price', { kind: 'contains', terms: ['price'] }),
      r('b', 'Does not mention the price', { kind: 'not_contains', terms: ['price'] }),
      r('c', 'Uses at most 20 words', { kind: 'length', unit: 'words', max: 20 }),
      r('d', 'Keeps it short', { kind: 'length', unit: 'words', max: 20 }),
    );
    expect(codes(rb, 'rule_text_mismatch')).toEqual([]);
  });
});

describe('a clean rubric', () => {
  it('has no findings', () => {
    const rb = rubric(
      r('short', 'Uses at most 20 words', { kind: 'length', unit: 'words', max: 20 }),
      r('asks', 'Ends with a question', { kind: 'ends_with', text: '?' }),
      r('shouting', 'Shouts in capitals', { kind: 'all_caps' }, -1),
      q('capital', 'Names the capital of France', 1, 'Does the response name Paris as the capital?'),
    );
    expect(lintRubric(rb)).toEqual([]);
  });
});

describe('leakage (a judge scores each criterion with the prompt as the response)', () => {
  /** Fake judge: a criterion is met when the "response" contains its id's word. */
  function fake(): Judge & { calls: JudgeRequest[] } {
    const calls: JudgeRequest[] = [];
    return {
      name: 'fake',
      calls,
      judge: async (rs) => {
        calls.push(...rs);
        return rs.map((x): CriterionResult => ({ criterion_id: x.criterion.id, status: 'ok', score: x.completion.toLowerCase().includes(x.criterion.id) ? 1 : 0, reason: 'fake' }));
      },
    };
  }
  const rb = rubric(
    q('paris', 'Names Paris'),
    q('reason', 'Gives a reason'),
    r('city', 'Mentions a city', { kind: 'contains', terms: ['city', 'Paris'] }),
    r('q', 'Ends with a question', { kind: 'ends_with', text: '?' }),
    r('bad', 'Shouts', { kind: 'all_caps' }, -1),
  );
  const prompts = ['What is the capital near Paris?', 'Is Paris big?', 'Name a city.'];

  it('reports content criteria the prompt alone meets on at least half the prompts (rules and judged); format rules and pitfalls are not probed', async () => {
    const judge = fake();
    const { rows, findings } = await checkLeakage(rb, 'v', prompts, { judge });
    expect(rows).toEqual([
      { criterion: 1, met: 2, judged: 3 },
      { criterion: 2, met: 0, judged: 3 },
      { criterion: 3, met: 3, judged: 3 },
    ]);
    expect(findings.map((f) => [f.code, f.criterion])).toEqual([
      ['leakage', 1],
      ['leakage', 3],
    ]);
    // "Ends with a question" is met by two of the echoes too, but is a format rule: no row.
    expect(rows.map((x) => x.criterion)).not.toContain(4);
    // The judge saw only judged positive criteria, each with the prompt as the response.
    expect(judge.calls.every((c) => c.completion === c.prompt && (c.criterion.id === 'paris' || c.criterion.id === 'reason'))).toBe(true);
    expect(judge.calls).toHaveLength(6);
  });
  it('reports nothing below the share (2 of 3 < 0.9), and nothing unjudged without a judge', async () => {
    expect((await checkLeakage(rb, 'v', prompts, { judge: fake(), minShare: 0.9 })).findings.map((f) => f.criterion)).toEqual([3]);
    const noJudge = await checkLeakage(rb, 'v', prompts);
    expect(noJudge.rows[0]).toEqual({ criterion: 1, met: 0, judged: 0 });
    expect(noJudge.findings.map((f) => f.criterion)).toEqual([3]);
  });
});
