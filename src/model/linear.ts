// A linear layer's three products on top of the matmul kernel, for both weight layouts:
// 'in_out' (GPT-2 Conv1D, y = x W, W [in, out]) and 'out_in' (Linear, y = x Wᵀ, W [out, in]).
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import { recordMatmul } from '../ops/matmul';
import type { WeightLayout } from './weights';

export interface LinearShape {
  rows: number;
  inDim: number;
  outDim: number;
  layout: WeightLayout;
}

/**
 * y [rows, out] = x W (+ bias) (+ residual [rows, out], added in the same dispatch: a
 * transformer's residual stream); returns a pooled buffer.
 */
export function linearForward(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  w: Binding,
  bias: Binding | null,
  s: LinearShape,
  residual: GPUBuffer | null = null,
): GPUBuffer {
  const y = rt.storage(s.rows * s.outDim * 4, residual ? 'linear.y_residual' : 'linear.y');
  recordMatmul(rt, rec, { a: x, b: w, c: y, bias, extra: residual }, {
    m: s.rows,
    n: s.outDim,
    k: s.inDim,
    transB: s.layout === 'out_in',
    epilogue: residual ? 'residual' : 'none',
  });
  return y;
}

/**
 * GPT-2's MLP up projection with GELU as its epilogue, one dispatch: pre [rows, out] = x W + bias
 * (kept for backward) and act = gelu(pre) (gelu_new), both pooled buffers from `rt`.
 */
export function linearForwardGelu(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  w: Binding,
  bias: Binding | null,
  s: LinearShape,
): { pre: GPUBuffer; act: GPUBuffer } {
  const pre = rt.storage(s.rows * s.outDim * 4, 'linear.y');
  const act = rt.storage(s.rows * s.outDim * 4, 'gelu.y');
  recordMatmul(rt, rec, { a: x, b: w, c: pre, bias, extra: act }, { m: s.rows, n: s.outDim, k: s.inDim, transB: s.layout === 'out_in', epilogue: 'gelu' });
  return { pre, act };
}

/**
 * out [rows, in] = (dy · the transpose of the forward map) ⊙ gelu'(pre), one dispatch: the input
 * gradient of a linear layer whose input was gelu(pre) (GPT-2's MLP down projection), carried
 * through the GELU. `pre` is [rows, in].
 */
export function linearBackwardInputGelu(rt: GpuRuntime, rec: Recorder, dy: GPUBuffer, w: Binding, s: LinearShape, out: GPUBuffer, pre: GPUBuffer): void {
  recordMatmul(rt, rec, { a: dy, b: w, c: out, extra: pre }, { m: s.rows, n: s.inDim, k: s.outDim, transB: s.layout === 'in_out', epilogue: 'gelu_backward' });
}

/** dx [rows, in] = dy · (the transpose of the forward map); added into `into` when given. */
export function linearBackwardInput(
  rt: GpuRuntime,
  rec: Recorder,
  dy: Binding,
  w: Binding,
  s: LinearShape,
  into?: GPUBuffer,
): GPUBuffer {
  const dx = into ?? rt.storage(s.rows * s.inDim * 4, 'linear.dx');
  linearBackwardInputInto(rt, rec, dy, w, s, dx, into ? 'add' : 'write');
  return dx;
}

/**
 * out [rows, in] = (or +=) dy · (the transpose of the forward map), into the caller's buffer.
 * With `st`, the sum of that over every layer of a stack (layer i's dy in slot i): the stack's
 * input gradient, in one dispatch where the matmul kernel sums batches.
 */
export function linearBackwardInputInto(rt: GpuRuntime, rec: Recorder, dy: Binding, w: Binding, s: LinearShape, out: GPUBuffer, mode: 'write' | 'add', st?: LinearStack): void {
  const stacked = st ? { batch: st.count, strideA: st.slot, strideB: st.weightStride, sumBatches: true } : {};
  recordMatmul(rt, rec, { a: dy, b: w, c: out }, { m: s.rows, n: s.inDim, k: s.outDim, transB: s.layout === 'in_out', beta: mode === 'add' ? 1 : 0, ...stacked });
}

/**
 * Several linear layers of one shape on one input (a layer's q, k and v): `count` weights
 * `weightStride` floats apart in one buffer, their biases `biasStride` apart, their outputs
 * (and output gradients) `slot` floats apart in one buffer. Each product below is then one
 * dispatch for all of them (a matmul batch), where it was one per layer.
 */
export interface LinearStack {
  count: number;
  weightStride: number;
  biasStride: number;
  slot: number;
}

/** y_i [rows, out] = x W_i (+ bias_i) for every layer i of the stack, into slot i of `y`. */
export function linearForwardStack(rt: GpuRuntime, rec: Recorder, x: GPUBuffer, w: Binding, bias: Binding | null, s: LinearShape, st: LinearStack, y: GPUBuffer): void {
  recordMatmul(rt, rec, { a: x, b: w, c: y, bias }, {
    m: s.rows,
    n: s.outDim,
    k: s.inDim,
    transB: s.layout === 'out_in',
    batch: st.count,
    strideA: 0,
    strideB: st.weightStride,
    strideC: st.slot,
    strideBias: st.biasStride,
  });
}

/**
 * dW += the weight gradient, and dBias += column sums of dy, in one dispatch: the product's
 * k-sum over dy (op(B) = dy for in_out, op(A) = dyᵀ for out_in) is the bias gradient. With `st`,
 * the same for every layer of a stack at once: layer i's from slot i of `dy`.
 */
export function linearBackwardParams(
  rt: GpuRuntime,
  rec: Recorder,
  x: GPUBuffer,
  dy: GPUBuffer,
  dW: Binding,
  dBias: Binding | null,
  s: LinearShape,
  st?: LinearStack,
): void {
  // A stack: x shared by every layer (batch stride 0), dy's slots, dW and dBias at their strides.
  const stacked = st ? { batch: st.count, strideC: st.weightStride, strideBias: st.biasStride } : {};
  if (s.layout === 'in_out') {
    recordMatmul(rt, rec, { a: x, b: dy, c: dW, extra: dBias }, { m: s.inDim, n: s.outDim, k: s.rows, transA: true, beta: 1, sumK: dBias ? 'b' : null, ...stacked, ...(st ? { strideA: 0, strideB: st.slot } : {}) });
  } else {
    recordMatmul(rt, rec, { a: dy, b: x, c: dW, extra: dBias }, { m: s.outDim, n: s.inDim, k: s.rows, transA: true, beta: 1, sumK: dBias ? 'a' : null, ...stacked, ...(st ? { strideA: st.slot, strideB: 0 } : {}) });
  }
}
