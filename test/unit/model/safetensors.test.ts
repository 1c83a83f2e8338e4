import { describe, expect, it } from 'vitest';
import { f16ToF32, f32ToBf16, f32ToF16, readSafetensors, writeSafetensors } from '../../../src/model/safetensors';

function tensor(shape: number[], values: number[]) {
  return { shape, data: new Float32Array(values) };
}

describe('safetensors', () => {
  it('round-trips f32 tensors, metadata and names in a byte-exact layout', () => {
    const bytes = writeSafetensors(
      { 'wte.weight': tensor([2, 3], [1, 2, 3, 4, 5, 6]), 'ln_f.bias': tensor([3], [-1, 0.5, 1e-8]), 'é.unicode': tensor([1], [7]) },
      { metadata: { format: 'pt' } },
    );
    const headerLength = Number(new DataView(bytes).getBigUint64(0, true));
    expect((8 + headerLength) % 8).toBe(0);
    const file = readSafetensors(bytes);
    expect(file.metadata).toEqual({ format: 'pt' });
    expect([...file.tensors.keys()].sort()).toEqual(['ln_f.bias', 'wte.weight', 'é.unicode']);
    expect(file.tensors.get('wte.weight')!.shape).toEqual([2, 3]);
    expect(Array.from(file.tensors.get('ln_f.bias')!.data)).toEqual(Array.from(new Float32Array([-1, 0.5, 1e-8])));
    expect(file.dtypes.get('wte.weight')).toBe('F32');
  });

  it('widens F16 and BF16 to f32 on load', () => {
    const values = [1, -2, 0.1, 65504, 2 ** -24, 0, -0.333];
    const f16 = readSafetensors(writeSafetensors({ x: tensor([7], values) }, { dtype: 'F16' }));
    const bf16 = readSafetensors(writeSafetensors({ x: tensor([7], values) }, { dtype: 'BF16' }));
    expect(f16.dtypes.get('x')).toBe('F16');
    const got16 = f16.tensors.get('x')!.data;
    const gotBf = bf16.tensors.get('x')!.data;
    values.forEach((v, i) => {
      expect(Math.abs(got16[i] - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11 + 2 ** -25);
      expect(Math.abs(gotBf[i] - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -8 + 1e-40);
    });
  });

  it('converts known half-precision bit patterns', () => {
    expect(f32ToF16(1)).toBe(0x3c00);
    expect(f32ToF16(-2)).toBe(0xc000);
    expect(f32ToF16(65504)).toBe(0x7bff);
    expect(f32ToF16(1e6)).toBe(0x7c00); // overflow → +inf
    expect(f32ToF16(2 ** -24)).toBe(0x0001);
    expect(f32ToF16(0.1)).toBe(0x2e66);
    expect(f16ToF32(0x3555)).toBeCloseTo(0.333251953125, 12);
    expect(f16ToF32(0xfc00)).toBe(-Infinity);
    expect(f32ToBf16(1)).toBe(0x3f80);
    expect(f32ToBf16(-3.140625)).toBe(0xc049);
  });

  it('rejects files that are not safetensors with a message naming the problem', () => {
    expect(() => readSafetensors(new ArrayBuffer(4), 'x.safetensors')).toThrow(/x\.safetensors: 4 bytes is too short/);
    const bad = new ArrayBuffer(16);
    new DataView(bad).setBigUint64(0, 1000n, true);
    expect(() => readSafetensors(bad)).toThrow(/header length 1000 does not fit/);
    const good = writeSafetensors({ x: tensor([2], [1, 2]) });
    expect(() => readSafetensors(good.slice(0, good.byteLength - 4))).toThrow(/"x".*data_offsets/);
    const i64 = new TextEncoder().encode(JSON.stringify({ ids: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }));
    const file = new Uint8Array(8 + i64.length + 8);
    new DataView(file.buffer).setBigUint64(0, BigInt(i64.length), true);
    file.set(i64, 8);
    expect(() => readSafetensors(file.buffer)).toThrow(/"ids" has dtype I64; supported: F32, F16, BF16/);
    expect(() => writeSafetensors({ x: tensor([3], [1, 2]) })).toThrow(/shape \[3\] holds 3 values, data has 2/);
  });
});
