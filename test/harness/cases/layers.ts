// Page-side cases for test/browser/layers.test.ts (norms, activations, embedding, elementwise),
// run through harness.runModule. Inputs and outputs are plain JSON-able data (number arrays).
import { GpuRuntime } from '../../../src/gpu/runtime';
import { runNorm, recordAddNormForward, recordNormForward, recordNormBackward, normRowThreads, type NormKind } from '../../../src/ops/norm';
import { runGelu, runSwiglu, recordGeluForward } from '../../../src/ops/activation';
import { runEmbedding, recordEmbeddingForward, recordEmbeddingBackward } from '../../../src/ops/embedding';
import { runElementwise, recordAccumulate, recordAdd, type ElementwiseOp } from '../../../src/ops/elementwise';

type Maybe = number[] | undefined;
const f32 = (v: Maybe) => (v ? new Float32Array(v) : undefined);
const list = (v: Float32Array | undefined) => (v ? Array.from(v) : undefined);

export interface NormCase {
  kind: NormKind;
  rows: number;
  dim: number;
  eps: number;
  x: number[];
  gamma: number[];
  beta?: number[];
  dy?: number[];
  dGammaInit?: number[];
  dBetaInit?: number[];
  residual?: number[];
  threads?: number;
}

export async function norm(rt: GpuRuntime, c: NormCase) {
  const out = await runNorm(rt, {
    ...c,
    x: new Float32Array(c.x),
    gamma: new Float32Array(c.gamma),
    beta: f32(c.beta),
    dy: f32(c.dy),
    dGammaInit: f32(c.dGammaInit),
    dBetaInit: f32(c.dBetaInit),
    residual: f32(c.residual),
  });
  return {
    y: list(out.y),
    mean: list(out.mean),
    rstd: list(out.rstd),
    dx: list(out.dx),
    dGamma: list(out.dGamma),
    dBeta: list(out.dBeta),
  };
}

/** `norm` on a device of its own made without the optional features (no subgroups): the tree sums. */
export async function normWithoutSubgroups(_rt: GpuRuntime, c: NormCase) {
  const rt = await GpuRuntime.create({ optionalFeatures: false });
  try {
    if (rt.device.features.has('subgroups')) throw new Error('the device has subgroups after all');
    return await norm(rt, c);
  } finally {
    rt.destroy();
  }
}

export async function gelu(rt: GpuRuntime, c: { x: number[]; dy?: number[] }) {
  const out = await runGelu(rt, { x: new Float32Array(c.x), dy: f32(c.dy) });
  return { y: list(out.y), dx: list(out.dx) };
}

export async function swiglu(rt: GpuRuntime, c: { gate: number[]; up: number[]; dh?: number[] }) {
  const out = await runSwiglu(rt, { gate: new Float32Array(c.gate), up: new Float32Array(c.up), dh: f32(c.dh) });
  return { h: list(out.h), dGate: list(out.dGate), dUp: list(out.dUp) };
}

export interface EmbeddingCase {
  tokens: number;
  dim: number;
  vocab: number;
  positions?: number;
  ids: number[];
  table: number[];
  posIds?: number[];
  posTable?: number[];
  dOut?: number[];
  dTableInit?: number[];
  dPosInit?: number[];
}

export async function embedding(rt: GpuRuntime, c: EmbeddingCase) {
  const out = await runEmbedding(rt, {
    ...c,
    ids: new Uint32Array(c.ids),
    table: new Float32Array(c.table),
    posIds: c.posIds ? new Uint32Array(c.posIds) : undefined,
    posTable: f32(c.posTable),
    dOut: f32(c.dOut),
    dTableInit: f32(c.dTableInit),
    dPosInit: f32(c.dPosInit),
  });
  return { out: list(out.out), dTable: list(out.dTable), dPos: list(out.dPos) };
}

/**
 * Forward lookup with ids uploaded as they are, as ids made on the GPU arrive (runEmbedding
 * rejects out-of-range host ids before the kernel sees them).
 */
export async function embeddingGpuIds(rt: GpuRuntime, c: EmbeddingCase) {
  const rec = rt.recorder('embedding gpu ids');
  const ids = rt.upload(new Uint32Array(c.ids), 'ids');
  const table = rt.upload(new Float32Array(c.table), 'table');
  const posIds = c.posIds ? rt.upload(new Uint32Array(c.posIds), 'pos_ids') : null;
  const posTable = c.posTable ? rt.upload(new Float32Array(c.posTable), 'pos_table') : null;
  const pos = posIds && posTable ? { ids: posIds, table: posTable } : undefined;
  const out = recordEmbeddingForward(rt, rec, { tokens: c.tokens, dim: c.dim, vocab: c.vocab, positions: c.positions }, ids, table, pos);
  const read = rec.readF32(out, c.tokens * c.dim);
  try {
    await rec.submit();
    return { out: Array.from(await read) };
  } finally {
    rt.release(ids, table, out, ...(posIds ? [posIds] : []), ...(posTable ? [posTable] : []));
  }
}

export async function elementwise(
  rt: GpuRuntime,
  c: { op: ElementwiseOp; a?: number[]; b?: number[]; acc?: number[]; alpha?: number; count?: number },
) {
  const out = await runElementwise(rt, { ...c, a: f32(c.a), b: f32(c.b), acc: f32(c.acc) });
  return Array.from(out);
}

/**
 * The fused residual add + norm (recordAddNormForward) and, in the same submission, the
 * separate add then norm on the same inputs: y, stats and the sum of both.
 */
export async function addNorm(rt: GpuRuntime, c: NormCase & { b: number[] }) {
  const rec = rt.recorder('add + norm');
  const shape = { kind: c.kind, rows: c.rows, dim: c.dim, eps: c.eps };
  const x = rt.upload(new Float32Array(c.x), 'x');
  const b = rt.upload(new Float32Array(c.b), 'b');
  const gamma = rt.upload(new Float32Array(c.gamma), 'gamma');
  const beta = c.beta ? rt.upload(new Float32Array(c.beta), 'beta') : null;
  const fused = recordAddNormForward(rt, rec, shape, x, b, gamma, beta);
  const sum = recordAdd(rt, rec, x, b, c.rows * c.dim);
  const apart = recordNormForward(rt, rec, shape, sum, gamma, beta);
  const n = c.rows * c.dim;
  const reads = [fused.x, fused.y, fused.stats, sum, apart.y, apart.stats].map((buf, i) => rec.readF32(buf, i % 3 === 2 ? 2 * c.rows : n));
  await rec.submit();
  const [fSum, fY, fStats, aSum, aY, aStats] = (await Promise.all(reads)).map((a) => Array.from(a));
  rt.release(x, b, gamma, ...(beta ? [beta] : []), fused.x, fused.y, fused.stats, sum, apart.y, apart.stats);
  return { fused: { sum: fSum, y: fY, stats: fStats }, apart: { sum: aSum, y: aY, stats: aStats } };
}

/**
 * The dispatches a norm forward + backward would make (captured, nothing runs): entry point,
 * threads per workgroup (the WG the kernel was compiled with) and workgroups; with this
 * adapter's software flag and normRowThreads at a few dims.
 */
export function normDispatches(rt: GpuRuntime, c: { kind: NormKind; rows: number; dim: number; threads?: number; residual?: boolean }) {
  const { kind, rows, dim } = c;
  const x = rt.storage(rows * dim * 4, 'x');
  const gamma = rt.storage(dim * 4, 'gamma');
  const made: GPUBuffer[] = [];
  const capture = () =>
    rt.captureDispatches(() => {
      const rec = rt.recorder('norm.capture');
      const fwd = recordNormForward(rt, rec, { kind, rows, dim, eps: 1e-5, threads: c.threads }, x, gamma, kind === 'layernorm' ? gamma : null);
      const g = recordNormBackward(rt, rec, fwd, x, undefined, c.residual ? x : undefined);
      made.push(fwd.y, fwd.stats, g.dx, g.dGamma as GPUBuffer, ...(g.dBeta ? [g.dBeta as GPUBuffer] : []));
    });
  const paired = capture();
  // Each kernel alone: what the launcher chose.
  const captured = rt.unpaired(capture);
  rt.release(x, gamma, ...made);
  return {
    software: rt.info.isFallback,
    subgroupSize: rt.info.subgroupSize ?? null,
    threadsByDim: Object.fromEntries([1, 128, 129, 576, 1024, 4096].map((d) => [d, [normRowThreads(d, false), normRowThreads(d, true)]])),
    dispatches: captured.map((d) => ({
      entryPoint: d.spec.entryPoint,
      wg: Number((/^(param|reduce)_/.test(d.spec.entryPoint) ? /const COLS: u32 = (\d+)u;/ : /const WG: u32 = (\d+)u;/).exec(d.spec.code)?.[1]),
      subgroups: d.spec.code.startsWith('enable subgroups;'),
      workgroups: d.workgroups,
    })),
    pairedEntryPoints: paired.map((d) => d.spec.entryPoint),
  };
}

const CASES = { norm, gelu, swiglu, embedding, elementwise } as const;

/** Runs one case and reports a thrown error's class and message instead of rejecting. */
export async function attempt(rt: GpuRuntime, c: { fn: keyof typeof CASES; input: unknown }) {
  try {
    await (CASES[c.fn] as (rt: GpuRuntime, input: unknown) => Promise<unknown>)(rt, c.input);
    return { ok: true };
  } catch (err) {
    const e = err as Error;
    return { ok: false, name: e.name, message: e.message };
  }
}

/**
 * Misuse of the record* launchers on real GPU buffers: each entry is the error class and
 * message, or 'no error'. Nothing bad is dispatched (validation happens before recording).
 */
export async function recordErrors(rt: GpuRuntime): Promise<Record<string, string>> {
  // Pooled buffers round up to 256 bytes: `small` holds 64 floats.
  const small = rt.upload(new Float32Array(8), 'small');
  const big = rt.upload(new Float32Array(1024), 'big');
  const ids = rt.upload(new Uint32Array(4), 'ids');
  const rec = rt.recorder('layers.errors');
  const made: GPUBuffer[] = [];
  const results: Record<string, string> = {};
  const check = (name: string, f: () => GPUBuffer | void | object) => {
    try {
      const r = f();
      if (r && 'size' in r) made.push(r as GPUBuffer);
      results[name] = 'no error';
    } catch (err) {
      results[name] = `${(err as Error).name}: ${(err as Error).message}`;
    }
  };
  const shape = { kind: 'layernorm' as const, rows: 4, dim: 16, eps: 1e-5 };
  check('layernorm without beta', () => recordNormForward(rt, rec, shape, big, big, null));
  check('rmsnorm with beta', () => recordNormForward(rt, rec, { ...shape, kind: 'rmsnorm' }, big, big, big));
  check('x too small', () => recordNormForward(rt, rec, { ...shape, rows: 100 }, small, big, big));
  check('rows 0', () => recordNormForward(rt, rec, { ...shape, rows: 0 }, big, big, big));
  check('dim 1.5', () => recordNormForward(rt, rec, { ...shape, dim: 1.5 }, big, big, big));
  check('eps negative', () => recordNormForward(rt, rec, { ...shape, eps: -1 }, big, big, big));
  const fakeForward = { ...shape, rows: 8, x: big, gamma: big, beta: big, y: big, stats: big };
  check('accumulate without dBeta', () => recordNormBackward(rt, rec, fakeForward, big, { dGamma: big }));
  check('dy too small', () => recordNormBackward(rt, rec, fakeForward, small));
  check('residual too small', () => recordNormBackward(rt, rec, fakeForward, big, undefined, small));
  check('threads 3', () => recordNormForward(rt, rec, { ...shape, threads: 3 }, big, big, big));
  check('gelu count 0', () => recordGeluForward(rt, rec, big, 0));
  check('gelu x too small', () => recordGeluForward(rt, rec, small, 100));
  check('embedding table too small', () => recordEmbeddingForward(rt, rec, { tokens: 4, dim: 4, vocab: 30 }, ids, small));
  check('embedding positions without table', () =>
    recordEmbeddingForward(rt, rec, { tokens: 4, dim: 2, vocab: 3, positions: 4 }, ids, small),
  );
  check('embedding backward id out of range', () => recordEmbeddingBackward(rt, rec, big, [0, 1, 5], { dim: 2, rows: 5 }));
  check('embedding backward negative id', () => recordEmbeddingBackward(rt, rec, big, [0, -1], { dim: 2, rows: 5 }));
  check('add b too small', () => recordAdd(rt, rec, big, small, 100));
  check('accumulate alpha NaN', () => recordAccumulate(rt, rec, big, big, 4, NaN));
  await rec.submit();
  rt.release(small, big, ids, ...made);
  return results;
}
