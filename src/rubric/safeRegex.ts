// Regular expressions from rubric authors, made safe to run on model output and to export.
//
// Why not `new RegExp(pattern).test(text)`: JavaScript's engine backtracks, so (a+)+$ takes
// exponential time on "aaaa…b" and even .*a.*b.*c takes cubic time. A rubric is shared data: the
// page must not hang on whatever pattern a link carries. So:
//  1. Matching runs on re2js, a pure-JavaScript port of RE2 (no WASM, nothing fetched at run time).
//     It never backtracks: time is linear in input length x program size, for every pattern.
//  2. Both factors are bounded: the input by the rule's max_input_chars (checked in rules.ts), the
//     program by MAX_PROGRAM_SIZE below. RE2's own limits (counts up to 1000) still let \w{0,999}\W
//     compile to 2001 instructions: 1.1 s on 10,000 characters, 12 s on 100,000 (Node 20, one core).
//     At 999 instructions (\w{0,498}\W) the same takes 0.9 s and 5.4 s.
//  3. Static checks (a clear message before training starts) keep rubrics safe when exported to a
//     backtracking engine (Python `re`, the TRL export): pattern length <= 200, flags from i, m, s, u,
//     no backreferences or lookaround, and no variable quantifier inside a group repeated more than
//     once ((a+)+, (\w*,)*, (x?){3}): the common exponential shapes. (cat|dog)+ is accepted, though
//     an ambiguous (a|a)+ stays slow in backtracking engines; no simple static rule tells them apart.
//
// Syntax is JavaScript's: the native RegExp constructor validates it (its messages name the error,
// and it never runs on input), RE2JS.translateRegExp rewrites the JavaScript-only spellings (\u{..},
// \uXXXX, \cX, (?<name>), [^]) for RE2, and RE2 rejects what it lacks ([\b], \p{Script=Greek}) with
// its own message. Escapes that both would accept with different meanings are rejected here: \p{..}
// and \u{..} without the u flag, surrogate escapes, and letter escapes JavaScript does not define
// (\a \A \z \Q \x{..}: the plain letter in JavaScript, special in RE2, errors in Python); so is "[:"
// in a class (a POSIX class in RE2).
//
// Where RE2 matching differs from JavaScript's RegExp. Everything else agrees: leftmost-first
// alternation, greedy and lazy quantifiers, ^ $ \b \B, ASCII \d and \w, match position and length.
//  - RE2 reads text by code point with Unicode simple case folding, as JavaScript does with the u
//    flag; here the u flag changes only the syntax check. Without it JavaScript sees an emoji as two
//    units: /./ matches half of one there and all of it here; /ß/i also matches "ẞ" here.
//  - `.` excludes only \n (JavaScript also \r, \u2028, \u2029); with the m flag, ^ and $ see line
//    breaks only at \n (JavaScript also at \r, \u2028, \u2029).
//  - \s is ASCII [\t\n\f\r ] (JavaScript adds \v, \u00a0, \ufeff and the other Unicode spaces).
//  - Empty iterations: JavaScript rejects an optional iteration of a quantifier that matched the empty
//    string and tries the next alternative; RE2 accepts it. So a repeated or optional group whose
//    preferred way matches empty differs: /(?:|a)+/ and /(?:a*|b)?/ match "" on "aa" and "b" here,
//    "aa" and "b" in JavaScript; /(?:a|)+/ agrees.
//  - \p{..} uses re2js's Unicode tables, which may be a newer Unicode version than the browser's.
//  - V8 (Chrome, Node) can report an empty match between the halves of a surrogate pair even with
//    the u flag (/\B/u on "b😀 " at 2); RE2 never splits a character (3 here).
import { RE2JS, RE2JSException } from 're2js';

export const MAX_PATTERN_LENGTH = 200;
export const ALLOWED_FLAGS = 'imsu';
/** RE2 instructions (re2js's programSize()); matching costs input length x this. */
export const MAX_PROGRAM_SIZE = 1000;
/**
 * Most regex work one response may cost, in RE2 instructions x input characters, summed over a
 * rubric's regex rules (each counted at its max_input_chars: the worst case). Measured at about
 * 50 ns a unit on one core (Node 22, \w{0,498}\W on 10,000 letters: 999 instructions, 0.5 s), so
 * this bound is about 1 s of matching per response, in the trainer worker and in "Try it" alike.
 * Without it, 100 such patterns at max_input_chars 100,000 cost 10^10 units: minutes per response.
 */
export const MAX_REGEX_WORK = 20_000_000;

/** A pattern that is invalid or unsafe; the message says which and why. */
export class RegexRejected extends Error {
  override name = 'RegexRejected';
}

export interface SafeRegex {
  readonly pattern: string;
  readonly flags: string;
  /** The compiled RE2 program. */
  readonly re2: RE2JS;
}

export interface RegexMatch {
  /** UTF-16 offsets into the input, like RegExp's `index` and `index + match.length`. */
  index: number;
  end: number;
}

interface Span {
  from: number;
  to: number;
}

/** Letters JavaScript defines as escapes (\b \B included), besides \c \x \u \p \P \k handled apart. */
const LETTER_ESCAPES = 'bBdDwWsStnrvf';

/** End of the escape whose backslash is at `at`; throws on escapes unsupported or read differently by RE2. */
function escapeEnd(src: string, at: number, unicode: boolean, inClass: boolean): number {
  const c = src[at + 1];
  const rest = src.slice(at + 2);
  if (c >= '1' && c <= '9') {
    throw new RegexRejected(inClass ? 'octal escapes are not supported' : `backreferences ("\\${c}") are not supported`);
  }
  if (c === 'k' && !inClass) throw new RegexRejected('named backreferences ("\\k<name>") are not supported');
  if (c === '0') {
    if (/^[0-9]/.test(rest)) throw new RegexRejected('octal escapes are not supported');
    return at + 2;
  }
  if (c === 'c') {
    if (/^[a-zA-Z]/.test(rest)) return at + 3;
    throw new RegexRejected(`unsupported escape "\\c" at ${at}`);
  }
  if (c === 'x' && /^[0-9a-fA-F]{2}/.test(rest)) return at + 4;
  if ((c === 'u' && rest.startsWith('{')) || c === 'p' || c === 'P') {
    if (!unicode) throw new RegexRejected(`"\\${c}{...}" at ${at} needs the u flag (without it JavaScript reads "${c}{...}" literally)`);
    return src.indexOf('}', at) + 1;
  }
  const hex = c === 'u' ? /^[0-9a-fA-F]{4}/.exec(rest) : null;
  if (hex) {
    const unit = parseInt(hex[0], 16);
    if (unit >= 0xd800 && unit <= 0xdfff) {
      throw new RegexRejected(`surrogate escape "\\u${hex[0]}" at ${at} is not supported; write the character itself, or "\\u{...}" with the u flag`);
    }
    return at + 6;
  }
  if (LETTER_ESCAPES.includes(c)) return at + 2;
  if (/[a-zA-Z]/.test(c)) {
    throw new RegexRejected(`escape "\\${c}" at ${at} is not supported (JavaScript reads it as "${c}", RE2 and Python do not); write "${c}"`);
  }
  // An identity escape (\. \* \/ ...): one code point.
  return at + 1 + String.fromCodePoint(src.codePointAt(at + 1) ?? 0).length;
}

/** End of the character class opening at `at`. Without the v flag classes do not nest. */
function classEnd(src: string, at: number, unicode: boolean): number {
  let i = src[at + 1] === '^' ? at + 2 : at + 1;
  while (i < src.length && src[i] !== ']') {
    if (src[i] === '\\') {
      i = escapeEnd(src, i, unicode, true);
      continue;
    }
    if (src[i] === '[' && src[i + 1] === ':') {
      throw new RegexRejected(`"[:" at ${i} inside a character class reads as a POSIX class in RE2; write "\\[:"`);
    }
    i++;
  }
  return i + 1;
}

/** Where the body of the group opening at `at` starts; throws on lookaround and other (?...) forms. */
function groupBodyStart(src: string, at: number): number {
  const head = src.slice(at + 1, at + 4);
  if (/^\?(=|!|<=|<!)/.test(head)) throw new RegexRejected('lookahead and lookbehind are not supported');
  if (head.startsWith('?:')) return at + 3;
  if (head.startsWith('?<')) return src.indexOf('>', at) + 1; // a named group: the name is irrelevant here
  if (head.startsWith('?')) throw new RegexRejected(`unsupported group syntax "(${head}" at ${at}`);
  return at + 1;
}

function quantifierAt(src: string, at: number): { min: number; max: number; end: number } | null {
  const m = /^(?:([*+?])|\{(\d+)(,(\d*))?\})\??/.exec(src.slice(at));
  if (!m) return null; // none, or a literal '{' (allowed without the u flag)
  const end = at + m[0].length;
  if (m[1] !== undefined) return { min: m[1] === '+' ? 1 : 0, max: m[1] === '?' ? 1 : Infinity, end };
  const min = Number(m[2]);
  return { min, max: m[3] === undefined ? min : m[4] === '' ? Infinity : Number(m[4]), end };
}

/**
 * Walks the pattern once (its syntax is already valid JavaScript), checking escapes and groups, and
 * rejects a variable quantifier inside a group repeated more than once: the exponential shapes.
 */
function checkShape(src: string, unicode: boolean): void {
  // One frame per open group: where it opened and the first variable-quantified item inside it.
  const frames: { open: number; variable: Span | null }[] = [{ open: 0, variable: null }];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '(') {
      frames.push({ open: i, variable: null });
      i = groupBodyStart(src, i);
      continue;
    }
    if (c === '|') {
      i++;
      continue;
    }
    let from = i;
    let variable: Span | null = null;
    if (c === ')') {
      const group = frames.pop() as { open: number; variable: Span | null }; // balanced: validated natively
      from = group.open;
      variable = group.variable;
      i++;
    } else if (c === '[') i = classEnd(src, i, unicode);
    else if (c === '\\') i = escapeEnd(src, i, unicode, false);
    else i += String.fromCodePoint(src.codePointAt(i) ?? 0).length;
    const q = quantifierAt(src, i);
    if (q) {
      const outer = { from, to: q.end };
      if (q.max > 1 && variable) {
        throw new RegexRejected(
          `nested quantifier: "${src.slice(outer.from, outer.to)}" repeats "${src.slice(variable.from, variable.to)}", which backtracks ` +
            'catastrophically (exponential time) in backtracking regex engines; rewrite it without the inner quantifier ' +
            'or use a length/count rule',
        );
      }
      if (q.min !== q.max) variable = outer;
      i = q.end;
    }
    const top = frames[frames.length - 1];
    top.variable ??= variable;
  }
}

// Compiled patterns (and rejections), by flags and pattern: the builder re-validates the whole rubric
// on every keystroke and a large pattern takes milliseconds to check and compile. A SafeRegex is
// immutable (each search makes its own matcher), so sharing one is safe.
const compiled = new Map<string, SafeRegex | RegexRejected>();
const MAX_CACHED = 512;

/** Checks a pattern and compiles it for RE2; throws RegexRejected saying what is wrong. Cached. */
export function compileSafeRegex(pattern: string, flags = ''): SafeRegex {
  const key = `${flags}\u0000${pattern}`;
  let entry = compiled.get(key);
  if (entry === undefined) {
    try {
      entry = compileUncached(pattern, flags);
    } catch (e) {
      if (!(e instanceof RegexRejected)) throw e;
      entry = e;
    }
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(key, entry);
  }
  if (entry instanceof RegexRejected) throw new RegexRejected(entry.message);
  return entry;
}

/** Worst-case matching cost of one search (see MAX_REGEX_WORK): instructions x characters. */
export function regexWork(re: SafeRegex, inputChars: number): number {
  return re.re2.programSize() * inputChars;
}

function compileUncached(pattern: string, flags: string): SafeRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new RegexRejected(`pattern is ${pattern.length} characters long (limit ${MAX_PATTERN_LENGTH})`);
  }
  for (const [i, f] of [...flags].entries()) {
    if (!ALLOWED_FLAGS.includes(f)) throw new RegexRejected(`flag "${f}" is not allowed (allowed: i, m, s, u)`);
    if (flags.indexOf(f) !== i) throw new RegexRejected(`flag "${f}" is repeated`);
  }
  try {
    new RegExp(pattern, flags); // syntax check only; never run on input
  } catch (e) {
    // V8 says "Invalid regular expression: /a(b/: Unterminated group": keep the last part.
    const message = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    throw new RegexRejected(`invalid regular expression: ${message}`);
  }
  checkShape(pattern, flags.includes('u'));
  const bits =
    (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes('s') ? RE2JS.DOTALL : 0) | (flags.includes('m') ? RE2JS.MULTILINE : 0);
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    // re2js says "error parsing regexp: invalid repeat count: `{1001}`": keep the last part.
    const message = e.message.replace(/^error parsing regexp: /, '');
    const hint = /repeat count/.test(message) ? ' (counts go up to 1000, nested counts multiplied)' : '';
    throw new RegexRejected(`not supported by the RE2 engine: ${message}${hint}`);
  }
  const size = re2.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw new RegexRejected(`pattern is too large once counted repetitions are expanded (${size} RE2 instructions, limit ${MAX_PROGRAM_SIZE})`);
  }
  return { pattern, flags, re2 };
}

/** The leftmost-first match (the one RegExp finds, except where the header says), in linear time. */
export function safeRegexSearch(re: SafeRegex, input: string): RegexMatch | null {
  const m = re.re2.matcher(input);
  return m.find() ? { index: m.start(), end: m.end() } : null;
}
