// Rule semantics the exported Python shares: line ends and what max_input_chars counts.
import { describe, expect, it } from 'vitest';
import { countCharacters, countLines, countSentences } from '../../../src/rubric/text';
import { check } from './fixtures';

describe('sentences split at blank lines with the line ends countLines uses', () => {
  it.each([
    ['a\r\rb', 2, 2], // old-Mac line ends: a blank line between a and b
    ['a\n\nb', 2, 2],
    ['a\r\n\r\nb', 2, 2],
    ['a\r\n \t\r\nb', 2, 2], // whitespace on the blank line
    ['a\n\rb', 2, 2], // \n then \r: two line ends, so a blank line
    ['a\r \rb', 2, 2],
    ['a\r\nb', 1, 2], // \r\n is one line end: no blank line
    ['a\rb', 1, 2],
    ['a\r\n\r\n\r\nb', 2, 2], // several blank lines are one boundary
  ])('%j: %i sentences, %i lines', (text, sentences, lines) => {
    expect(countSentences(text)).toBe(sentences);
    expect(countLines(text)).toBe(lines);
  });
});

describe('max_input_chars counts UTF-16 code units; a length rule counts code points', () => {
  it('six emoji are 12 units for the regex limit and 6 characters for a length rule', () => {
    const text = '😀'.repeat(6);
    expect(countCharacters(text)).toBe(6);
    expect(check({ kind: 'regex', pattern: 'x', max_input_chars: 10 }, text)).toEqual({
      status: 'unscorable',
      reason: "completion has 12 UTF-16 code units, above this regex's max_input_chars 10",
    });
    expect(check({ kind: 'length', unit: 'characters', max: 10 }, text)).toEqual({ status: 'ok', score: 1, reason: '6 characters, within max 10' });
  });
});
