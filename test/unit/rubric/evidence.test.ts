// Evidence spans of every rule kind, NFC mapping, and judge quotes that must exist in the text.
import { describe, expect, it } from 'vitest';
import { findQuote, normaliseSpans, quoteInAnswer, ruleSpans, sentenceSpans, spansInOriginal, MAX_SPANS, type Span } from '../../../src/rubric/evidence';
import { judgeWithRules, parseRubric, type Judge } from '../../../src/rubric';
import { judgeRollouts } from '../../../src/rubric/judge';
import { rule } from './fixtures';

const texts = (text: string, spans: readonly Span[]) => spans.map((s) => text.slice(s.start, s.end));

describe('ruleSpans', () => {
  it('contains / not_contains: the first occurrence of each term found, pass or fail', () => {
    const t = 'The cat sat; a CAT ran. Dogs too.';
    expect(texts(t, ruleSpans(rule({ kind: 'contains', terms: ['cat', 'dogs', 'bird'] }), t))).toEqual(['cat', 'Dogs']);
    expect(texts(t, ruleSpans(rule({ kind: 'not_contains', terms: ['ran'] }), t))).toEqual(['ran']);
    expect(ruleSpans(rule({ kind: 'contains', terms: ['bird'] }), t)).toEqual([]);
    // whole word: "cat" inside "concatenate" is no evidence
    const u = 'concatenate the cat';
    expect(ruleSpans(rule({ kind: 'contains', terms: ['cat'], whole_word: true }), u)).toEqual([{ start: 16, end: 19 }]);
    // flexible whitespace, as the rule matches
    expect(texts('a  new\nyork', ruleSpans(rule({ kind: 'contains', terms: ['new york'] }), 'a  new\nyork'))).toEqual(['new\nyork']);
  });

  it('regex: the match; words / characters past a length limit', () => {
    const t = 'order 12345 now';
    expect(texts(t, ruleSpans(rule({ kind: 'regex', pattern: '\\d+' }), t))).toEqual(['12345']);
    const w = 'one two, three four five';
    expect(texts(w, ruleSpans(rule({ kind: 'length', unit: 'words', max: 3 }), w))).toEqual(['four five']);
    expect(ruleSpans(rule({ kind: 'length', unit: 'words', max: 5 }), w)).toEqual([]);
    expect(ruleSpans(rule({ kind: 'length', unit: 'words', min: 9 }), w)).toEqual([]);
    // characters are code points: the limit falls after the emoji (2 UTF-16 units)
    const e = 'a🙂bc';
    expect(texts(e, ruleSpans(rule({ kind: 'length', unit: 'characters', max: 2 }), e))).toEqual(['bc']);
    expect(ruleSpans(rule({ kind: 'length', unit: 'tokens', max: 1 }), e)).toEqual([]);
  });

  it('count, starts_with / ends_with (first / last sentence), case rules', () => {
    const t = 'First one. Second one! Third?';
    expect(texts(t, sentenceSpans(t))).toEqual(['First one.', 'Second one!', 'Third?']);
    expect(texts(t, ruleSpans(rule({ kind: 'count', unit: 'sentences', max: 1 }), t))).toEqual(['Second one! Third?']);
    expect(texts(t, ruleSpans(rule({ kind: 'ends_with', text: 'Bye.' }), t))).toEqual(['Third?']);
    expect(texts(t, ruleSpans(rule({ kind: 'starts_with', text: 'First' }), t))).toEqual(['First one.']);
    const l = '- a\n- b\n\n- c';
    expect(texts(l, ruleSpans(rule({ kind: 'count', unit: 'bullets', max: 2 }), l))).toEqual(['- c']);
    expect(texts(l, ruleSpans(rule({ kind: 'count', unit: 'lines', max: 1 }), l))).toEqual(['- b\n\n- c']);
    const c = 'ALL CAPS but not here';
    expect(texts(c, ruleSpans(rule({ kind: 'all_caps' }), c))).toEqual(['but', 'not', 'here']);
    expect(texts(c, ruleSpans(rule({ kind: 'no_caps' }), c))).toEqual(['ALL', 'CAPS']);
    expect(ruleSpans(rule({ kind: 'json' }), '{"a":1}')).toEqual([]);
    expect(ruleSpans(rule({ kind: 'contains', terms: ['x'] }), '')).toEqual([]);
  });

  it('normaliseSpans merges overlaps, drops empty spans, keeps at most MAX_SPANS', () => {
    expect(normaliseSpans([{ start: 5, end: 8 }, { start: 0, end: 2 }, { start: 2, end: 3 }, { start: 7, end: 9 }, { start: 4, end: 4 }])).toEqual([
      { start: 0, end: 3 },
      { start: 5, end: 9 },
    ]);
    const many = Array.from({ length: 50 }, (_, i) => ({ start: 2 * i, end: 2 * i + 1 }));
    expect(normaliseSpans(many)).toHaveLength(MAX_SPANS);
  });
});

describe('spans of a judged completion', () => {
  it('are offsets into the original (non-NFC) text', () => {
    // "e" + combining acute (2 units) before "cole": NFC composes it to one unit.
    const original = 'Une e\u0301cole ici';
    expect(original.normalize('NFC')).not.toBe(original);
    const rubric = parseRubric({ name: 'r', criteria: [{ id: 'school', text: 's', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['école'] } }] });
    const [r] = judgeWithRules(rubric, 'p', original);
    expect(r.status === 'ok' && r.spans).toEqual([{ start: 4, end: 10 }]);
    expect(original.slice(4, 10)).toBe('e\u0301cole');
    // A boundary inside a grapheme widens to the whole grapheme.
    expect(spansInOriginal(original, [{ start: 4, end: 5 }])).toEqual([{ start: 4, end: 6 }]);
  });

  it('judge spans outside the completion are dropped, never credited', async () => {
    const rubric = parseRubric({ name: 'r', criteria: [{ id: 'q', text: 'q', weight: 1, tier: 'essential', judge_question: 'ok?' }] });
    const judge: Judge = {
      name: 'fake',
      judge: async (reqs) =>
        reqs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok' as const, score: 1, reason: 'x', spans: [{ start: 0, end: 3 }, { start: 2, end: 99 }, { start: -1, end: 1 }] })),
    };
    const [[res]] = await judgeRollouts(rubric, 'v', [{ prompt: 'p', completion: 'hello' }], { modelJudge: judge });
    expect(res.status === 'ok' && res.spans).toEqual([{ start: 0, end: 3 }]);
  });
});

describe('judge quotes', () => {
  it('reads a Quote: line and finds it in the completion (verbatim, then loosely)', () => {
    expect(quoteInAnswer('yes\nQuote: "the sky is blue"')).toBe('the sky is blue');
    expect(quoteInAnswer('**Evidence:** “blue sky”')).toBe('blue sky');
    expect(quoteInAnswer('yes')).toBeNull();
    const c = 'Today The  sky\nis blue.';
    expect(findQuote(c, 'is blue')).toEqual({ start: 15, end: 22 });
    expect(texts(c, [findQuote(c, 'the sky is')!])).toEqual(['The  sky\nis']);
    // A quote that is not in the text gives nothing.
    expect(findQuote(c, 'the sea is green')).toBeNull();
    expect(findQuote(c, '   ')).toBeNull();
  });
});

describe('remote judge quotes', () => {
  it('become spans only where the quoted text is in the completion', async () => {
    const { RemoteJudge } = await import('../../../src/rubric/judges/remote');
    const rubric = parseRubric({ name: 'r', criteria: [{ id: 'polite', text: 'Is polite', weight: 1, tier: 'essential', judge_question: 'Polite?' }] });
    const answers = ['yes\nQuote: "please sit"', 'yes\nQuote: "thank you kindly"', 'no'];
    let call = 0;
    const fetch = (async () => new Response(JSON.stringify({ choices: [{ message: { content: answers[call++] } }] }), { status: 200, headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch;
    const judge = new RemoteJudge({ url: 'https://judge.example/v1/chat/completions', model: 'm', concurrency: 1 }, { fetch });
    const req = { rubricVersion: 'v', prompt: 'p', completion: 'Hello, please  sit down.', criterion: rubric.criteria[0] };
    const out = await judge.judge([req, req, req]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1, spans: [{ start: 7, end: 18 }] }); // "please  sit" (two spaces)
    expect(out[1]).toMatchObject({ status: 'ok', score: 1 });
    expect('spans' in out[1]).toBe(false); // a quote not in the text is ignored
    expect('spans' in out[2]).toBe(false);
  });
});
