// Which characters of a completion each of its tokens produced, so evidence spans (character
// offsets, UTF-16 code units; src/rubric/evidence.ts) can be mapped to tokens.
//
// A token's end is known when the decoded prefix up to it is a prefix of the completion. A
// byte-level token can end inside a multi-byte character (the prefix then ends in U+FFFD, which
// the completion does not have there): such a token has no boundary of its own and shares the
// character with the tokens up to the next boundary, so every token of a split character covers
// it. Special tokens (EOS) decode to nothing and cover no character.
import type { Span } from '../../rubric';

export type Decode = (ids: readonly number[]) => string;

/**
 * [start, end) character range of every token. Decodes from the last boundary (linear for byte
 * and BPE tokenizers, and for SentencePiece ones that drop a piece's leading space); falls back to
 * the whole prefix when a tokenizer's decode of a piece differs from the text otherwise.
 */
export function tokenCharRanges(decode: Decode, ids: readonly number[], completion: string): Span[] {
  const n = ids.length;
  const ends: (number | null)[] = new Array(n).fill(null);
  let fromToken = 0;
  let fromChar = 0;
  for (let j = 0; j < n; j++) {
    let end: number | null = null;
    const piece = decode(ids.slice(fromToken, j + 1));
    if (completion.startsWith(piece, fromChar) && !piece.endsWith('\uFFFD')) end = fromChar + piece.length;
    else if (completion[fromChar] === ' ' && piece !== '' && completion.startsWith(piece, fromChar + 1) && !piece.endsWith('\uFFFD')) {
      // A SentencePiece decoder strips the leading space of the first token it decodes: the space
      // at fromChar follows the last boundary, so it is this token's.
      end = fromChar + 1 + piece.length;
    } else {
      const prefix = decode(ids.slice(0, j + 1));
      if (completion.startsWith(prefix) && !(prefix.endsWith('\uFFFD') && completion[prefix.length - 1] !== '\uFFFD')) end = prefix.length;
    }
    if (end !== null && end >= fromChar) {
      ends[j] = end;
      fromToken = j + 1;
      fromChar = end;
    }
  }
  // Tokens without a boundary end where the next boundary (or the text) ends.
  const ranges: Span[] = new Array(n);
  let start = 0;
  let j = 0;
  while (j < n) {
    let k = j;
    while (k < n && ends[k] === null) k++;
    const end = k < n ? ends[k]! : completion.length;
    for (let t = j; t <= Math.min(k, n - 1); t++) ranges[t] = { start, end };
    start = end;
    j = k + 1;
  }
  return ranges;
}

/** Tokens whose characters overlap any of the spans (a token covering no character overlaps none). */
export function tokensInSpans(ranges: readonly Span[], spans: readonly Span[]): number[] {
  const out: number[] = [];
  ranges.forEach((r, j) => {
    if (r.end > r.start && spans.some((s) => s.start < r.end && s.end > r.start)) out.push(j);
  });
  return out;
}
