// Reading and writing the safetensors format (https://github.com/huggingface/safetensors):
//   8-byte little-endian header length N | N bytes of JSON header | raw tensor bytes.
// The engine computes in f32, so F16 and BF16 tensors are widened to f32 on load.

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

export interface SafetensorsFile {
  tensors: Map<string, Tensor>;
  /** The dtype each tensor had in the file, before widening. */
  dtypes: Map<string, SafetensorsDtype>;
  metadata: Record<string, string>;
}

export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

/** A header larger than this is not a model file (the format's reference reader uses 100 MB). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;
const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** The JSON header alone (tensor names, dtypes, shapes, offsets) and where the data starts. */
export function readSafetensorsHeader(buffer: ArrayBuffer, fileName = 'model.safetensors'): { header: Record<string, unknown>; dataStart: number } {
  if (buffer.byteLength < 8) throw new SafetensorsError(`${fileName}: ${buffer.byteLength} bytes is too short for a safetensors file`);
  const view = new DataView(buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > MAX_HEADER_BYTES || 8 + headerLength > buffer.byteLength) {
    throw new SafetensorsError(`${fileName}: header length ${headerLength} does not fit in a file of ${buffer.byteLength} bytes`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, headerLength)));
  } catch (err) {
    throw new SafetensorsError(`${fileName}: the header is not valid JSON (${(err as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new SafetensorsError(`${fileName}: the header is not a JSON object`);
  return { header: header as Record<string, unknown>, dataStart: 8 + headerLength };
}

export function readSafetensors(buffer: ArrayBuffer, fileName = 'model.safetensors'): SafetensorsFile {
  const { header, dataStart } = readSafetensorsHeader(buffer, fileName);
  const dataBytes = buffer.byteLength - dataStart;
  const tensors = new Map<string, Tensor>();
  const dtypes = new Map<string, SafetensorsDtype>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = (entry ?? {}) as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets: offsets } = (entry ?? {}) as { dtype?: string; shape?: number[]; data_offsets?: number[] };
    if (dtype !== 'F32' && dtype !== 'F16' && dtype !== 'BF16') {
      throw new SafetensorsError(`${fileName}: tensor "${name}" has dtype ${String(dtype)}; supported: F32, F16, BF16`);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new SafetensorsError(`${fileName}: tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
    }
    // Integers only: a string or fractional offset would pass the size check and read the wrong bytes.
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o))) {
      throw new SafetensorsError(`${fileName}: tensor "${name}" has invalid data_offsets`);
    }
    const [begin, end] = offsets;
    const count = shape.reduce((a, b) => a * b, 1);
    if (!(begin >= 0 && end <= dataBytes && end - begin === count * BYTES[dtype])) {
      throw new SafetensorsError(
        `${fileName}: tensor "${name}" (${dtype} ${JSON.stringify(shape)}) has data_offsets [${begin}, ${end}] that do not match its size or the file`,
      );
    }
    tensors.set(name, { shape, data: widen(dtype, buffer.slice(dataStart + begin, dataStart + end)) });
    dtypes.set(name, dtype);
  }
  return { tensors, dtypes, metadata };
}

function widen(dtype: SafetensorsDtype, bytes: ArrayBuffer): Float32Array {
  if (dtype === 'F32') return new Float32Array(bytes);
  const halves = new Uint16Array(bytes);
  const out = new Float32Array(halves.length);
  if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < halves.length; i++) bits[i] = halves[i] << 16;
  } else {
    for (let i = 0; i < halves.length; i++) out[i] = f16ToF32(halves[i]);
  }
  return out;
}

export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Round-to-nearest-even f32 → f16 bits (used to write F16 test checkpoints). */
export function f32ToF16(value: number): number {
  const f32 = new Float32Array([value]);
  const x = new Uint32Array(f32.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** f32 → bf16 bits, round to nearest even. */
export function f32ToBf16(value: number): number {
  const x = new Uint32Array(new Float32Array([value]).buffer)[0];
  if ((x & 0x7fffffff) > 0x7f800000) return (x >>> 16) | 0x40; // keep NaN a NaN
  return (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
}

/** Serialises tensors (written as `dtype`, F32 by default) in name order, header padded to 8 bytes. */
export function writeSafetensors(
  tensors: Map<string, Tensor> | Record<string, Tensor>,
  options: { dtype?: SafetensorsDtype; metadata?: Record<string, string> } = {},
): ArrayBuffer {
  const dtype = options.dtype ?? 'F32';
  const entries = [...(tensors instanceof Map ? tensors.entries() : Object.entries(tensors))].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const header: Record<string, unknown> = {};
  if (options.metadata) header.__metadata__ = options.metadata;
  let offset = 0;
  for (const [name, t] of entries) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new SafetensorsError(`tensor "${name}": shape ${JSON.stringify(t.shape)} holds ${count} values, data has ${t.data.length}`);
    }
    const bytes = count * BYTES[dtype];
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  // Pad with spaces so the data starts 8-byte aligned (as the reference writer does).
  const headerBytes = new Uint8Array(Math.ceil(json.length / 8) * 8).fill(0x20);
  headerBytes.set(json);
  const out = new ArrayBuffer(8 + headerBytes.length + offset);
  new DataView(out).setBigUint64(0, BigInt(headerBytes.length), true);
  new Uint8Array(out, 8, headerBytes.length).set(headerBytes);
  let at = 8 + headerBytes.length;
  for (const [, t] of entries) {
    if (dtype === 'F32') {
      new Uint8Array(out, at, t.data.length * 4).set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.length * 4));
    } else {
      const halves = new Uint16Array(t.data.length);
      const convert = dtype === 'F16' ? f32ToF16 : f32ToBf16;
      for (let i = 0; i < t.data.length; i++) halves[i] = convert(t.data[i]);
      new Uint8Array(out, at, halves.byteLength).set(new Uint8Array(halves.buffer));
    }
    at += t.data.length * BYTES[dtype];
  }
  return out;
}
