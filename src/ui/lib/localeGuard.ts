// uPlot builds an Intl.NumberFormat from navigator.language when its module loads. Some systems
// report a POSIX locale there (LANG=C gives "en-US@posix" in Chromium), which Intl rejects with a
// RangeError, and the whole page would fail to start. Import this module before uplot: it
// replaces an invalid tag with its valid part (or en-US) for this page only.

function valid(tag: string): boolean {
  try {
    new Intl.NumberFormat(tag);
    return true;
  } catch {
    return false;
  }
}

/** "en-US@posix" → "en-US"; "de_DE.UTF-8" → "de-DE"; anything still invalid → "en-US". */
export function sanitizeLanguageTag(tag: string): string {
  if (valid(tag)) return tag;
  const cleaned = tag.split(/[@.]/)[0].replace(/_/g, '-');
  return cleaned && valid(cleaned) ? cleaned : 'en-US';
}

if (typeof navigator !== 'undefined' && !valid(navigator.language)) {
  Object.defineProperty(navigator, 'language', { value: sanitizeLanguageTag(navigator.language), configurable: true });
}
