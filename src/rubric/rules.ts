// Declarative rule checks: data in, score in [0, 1] and a short reason out. No rule runs code
// from the rubric; user regexes are checked and run by safeRegex.ts (re2js, linear time).
import type { Rule, RuleOf } from './schema';
import { compileSafeRegex, safeRegexSearch, type SafeRegex } from './safeRegex';
import { jsonShapeMismatch } from './jsonShape';
import {
  approximateTokens,
  caseCounts,
  countBullets,
  countCharacters,
  countLines,
  countSentences,
  countWords,
  quote,
  type TokenCounter,
} from './text';

export type RuleOutcome =
  | { status: 'ok'; score: number; reason: string }
  /** The input cannot be judged by this rule (too long for the regex cap, tokenizer failure). */
  | { status: 'unscorable'; reason: string };

export interface RuleContext {
  /** Exact token counts for length rules in tokens; without it the count is approximateTokens(). */
  countTokens?: TokenCounter;
}

const ok = (score: number, reason: string): RuleOutcome => ({ status: 'ok', score, reason });
const pass = (reason: string) => ok(1, reason);
const fail = (reason: string) => ok(0, reason);

/** Small memo for compiled patterns (rubrics reuse the same few for every completion). */
class Memo<T> {
  private readonly map = new Map<string, T>();
  constructor(private readonly make: (key: string) => T) {}
  get(key: string): T {
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= 512) this.map.clear();
      v = this.make(key);
      this.map.set(key, v);
    }
    return v;
  }
}

// ---- literal search (contains, starts_with, ends_with) ----

const escapeLiteral = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/** A phrase as a native regex: literal text, any run of whitespace where the phrase has spaces. */
function phraseSource(phrase: string): string {
  return phrase.normalize('NFC').trim().split(/\s+/u).map(escapeLiteral).join('\\s+');
}

// Key: flags, NUL, source. Literal pieces separated by \s+ cannot backtrack more than linearly.
const literalRegexes = new Memo((key) => {
  const cut = key.indexOf('\u0000');
  return new RegExp(key.slice(cut + 1), key.slice(0, cut));
});

function literal(source: string, caseSensitive: boolean, global = false): RegExp {
  const re = literalRegexes.get(`${global ? 'g' : ''}${caseSensitive ? '' : 'i'}u\u0000${source}`);
  re.lastIndex = 0;
  return re;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;

function codePointBefore(text: string, i: number): string {
  if (i <= 0) return '';
  const low = text.charCodeAt(i - 1);
  return i >= 2 && low >= 0xdc00 && low <= 0xdfff ? text.slice(i - 2, i) : text[i - 1];
}

function codePointAt(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** First occurrence of the phrase, or null. Whole word: no letter/digit/_ glued to an edge that is itself a word character. */
function findPhrase(text: string, phrase: string, caseSensitive: boolean, wholeWord: boolean): { index: number; text: string } | null {
  const re = literal(phraseSource(phrase), caseSensitive, true);
  const trimmed = phrase.trim();
  const checkStart = wholeWord && WORD_CHAR.test(codePointAt(trimmed, 0));
  const checkEnd = wholeWord && WORD_CHAR.test(codePointBefore(trimmed, trimmed.length));
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const end = m.index + m[0].length;
    const okStart = !checkStart || !WORD_CHAR.test(codePointBefore(text, m.index));
    const okEnd = !checkEnd || !WORD_CHAR.test(codePointAt(text, end));
    if (okStart && okEnd) return { index: m.index, text: m[0] };
    re.lastIndex = m.index + 1; // overlapping occurrences may still stand alone
  }
  return null;
}

function list(terms: readonly string[], max = 3): string {
  const shown = terms.slice(0, max).map((t) => JSON.stringify(t)).join(', ');
  return terms.length > max ? `${shown} and ${terms.length - max} more` : shown;
}

function checkTerms(rule: RuleOf<'contains'> | RuleOf<'not_contains'>, text: string): RuleOutcome {
  const found: string[] = [];
  const missing: string[] = [];
  for (const term of rule.terms) {
    (findPhrase(text, term, rule.case_sensitive, rule.whole_word) ? found : missing).push(term);
  }
  const n = rule.terms.length;
  if (rule.kind === 'contains') {
    if (rule.match === 'any') return found.length > 0 ? pass(`found ${list(found, 1)}`) : fail(n === 1 ? `${list(missing)} not found` : `none of ${list(missing)} found`);
    return missing.length === 0 ? pass(n === 1 ? `found ${list(found)}` : `found all ${n} terms`) : fail(`missing ${list(missing)}`);
  }
  if (rule.match === 'any') return found.length === 0 ? pass(n === 1 ? `${list(missing)} not found` : `none of the ${n} terms found`) : fail(`found ${list(found)}`);
  return missing.length > 0 ? pass(`not all terms found (missing ${list(missing)})`) : fail(n === 1 ? `found ${list(found)}` : `found all ${n} terms`);
}

function checkAffix(rule: RuleOf<'starts_with'> | RuleOf<'ends_with'>, text: string): RuleOutcome {
  const start = rule.kind === 'starts_with';
  const subject = rule.trim ? (start ? text.trimStart() : text.trimEnd()) : text;
  const source = phraseSource(rule.text);
  const hit = literal(start ? `^(?:${source})` : `(?:${source})$`, rule.case_sensitive).test(subject);
  const where = start ? 'starts' : 'ends';
  const edge = start ? subject.slice(0, 40) : subject.slice(-40);
  return hit ? pass(`${where} with ${quote(rule.text)}`) : fail(`${where} with ${quote(edge)}, not ${quote(rule.text)}`);
}

// ---- regex ----

function checkRegex(rule: RuleOf<'regex'>, text: string): RuleOutcome {
  if (text.length > rule.max_input_chars) {
    // UTF-16 code units, what the regex engine walks (a length rule's characters are code points).
    return { status: 'unscorable', reason: `completion has ${text.length} UTF-16 code units, above this regex's max_input_chars ${rule.max_input_chars}` };
  }
  const re: SafeRegex = compileSafeRegex(rule.pattern, rule.flags); // cached in safeRegex.ts
  const m = safeRegexSearch(re, text);
  const shown = `/${rule.pattern}/${rule.flags}`;
  const matched = m && `matched ${quote(text.slice(m.index, m.end))} at ${m.index}`;
  if (rule.expect === 'match') return matched ? pass(matched) : fail(`no match for ${shown}`);
  return matched ? fail(matched) : pass(`no match for ${shown}, as required`);
}

// ---- counts ----

function bounds(value: number, unit: string, min: number | undefined, max: number | undefined): RuleOutcome {
  const range = min !== undefined && max !== undefined ? `${min}–${max}` : min !== undefined ? `min ${min}` : `max ${max}`;
  if (min !== undefined && value < min) return fail(`${value} ${unit}, below min ${min}`);
  if (max !== undefined && value > max) return fail(`${value} ${unit}, above max ${max}`);
  return pass(`${value} ${unit}, within ${range}`);
}

function checkLength(rule: RuleOf<'length'>, text: string, ctx: RuleContext): RuleOutcome {
  if (rule.unit === 'words') return bounds(countWords(text), 'words', rule.min, rule.max);
  if (rule.unit === 'characters') return bounds(countCharacters(text), 'characters', rule.min, rule.max);
  if (!ctx.countTokens) return bounds(approximateTokens(text), 'tokens (approximate)', rule.min, rule.max);
  let n: number;
  try {
    n = ctx.countTokens(text);
  } catch (e) {
    return { status: 'unscorable', reason: `tokenizer failed: ${(e as Error).message}` };
  }
  if (!Number.isInteger(n) || n < 0) return { status: 'unscorable', reason: `tokenizer returned ${n}, not a count` };
  return bounds(n, 'tokens', rule.min, rule.max);
}

function checkCount(rule: RuleOf<'count'>, text: string): RuleOutcome {
  const count = rule.unit === 'sentences' ? countSentences(text) : rule.unit === 'lines' ? countLines(text) : countBullets(text);
  return bounds(count, rule.unit, rule.min, rule.max);
}

// ---- JSON ----

/** The body of one markdown code fence spanning the whole text (```lang\n...```), or null. */
function fencedBody(text: string): string | null {
  if (text.length < 7 || !text.startsWith('```') || !text.endsWith('```')) return null;
  const newline = text.indexOf('\n');
  if (newline < 0 || newline > text.length - 4 || !/^[\w+.-]*$/.test(text.slice(3, newline).trim())) return null;
  return text.slice(newline + 1, text.length - 3);
}

function checkJson(rule: RuleOf<'json'>, text: string): RuleOutcome {
  const trimmed = text.trim();
  const body = (rule.allow_code_fence ? fencedBody(trimmed) : null) ?? trimmed;
  if (body.trim() === '') return fail('not valid JSON: empty');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    const message = (e as Error).message;
    return fail(`not valid JSON: ${message.length > 80 ? `${message.slice(0, 79)}…` : message}`);
  }
  if (!rule.schema) return pass('valid JSON');
  const mismatch = jsonShapeMismatch(value, rule.schema);
  return mismatch ? fail(mismatch) : pass('valid JSON matching the schema');
}

// ---- case ----

function checkCase(rule: RuleOf<'all_caps'> | RuleOf<'no_caps'>, text: string): RuleOutcome {
  const { upper, lower } = caseCounts(text);
  if (upper + lower === 0) return fail('no cased letters');
  if (rule.kind === 'all_caps') return lower === 0 ? pass(`all ${upper} cased letters are uppercase`) : fail(`${lower} lowercase letter${lower > 1 ? 's' : ''}`);
  return upper === 0 ? pass('no uppercase letters') : fail(`${upper} uppercase letter${upper > 1 ? 's' : ''}`);
}

/** Runs one rule on a completion (normalised to NFC first). */
export function checkRule(rule: Rule, completion: string, ctx: RuleContext = {}): RuleOutcome {
  const text = completion.normalize('NFC');
  switch (rule.kind) {
    case 'contains':
    case 'not_contains':
      return checkTerms(rule, text);
    case 'regex':
      return checkRegex(rule, text);
    case 'length':
      return checkLength(rule, text, ctx);
    case 'count':
      return checkCount(rule, text);
    case 'starts_with':
    case 'ends_with':
      return checkAffix(rule, text);
    case 'json':
      return checkJson(rule, text);
    case 'all_caps':
    case 'no_caps':
      return checkCase(rule, text);
  }
}
