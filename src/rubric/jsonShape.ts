// Checks a parsed JSON value against a small shape (types, required keys, nested objects and
// arrays) and names the first place it differs, e.g. `$.steps[2].score: expected number, got string`.
import type { JsonShape } from './schema';

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v; // JSON.parse yields only object, string, number, boolean besides these
}

function keyPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** The first mismatch as `path: problem`, or null when the value has the shape. */
export function jsonShapeMismatch(value: unknown, shape: JsonShape, path = '$'): string | null {
  const got = jsonType(value);
  switch (shape.type) {
    case 'object': {
      if (got !== 'object') return `${path}: expected object, got ${got}`;
      const obj = value as Record<string, unknown>;
      for (const key of shape.required ?? []) {
        if (!Object.hasOwn(obj, key)) return `${path}: missing required key ${JSON.stringify(key)}`;
      }
      for (const [key, sub] of Object.entries(shape.properties ?? {})) {
        if (!Object.hasOwn(obj, key)) continue;
        const inner = jsonShapeMismatch(obj[key], sub, keyPath(path, key));
        if (inner) return inner;
      }
      return null;
    }
    case 'array': {
      if (got !== 'array') return `${path}: expected array, got ${got}`;
      const items = shape.items;
      if (!items) return null;
      const arr = value as unknown[];
      for (let i = 0; i < arr.length; i++) {
        const inner = jsonShapeMismatch(arr[i], items, `${path}[${i}]`);
        if (inner) return inner;
      }
      return null;
    }
    case 'integer':
      if (got !== 'number' || !Number.isInteger(value)) return `${path}: expected integer, got ${got === 'number' ? String(value) : got}`;
      return null;
    default:
      return got === shape.type ? null : `${path}: expected ${shape.type}, got ${got}`;
  }
}
