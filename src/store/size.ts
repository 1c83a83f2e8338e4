// Approximate stored size of a value, for "how much does this run take" and quota messages.
// Browsers serialise with the structured-clone format: binary data at its byte length, text
// about one byte per character for Latin-1 and two otherwise, a few bytes per number and tag.
// This counts the same way without serialising: within tens of percent, never exact.

const TAG = 2;

export function approxBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return TAG;
  if (typeof value === 'number') return TAG + 8;
  if (typeof value === 'string') return TAG + stringBytes(value);
  if (typeof value === 'bigint') return TAG + 8;
  if (value instanceof ArrayBuffer) return TAG + value.byteLength;
  if (ArrayBuffer.isView(value)) return TAG + value.byteLength;
  if (Array.isArray(value)) {
    let n = TAG;
    for (const v of value) n += approxBytes(v);
    return n;
  }
  if (typeof value === 'object') {
    let n = TAG;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) n += stringBytes(k) + approxBytes(v);
    return n;
  }
  return TAG;
}

function stringBytes(s: string): number {
  // One-byte strings stay one byte per character; any wider character makes the string two.
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return 2 * s.length;
  return s.length;
}
