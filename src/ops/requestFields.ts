// Validation of the JSON kernel requests (scripts/kernel.mjs): every error names the field.

export class KernelRequestError extends Error {
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'KernelRequestError';
  }
}

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown, field = 'request'): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new KernelRequestError(field, 'expected a JSON object');
  }
  return value as JsonObject;
}

export function rejectUnknownFields(obj: JsonObject, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw new KernelRequestError(key, `unknown field (allowed: ${allowed.join(', ')})`);
  }
}

export function optionalNumber(obj: JsonObject, field: string, fallback: number): number {
  const v = obj[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new KernelRequestError(field, 'expected a finite number');
  return v;
}

export function requiredNumber(obj: JsonObject, field: string): number {
  if (obj[field] === undefined) throw new KernelRequestError(field, 'is required');
  return optionalNumber(obj, field, NaN);
}

export function positiveInteger(obj: JsonObject, field: string, fallback?: number): number {
  const v = fallback === undefined ? requiredNumber(obj, field) : optionalNumber(obj, field, fallback);
  if (!Number.isInteger(v) || v < 1) throw new KernelRequestError(field, `expected a positive integer, got ${v}`);
  return v;
}

export function oneOf<T extends string>(obj: JsonObject, field: string, options: readonly T[], fallback?: T): T {
  const v = obj[field] ?? fallback;
  if (v === undefined) throw new KernelRequestError(field, `is required (one of ${options.join(', ')})`);
  if (typeof v !== 'string' || !options.includes(v as T)) {
    throw new KernelRequestError(field, `expected one of ${options.join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

export interface ArrayOptions {
  /** Value that a JSON null stands for (e.g. NaN for a missing reward, -Infinity for a masked logit). */
  nullAs?: number;
  /** Also accept the strings "-inf"/"-Infinity" (JSON has no infinities). */
  allowNegInfString?: boolean;
  integer?: boolean;
  min?: number;
}

function element(value: unknown, field: string, opts: ArrayOptions): number {
  if (value === null && opts.nullAs !== undefined) return opts.nullAs;
  if (opts.allowNegInfString && (value === '-inf' || value === '-Infinity')) return -Infinity;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    const allowedNull = opts.nullAs !== undefined ? ' or null' : '';
    throw new KernelRequestError(field, `expected a number${allowedNull}, got ${JSON.stringify(value)}`);
  }
  if (!Number.isFinite(value) && !(value === -Infinity && (opts.allowNegInfString || opts.nullAs === -Infinity))) {
    throw new KernelRequestError(field, `expected a finite number, got ${value}`);
  }
  if (opts.integer && !Number.isInteger(value)) throw new KernelRequestError(field, `expected an integer, got ${value}`);
  if (opts.min !== undefined && value < opts.min) throw new KernelRequestError(field, `expected >= ${opts.min}, got ${value}`);
  return value;
}

/** A flat array of numbers. */
export function vector(obj: JsonObject, field: string, opts: ArrayOptions = {}, length?: number): number[] {
  const v = obj[field];
  if (!Array.isArray(v)) throw new KernelRequestError(field, 'expected an array of numbers');
  if (length !== undefined && v.length !== length) {
    throw new KernelRequestError(field, `expected ${length} values, got ${v.length}`);
  }
  if (v.length === 0) throw new KernelRequestError(field, 'must not be empty');
  return v.map((x, i) => element(x, `${field}[${i}]`, opts));
}

/** A rectangular array of arrays; returns the row-major data and its shape. */
export function matrix(
  obj: JsonObject,
  field: string,
  opts: ArrayOptions = {},
  shape: { rows?: number; cols?: number } = {},
): { data: Float64Array; rows: number; cols: number } {
  const v = obj[field];
  if (!Array.isArray(v) || v.length === 0 || !v.every(Array.isArray)) {
    throw new KernelRequestError(field, 'expected a non-empty array of arrays of numbers');
  }
  const rows = v.length;
  const cols = (v[0] as unknown[]).length;
  if (shape.rows !== undefined && rows !== shape.rows) throw new KernelRequestError(field, `expected ${shape.rows} rows, got ${rows}`);
  if (shape.cols !== undefined && cols !== shape.cols) throw new KernelRequestError(field, `expected ${shape.cols} columns, got ${cols}`);
  if (cols === 0) throw new KernelRequestError(field, 'rows must not be empty');
  const data = new Float64Array(rows * cols);
  (v as unknown[][]).forEach((row, r) => {
    if (row.length !== cols) throw new KernelRequestError(`${field}[${r}]`, `expected ${cols} values like row 0, got ${row.length}`);
    row.forEach((x, c) => (data[r * cols + c] = element(x, `${field}[${r}][${c}]`, opts)));
  });
  return { data, rows, cols };
}

/** Rows of a row-major array, for the JSON result (JSON.stringify writes non-finite values as null). */
export function toRows(data: ArrayLike<number>, rows: number, cols: number): number[][] {
  const out: number[][] = [];
  for (let r = 0; r < rows; r++) out.push(Array.prototype.slice.call(data, r * cols, (r + 1) * cols) as number[]);
  return out;
}
