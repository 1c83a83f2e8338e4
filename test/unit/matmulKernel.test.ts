// The matmul kernel choice (src/ops/matmul.ts): kernelRows makes a few rows of a larger product
// take the kernel that product takes, so they come out bit for bit the same (prefill's head).
import { describe, expect, it } from 'vitest';
import { matmulKernel, resolveMatmulShape, type MatmulShape } from '../../src/ops/matmul';
import { skinnySpec } from '../../src/ops/matmulSkinny';

const choose = (shape: MatmulShape, software: boolean) => matmulKernel(resolveMatmulShape(shape), software);
const head = { n: 259, k: 128, transB: true }; // logits = X.Eᵀ, a 259-token vocabulary

describe('matmulKernel', () => {
  it('a few rows chosen as for kernelRows rows take that product\'s kernel', () => {
    expect(choose({ m: 21, ...head }, true)).toBe('blocked_ragged');
    expect(choose({ m: 3, ...head }, true)).not.toBe('blocked_ragged');
    expect(choose({ m: 3, ...head, kernelRows: 21 }, true)).toBe('blocked_ragged');
    expect(choose({ m: 3, n: 256, k: 128, transB: true, kernelRows: 21 }, true)).toBe('blocked');
    // A GPU takes the tiled kernel for 21 rows, so 3 of them do too.
    expect(choose({ m: 21, ...head }, false)).toBe('tiled');
    expect(choose({ m: 3, ...head, kernelRows: 21 }, false)).toBe('tiled');
    // kernelRows at or below the small-M bound: the choice is the 3 rows' own.
    expect(choose({ m: 3, ...head, kernelRows: 8 }, true)).toBe(choose({ m: 8, ...head }, true));
  });

  it('refuses kernelRows below m or not an integer', () => {
    expect(() => resolveMatmulShape({ m: 4, ...head, kernelRows: 3 })).toThrow(/kernelRows must be an integer >= m = 4, got 3/);
    expect(() => resolveMatmulShape({ m: 4, ...head, kernelRows: 4.5 })).toThrow(/kernelRows/);
  });

  it('a skinny pipeline per row count (the shader\'s M_ROWS), 1 to 8 rows', () => {
    const bindings = ['uniform', 'read-only-storage', 'read-only-storage', 'read-only-storage', 'storage'] as const;
    const specs = [1, 2, 8].map((rows) => skinnySpec('skinny_nn', false, rows, bindings));
    expect(specs.map((s) => s.constants)).toEqual([1, 2, 8].map((rows) => ({ TRANS_A: 0, M_ROWS: rows })));
    expect(skinnySpec('skinny_nn', false, 2, bindings)).toBe(specs[1]);
    expect(skinnySpec('skinny_nt', false, 2, bindings)).not.toBe(specs[1]);
    for (const rows of [0, 9, 2.5]) expect(() => skinnySpec('skinny_nn', false, rows, bindings)).toThrow(/1 to 8 rows, got/);
  });
});
