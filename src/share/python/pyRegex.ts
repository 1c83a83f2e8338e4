// Rewrites a rubric regex (JavaScript syntax, already accepted by compileSafeRegex) into a Python
// `re` pattern that matches the same way the page does (RE2 semantics, see src/rubric/safeRegex.ts):
//  - \d \w \s are ASCII in RE2 ([0-9], [0-9A-Za-z_], [\t\n\f\r ]); Python's are Unicode: written out.
//  - \b \B are ASCII word boundaries whatever the flags: written as lookarounds on (?-i:[0-9A-Za-z_]).
//  - $ without the m flag is the end of the text; Python's $ also matches before a final "\n": \Z.
//  - \p{..} \P{..} (u flag) become explicit code point ranges from this engine's Unicode tables.
//  - \u{..}, \cX, \0 become \U........, \x.. ; (?<name>..) and (..) become (?:..) (only matching counts).
//  - A literal "{" (not a quantifier in JavaScript) is escaped: Python reads "{,5}" as a quantifier.
//  - Character classes are written as sorted code point ranges with every non-alphanumeric escaped.
// Flags i, m, s map to Python's IGNORECASE, MULTILINE, DOTALL; u changes only the syntax (RE2
// always reads code points). Known differences that remain: under i, Python folds "İ" and "ı" with
// "i" and RE2 does not; Python's re backtracks, so an ambiguous (a|aa)* that RE2 runs in linear
// time can be slow there (the safety checks reject the nested-quantifier shapes only).
import { compileSafeRegex } from '../../rubric/safeRegex';
import { complementRanges, mergeRanges, rangesOf, MAX_CODE_POINT, type CodePointRange } from './unicodeRanges';

export interface PythonRegex {
  pattern: string;
  /** Python flag letters: a subset of "ims". */
  flags: string;
}

const DIGIT: CodePointRange[] = [[0x30, 0x39]];
const WORD: CodePointRange[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: CodePointRange[] = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
];
const WORD_CLASS = '(?-i:[0-9A-Za-z_])';
const WORD_BOUNDARY = `(?:(?<=${WORD_CLASS})(?!${WORD_CLASS})|(?<!${WORD_CLASS})(?=${WORD_CLASS}))`;
const NOT_WORD_BOUNDARY = `(?:(?<=${WORD_CLASS})(?=${WORD_CLASS})|(?<!${WORD_CLASS})(?!${WORD_CLASS}))`;

type Atom = { cp: number } | { set: CodePointRange[] } | { text: string };

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** One code point as Python pattern text: letters and digits as they are, anything else escaped. */
function pyChar(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) return String.fromCodePoint(cp);
  return cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
}

function pyClass(ranges: readonly CodePointRange[], negate: boolean): string {
  const merged = mergeRanges(ranges);
  if (merged.length === 0) return negate ? `[\\u0000-\\U${hex(MAX_CODE_POINT, 8)}]` : `[^\\u0000-\\U${hex(MAX_CODE_POINT, 8)}]`;
  const body = merged.map(([lo, hi]) => (lo === hi ? pyChar(lo) : `${pyChar(lo)}-${pyChar(hi)}`)).join('');
  return `[${negate ? '^' : ''}${body}]`;
}

function property(src: string, at: number): { set: CodePointRange[]; end: number } {
  const close = src.indexOf('}', at);
  const name = src.slice(at + 3, close);
  const positive = rangesOf(`\\p{${name}}`);
  return { set: src[at + 1] === 'P' ? complementRanges(positive) : positive, end: close + 1 };
}

/** The escape at `at` (a backslash) and where it ends. */
function escapeAt(src: string, at: number, inClass: boolean): { atom: Atom; end: number } {
  const c = src[at + 1];
  switch (c) {
    case 'd':
      return { atom: { set: DIGIT }, end: at + 2 };
    case 'D':
      return { atom: { set: complementRanges(DIGIT) }, end: at + 2 };
    case 'w':
      return { atom: { set: WORD }, end: at + 2 };
    case 'W':
      return { atom: { set: complementRanges(WORD) }, end: at + 2 };
    case 's':
      return { atom: { set: SPACE }, end: at + 2 };
    case 'S':
      return { atom: { set: complementRanges(SPACE) }, end: at + 2 };
    case 'b':
      if (inClass) return { atom: { cp: 8 }, end: at + 2 }; // [\b]: rejected by RE2 before we get here
      return { atom: { text: WORD_BOUNDARY }, end: at + 2 };
    case 'B':
      return { atom: { text: NOT_WORD_BOUNDARY }, end: at + 2 };
    case 't':
      return { atom: { cp: 9 }, end: at + 2 };
    case 'n':
      return { atom: { cp: 10 }, end: at + 2 };
    case 'v':
      return { atom: { cp: 11 }, end: at + 2 };
    case 'f':
      return { atom: { cp: 12 }, end: at + 2 };
    case 'r':
      return { atom: { cp: 13 }, end: at + 2 };
    case '0':
      return { atom: { cp: 0 }, end: at + 2 };
    case 'c':
      return { atom: { cp: src.charCodeAt(at + 2) % 32 }, end: at + 3 };
    case 'x':
      return { atom: { cp: parseInt(src.slice(at + 2, at + 4), 16) }, end: at + 4 };
    case 'u':
      if (src[at + 2] === '{') {
        const close = src.indexOf('}', at);
        return { atom: { cp: parseInt(src.slice(at + 3, close), 16) }, end: close + 1 };
      }
      return { atom: { cp: parseInt(src.slice(at + 2, at + 6), 16) }, end: at + 6 };
    case 'p':
    case 'P': {
      const { set, end } = property(src, at);
      return { atom: { set }, end };
    }
    default: {
      const cp = src.codePointAt(at + 1)!;
      return { atom: { cp }, end: at + 1 + String.fromCodePoint(cp).length };
    }
  }
}

/** The character class opening at `at`, as Python text, and where it ends. */
function classAt(src: string, at: number): { text: string; end: number } {
  let i = at + 1;
  const negate = src[i] === '^';
  if (negate) i++;
  const ranges: CodePointRange[] = [];
  const read = (): Atom => {
    if (src[i] === '\\') {
      const { atom, end } = escapeAt(src, i, true);
      i = end;
      return atom;
    }
    const cp = src.codePointAt(i)!;
    i += String.fromCodePoint(cp).length;
    return { cp };
  };
  const add = (a: Atom) => {
    if ('cp' in a) ranges.push([a.cp, a.cp]);
    else if ('set' in a) ranges.push(...a.set);
  };
  while (src[i] !== ']') {
    const first = read();
    if (src[i] === '-' && src[i + 1] !== ']' && 'cp' in first) {
      i++;
      const second = read();
      if ('cp' in second) ranges.push([first.cp, second.cp]);
      else {
        // Without the u flag, [\w-z] is \w, "-" and "z" (with it, a syntax error).
        add(first);
        ranges.push([0x2d, 0x2d]);
        add(second);
      }
    } else add(first);
  }
  return { text: pyClass(ranges, negate), end: i + 1 };
}

const QUANTIFIER = /^\{\d+(?:,\d*)?\}/;

/** The Python form of a rubric regex; throws RegexRejected for a pattern the page would reject. */
export function toPythonRegex(pattern: string, flags = ''): PythonRegex {
  compileSafeRegex(pattern, flags);
  const multiline = flags.includes('m');
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      const { atom, end } = escapeAt(pattern, i, false);
      out += 'cp' in atom ? pyChar(atom.cp) : 'set' in atom ? pyClass(atom.set, false) : atom.text;
      i = end;
    } else if (c === '[') {
      const { text, end } = classAt(pattern, i);
      out += text;
      i = end;
    } else if (c === '(') {
      if (pattern.startsWith('(?<', i)) i = pattern.indexOf('>', i) + 1;
      else if (pattern.startsWith('(?:', i)) i += 3;
      else i += 1;
      out += '(?:';
    } else if (c === '{') {
      const q = QUANTIFIER.exec(pattern.slice(i));
      if (q) {
        out += q[0];
        i += q[0].length;
      } else {
        out += '\\{';
        i++;
      }
    } else if (c === '$') {
      out += multiline ? '$' : '\\Z';
      i++;
    } else if ('^.|)*+?'.includes(c)) {
      out += c;
      i++;
    } else {
      const cp = pattern.codePointAt(i)!;
      out += pyChar(cp);
      i += String.fromCodePoint(cp).length;
    }
  }
  return { pattern: out, flags: ['i', 'm', 's'].filter((f) => flags.includes(f)).join('') };
}
