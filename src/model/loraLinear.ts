// One LoRA adapter on the GPU, as plain matmuls: y_j += scale · (drop(x) · Aᵀ) · B_jᵀ for each
// output block j (A [r, in], B_j [out_j, r], PEFT's layouts), and its backward:
//   dH   = scale · Σ_j dy_j · B_j            [rows, r]
//   dB_j += scale · dy_jᵀ · H                 H = drop(x) · Aᵀ, kept from the forward pass
//   dA   += dHᵀ · drop(x)                     drop(x) regenerated from the seed, not stored
//   dx   += drop(dH · A)                      dropout is linear: its backward is itself
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import { recordDropout, recordDropoutAccumulate, type DropoutOptions } from '../ops/dropout';
import { recordMatmul } from '../ops/matmul';
import type { Scratch } from './scratch';

export interface LoraShape {
  rows: number;
  inDim: number;
  r: number;
  scale: number;
}

export interface LoraBlock {
  /** B_j [outDim, r]. */
  b: Binding;
  outDim: number;
}

/**
 * Records the adapter's contribution into each `ys[j]` [rows, outDim_j] (added to what the
 * base layer wrote). Returns H [rows, r], pooled, for the backward pass. `dropout` null (or
 * p = 0) means no dropout (sampling, evaluation); its masked input comes from `scratch`.
 */
export function recordLoraForward(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  a: Binding,
  blocks: readonly LoraBlock[],
  ys: readonly Binding[],
  s: LoraShape,
  dropout: DropoutOptions | null,
  scratch: Scratch,
): GPUBuffer {
  if (blocks.length !== ys.length) throw new RangeError(`LoRA: ${blocks.length} B blocks but ${ys.length} outputs`);
  const dropping = dropout !== null && dropout.p > 0;
  const input = dropping ? recordDropout(rt, rec, x, s.rows * s.inDim, dropout, scratch.take(s.rows * s.inDim * 4, 'lora.dropout')) : x;
  const h = rt.storage(s.rows * s.r * 4, 'lora.h');
  recordMatmul(rt, rec, { a: input, b: a, c: h }, { m: s.rows, n: s.r, k: s.inDim, transB: true });
  if (dropping) scratch.done(input);
  blocks.forEach((block, j) => {
    recordMatmul(rt, rec, { a: h, b: block.b, c: ys[j] }, { m: s.rows, n: block.outDim, k: s.r, transB: true, alpha: s.scale, beta: 1 });
  });
  return h;
}

export interface LoraGrads {
  a: Binding;
  /** One per block, in block order. */
  b: readonly Binding[];
}

/**
 * Records the adapter's backward: adds dA and every dB_j into `grads`, and the input gradient
 * into `dx` [rows, inDim]. `x` and `h` are the forward's input and H; `dys[j]` the gradient of
 * output j. Temporaries come from (and go back to) `scratch`.
 */
export function recordLoraBackward(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  h: GPUBuffer,
  a: Binding,
  blocks: readonly LoraBlock[],
  dys: readonly Binding[],
  dx: GPUBuffer,
  grads: LoraGrads,
  s: LoraShape,
  dropout: DropoutOptions | null,
  scratch: Scratch,
): void {
  if (blocks.length !== dys.length || blocks.length !== grads.b.length) {
    throw new RangeError(`LoRA backward: ${blocks.length} B blocks, ${dys.length} output gradients, ${grads.b.length} dB buffers`);
  }
  const dh = scratch.take(s.rows * s.r * 4, 'lora.dh');
  blocks.forEach((block, j) => {
    recordMatmul(rt, rec, { a: dys[j], b: block.b, c: dh }, { m: s.rows, n: s.r, k: block.outDim, alpha: s.scale, beta: j === 0 ? 0 : 1 });
    recordMatmul(rt, rec, { a: dys[j], b: h, c: grads.b[j] }, { m: block.outDim, n: s.r, k: s.rows, transA: true, alpha: s.scale, beta: 1 });
  });
  if (dropout !== null && dropout.p > 0) {
    const bytes = s.rows * s.inDim * 4;
    const input = recordDropout(rt, rec, x, s.rows * s.inDim, dropout, scratch.take(bytes, 'lora.dropout'));
    recordMatmul(rt, rec, { a: dh, b: input, c: grads.a }, { m: s.r, n: s.inDim, k: s.rows, transA: true, beta: 1 });
    scratch.done(input);
    const dInput = scratch.take(bytes, 'lora.d_input');
    recordMatmul(rt, rec, { a: dh, b: a, c: dInput }, { m: s.rows, n: s.inDim, k: s.r });
    recordDropoutAccumulate(rt, rec, dx, dInput, s.rows * s.inDim, dropout);
    scratch.done(dInput);
  } else {
    recordMatmul(rt, rec, { a: dh, b: x, c: grads.a }, { m: s.r, n: s.inDim, k: s.rows, transA: true, beta: 1 });
    recordMatmul(rt, rec, { a: dh, b: a, c: dx }, { m: s.rows, n: s.inDim, k: s.r, beta: 1 });
  }
  scratch.done(dh);
}
