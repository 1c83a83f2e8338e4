// Text measures used by the rule checks. Every rule sees the completion in Unicode NFC, so a
// precomposed "é" and "e" + combining accent count and match the same way.
// All patterns here are fixed (not user input) and run in linear time.

/** Counts tokens with the policy's tokenizer, when the caller has one. */
export type TokenCounter = (text: string) => number;

/** Words: maximal runs of non-whitespace that contain a letter or digit ("don't", "3.14", "state-of-the-art" are one each; a lone "-" is none). */
export function countWords(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/\S+/gu)) if (/[\p{L}\p{N}]/u.test(m[0])) n++;
  return n;
}

/** Characters: Unicode code points (not UTF-16 units), whitespace included. */
export function countCharacters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/u;
const TOKEN_PIECES = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]|(?:(?![\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}])[\p{L}\p{M}\p{N}])+|[^\s\p{L}\p{M}\p{N}]/gu;

/**
 * An approximate BPE token count, used when no tokenizer is given: each run of letters/digits
 * counts ceil(code points / 4) (the usual ~4 characters per English token), each CJK character
 * and each other non-space symbol counts 1, whitespace counts 0. Within about ±30% of GPT-2 and
 * Llama-family tokenizers on English prose; give the real tokenizer for exact limits.
 */
export function approximateTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(TOKEN_PIECES)) {
    const piece = m[0];
    if (CJK.test(piece) || !/[\p{L}\p{M}\p{N}]/u.test(piece)) n += 1;
    else n += Math.ceil(countCharacters(piece) / 4);
  }
  return n;
}

const TERMINATORS = '.!?…';
const CLOSERS = '"\'”’)]';
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const isLineEnd = (c: string | undefined) => c === '\n' || c === '\r';

/**
 * Sentences: text split after . ! ? … (a run of them, with optional closing quotes/brackets)
 * followed by whitespace or the end, after 。！？ anywhere, and at blank lines (two line ends with
 * only whitespace between; \n, \r\n and \r end a line, as in countLines); pieces without a
 * letter or digit do not count. Approximate: "Dr. Smith" counts as two, "3.14" as one.
 * One linear scan (a regex with lookbehind would be quadratic on long punctuation runs).
 */
export function countSentences(text: string): number {
  const chars = Array.from(text);
  const n = chars.length;
  let count = 0;
  let content = false;
  for (let i = 0; i < n; i++) {
    const c = chars[i];
    let boundary = false;
    if (LETTER_OR_DIGIT.test(c)) content = true;
    else if ('。！？'.includes(c)) boundary = true;
    else if (TERMINATORS.includes(c)) {
      let j = i + 1;
      while (j < n && (TERMINATORS.includes(chars[j]) || CLOSERS.includes(chars[j]))) j++;
      boundary = j === n || /\s/u.test(chars[j]);
      i = j - 1; // the run holds no letters: skip it either way
    } else if (isLineEnd(c)) {
      let j = c === '\r' && chars[i + 1] === '\n' ? i + 2 : i + 1; // \r\n is one line end
      while (j < n && !isLineEnd(chars[j]) && /\s/u.test(chars[j])) j++;
      if (j < n && isLineEnd(chars[j])) {
        boundary = true;
        i = chars[j] === '\r' && chars[j + 1] === '\n' ? j + 1 : j;
      }
    }
    if (boundary) {
      if (content) count++;
      content = false;
    }
  }
  return content ? count + 1 : count;
}

/** Lines that contain something other than whitespace (\n, \r\n or \r end a line). */
export function countLines(text: string): number {
  return text.split(/\r\n|\n|\r/).filter((l) => l.trim() !== '').length;
}

/** Bullet items: lines starting (after indentation) with - * + • ‣ ◦ ▪ or "1." / "1)" then a space, then text. */
export function countBullets(text: string): number {
  return text.split(/\r\n|\n|\r/).filter((l) => /^\s*(?:[-*+•‣◦▪]|\d{1,3}[.)])\s+\S/u.test(l)).length;
}

/** Letters that have case: uppercase (and titlecase) vs lowercase counts. */
export function caseCounts(text: string): { upper: number; lower: number } {
  let upper = 0;
  let lower = 0;
  for (const ch of text) {
    if (/[\p{Lu}\p{Lt}]/u.test(ch)) upper++;
    else if (/\p{Ll}/u.test(ch)) lower++;
  }
  return { upper, lower };
}

/** Short, single-line quote of model text for a reason string. */
export function quote(text: string, max = 40): string {
  const flat = text.replace(/\s+/gu, ' ');
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}
