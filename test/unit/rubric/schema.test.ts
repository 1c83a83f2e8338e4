// parseRubric: a valid rubric comes back typed with defaults; bad ones throw a RubricError
// whose message names the path of every problem.
import { describe, expect, it } from 'vitest';
import { parseRubric } from '../../../src/rubric/schema';
import { RubricError } from '../../../src/rubric/errors';

const criterion = (extra: Record<string, unknown> = {}) => ({
  id: 'c',
  text: 'Says hello',
  weight: 1,
  tier: 'essential',
  rule: { kind: 'contains', terms: ['hello'] },
  ...extra,
});
const rubricWith = (...criteria: unknown[]) => ({ name: 'r', criteria });

function errorOf(input: unknown): RubricError {
  try {
    parseRubric(input);
  } catch (e) {
    expect(e).toBeInstanceOf(RubricError);
    return e as RubricError;
  }
  throw new Error('parseRubric accepted a bad rubric');
}

describe('parseRubric: valid rubrics', () => {
  it('fills defaults and keeps rule and question criteria apart', () => {
    const rubric = parseRubric({
      name: 'Greeting',
      version: 'v1',
      criteria: [
        criterion(),
        { id: 'polite', text: 'Is polite', weight: 2, tier: 'important', judge_question: 'Is the reply polite?' },
        { id: 'tone', text: 'Tone', weight: 1, tier: 'optional', judge_question: 'How warm?', choices: ['cold', 'neutral', 'warm'] },
        { id: 'no-ai', text: 'No AI disclaimer', weight: -1.5, tier: 'important', rule: { kind: 'regex', pattern: 'as an ai', flags: 'i', expect: 'no_match' } },
      ],
    });
    expect(rubric.criteria[0]).toEqual({
      id: 'c',
      text: 'Says hello',
      weight: 1,
      tier: 'essential',
      rule: { kind: 'contains', terms: ['hello'], match: 'any', case_sensitive: false, whole_word: false },
    });
    expect(rubric.criteria[1]).toEqual({ id: 'polite', text: 'Is polite', weight: 2, tier: 'important', judge_question: 'Is the reply polite?', choices: ['no', 'yes'] });
    expect((rubric.criteria[2] as { choices: string[] }).choices).toEqual(['cold', 'neutral', 'warm']);
    expect((rubric.criteria[3] as { rule: unknown }).rule).toEqual({ kind: 'regex', pattern: 'as an ai', flags: 'i', expect: 'no_match', max_input_chars: 10000 });
  });

  it('accepts JSON text', () => {
    expect(parseRubric(JSON.stringify(rubricWith(criterion()))).name).toBe('r');
  });
});

describe('parseRubric: bad rubrics name the path', () => {
  it.each([
    ['no criteria', { name: 'r', criteria: [] }, 'criteria: needs at least one criterion'],
    ['no positive weight', rubricWith(criterion({ weight: 0 }), criterion({ id: 'd', weight: -1 })), 'criteria: total positive weight must be > 0'],
    ['duplicate ids', rubricWith(criterion(), criterion({ id: 'd' }), criterion()), 'criteria[2].id: duplicate id "c" (also used by criterion 1)'],
    ['invalid regex', rubricWith(criterion(), criterion(), criterion({ id: 'x', rule: { kind: 'regex', pattern: 'a(b' } })), 'criteria[2].rule.pattern: invalid regular expression: '],
    ['catastrophic regex', rubricWith(criterion({ rule: { kind: 'regex', pattern: '(a+)+$' } })), 'criteria[0].rule.pattern: nested quantifier: "(a+)+" repeats "a+"'],
    ['bad regex flag', rubricWith(criterion({ rule: { kind: 'regex', pattern: 'a', flags: 'g' } })), 'criteria[0].rule.flags: flag "g" is not allowed'],
    ['unknown rule kind', rubricWith(criterion({ rule: { kind: 'python', code: 'x' } })), 'criteria[0].rule.kind: unknown rule kind "python" (expected one of: contains, not_contains, regex, length, starts_with, ends_with, count, json, all_caps, no_caps)'],
    ['missing rule kind', rubricWith(criterion({ rule: { terms: ['x'] } })), 'criteria[0].rule.kind: missing (expected one of:'],
    ['unknown field', rubricWith(criterion({ wieght: 2 })), 'criteria[0].wieght: unknown field'],
    ['unknown rule field', rubricWith(criterion({ rule: { kind: 'contains', terms: ['a'], wholeword: true } })), 'criteria[0].rule.wholeword: unknown field'],
    ['rule and question', rubricWith(criterion({ judge_question: 'ok?' })), 'criteria[0]: needs exactly one of "rule" or "judge_question"'],
    ['neither rule nor question', rubricWith(criterion({ rule: undefined })), 'criteria[0]: needs exactly one of "rule" or "judge_question"'],
    ['choices on a rule', rubricWith(criterion({ choices: ['no', 'yes'] })), 'criteria[0].choices: applies only to a judge_question criterion'],
    ['one choice', rubricWith(criterion({ rule: undefined, judge_question: 'q', choices: ['yes'] })), 'criteria[0].choices: needs at least 2 choices'],
    ['duplicate choice', rubricWith(criterion({ rule: undefined, judge_question: 'q', choices: ['no', 'yes', 'no'] })), 'criteria[0].choices[2]: duplicate choice "no"'],
    ['bad id', rubricWith(criterion({ id: 'Bad Id' })), 'criteria[0].id: must use only a-z, 0-9, "_" and "-"'],
    ['infinite weight', rubricWith(criterion({ weight: Infinity })), 'criteria[0].weight: must be a number, got Infinity'],
    ['missing weight', rubricWith(criterion({ weight: undefined })), 'criteria[0].weight: is required'],
    ['bad tier', rubricWith(criterion({ tier: 'pitfall' })), 'criteria[0].tier: '],
    ['empty term', rubricWith(criterion({ rule: { kind: 'contains', terms: [' '] } })), 'criteria[0].rule.terms[0]: must not be empty or only spaces'],
    ['no bounds', rubricWith(criterion({ rule: { kind: 'length', unit: 'words' } })), 'criteria[0].rule: give min, max or both'],
    ['min above max', rubricWith(criterion({ rule: { kind: 'count', unit: 'lines', min: 5, max: 2 } })), 'criteria[0].rule.min: min 5 is above max 2'],
    ['bad json shape type', rubricWith(criterion({ rule: { kind: 'json', schema: { type: 'object', properties: { a: { type: 'date' } } } } })), 'criteria[0].rule.schema.properties.a.type: unknown type "date"'],
    ['not an object', 42, 'rubric: must be an object, got 42'],
    ['missing name', { criteria: [criterion()] }, 'name: is required'],
    ['not JSON', '{"name": ', 'rubric: not valid JSON: '],
  ])('%s', (_, input, expected) => {
    expect(errorOf(input).message).toContain(expected);
  });

  it('lists every problem with its path', () => {
    const err = errorOf(rubricWith(criterion({ id: 'A' }), criterion({ rule: { kind: 'regex', pattern: '(x*)*' } })));
    expect(err.issues.map((i) => i.path)).toEqual(['criteria[0].id', 'criteria[1].rule.pattern']);
    expect(err.message.split('\n')).toHaveLength(2); // one line per problem
  });

  it('rejects a JSON shape nested too deeply', () => {
    let shape: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 8; i++) shape = { type: 'array', items: shape };
    expect(errorOf(rubricWith(criterion({ rule: { kind: 'json', schema: shape } }))).message).toBe('criteria[0].rule.schema: nests deeper than 8 levels');
  });
});
