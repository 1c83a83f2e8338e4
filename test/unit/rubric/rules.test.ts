// Every rule kind on hand-made cases, including empty completions, unicode, case and word boundaries.
import { describe, expect, it } from 'vitest';
import { check } from './fixtures';
import { approximateTokens, countBullets, countLines, countSentences, countWords } from '../../../src/rubric/text';

const score = (raw: Record<string, unknown>, completion: string) => {
  const out = check(raw, completion);
  if (out.status !== 'ok') throw new Error(`unscorable: ${out.reason}`);
  return out.score;
};

describe('contains / not_contains', () => {
  it('matches any term, case-insensitively by default, and says what it found', () => {
    expect(check({ kind: 'contains', terms: ['Paris', 'Lyon'] }, 'I love PARIS.')).toEqual({ status: 'ok', score: 1, reason: 'found "Paris"' });
    expect(check({ kind: 'contains', terms: ['Paris', 'Lyon'] }, 'Rome')).toEqual({ status: 'ok', score: 0, reason: 'none of "Paris", "Lyon" found' });
    expect(score({ kind: 'contains', terms: ['Paris'], case_sensitive: true }, 'paris')).toBe(0);
    expect(score({ kind: 'contains', terms: ['ΣΟΦΊΑ'] }, 'η σοφία')).toBe(1);
    expect(score({ kind: 'contains', terms: ['🙂'] }, 'hi 🙂')).toBe(1);
  });

  it('match "all" needs every term and names the missing ones', () => {
    expect(check({ kind: 'contains', terms: ['a', 'b', 'c'], match: 'all' }, 'a c')).toEqual({ status: 'ok', score: 0, reason: 'missing "b"' });
    expect(check({ kind: 'contains', terms: ['a', 'b'], match: 'all' }, 'b a')).toEqual({ status: 'ok', score: 1, reason: 'found all 2 terms' });
  });

  it('whole_word respects letters, digits and "_" on edges that are word characters', () => {
    const cat = { kind: 'contains', terms: ['cat'], whole_word: true };
    expect(score(cat, 'concatenate')).toBe(0);
    expect(score(cat, 'the cat.')).toBe(1);
    expect(score(cat, 'cat_food')).toBe(0);
    expect(score(cat, 'CAT')).toBe(1);
    expect(score({ kind: 'contains', terms: ['café'], whole_word: true }, 'un café noir')).toBe(1);
    expect(score({ kind: 'contains', terms: ['café'], whole_word: true }, 'cafés')).toBe(0);
    // "C++" ends in a non-word character, so only its start needs a boundary.
    expect(score({ kind: 'contains', terms: ['C++'], whole_word: true }, 'I like C++.')).toBe(1);
    expect(score({ kind: 'contains', terms: ['C++'], whole_word: true }, 'ABC++')).toBe(0);
    // The first two occurrences are inside "banana"; the third stands alone.
    expect(score({ kind: 'contains', terms: ['ana'], whole_word: true }, 'banana ana')).toBe(1);
  });

  it('compares in NFC and lets a space in a phrase match any whitespace run', () => {
    expect(score({ kind: 'contains', terms: ['naïve'] }, 'nai\u0308ve')).toBe(1);
    expect(score({ kind: 'contains', terms: ['new york'] }, 'New\n  York')).toBe(1);
    expect(score({ kind: 'contains', terms: ['a.b'] }, 'axb')).toBe(0); // literal, not a regex
  });

  it('on an empty completion: contains fails, not_contains passes', () => {
    expect(score({ kind: 'contains', terms: ['x'] }, '')).toBe(0);
    expect(score({ kind: 'not_contains', terms: ['x'] }, '')).toBe(1);
  });

  it('not_contains "any" fails on any term; "all" fails only when all appear', () => {
    expect(check({ kind: 'not_contains', terms: ['as an AI'] }, 'As an ai, I cannot')).toEqual({ status: 'ok', score: 0, reason: 'found "as an AI"' });
    expect(check({ kind: 'not_contains', terms: ['x', 'y'] }, 'fine')).toEqual({ status: 'ok', score: 1, reason: 'none of the 2 terms found' });
    expect(score({ kind: 'not_contains', terms: ['x', 'y'], match: 'all' }, 'x alone')).toBe(1);
    expect(score({ kind: 'not_contains', terms: ['x', 'y'], match: 'all' }, 'x and y')).toBe(0);
  });
});

describe('regex', () => {
  it('scores a match (or its absence) and quotes what matched', () => {
    expect(check({ kind: 'regex', pattern: '\\d{3}' }, 'code 123')).toEqual({ status: 'ok', score: 1, reason: 'matched "123" at 5' });
    expect(check({ kind: 'regex', pattern: '\\d{3}' }, 'code')).toEqual({ status: 'ok', score: 0, reason: 'no match for /\\d{3}/' });
    expect(check({ kind: 'regex', pattern: 'sorry', flags: 'i', expect: 'no_match' }, 'Sorry!')).toEqual({ status: 'ok', score: 0, reason: 'matched "Sorry" at 0' });
    expect(score({ kind: 'regex', pattern: 'sorry', expect: 'no_match' }, 'Fine.')).toBe(1);
    expect(score({ kind: 'regex', pattern: '^$' }, '')).toBe(1);
    expect(score({ kind: 'regex', pattern: '^\\p{Lu}', flags: 'u' }, 'Élan')).toBe(1);
    expect(score({ kind: 'regex', pattern: '^answer: \\d+$', flags: 'im' }, 'reasoning\nAnswer: 7\n')).toBe(1);
  });

  it('makes a completion over max_input_chars unscorable, never truncated', () => {
    expect(check({ kind: 'regex', pattern: 'x', max_input_chars: 10 }, 'a'.repeat(11))).toEqual({
      status: 'unscorable',
      reason: "completion has 11 UTF-16 code units, above this regex's max_input_chars 10",
    });
    expect(score({ kind: 'regex', pattern: 'x', max_input_chars: 10 }, 'a'.repeat(9) + 'x')).toBe(1);
  });
});

describe('length', () => {
  it('counts words as whitespace-separated runs holding a letter or digit', () => {
    expect(countWords('Hello, world - foo')).toBe(3);
    expect(countWords("don't stop 3.14")).toBe(3);
    expect(countWords('  ')).toBe(0);
    expect(check({ kind: 'length', unit: 'words', min: 4 }, 'Hello, world - foo')).toEqual({ status: 'ok', score: 0, reason: '3 words, below min 4' });
    expect(check({ kind: 'length', unit: 'words', min: 1, max: 3 }, 'one two')).toEqual({ status: 'ok', score: 1, reason: '2 words, within 1–3' });
    expect(score({ kind: 'length', unit: 'words', max: 10 }, '')).toBe(1);
    expect(score({ kind: 'length', unit: 'words', min: 1 }, '')).toBe(0);
  });

  it('counts characters as code points after NFC', () => {
    expect(check({ kind: 'length', unit: 'characters', max: 5 }, 'he\u0301llo')).toEqual({ status: 'ok', score: 1, reason: '5 characters, within max 5' });
    expect(check({ kind: 'length', unit: 'characters', max: 1 }, '😀😀')).toEqual({ status: 'ok', score: 0, reason: '2 characters, above max 1' });
  });

  it('approximates tokens without a tokenizer, and uses one when given', () => {
    expect(approximateTokens('Hello world!')).toBe(5); // 2 + 2 + 1
    expect(approximateTokens('internationalization')).toBe(5);
    expect(approximateTokens('你好 ok')).toBe(3);
    expect(approximateTokens('')).toBe(0);
    expect(check({ kind: 'length', unit: 'tokens', max: 4 }, 'Hello world!')).toEqual({ status: 'ok', score: 0, reason: '5 tokens (approximate), above max 4' });
    const countTokens = (t: string) => t.split(' ').length;
    expect(check({ kind: 'length', unit: 'tokens', max: 4 }, 'Hello world!', { countTokens })).toEqual({ status: 'ok', score: 1, reason: '2 tokens, within max 4' });
  });

  it('makes a tokenizer failure unscorable', () => {
    const throwing = () => {
      throw new Error('vocab not loaded');
    };
    expect(check({ kind: 'length', unit: 'tokens', max: 4 }, 'x', { countTokens: throwing })).toEqual({ status: 'unscorable', reason: 'tokenizer failed: vocab not loaded' });
    expect(check({ kind: 'length', unit: 'tokens', max: 4 }, 'x', { countTokens: () => 1.5 }).status).toBe('unscorable');
  });
});

describe('starts_with / ends_with', () => {
  it('trims and ignores case by default', () => {
    expect(check({ kind: 'starts_with', text: 'answer:' }, '  Answer: 42')).toEqual({ status: 'ok', score: 1, reason: 'starts with "answer:"' });
    expect(score({ kind: 'starts_with', text: 'answer:', trim: false }, '  Answer: 42')).toBe(0);
    expect(score({ kind: 'starts_with', text: 'answer', case_sensitive: true }, 'Answer')).toBe(0);
    expect(score({ kind: 'starts_with', text: 'Dear Sir' }, 'Dear\nSir,')).toBe(1);
    expect(check({ kind: 'starts_with', text: 'x' }, '')).toEqual({ status: 'ok', score: 0, reason: 'starts with "", not "x"' });
  });

  it('ends_with treats the text literally', () => {
    expect(score({ kind: 'ends_with', text: '.' }, 'Done.\n')).toBe(1);
    expect(score({ kind: 'ends_with', text: '.' }, 'Done!')).toBe(0);
    expect(score({ kind: 'ends_with', text: '(1+1)?' }, 'what is (1+1)?')).toBe(1);
    expect(score({ kind: 'ends_with', text: 'fin', trim: false }, 'fin ')).toBe(0);
    expect(score({ kind: 'ends_with', text: 'ÇA' }, 'voilà ça')).toBe(1);
  });
});

describe('count', () => {
  it('splits sentences at terminal punctuation, CJK stops and blank lines', () => {
    expect(countSentences('Hi. How are you? Fine!')).toBe(3);
    expect(countSentences('Pi is 3.14 exactly.')).toBe(1);
    expect(countSentences('你好。我很好。')).toBe(2);
    expect(countSentences('Wait... what?!')).toBe(2);
    expect(countSentences('He said "stop." Then left.')).toBe(2);
    expect(countSentences('Title\n\nBody text')).toBe(2);
    expect(countSentences('...')).toBe(0);
    expect(countSentences('')).toBe(0);
  });

  it('counts non-blank lines and bullet items', () => {
    expect(countLines('a\n\n b\r\nc\r')).toBe(3);
    expect(countLines('')).toBe(0);
    expect(countBullets('- one\n* two\n1. three\n2) four\n-five\n**bold**\n  • six\n- ')).toBe(5);
  });

  it('applies min and max', () => {
    expect(check({ kind: 'count', unit: 'bullets', min: 3 }, '- a\n- b')).toEqual({ status: 'ok', score: 0, reason: '2 bullets, below min 3' });
    expect(check({ kind: 'count', unit: 'sentences', max: 2 }, 'One. Two.')).toEqual({ status: 'ok', score: 1, reason: '2 sentences, within max 2' });
    expect(score({ kind: 'count', unit: 'lines', min: 1 }, '')).toBe(0);
  });
});

describe('json', () => {
  const shape = {
    type: 'object',
    required: ['answer', 'steps'],
    properties: {
      answer: { type: 'integer' },
      steps: { type: 'array', items: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } },
    },
  };
  const json = (completion: string, extra: Record<string, unknown> = {}) => check({ kind: 'json', schema: shape, ...extra }, completion);

  it('checks validity, with or without a code fence', () => {
    expect(check({ kind: 'json' }, ' {"a": 1} ')).toEqual({ status: 'ok', score: 1, reason: 'valid JSON' });
    expect(score({ kind: 'json' }, '```json\n{"a": 1}\n```')).toBe(1);
    expect(score({ kind: 'json', allow_code_fence: false }, '```json\n{"a": 1}\n```')).toBe(0);
    expect(check({ kind: 'json' }, '')).toEqual({ status: 'ok', score: 0, reason: 'not valid JSON: empty' });
    const bad = check({ kind: 'json' }, 'not json');
    expect(bad.status === 'ok' && bad.score).toBe(0);
    expect(bad.reason).toMatch(/^not valid JSON: /);
  });

  it('names the first place a value differs from the shape', () => {
    expect(json('{"answer": 3, "steps": [{"text": "a"}], "extra": true}')).toEqual({ status: 'ok', score: 1, reason: 'valid JSON matching the schema' });
    expect(json('{"answer": 1.5, "steps": []}').reason).toBe('$.answer: expected integer, got 1.5');
    expect(json('{"answer": 1}').reason).toBe('$: missing required key "steps"');
    expect(json('{"answer": 1, "steps": [{"text": "a"}, {"text": 2}]}').reason).toBe('$.steps[1].text: expected string, got number');
    expect(json('[1]').reason).toBe('$: expected object, got array');
    expect(json('{"answer": null, "steps": []}').reason).toBe('$.answer: expected integer, got null');
  });
});

describe('all_caps / no_caps', () => {
  it('all_caps needs cased letters, all uppercase', () => {
    expect(check({ kind: 'all_caps' }, 'HELLO WORLD!')).toEqual({ status: 'ok', score: 1, reason: 'all 10 cased letters are uppercase' });
    expect(check({ kind: 'all_caps' }, 'Hello')).toEqual({ status: 'ok', score: 0, reason: '4 lowercase letters' });
    expect(score({ kind: 'all_caps' }, 'ÉCOLE ΑΒΓ 42')).toBe(1);
    expect(check({ kind: 'all_caps' }, '123')).toEqual({ status: 'ok', score: 0, reason: 'no cased letters' });
    expect(score({ kind: 'all_caps' }, '')).toBe(0);
  });

  it('no_caps needs cased letters, none uppercase', () => {
    expect(score({ kind: 'no_caps' }, 'hello world, ça va')).toBe(1);
    expect(check({ kind: 'no_caps' }, 'hello World')).toEqual({ status: 'ok', score: 0, reason: '1 uppercase letter' });
    expect(check({ kind: 'no_caps' }, '日本語')).toEqual({ status: 'ok', score: 0, reason: 'no cased letters' });
    expect(score({ kind: 'no_caps' }, '')).toBe(0);
  });
});
