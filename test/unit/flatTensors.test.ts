// The flat optimizer kernels' grouping: which runs of a tensor list one dispatch can bind as one
// range per role, and the arena layout that makes them. Pure functions, fake buffers.
import { describe, expect, it } from 'vitest';
import { arenaLayout, flatBinding, flatRuns, flatVec4, type TensorRange } from '../../src/ops/flatTensors';

const buffer = (size: number) => ({ size }) as unknown as GPUBuffer;

describe('arenaLayout', () => {
  it('packs tensors at aligned offsets; the length covers every last vec4', () => {
    expect(arenaLayout([1, 64, 65, 3], 256)).toEqual({ offsets: [0, 256, 512, 1024], byteLength: 1280 });
    expect(arenaLayout([], 256).byteLength).toBe(256);
  });
});

describe('flatRuns', () => {
  const arena = buffer(4096);
  const other = buffer(4096);
  const inArena = (offset: number, count: number, b = arena): TensorRange[] => [{ binding: { buffer: b, offset, size: count * 4 }, count }];

  it('one run for tensors in one buffer; the loose ones around it form runs of their own', () => {
    const ranges = [[{ binding: buffer(64), count: 16 }], inArena(0, 10), inArena(256, 3), inArena(512, 64), [{ binding: buffer(64), count: 16 }]];
    expect(flatRuns(ranges.length, (k) => ranges[k], 1 << 20)).toEqual([
      { start: 0, end: 1, flat: false },
      { start: 1, end: 4, flat: true },
      { start: 4, end: 5, flat: false },
    ]);
  });

  it('breaks a run where the buffer changes, the binding limit or the cap is reached; a lone tensor is never flat', () => {
    const ranges = [inArena(0, 64), inArena(256, 64), inArena(0, 64, other), inArena(256, 64, other), inArena(512, 64, other), inArena(1024, 4)];
    expect(flatRuns(ranges.length, (k) => ranges[k], 1 << 20)).toEqual([
      { start: 0, end: 2, flat: true },
      { start: 2, end: 5, flat: true },
      { start: 5, end: 6, flat: false },
    ]);
    // 512 bytes: two 256-byte tensors at most.
    expect(flatRuns(ranges.length, (k) => ranges[k], 512).map((r) => [r.start, r.end, r.flat])).toEqual([
      [0, 2, true],
      [2, 4, true],
      [4, 6, false],
    ]);
    expect(flatRuns(ranges.length, (k) => ranges[k], 1 << 20, 1)).toEqual([{ start: 0, end: 6, flat: false }]);
  });

  it('a range not 16-byte aligned, or whose last vec4 passes its buffer, or refused (null), is not flat', () => {
    const edge = buffer(1030);
    const ranges = [inArena(0, 4, edge), inArena(1024, 2, edge), inArena(0, 8), inArena(64 + 4, 8), null, inArena(512, 4)];
    expect(flatRuns(ranges.length, (k) => ranges[k], 1 << 20)).toEqual([{ start: 0, end: 6, flat: false }]);
  });

  it('flatBinding spans the run from its lowest offset and gives each tensor its first element there', () => {
    const ranges = [inArena(512, 3)[0], inArena(256, 64)[0]];
    expect(flatBinding(ranges)).toEqual({ binding: { buffer: arena, offset: 256, size: 272 }, firstElements: [64, 0] });
  });
});

describe('flatVec4', () => {
  it('vec4 on a software adapter unless asked otherwise; anything but scalar or vec4 is refused by name', () => {
    expect([flatVec4(undefined, true), flatVec4(undefined, false), flatVec4('scalar', true), flatVec4('vec4', false)]).toEqual([true, false, false, true]);
    expect(() => flatVec4('vec8', true)).toThrow(/flatVariant must be 'scalar' or 'vec4', got vec8/);
  });
});
