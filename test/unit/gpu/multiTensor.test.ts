// The multi-tensor shader expansion and the grouping of tensors into dispatches.
import { describe, expect, it } from 'vitest';
import { expandMultiTensor, tensorGroups } from '../../../src/ops/multiTensor';

describe('multi-tensor kernels', () => {
  it('repeats marked lines per tensor with its number and bindings', () => {
    const code = [
      'const TENSORS: u32 = 2u;',
      '// TENSOR_BINDING @group(0) @binding($b) var<storage, read> g#: array<f32>; @binding($b+1) p#',
      '  // TENSOR_CASE case #u: { return g#[i]; }',
      'fn f() {}',
    ].join('\n');
    expect(expandMultiTensor(code, 3, 2, 2).split('\n')).toEqual([
      'const TENSORS: u32 = 3u;',
      '@group(0) @binding(2) var<storage, read> g0: array<f32>; @binding(3) p0',
      '@group(0) @binding(4) var<storage, read> g1: array<f32>; @binding(5) p1',
      '@group(0) @binding(6) var<storage, read> g2: array<f32>; @binding(7) p2',
      '  case 0u: { return g0[i]; }',
      '  case 1u: { return g1[i]; }',
      '  case 2u: { return g2[i]; }',
      'fn f() {}',
    ]);
    expect(() => expandMultiTensor('fn f() {}', 2, 0, 1)).toThrow(/TENSORS/);
  });

  it('groups consecutive tensors, at most `size` each, never one buffer twice in a group', () => {
    expect(tensorGroups(0, 4)).toEqual([]);
    expect(tensorGroups(5, 2)).toEqual([[0, 2], [2, 4], [4, 5]]);
    expect(tensorGroups(36, 8).map(([a, b]) => b - a)).toEqual([8, 8, 8, 8, 4]);
    const a = {} as GPUBuffer;
    const b = {} as GPUBuffer;
    const c = {} as GPUBuffer;
    const bufs = [[a], [b], [a], [c], [c, c]];
    expect(tensorGroups(5, 4, (k) => bufs[k])).toEqual([[0, 2], [2, 4], [4, 5]]);
  });
});
