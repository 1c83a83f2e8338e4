// Code point ranges of Unicode properties, read from this JavaScript engine's own tables, for the
// Python export: Python's `re` has no \p{..} and `unicodedata` has no scripts, so the exporter
// writes the ranges out. Computed by testing every code point once per property (~0.1 s), cached.

export type CodePointRange = [lo: number, hi: number];

export const MAX_CODE_POINT = 0x10ffff;

const cache = new Map<string, CodePointRange[]>();

/** Ranges of the code points (surrogates excluded) that the one-character regex `source` (u flag) matches. */
export function rangesOf(source: string): CodePointRange[] {
  const hit = cache.get(source);
  if (hit) return hit;
  const re = new RegExp(`^(?:${source})$`, 'u');
  const out: CodePointRange[] = [];
  let start = -1;
  for (let cp = 0; cp <= MAX_CODE_POINT + 1; cp++) {
    const inside = cp <= MAX_CODE_POINT && (cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp));
    if (inside && start < 0) start = cp;
    else if (!inside && start >= 0) {
      out.push([start, cp - 1]);
      start = -1;
    }
  }
  cache.set(source, out);
  return out;
}

/** Sorted, merged union of ranges. */
export function mergeRanges(ranges: readonly CodePointRange[]): CodePointRange[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: CodePointRange[] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** Every code point not in the ranges. */
export function complementRanges(ranges: readonly CodePointRange[]): CodePointRange[] {
  const out: CodePointRange[] = [];
  let next = 0;
  for (const [lo, hi] of mergeRanges(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** The scripts approximateTokens (src/rubric/text.ts) counts one token per character. */
export function cjkRanges(): CodePointRange[] {
  return rangesOf('[\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Hangul}]');
}
