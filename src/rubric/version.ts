// A rubric's version is the SHA-256 of its canonical JSON: the same content gives the same
// version on every machine, and any edit gives a new one (old runs keep theirs).
import type { Rubric } from './schema';

/** JSON with object keys sorted at every level and no insignificant whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`canonicalJson: ${value} has no JSON form`);
    return JSON.stringify(value); // -0 prints as 0, as it should
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)); // code-unit order, locale independent
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new RangeError(`canonicalJson: a ${typeof value} has no JSON form`);
}

/**
 * The content version of a parsed rubric: lowercase hex SHA-256 of canonicalJson(rubric).
 * It hashes the parsed form, so spelling out a default (case_sensitive: false) or reordering
 * keys keeps the version, while any change of meaning (a weight, a term, a criterion's order)
 * makes a new one. Web Crypto: works in browsers, workers and Node >= 20.
 */
export async function rubricVersion(rubric: Rubric): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(rubric));
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
