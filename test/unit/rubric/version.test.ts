// Content versions: same content (any key order, defaults spelled out or not) → same version;
// any edit → a new one.
import { describe, expect, it } from 'vitest';
import { parseRubric } from '../../../src/rubric/schema';
import { canonicalJson, rubricVersion } from '../../../src/rubric/version';

const base = {
  name: 'Greeting',
  criteria: [
    { id: 'hello', text: 'Says hello', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['hello'] } },
    { id: 'polite', text: 'Is polite', weight: 0.5, tier: 'optional', judge_question: 'Polite?' },
  ],
};
const versionOf = (raw: unknown) => rubricVersion(parseRubric(raw));

describe('canonicalJson', () => {
  it('sorts keys at every level and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: undefined } })).toBe('{"a":{"d":[3,{"e":2,"f":1}]},"b":1}');
    expect(canonicalJson(-0)).toBe('0');
    expect(() => canonicalJson({ x: NaN })).toThrow(RangeError);
  });
});

describe('rubricVersion', () => {
  it('is a SHA-256 hex digest, stable for the same content', async () => {
    const v = await versionOf(base);
    expect(v).toMatch(/^[0-9a-f]{64}$/);
    expect(await versionOf(JSON.parse(JSON.stringify(base)))).toBe(v);
    // Keys in another order, and a default written out, are the same content.
    const reordered = {
      criteria: [
        { rule: { case_sensitive: false, terms: ['hello'], kind: 'contains' }, tier: 'essential', weight: 1, text: 'Says hello', id: 'hello' },
        { choices: ['no', 'yes'], judge_question: 'Polite?', tier: 'optional', weight: 0.5, text: 'Is polite', id: 'polite' },
      ],
      name: 'Greeting',
    };
    expect(await versionOf(reordered)).toBe(v);
  });

  it('changes with any edit', async () => {
    const v = await versionOf(base);
    const edit = (f: (r: typeof base & Record<string, unknown>) => void) => {
      const copy = JSON.parse(JSON.stringify(base));
      f(copy);
      return versionOf(copy);
    };
    const edits = await Promise.all([
      edit((r) => (r.criteria[0].weight = 2)),
      edit((r) => ((r.criteria[0].rule as { terms: string[] }).terms = ['hi'])),
      edit((r) => (r.criteria[1].text = 'Is courteous')),
      edit((r) => r.criteria.reverse()),
      edit((r) => (r.name = 'Greeting 2')),
      edit((r) => (r.version = 'v2')),
      edit((r) => ((r.criteria[0].rule as Record<string, unknown>).whole_word = true)),
    ]);
    for (const e of edits) expect(e).not.toBe(v);
    expect(new Set(edits).size).toBe(edits.length);
  });
});
