// Launcher for shaders/logprobs.wgsl: fused log-softmax + gather + entropy, and backward.
import code from '../../shaders/logprobs.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import { LARGE_ROW_THREADS, rowThreads, SMALL_ROW_THREADS } from './rowThreads';
import type { KernelSpec } from '../gpu/pipelineCache';

const WORKGROUP = 256;

const FORWARD: KernelSpec = {
  name: 'logprobs',
  code,
  entryPoint: 'forward',
  bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage', 'storage', 'storage'],
  constants: { WG: LARGE_ROW_THREADS },
};
const FORWARD_SMALL: KernelSpec = { ...FORWARD, constants: { WG: SMALL_ROW_THREADS } };
const BACKWARD: KernelSpec = {
  name: 'logprobs',
  code,
  entryPoint: 'backward',
  bindings: [
    'uniform',
    'read-only-storage',
    'read-only-storage',
    'storage',
    'storage',
    'storage',
    'read-only-storage',
    'read-only-storage',
    'storage',
  ],
};

export interface LogprobsShape {
  rows: number;
  vocab: number;
  temperature: number;
}

/** GPU buffers produced by the forward pass; the backward pass reads all of them. */
export interface LogprobsForward extends LogprobsShape {
  logits: GPUBuffer;
  tokens: GPUBuffer;
  logprobs: GPUBuffer;
  entropy: GPUBuffer;
  rowStats: GPUBuffer;
}

export function validateLogprobsShape(shape: LogprobsShape, maxBindingBytes: number): void {
  const { rows, vocab, temperature } = shape;
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be a positive integer, got ${rows}`);
  if (!Number.isInteger(vocab) || vocab < 2) throw new RangeError(`vocab must be an integer >= 2, got ${vocab}`);
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new RangeError(`temperature must be a finite number > 0, got ${temperature}`);
  }
  if (rows * vocab * 4 > maxBindingBytes) {
    throw new RangeError(
      `logits of ${rows} x ${vocab} floats exceed this GPU's storage binding limit of ${maxBindingBytes} bytes; ` +
        `process at most ${Math.floor(maxBindingBytes / (vocab * 4))} rows at a time`,
    );
  }
}

/** Records the forward pass. Output buffers come from the pool; release them when done. */
export function recordLogprobsForward(
  rt: GpuRuntime,
  rec: Recorder,
  logits: GPUBuffer,
  tokens: GPUBuffer,
  shape: LogprobsShape,
): LogprobsForward {
  validateLogprobsShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const { rows } = shape;
  const logprobs = rt.storage(rows * 4, 'logprobs');
  const entropy = rt.storage(rows * 4, 'entropy');
  const rowStats = rt.storage(rows * 8, 'logprobs.row_stats');
  const params = rec.uniform(paramsFor(shape, false));
  const [x, y] = rt.grid(rows);
  rec.dispatch(rt.pipeline(rowThreads(shape.vocab) === SMALL_ROW_THREADS ? FORWARD_SMALL : FORWARD), [params, logits, tokens, logprobs, entropy, rowStats], x, y);
  return { ...shape, logits, tokens, logprobs, entropy, rowStats };
}

/** Records d(sum g_lp*logprob + g_H*entropy)/d logits; returns a pooled [rows*vocab] buffer. */
export function recordLogprobsBackward(
  rt: GpuRuntime,
  rec: Recorder,
  fwd: LogprobsForward,
  gradLogprobs: GPUBuffer,
  gradEntropy: GPUBuffer | null,
): GPUBuffer {
  const gradLogits = rt.storage(fwd.rows * fwd.vocab * 4, 'grad_logits');
  const params = rec.uniform(paramsFor(fwd, gradEntropy !== null));
  const chunks = Math.ceil(fwd.vocab / WORKGROUP);
  const [y, z] = rt.grid(fwd.rows);
  rec.dispatch(
    rt.pipeline(BACKWARD),
    [params, fwd.logits, fwd.tokens, fwd.logprobs, fwd.entropy, fwd.rowStats, gradLogprobs, gradEntropy ?? gradLogprobs, gradLogits],
    chunks,
    y,
    z,
  );
  return gradLogits;
}

function paramsFor(shape: LogprobsShape, useGradEntropy: boolean): Uint32Array {
  const data = new ArrayBuffer(16);
  const u32 = new Uint32Array(data);
  u32[0] = shape.rows;
  u32[1] = shape.vocab;
  new Float32Array(data)[2] = 1 / shape.temperature;
  u32[3] = useGradEntropy ? 1 : 0;
  return u32;
}

export interface LogprobsHostInput extends LogprobsShape {
  logits: Float32Array;
  tokens: Uint32Array;
  gradLogprobs?: Float32Array;
  gradEntropy?: Float32Array;
}

export interface LogprobsHostOutput {
  logprobs: Float32Array;
  entropy: Float32Array;
  gradLogits?: Float32Array;
}

/**
 * Host arrays in, host arrays out: uploads, runs forward (and backward when gradients are
 * given) in one submission, reads back. For tests, the kernel runner and benchmarks.
 */
export async function runLogprobs(rt: GpuRuntime, input: LogprobsHostInput): Promise<LogprobsHostOutput> {
  const { rows, vocab } = input;
  if (input.logits.length !== rows * vocab) {
    throw new RangeError(`logits has ${input.logits.length} values, expected rows*vocab = ${rows * vocab}`);
  }
  if (input.tokens.length !== rows) throw new RangeError(`tokens has ${input.tokens.length} ids, expected ${rows}`);
  for (let r = 0; r < rows; r++) {
    if (input.tokens[r] >= vocab) throw new RangeError(`tokens[${r}] = ${input.tokens[r]} is outside the vocabulary of ${vocab}`);
  }
  for (const [name, g] of [['grad_logprobs', input.gradLogprobs], ['grad_entropy', input.gradEntropy]] as const) {
    if (g && g.length !== rows) throw new RangeError(`${name} has ${g.length} values, expected ${rows}`);
  }
  const rec = rt.recorder('logprobs');
  const logits = rt.upload(input.logits, 'logits');
  const tokens = rt.upload(input.tokens, 'tokens');
  const fwd = recordLogprobsForward(rt, rec, logits, tokens, input);
  const owned = [logits, tokens, fwd.logprobs, fwd.entropy, fwd.rowStats];
  const logprobs = rec.readF32(fwd.logprobs, rows);
  const entropy = rec.readF32(fwd.entropy, rows);
  let gradLogits: Promise<Float32Array> | undefined;
  if (input.gradLogprobs || input.gradEntropy) {
    const gl = rt.upload(input.gradLogprobs ?? new Float32Array(rows), 'grad_logprobs');
    const ge = input.gradEntropy ? rt.upload(input.gradEntropy, 'grad_entropy') : null;
    const out = recordLogprobsBackward(rt, rec, fwd, gl, ge);
    owned.push(gl, out, ...(ge ? [ge] : []));
    gradLogits = rec.readF32(out, rows * vocab);
  }
  try {
    await rec.submit();
    return { logprobs: await logprobs, entropy: await entropy, gradLogits: gradLogits && (await gradLogits) };
  } finally {
    rt.release(...owned);
  }
}
