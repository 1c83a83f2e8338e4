// Two independent dispatches as one (horizontal fusion). The Recorder holds back each dispatch
// until the next one arrives; when neither writes what the other binds — a layer's dX and dW
// products, say — and their kernels can share a workgroup size, it records one
// dispatch of a pair kernel (src/gpu/wgslPair.ts) instead of two. No op knows about it, every
// invocation computes what it would alone (bit-identical), and a step launches fewer kernels.
import type { Binding } from './recorder';
import type { KernelPipeline, KernelSpec } from './pipelineCache';
import { composePair, pairableKernel, type PairableKernel, type PairKernel, type PairLimits } from './wgslPair';

export type Grid = readonly [number, number, number];

/** A dispatch as recorded: kernel, bindings and grid. */
export interface PendingDispatch {
  kernel: KernelPipeline;
  bindings: readonly Binding[];
  grid: Grid;
}

export class DispatchPairing {
  private readonly kernels = new WeakMap<KernelSpec, PairableKernel | null>();
  /** Pair pipelines whose build result is awaited (a capture's stand-ins are never watched twice either). */
  private readonly watched = new WeakSet<KernelPipeline>();
  /** Pair kernels by first spec, second spec and which bindings the second shares. */
  private readonly pairs = new WeakMap<KernelSpec, WeakMap<KernelSpec, Map<string, PairKernel | null>>>();

  constructor(
    private readonly limits: PairLimits & { maxComputeWorkgroupsPerDimension: number },
    /** The runtime's pipeline lookup (a capture recording only notes the spec). */
    private readonly pipeline: (spec: KernelSpec) => KernelPipeline,
  ) {}

  /**
   * `a` and `b` as one dispatch, with `gridUniform` (called only when they pair) binding the
   * router's grids; null when they must stay two.
   */
  pair(a: PendingDispatch, b: PendingDispatch, gridUniform: (data: Uint32Array) => Binding): PendingDispatch | null {
    // Cheapest first: most neighbours in a step read what the one before wrote, or cannot pair at all.
    if (!this.pairable(a.kernel.spec) || !this.pairable(b.kernel.spec) || !independent(a, b)) return null;
    const shared = sharedBindings(a, b);
    const pair = this.pairKernel(a.kernel.spec, b.kernel.spec, shared);
    if (!pair) return null;
    const count = (g: Grid) => g[0] * g[1] * g[2];
    const total = count(a.grid) + count(b.grid);
    const max = this.limits.maxComputeWorkgroupsPerDimension;
    const y = Math.ceil(total / max);
    const grid: Grid = [Math.ceil(total / y), y, 1];
    const data = new Uint32Array([...a.grid, count(a.grid), ...b.grid, count(b.grid)]);
    const bindings = [...a.bindings, ...pair.keptB.map((j) => b.bindings[j]!), gridUniform(data)];
    const kernel = this.pipeline(pair.spec);
    // A pair kernel that fails to build fails its submission (naming the pair), once: from
    // then on the two run apart.
    if (!this.watched.has(kernel)) {
      this.watched.add(kernel);
      void kernel.buildError.then((error) => {
        if (error) this.pairs.get(a.kernel.spec)?.get(b.kernel.spec)?.set(shared.join(','), null);
      });
    }
    return { kernel, bindings, grid };
  }

  private pairKernel(a: KernelSpec, b: KernelSpec, shared: readonly (number | null)[]): PairKernel | null {
    let byB = this.pairs.get(a);
    if (!byB) this.pairs.set(a, (byB = new WeakMap()));
    let byShared = byB.get(b);
    if (!byShared) byB.set(b, (byShared = new Map()));
    const key = shared.join(',');
    let pair = byShared.get(key);
    if (pair === undefined) {
      const pa = this.pairable(a);
      const pb = this.pairable(b);
      pair = pa && pb ? composePair(a, pa, b, pb, this.limits, shared) : null;
      byShared.set(key, pair);
    }
    return pair;
  }

  private pairable(spec: KernelSpec): PairableKernel | null {
    let p = this.kernels.get(spec);
    if (p === undefined) this.kernels.set(spec, (p = pairableKernel(spec)));
    return p;
  }
}

/**
 * True when neither dispatch writes what the other binds. A buffer both bind must be read by
 * both, or written by both at disjoint ranges: WebGPU forbids a buffer bound writable and
 * read-only in one dispatch even at disjoint ranges (two writable bindings of it are allowed).
 */
export function independent(a: PendingDispatch, b: PendingDispatch): boolean {
  for (let i = 0; i < a.bindings.length; i++) {
    const ba = a.bindings[i]!;
    const writesA = a.kernel.spec.bindings[i] === 'storage';
    for (let j = 0; j < b.bindings.length; j++) {
      const bb = b.bindings[j]!;
      if (bufferOf(bb) !== bufferOf(ba)) continue;
      const writesB = b.kernel.spec.bindings[j] === 'storage';
      if (writesA !== writesB || (writesA && overlap(ba, bb))) return false;
    }
  }
  return true;
}

/** Byte range [start, end) of a binding. */
function range(b: Binding): [number, number] {
  const offset = 'buffer' in b ? (b.offset ?? 0) : 0;
  const size = 'buffer' in b && b.size !== undefined ? b.size : bufferOf(b).size - offset;
  return [offset, offset + size];
}

function overlap(x: Binding, y: Binding): boolean {
  const [x0, x1] = range(x);
  const [y0, y1] = range(y);
  return x0 < y1 && y0 < x1;
}

/**
 * For each binding of `b`, a binding of `a` with the same read-only range (the pair kernel may
 * bind it once), else null.
 */
export function sharedBindings(a: PendingDispatch, b: PendingDispatch): (number | null)[] {
  const read = (d: PendingDispatch, i: number) => d.kernel.spec.bindings[i] === 'read-only-storage';
  return b.bindings.map((bb, j) => {
    if (!read(b, j)) return null;
    const i = a.bindings.findIndex((ba, i) => read(a, i) && sameRange(ba, bb));
    return i < 0 ? null : i;
  });
}

function sameRange(x: Binding, y: Binding): boolean {
  const [x0, x1] = range(x);
  const [y0, y1] = range(y);
  return bufferOf(x) === bufferOf(y) && x0 === y0 && x1 === y1;
}

function bufferOf(b: Binding): GPUBuffer {
  return 'buffer' in b ? b.buffer : b;
}
