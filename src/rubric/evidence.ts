// Evidence spans: the characters of a completion that made a criterion pass or fail, for token
// credit (src/rl/credit). Offsets are UTF-16 code units of the completion exactly as the judge
// received it (JavaScript string indices), [start, end). Rules judge the NFC form of the text
// (rules.ts), so spans found there are mapped back to the original string; a completion whose
// NFC form cannot be aligned grapheme by grapheme gets no spans rather than wrong ones.
//
// What each rule points at (whether it passed or failed):
//   contains / not_contains  the first occurrence of every term found
//   regex                    the first match (non-empty)
//   length                   above max: the words (characters) past the limit; tokens: none
//   count                    above max: the sentences, lines or bullets past the limit
//   starts_with / ends_with  the first / the last sentence
//   all_caps / no_caps       the words holding a letter of the wrong case
//   json                     none (the whole text is the evidence: no localisation)
// Model judges may quote the completion; a quote is credited only where it is found in the text.
import { locateQuote } from './quoteMatch';
import { compileSafeRegex, safeRegexSearch } from './safeRegex';
import type { Rule, RuleOf } from './schema';

/** [start, end) in UTF-16 code units of the completion. */
export interface Span {
  start: number;
  end: number;
}

/** Spans kept per criterion result (the first ones in text order). */
export const MAX_SPANS = 32;

/** Sorted, overlapping or touching spans merged, empty ones dropped, at most MAX_SPANS. */
export function normaliseSpans(spans: readonly Span[]): Span[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out.slice(0, MAX_SPANS);
}

// ---- phrases (the same matching as rules.ts: whitespace runs flexible, optional whole word) ----

const escapeLiteral = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;

function charBefore(text: string, i: number): string {
  if (i <= 0) return '';
  const low = text.charCodeAt(i - 1);
  return i >= 2 && low >= 0xdc00 && low <= 0xdfff ? text.slice(i - 2, i) : text[i - 1];
}

function charAt(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** The first occurrence of `phrase` in `text` as a span, or null. */
export function phraseSpan(text: string, phrase: string, caseSensitive: boolean, wholeWord: boolean): Span | null {
  const trimmed = phrase.normalize('NFC').trim();
  if (trimmed === '') return null;
  const re = new RegExp(trimmed.split(/\s+/u).map(escapeLiteral).join('\\s+'), `g${caseSensitive ? '' : 'i'}u`);
  const checkStart = wholeWord && WORD_CHAR.test(charAt(trimmed, 0));
  const checkEnd = wholeWord && WORD_CHAR.test(charBefore(trimmed, trimmed.length));
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const end = m.index + m[0].length;
    if ((!checkStart || !WORD_CHAR.test(charBefore(text, m.index))) && (!checkEnd || !WORD_CHAR.test(charAt(text, end)))) return { start: m.index, end };
    re.lastIndex = m.index + 1;
  }
  return null;
}

// ---- pieces of text: words, sentences, lines ----

/** Words as rules count them (runs of non-space holding a letter or digit). */
function wordSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(/\S+/gu)) if (/[\p{L}\p{N}]/u.test(m[0])) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

const TERMINATORS = '.!?…';
const CLOSERS = '"\'”’)]';

/** Sentences with the boundaries text.ts's countSentences uses, each trimmed of surrounding space. */
export function sentenceSpans(text: string): Span[] {
  const out: Span[] = [];
  let start = 0;
  let content = false;
  const close = (end: number) => {
    if (content) {
      const piece = text.slice(start, end);
      const lead = piece.length - piece.trimStart().length;
      out.push({ start: start + lead, end: start + piece.trimEnd().length });
    }
    content = false;
    start = end;
  };
  let i = 0;
  while (i < text.length) {
    const c = charAt(text, i);
    let next = i + c.length;
    if (/[\p{L}\p{N}]/u.test(c)) content = true;
    else if ('。！？'.includes(c)) close(next);
    else if (TERMINATORS.includes(c)) {
      while (next < text.length && (TERMINATORS.includes(text[next]) || CLOSERS.includes(text[next]))) next++;
      if (next === text.length || /\s/u.test(charAt(text, next))) close(next);
    } else if (c === '\n') {
      let j = next;
      while (j < text.length && text[j] !== '\n' && /\s/u.test(text[j])) j++;
      if (j < text.length && text[j] === '\n') {
        close(i);
        next = j + 1;
        start = next;
      }
    }
    i = next;
  }
  close(text.length);
  return out;
}

function lineSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(/[^\r\n]+/gu)) if (m[0].trim() !== '') out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

const BULLET = /^\s*(?:[-*+•‣◦▪]|\d{1,3}[.)])\s+\S/u;

/** The span covering the pieces past the first `max`, or none. */
function pastLimit(pieces: readonly Span[], max: number | undefined): Span[] {
  if (max === undefined || pieces.length <= max) return [];
  return [{ start: pieces[max].start, end: pieces[pieces.length - 1].end }];
}

function caseSpans(rule: RuleOf<'all_caps'> | RuleOf<'no_caps'>, text: string): Span[] {
  const wrong = rule.kind === 'all_caps' ? /\p{Ll}/u : /[\p{Lu}\p{Lt}]/u;
  return wordSpans(text).filter((w) => wrong.test(text.slice(w.start, w.end)));
}

/** Evidence spans of a rule on `text` (the NFC text the rule judged). */
export function ruleSpans(rule: Rule, text: string): Span[] {
  switch (rule.kind) {
    case 'contains':
    case 'not_contains':
      return normaliseSpans(rule.terms.flatMap((t) => phraseSpan(text, t, rule.case_sensitive, rule.whole_word) ?? []));
    case 'regex': {
      if (text.length > rule.max_input_chars) return [];
      const m = safeRegexSearch(compileSafeRegex(rule.pattern, rule.flags), text);
      return m && m.end > m.index ? [{ start: m.index, end: m.end }] : [];
    }
    case 'length':
      if (rule.unit === 'words') return pastLimit(wordSpans(text), rule.max);
      if (rule.unit === 'characters') {
        const cps = Array.from(text);
        if (rule.max === undefined || cps.length <= rule.max) return [];
        const start = cps.slice(0, rule.max).join('').length;
        return [{ start, end: text.length }];
      }
      return []; // tokens: the counter gives no offsets
    case 'count': {
      const pieces = rule.unit === 'sentences' ? sentenceSpans(text) : rule.unit === 'lines' ? lineSpans(text) : lineSpans(text).filter((l) => BULLET.test(text.slice(l.start, l.end)));
      return normaliseSpans(pastLimit(pieces, rule.max));
    }
    case 'starts_with':
      return sentenceSpans(text).slice(0, 1);
    case 'ends_with':
      return sentenceSpans(text).slice(-1);
    case 'all_caps':
    case 'no_caps':
      return normaliseSpans(caseSpans(rule, text));
    case 'json':
      return [];
  }
}

// ---- NFC text → original text ----

/**
 * Spans found in original.normalize('NFC') as spans of `original`. Normalises grapheme by
 * grapheme; boundaries inside a grapheme widen to the whole grapheme. Null when the pieces do not
 * add up to the NFC text (then the caller drops the spans).
 */
export function spansInOriginal(original: string, spans: readonly Span[]): Span[] | null {
  const nfc = original.normalize('NFC');
  if (nfc === original) return spans.map((s) => ({ ...s }));
  // Grapheme boundaries: [nfcOffset, originalOffset] pairs.
  const marks: [number, number][] = [[0, 0]];
  let built = '';
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment, index } of segmenter.segment(original)) {
    built += segment.normalize('NFC');
    marks.push([built.length, index + segment.length]);
  }
  if (built !== nfc) return null;
  const down = (x: number) => {
    let best = marks[0][1];
    for (const [n, o] of marks) if (n <= x) best = o;
    return best;
  };
  const up = (x: number) => {
    for (const [n, o] of marks) if (n >= x) return o;
    return original.length;
  };
  return normaliseSpans(spans.map((s) => ({ start: down(s.start), end: up(s.end) })));
}

// ---- quotes from model judges ----

/** The quote a judge's answer gives on a "Quote:" (or "Evidence:") line, without its quotation marks; null when none. */
export function quoteInAnswer(answer: string): string | null {
  const m = /(?:^|\n)[\s*_]*(?:quote|evidence)[\s*_]*[:=][\s*_]*(.+)/iu.exec(answer);
  if (!m) return null;
  const q = m[1].trim().replace(/^["'“‘`«]+/u, '').replace(/["'”’`»]+[.,;]?$/u, '').trim();
  // "Quote: none" is the judge saying it has no evidence, not a quote of the word "none".
  return q === '' || /^(?:none|n\/a|nothing|no quote)\.?$/iu.test(q) ? null : q;
}

/**
 * Where `quote` occurs in `completion`, ignoring Unicode form, case, quotation-mark and dash
 * variants and the width of whitespace runs, at whole-word ends (quoteMatch.ts). Null when it is
 * not there: a quote that is not in the text is never credited.
 */
export function findQuote(completion: string, quote: string): Span | null {
  return locateQuote(completion, quote);
}

/** The evidence a judge's answer quotes, as a span of the completion: [] when it quotes nothing or a text not in it. */
export function answerSpans(completion: string, answer: string): Span[] {
  const quote = quoteInAnswer(answer);
  const span = quote === null ? null : findQuote(completion, quote.slice(0, 2000));
  return span ? [span] : [];
}
