// A shared link round-trips its prompts exactly (issue 19): spaces at either end, whitespace-only
// prompts, a byte-order mark, CRLF and lone CR, combining marks, emoji, right-to-left text, NUL
// and lone surrogates come back character for character, both through the link itself and
// through the builder's path (the one-per-line editor, a text box's line-break normalisation,
// the builder's validation, Share).
import { describe, expect, it } from 'vitest';
import { rng } from '../../helpers/random';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { blankPromptNumbers, promptsToText, textToPrompts } from '../../../src/ui/lib/promptImport';
import { validateExperiment } from '../../../src/ui/lib/validate';

const PIECES = [
  ' ', '  ', '\t', '\u00a0', '\u3000', '\ufeff', '\r\n', '\r', '\n', '\n\n', '\u2028', '\u2029', '\v', '\f',
  'e\u0301', '\u0301', '😀', '👨‍👩‍👧', '🏳️‍🌈', 'שלום', 'مرحبا', '\u202e', '\u200b', '\u200d', '\0', '\u0007',
  '\\', '\\n', '\\r', '\\\\n', '"', "'", '<b>', 'a', 'Describe the sea.', '漢字', '\ud800', '\udfff', 'ﬁ', 'Å',
];

/** n prompts built from the pieces above, none empty. */
function prompts(seed: number, n: number): string[] {
  const rand = rng(seed);
  return Array.from({ length: n }, () => {
    let p = '';
    const k = 1 + Math.floor(rand() * 6);
    for (let i = 0; i < k; i++) p += PIECES[Math.floor(rand() * PIECES.length)];
    return p;
  });
}

/** What a browser's <textarea> does to its value: CRLF and lone CR become LF. */
const textarea = (text: string) => text.replace(/\r\n?/g, '\n');

const sharedWith = (ps: string[]): Shared => ({ experiment: { ...structuredClone(FIRST_VISIT.experiment), prompts: ps } });

/** Opening a link in the builder and pressing Share, without the page: load → edit text → validate → encode. */
function reshare(link: string): string {
  const opened = decodeShareLink(link).experiment;
  const text = textarea(promptsToText(opened.prompts));
  const validation = validateExperiment({ ...opened, prompts: textToPrompts(text) });
  expect(validation.issues).toEqual([]);
  return encodeShareLink({ experiment: validation.experiment as Shared['experiment'] });
}

describe('prompts round-trip through a link and the builder', () => {
  it('the reported cases: spaces at the ends, whitespace-only, BOM, CRLF', () => {
    const ps = ['  leading', 'trailing  ', '   ', '\t', '\ufeffBOM first', 'CR\r\nLF', 'lone\rCR', 'last\n'];
    expect(textToPrompts(textarea(promptsToText(ps)))).toEqual(ps);
    const link = encodeShareLink(sharedWith(ps));
    expect(decodeShareLink(link).experiment.prompts).toEqual(ps);
    expect(reshare(link)).toBe(link);
    expect(blankPromptNumbers(ps)).toEqual([3, 4]);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('random unicode prompts, seed %i: encode → decode → encode is the identity', (seed) => {
    const ps = prompts(seed, 40);
    const link = encodeShareLink(sharedWith(ps));
    const back = decodeShareLink(link).experiment.prompts;
    expect(back).toEqual(ps);
    expect(encodeShareLink(sharedWith(back))).toBe(link);
    // The editor text is one line per prompt, and the text box cannot break it.
    const text = promptsToText(ps);
    expect(text.split('\n')).toHaveLength(ps.length);
    expect(textToPrompts(textarea(text))).toEqual(ps);
    expect(reshare(link)).toBe(link);
  });

  it('only empty lines are skipped when typing; everything else is a prompt as written', () => {
    expect(textToPrompts('  one  \n\n   \ntwo\r\nthree\rfour\n')).toEqual(['  one  ', '   ', 'two', 'three', 'four']);
    expect(textToPrompts('a \\r b \\n c \\\\ d \\t e')).toEqual(['a \r b \n c \\ d \\t e']);
  });
});
