// Span verification of a judge's quote (src/rubric/quoteMatch.ts via evidence.ts's findQuote):
// quotes that differ from the text by whitespace, case, Unicode form, quotation marks or dashes
// are found at the right UTF-16 offsets of the original text; quotes that are not there are not.
import { describe, expect, it } from 'vitest';
import { answerSpans, findQuote, quoteInAnswer, type Span } from '../../../src/rubric/evidence';
import { foldText, locateQuote } from '../../../src/rubric/quoteMatch';

const slice = (text: string, s: Span | null) => (s === null ? null : text.slice(s.start, s.end));

describe('quote verification', () => {
  it('finds a verbatim quote at its offsets', () => {
    const c = 'The capital of France is Paris.';
    expect(findQuote(c, 'capital of France')).toEqual({ start: 4, end: 21 });
  });

  it('tolerates whitespace runs of any width and kind (newlines, tabs, no-break spaces)', () => {
    const c = 'The capital\n\tof  France\u00a0is Paris.';
    expect(slice(c, findQuote(c, 'capital of France is'))).toBe('capital\n\tof  France\u00a0is');
    expect(slice(c, findQuote(c, '  capital   of\nFrance  '))).toBe('capital\n\tof  France');
  });

  it('ignores case', () => {
    const c = 'Water boils at 100 degrees.';
    expect(slice(c, findQuote(c, 'WATER BOILS'))).toBe('Water boils');
  });

  it('matches NFC and NFD forms of the same text both ways, mapping back to the original offsets', () => {
    const composed = 'Un café crème, s’il vous plaît.';
    const decomposed = composed.normalize('NFD');
    expect(decomposed.length).toBeGreaterThan(composed.length);
    expect(slice(decomposed, findQuote(decomposed, 'café crème'))).toBe('cafe\u0301 cre\u0300me');
    expect(slice(composed, findQuote(composed, 'cafe\u0301 cre\u0300me'))).toBe('café crème');
  });

  it('matches NFKC compatibility forms (ligatures, full-width letters, the ellipsis character)', () => {
    const c = 'A ﬁne result… ＡＢＣ';
    expect(slice(c, findQuote(c, 'fine result...'))).toBe('ﬁne result…');
    expect(slice(c, findQuote(c, 'abc'))).toBe('ＡＢＣ');
  });

  it('treats curly and straight quotation marks and apostrophes alike, and dash variants alike', () => {
    const c = 'She said “don’t panic” — twice.';
    expect(slice(c, findQuote(c, '"don\'t panic"'))).toBe('“don’t panic”');
    expect(slice(c, findQuote(c, "don't panic\" - twice"))).toBe('don’t panic” — twice');
    const straight = 'It\'s a "test".';
    expect(slice(straight, findQuote(straight, 'It’s a “test”'))).toBe('It\'s a "test"');
  });

  it('ignores invisible characters (zero-width space, soft hyphen) in the text', () => {
    const c = 'an ex\u00adtra\u200bordinary day';
    expect(slice(c, findQuote(c, 'extraordinary day'))).toBe('ex\u00adtra\u200bordinary day');
  });

  it('accepts a quote with a closing full stop the text lacks', () => {
    const c = 'the answer is 42 and nothing else';
    expect(slice(c, findQuote(c, 'the answer is 42.'))).toBe('the answer is 42');
  });

  it('keeps offsets right after astral characters (surrogate pairs)', () => {
    const c = '🙂🙂 great job';
    expect(findQuote(c, 'great')).toEqual({ start: 5, end: 10 });
  });

  it('rejects quotes that are not in the text', () => {
    const c = 'The capital of France is Paris.';
    expect(findQuote(c, 'The capital of Spain is Madrid')).toBeNull();
    expect(findQuote(c, 'capital of  Germany')).toBeNull();
    // Near misses: a changed letter, words in another order.
    expect(findQuote(c, 'capitol of France')).toBeNull();
    expect(findQuote(c, 'France of capital')).toBeNull();
  });

  it('rejects quotes that cut a word in two, and quotes with no letter or digit', () => {
    const c = 'Then the theory held.';
    expect(findQuote(c, 'he')).toBeNull(); // inside "Then", "the", "theory"
    expect(findQuote(c, 'heory')).toBeNull();
    expect(slice(c, findQuote(c, 'the'))).toBe('the'); // the whole word, not "The" of "Then"
    expect(findQuote(c, '...')).toBeNull();
    expect(findQuote(c, '   ')).toBeNull();
    expect(findQuote(c, '')).toBeNull();
  });

  it('folds the text with a map from each folded character to its original grapheme', () => {
    const f = foldText('A  “b”\n\nc');
    expect(f.text).toBe('a "b" c');
    expect(f.from.map((s) => s.start)).toEqual([0, 1, 3, 4, 5, 6, 8]);
    expect(f.from[1]).toEqual({ start: 1, end: 3 }); // the two spaces: one folded space
    expect(locateQuote('x', 'x')).toEqual({ start: 0, end: 1 });
  });

  it('reads the quote line of an answer; "Quote: none" is no quote', () => {
    expect(quoteInAnswer('yes\nQuote: none')).toBeNull();
    expect(quoteInAnswer('yes\nQuote: "N/A"')).toBeNull();
    const c = 'The sky’s blue today.';
    expect(answerSpans(c, 'yes\nQuote: "the sky\'s blue"')).toEqual([{ start: 0, end: 14 }]);
    expect(answerSpans(c, 'yes\nQuote: "the sea is green"')).toEqual([]);
    expect(answerSpans('none of that', 'yes\nQuote: none')).toEqual([]);
  });
});

describe('a long text', () => {
  it('finds the one whole-word match after 20,000 word-cutting ones (a quadratic search would time out)', () => {
    const c = `${'xa '.repeat(20_000)}a`;
    expect(findQuote(c, 'a')).toEqual({ start: c.length - 1, end: c.length });
    const mixed = `${'é xa '.repeat(5_000)}Ça va`;
    expect(slice(mixed, findQuote(mixed, 'ça VA'))).toBe('Ça va');
  });
});
