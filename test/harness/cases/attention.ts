// Page-side cases for test/browser/attention.test.ts: plain arrays in, plain arrays out, run
// through the real launchers (src/ops/attention.ts, src/ops/rope.ts) on WebGPU.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import {
  attentionTile,
  recordAttentionBackward,
  recordAttentionDecode,
  recordAttentionForward,
  resolveAttentionShape,
  runAttention,
  runAttentionDecode,
  type AttentionKernels,
  type AttentionTile,
} from '../../../src/ops/attention';
import { runRope, type RopeDirection } from '../../../src/ops/rope';

export interface AttentionCase {
  batch: number;
  seqLen: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  scale?: number;
  tile?: AttentionTile;
  kernels?: AttentionKernels;
  q: number[];
  k: number[];
  v: number[];
  pad: number[];
  dout?: number[];
}

export async function attention(rt: GpuRuntime, input: AttentionCase) {
  const r = await runAttention(rt, {
    ...input,
    q: new Float32Array(input.q),
    k: new Float32Array(input.k),
    v: new Float32Array(input.v),
    dout: input.dout ? new Float32Array(input.dout) : undefined,
  });
  return {
    tile: r.tile,
    kernels: r.kernels,
    out: Array.from(r.out),
    lse: Array.from(r.lse),
    dq: r.dq && Array.from(r.dq),
    dk: r.dk && Array.from(r.dk),
    dv: r.dv && Array.from(r.dv),
  };
}

/** Runs the same case twice; returns whether the gradients are bitwise identical. */
export async function attentionDeterministic(rt: GpuRuntime, input: AttentionCase) {
  const a = await attention(rt, input);
  const b = await attention(rt, input);
  const same = (x?: number[], y?: number[]) => !!x && !!y && x.length === y.length && x.every((v, i) => Object.is(v, y[i]));
  return { dq: same(a.dq, b.dq), dk: same(a.dk, b.dk), dv: same(a.dv, b.dv) };
}

export interface DecodeCase {
  batch: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  maxSeqLen: number;
  length: number;
  scale?: number;
  kernels?: AttentionKernels;
  q: number[];
  kcache: number[];
  vcache: number[];
  pad: number[];
}

export async function decode(rt: GpuRuntime, input: DecodeCase) {
  const out = await runAttentionDecode(rt, {
    ...input,
    q: new Float32Array(input.q),
    kcache: new Float32Array(input.kcache),
    vcache: new Float32Array(input.vcache),
  });
  return { out: Array.from(out) };
}

export interface RopeCase {
  tokens: number;
  numHeads: number;
  headDim: number;
  theta?: number;
  direction?: RopeDirection;
  x: number[];
  positions: number[];
}

export async function rope(rt: GpuRuntime, input: RopeCase) {
  const y = await runRope(rt, { ...input, x: new Float32Array(input.x) });
  return { y: Array.from(y) };
}

/** The tile chosen for headDim on this GPU, and the workgroup memory limit it was chosen under. */
export function tileChoice(rt: GpuRuntime, input: { headDim: number }) {
  const limits = rt.device.limits;
  const small = { ...limitsObject(limits), maxComputeWorkgroupStorageSize: 16384 };
  return {
    tile: attentionTile(limits, input.headDim),
    limit: limits.maxComputeWorkgroupStorageSize,
    tileAt16KiB: attentionTile(small as GPUSupportedLimits, input.headDim),
  };
}

/** The default kernels for a shape on this GPU, and the entry points each kind dispatches (forward + backward). */
export function kernelChoice(rt: GpuRuntime, shape: { batch: number; seqLen: number; numHeads: number; numKvHeads: number; headDim: number }) {
  const entries = (kernels?: AttentionKernels, decodeOnly = false) => {
    const size = (n: number) => rt.storage(n * 4);
    const [q, k, v, pad, dout] = [size(1), size(1), size(1), size(1), size(1)];
    const decodeShape = { ...shape, maxSeqLen: shape.seqLen, length: shape.seqLen, kernels };
    // Each kernel alone: pairing would merge independent neighbours (dk/dv with the decode).
    const captured = rt.unpaired(() =>
      rt.captureDispatches(() => {
        const rec = rt.recorder('kernel-choice');
        if (!decodeOnly) {
          const fwd = recordAttentionForward(rt, rec, q, k, v, pad, { ...shape, kernels });
          const g = recordAttentionBackward(rt, rec, fwd, dout);
          rt.release(fwd.out, fwd.lse, g.dq, g.dk, g.dv);
        }
        rt.release(recordAttentionDecode(rt, rec, q, k, v, pad, decodeShape));
      }),
    );
    rt.release(q, k, v, pad, dout);
    return captured.map((d) => d.spec.entryPoint);
  };
  return {
    software: rt.info.isFallback,
    kernels: resolveAttentionShape(shape, rt.device.limits, rt.info.isFallback).kernels,
    rows: entries('rows'),
    tiles: entries('tiles'),
    decodeDefault: entries(undefined, true)[0],
  };
}

function limitsObject(limits: GPUSupportedLimits): Record<string, number> {
  return {
    maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
    maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
  };
}

/** Runs `kind` with `input` and returns the error message (or null when it did not throw). */
export async function errorOf(rt: GpuRuntime, input: { kind: 'attention' | 'decode' | 'rope'; case: unknown }) {
  try {
    if (input.kind === 'attention') await attention(rt, input.case as AttentionCase);
    else if (input.kind === 'decode') await decode(rt, input.case as DecodeCase);
    else await rope(rt, input.case as RopeCase);
    return null;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}
