// zod's issues in plain words, for people editing an experiment: "must be a whole number from 2
// up, got 1.5", never "Invalid input: expected int, received number". The message says what is
// expected and what was found; the caller puts the field's page label in front of it.
import type { z } from 'zod';

/** The value at `path` inside `root` (undefined where the path leads nowhere). */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** A found value, short: "abc" (quoted), 12, true, null, a list of 3 items, an object. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 39)}…` : v);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.length === 0 ? 'an empty list' : `a list of ${v.length} item${v.length > 1 ? 's' : ''}`;
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

const KIND_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
  null: 'null',
  literal: 'a fixed value',
};

const quoteAll = (values: readonly unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');

function bound(issue: { origin?: string; inclusive?: boolean }, n: number | bigint, small: boolean): string {
  const value = typeof n === 'bigint' ? n.toString() : n.toLocaleString('en-US');
  switch (issue.origin) {
    case 'string':
      return small ? (Number(n) <= 1 ? 'must not be empty' : `must be at least ${value} characters long`) : `must be at most ${value} characters long`;
    case 'array':
    case 'set':
      return small ? `must have at least ${value} item${Number(n) === 1 ? '' : 's'}` : `must have at most ${value} item${Number(n) === 1 ? '' : 's'}`;
    default:
      if (small) return issue.inclusive === false ? `must be greater than ${value}` : `must be at least ${value}`;
      return issue.inclusive === false ? `must be less than ${value}` : `must be at most ${value}`;
  }
}

/** How many items or characters a found value has, for "got …" after a length bound. */
function got(v: unknown, origin: string | undefined): string {
  if (origin === 'string' && typeof v === 'string') return `, got ${v.length} character${v.length === 1 ? '' : 's'}`;
  if ((origin === 'array' || origin === 'set') && Array.isArray(v)) return `, got ${v.length} item${v.length === 1 ? '' : 's'}`;
  return v === undefined ? '' : `, got ${describeValue(v)}`;
}

/**
 * One zod issue as a plain sentence (no field name: the caller labels the field). `input` is the
 * value that was parsed, for "got …". `fieldNames` turns a key into the page's word for it.
 */
export function explainIssue(issue: z.core.$ZodIssue, input: unknown, fieldNames: (key: string) => string = (k) => k): string {
  const value = valueAt(input, issue.path);
  // A message the schema wrote itself ("needs at least one criterion") is already plain words.
  const own = issue.code !== 'custom' && !/^(Too small|Too big|Invalid|Unrecognized)\b/.test(issue.message);
  if (own) {
    const empty = value === '' || (Array.isArray(value) && value.length === 0); // "must not be empty" says it all
    return (issue.code === 'too_small' || issue.code === 'too_big') && !empty ? `${issue.message}${got(value, issue.origin)}` : issue.message;
  }
  switch (issue.code) {
    case 'invalid_type': {
      const expected = String((issue as { expected?: string }).expected ?? '');
      if (value === undefined) return KIND_WORDS[expected] ? `is required (${KIND_WORDS[expected]})` : 'is required';
      if (expected === 'int' && typeof value === 'number') return `must be a whole number, got ${describeValue(value)}`;
      return `must be ${KIND_WORDS[expected] ?? expected}, got ${describeValue(value)}`;
    }
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) <= 1) return 'must not be empty';
      return `${bound(issue, issue.minimum as number, true)}${got(value, issue.origin)}`;
    case 'too_big':
      if (issue.origin === 'int' || (typeof issue.maximum === 'number' && issue.maximum >= Number.MAX_SAFE_INTEGER)) {
        return `must be a whole number of reasonable size, got ${describeValue(value)}`;
      }
      return `${bound(issue, issue.maximum as number, false)}${got(value, issue.origin)}`;
    case 'invalid_value':
      if (value === undefined) return `is required (${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${quoteAll(issue.values)}`})`;
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}, got ${describeValue(value)}` : `must be one of ${quoteAll(issue.values)}, got ${describeValue(value)}`;
    case 'unrecognized_keys': {
      const keys = issue.keys.map((k) => `"${fieldNames(k)}"`).join(', ');
      return `has unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}, got ${describeValue(value)}`;
    case 'invalid_format':
      // A regex check with its own message ("must use only a-z…") keeps it; zod's generic one does not.
      return /^Invalid /.test(issue.message) ? `is not in the expected format, got ${describeValue(value)}` : issue.message;
    case 'invalid_union': {
      // A discriminated union ("kind": "rules" | "model" | …) lists what the discriminator may be.
      const { options } = issue as unknown as { options?: unknown[] };
      const accepted = options?.length ? ` (one of ${quoteAll(options)})` : '';
      if (value === undefined) return `is required${accepted}`;
      return options?.length ? `must be one of ${quoteAll(options)}, got ${describeValue(value)}` : `is not one of the accepted forms, got ${describeValue(value)}`;
    }
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has an item that is not allowed';
    default:
      return plain(issue.message);
  }
}

/**
 * The issues worth showing: where a value has the wrong type, zod may also report a length check
 * on it ("needs at least 2 choices" for a string); the type problem alone says what is wrong.
 */
export function primaryIssues<T extends z.core.$ZodIssue>(issues: readonly T[]): T[] {
  const wrongType = new Set(issues.filter((i) => i.code === 'invalid_type').map((i) => JSON.stringify(i.path)));
  return issues.filter((i) => i.code === 'invalid_type' || !wrongType.has(JSON.stringify(i.path)));
}

/** A custom message as written, minus any "Invalid input: " zod put in front. */
export function plain(message: string): string {
  return message.replace(/^Invalid (input|option)(: )?/, '').trim() || 'is not valid';
}
