// Where a judge's quote lies in a completion, robust to how a model retypes text: Unicode forms
// (NFC/NFKC: "é" composed or not, "ﬁ" ligatures, full-width letters, "…" for "..."), curly vs
// straight quotation marks and apostrophes, dash variants, letter case, and whitespace runs of any
// width (a quote on one line of a text that wraps). Invisible characters (zero-width space, soft
// hyphen, BOM) are ignored. What is never accepted: a quote with no letter or digit, a quote whose
// ends cut a word in two ("he" inside "the"), and a quote that is not in the text at all — a
// quote that is not there is never credited.
//
// How: both texts are folded grapheme by grapheme (the fold below); each folded character keeps
// the [start, end) of the original grapheme it came from, so a match in the folded text maps back
// to UTF-16 offsets of the completion exactly as the judge received it.
import type { Span } from './evidence';

const INVISIBLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/gu;
const SINGLE_QUOTES = /[\u2018\u2019\u201a\u201b\u2032\u02bc\u0060\u00b4]/gu;
const DOUBLE_QUOTES = /[\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]/gu;
const DASHES = /[\u2010-\u2015\u2212]/gu;

/** One grapheme as the matcher compares it: NFKC, lowercase, straight quotes, "-" for dashes, no invisibles. */
export function foldGrapheme(g: string): string {
  return g.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(DASHES, '-');
}

export interface FoldedText {
  /** The folded text: whitespace runs are one space. */
  text: string;
  /** Per character of `text`, the original grapheme's [start, end) in UTF-16 code units. */
  from: Span[];
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** `original` folded, with the map back to its offsets. */
export function foldText(original: string): FoldedText {
  let text = '';
  const from: Span[] = [];
  const emit = (f: string, start: number, end: number) => {
    for (const ch of f) {
      if (/\s/u.test(ch)) {
        // A whitespace run is one space, covering the whole run.
        if (text.endsWith(' ')) from[from.length - 1].end = end;
        else {
          text += ' ';
          from.push({ start, end });
        }
        continue;
      }
      text += ch;
      for (let k = 0; k < ch.length; k++) from.push({ start, end });
    }
  };
  const n = original.length;
  // ASCII followed by ASCII (or the end) is a grapheme of its own: folded here without the
  // segmenter, which is slow; the rest goes through Intl.Segmenter a run at a time.
  const fast = (i: number) => original.charCodeAt(i) < 128 && (i + 1 >= n || original.charCodeAt(i + 1) < 128);
  let i = 0;
  while (i < n) {
    if (fast(i)) {
      const c = original[i];
      emit(c === '`' ? "'" : c.toLowerCase(), i, i + 1);
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && !fast(j)) j++;
    for (const { segment, index } of segmenter.segment(original.slice(i, j))) emit(foldGrapheme(segment), i + index, i + index + segment.length);
    i = j;
  }
  return { text, from };
}

const WORD = /[\p{L}\p{N}\p{M}_]/u;

/** Why a quote cannot be credited, or null when it is fit to look for. */
export function quoteProblem(quote: string): string | null {
  if (quote.trim() === '') return 'the quote is empty';
  if (!/[\p{L}\p{N}]/u.test(quote)) return 'the quote holds no letter or digit';
  return null;
}

/** The last code point of s (a surrogate pair whole). */
function lastChar(s: string): string {
  return Array.from(s.slice(-2)).at(-1) ?? '';
}

/**
 * The span of `quote` in `completion`, or null when it is not there (or has no letter or digit).
 * Folded (see the top of this file; a verbatim quote folds to itself), at whole-word boundaries;
 * then the same without the quote's own closing punctuation (a judge adds a full stop the text lacks).
 */
export function locateQuote(completion: string, quote: string): Span | null {
  const q = quote.trim();
  if (quoteProblem(q) !== null) return null;
  const folded = foldText(completion);
  const attempts = [foldText(q).text.trim()];
  const bare = attempts[0].replace(/[\s.,;:!?'"]+$/u, '').replace(/^[\s'"]+/u, '');
  if (bare !== attempts[0] && /[\p{L}\p{N}]/u.test(bare)) attempts.push(bare);
  for (const fq of attempts) {
    const checkStart = WORD.test(Array.from(fq)[0] ?? '');
    const checkEnd = WORD.test(lastChar(fq));
    for (let at = folded.text.indexOf(fq); at >= 0; at = folded.text.indexOf(fq, at + 1)) {
      const end = at + fq.length;
      if (checkStart && at > 0 && WORD.test(lastChar(folded.text.slice(Math.max(0, at - 2), at)))) continue;
      if (checkEnd && end < folded.text.length && WORD.test(Array.from(folded.text.slice(end, end + 2))[0])) continue;
      return { start: folded.from[at].start, end: folded.from[end - 1].end };
    }
  }
  return null;
}
