// Page-side cases for test/browser/matmul.test.ts, run through harness.runModule. Inputs and
// outputs are plain JSON-able data: number arrays, or base64 Float32 bytes for big operands.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import {
  matmulKernel,
  recordColumnSum,
  recordMatmul,
  resolveMatmulShape,
  runColumnSum,
  runMatmul,
  runMatmulFused,
  type MatmulKernel,
  type MatmulShape,
} from '../../../src/ops/matmul';

/** Numbers, or the base64 of their Float32Array bytes (fast to pass for 262k-value operands). */
export type Floats = number[] | string;

export interface MatmulCase extends MatmulShape {
  a: Floats;
  b: Floats;
  c?: Floats;
  bias?: Floats;
}

function floats(values: Floats): Float32Array {
  if (typeof values !== 'string') return new Float32Array(values);
  const bytes = Uint8Array.from(atob(values), (ch) => ch.charCodeAt(0));
  return new Float32Array(bytes.buffer);
}

/** One product through runMatmul; also reports the kernel the launcher picks for the shape. */
export async function matmul(rt: GpuRuntime, input: MatmulCase): Promise<{ c: number[]; kernel: MatmulKernel }> {
  const { a, b, c, bias, ...shape } = input;
  const out = await runMatmul(rt, {
    ...shape,
    a: floats(a),
    b: floats(b),
    c: c ? floats(c) : undefined,
    bias: bias ? floats(bias) : undefined,
  });
  return { c: Array.from(out), kernel: matmulKernel(resolveMatmulShape(shape), rt.info.isFallback) };
}

/** One fused product (epilogue or k-sum) through runMatmulFused: C, extra and the kernel picked. */
export async function matmulFused(
  rt: GpuRuntime,
  input: MatmulCase & { extra?: Floats },
): Promise<{ c: number[]; extra: number[]; kernel: MatmulKernel }> {
  const { a, b, c, bias, extra, ...shape } = input;
  const out = await runMatmulFused(rt, {
    ...shape,
    a: floats(a),
    b: floats(b),
    c: c ? floats(c) : undefined,
    bias: bias ? floats(bias) : undefined,
    extra: extra ? floats(extra) : undefined,
  });
  return { c: Array.from(out.c), extra: Array.from(out.extra), kernel: matmulKernel(resolveMatmulShape(shape), rt.info.isFallback) };
}

/**
 * A and C bound as {buffer, offset, size} windows of bigger buffers (offset 256 bytes):
 * the launcher must honour binding offsets, and the padding around C must stay untouched.
 */
export async function matmulOffsets(rt: GpuRuntime, input: MatmulCase): Promise<{ c: number[]; padding: number[]; kernel: MatmulKernel }> {
  const { a: aIn, b: bIn, bias: _bias, c: _c, ...shape } = input;
  const a = floats(aIn);
  const s = resolveMatmulShape(shape);
  const pad = 64; // floats: 256 bytes, the minimum storage offset alignment
  const aBig = new Float32Array(pad + a.length + pad).fill(NaN);
  aBig.set(a, pad);
  const cBig = new Float32Array(pad + s.extentC + pad).fill(-7);
  const aBuf = rt.upload(aBig, 'case.a');
  const bBuf = rt.upload(floats(bIn), 'case.b');
  const cBuf = rt.upload(cBig, 'case.c');
  const rec = rt.recorder('case.offsets');
  const kernel = recordMatmul(
    rt,
    rec,
    {
      a: { buffer: aBuf, offset: pad * 4, size: a.length * 4 },
      b: bBuf,
      c: { buffer: cBuf, offset: pad * 4, size: s.extentC * 4 },
    },
    shape,
  );
  const all = rec.readF32(cBuf, cBig.length);
  try {
    await rec.submit();
    const out = Array.from(await all);
    return {
      c: out.slice(pad, pad + s.extentC),
      padding: [...out.slice(0, pad), ...out.slice(pad + s.extentC)],
      kernel,
    };
  } finally {
    rt.release(aBuf, bBuf, cBuf);
  }
}

export async function columnSum(
  rt: GpuRuntime,
  input: { x: number[]; rows: number; cols: number; ld?: number; alpha?: number; beta?: number; out?: number[] },
): Promise<number[]> {
  const { x, out, ...shape } = input;
  return Array.from(
    await runColumnSum(rt, { ...shape, x: new Float32Array(x), out: out ? new Float32Array(out) : undefined }),
  );
}

/**
 * A linear layer's forward and backward for two micro-batches, recorded into ONE submission
 * the way a training step would: Y_i = X_i W^T + b, dX_i = dY_i W, dW = sum_i dY_i^T X_i,
 * db = sum_i colsum(dY_i) (the second micro-batch accumulates with beta = 1).
 */
export async function linearLayer(
  rt: GpuRuntime,
  input: { x: number[][]; dy: number[][]; w: number[]; b: number[]; tokens: number; inF: number; outF: number },
) {
  const { tokens, inF, outF } = input;
  const rec = rt.recorder('case.linear');
  const w = rt.upload(new Float32Array(input.w), 'case.w');
  const b = rt.upload(new Float32Array(input.b), 'case.b');
  const dw = rt.storage(outF * inF * 4, 'case.dw');
  const db = rt.storage(outF * 4, 'case.db');
  const owned = [w, b, dw, db];
  const reads: Promise<Float32Array>[] = [];
  const kernels: MatmulKernel[] = [];
  input.x.forEach((xs, i) => {
    const x = rt.upload(new Float32Array(xs), 'case.x');
    const dy = rt.upload(new Float32Array(input.dy[i]), 'case.dy');
    const y = rt.storage(tokens * outF * 4, 'case.y');
    const dx = rt.storage(tokens * inF * 4, 'case.dx');
    owned.push(x, dy, y, dx);
    const beta = i === 0 ? 0 : 1;
    kernels.push(recordMatmul(rt, rec, { a: x, b: w, c: y, bias: b }, { m: tokens, n: outF, k: inF, transB: true }));
    kernels.push(recordMatmul(rt, rec, { a: dy, b: w, c: dx }, { m: tokens, n: inF, k: outF }));
    kernels.push(recordMatmul(rt, rec, { a: dy, b: x, c: dw }, { m: outF, n: inF, k: tokens, transA: true, beta }));
    recordColumnSum(rt, rec, { x: dy, out: db }, { rows: tokens, cols: outF, beta });
    reads.push(rec.readF32(y, tokens * outF), rec.readF32(dx, tokens * inF));
  });
  const dwRead = rec.readF32(dw, outF * inF);
  const dbRead = rec.readF32(db, outF);
  const submitsBefore = rt.counters.submits;
  try {
    await rec.submit();
    const got = (await Promise.all(reads)).map((r) => Array.from(r));
    return {
      y: got.filter((_, i) => i % 2 === 0),
      dx: got.filter((_, i) => i % 2 === 1),
      dw: Array.from(await dwRead),
      db: Array.from(await dbRead),
      kernels,
      submits: rt.counters.submits - submitsBefore,
    };
  } finally {
    rt.release(...owned);
  }
}

/** Runs each bad request and returns its error message ('' when nothing was thrown). */
export async function errors(rt: GpuRuntime, requests: MatmulCase[]): Promise<string[]> {
  const messages: string[] = [];
  for (const r of requests) {
    try {
      await matmul(rt, r);
      messages.push('');
    } catch (err) {
      messages.push(`${(err as Error).name}: ${(err as Error).message}`);
    }
  }
  return messages;
}

/** recordMatmul with C aliasing A must be refused before anything reaches the GPU. */
export async function aliasedOutput(rt: GpuRuntime): Promise<string> {
  const buf = rt.upload(new Float32Array(16), 'case.alias');
  const rec = rt.recorder('case.alias');
  try {
    recordMatmul(rt, rec, { a: buf, b: buf, c: buf }, { m: 2, n: 2, k: 2 });
    return '';
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  } finally {
    await rec.submit();
    rt.release(buf);
  }
}

/** Pipelines compiled and pool buffers created by a second identical product (expected: 0 and 0). */
export async function steadyState(rt: GpuRuntime, input: MatmulCase): Promise<{ compiled: number; created: number }> {
  await matmul(rt, input);
  const compiled = rt.pipelines.compiled;
  const created = rt.pool.snapshot().created;
  await matmul(rt, input);
  return { compiled: rt.pipelines.compiled - compiled, created: rt.pool.snapshot().created - created };
}
