// Launcher for shaders/sample.wgsl: one sampled next token (and its log-prob) per sequence.
// A row that cannot be sampled (NaN or +inf logits, or every entry masked) gets NO_TOKEN and a
// NaN log-prob: callers must treat NO_TOKEN as "the model's output is not finite".
import code from '../../shaders/sample.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import { LARGE_ROW_THREADS, rowThreads, SMALL_ROW_THREADS } from './rowThreads';
import type { KernelSpec } from '../gpu/pipelineCache';
import type { SampleOptions } from './sample.reference';

export { NO_TOKEN } from './sample.reference';

function sampleKernel(vocab: number): KernelSpec {
  return rowThreads(vocab) === SMALL_ROW_THREADS ? SAMPLE_SMALL : SAMPLE_LARGE;
}

const SAMPLE_LARGE: KernelSpec = {
  name: 'sample',
  code,
  entryPoint: 'main',
  bindings: ['uniform', 'read-only-storage', 'storage', 'storage', 'storage'],
  constants: { WG: LARGE_ROW_THREADS },
};
const SAMPLE_SMALL: KernelSpec = { ...SAMPLE_LARGE, constants: { WG: SMALL_ROW_THREADS } };

/** u32 words per row of the repetition penalty's seen-id bitset. */
export function seenWords(vocab: number): number {
  return Math.ceil(vocab / 32);
}

/** The seen-id bitset ([rows, seenWords(vocab)] u32) of each row's ids (e.g. its prompt). */
export function seenBitset(rows: readonly (readonly number[])[], vocab: number): Uint32Array {
  const words = seenWords(vocab);
  const bits = new Uint32Array(rows.length * words);
  rows.forEach((ids, r) => {
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= vocab) throw new RangeError(`token id ${id} of row ${r} is outside the vocabulary of ${vocab}`);
      bits[r * words + (id >>> 5)] |= 1 << (id & 31);
    }
  });
  return bits;
}

/** Whether these options need the seen-id bitset (a repetition penalty other than 1). */
export function usesSeen(o: Pick<SampleOptions, 'repetitionPenalty'>): boolean {
  return (o.repetitionPenalty ?? 1) !== 1;
}

export interface SampleShape extends SampleOptions {
  rows: number;
  vocab: number;
  /** Global index of row 0 (the draw depends on it), default 0. */
  rowOffset?: number;
}

export function validateSampleOptions(o: SampleShape): void {
  if (!Number.isInteger(o.rows) || o.rows < 1) throw new RangeError(`rows must be a positive integer, got ${o.rows}`);
  if (!Number.isInteger(o.vocab) || o.vocab < 1) throw new RangeError(`vocab must be a positive integer, got ${o.vocab}`);
  if (!(o.temperature >= 0) || !Number.isFinite(o.temperature)) {
    throw new RangeError(`temperature must be a finite number >= 0 (0 = greedy), got ${o.temperature}`);
  }
  if (!Number.isInteger(o.topK) || o.topK < 0) throw new RangeError(`top_k must be an integer >= 0 (0 disables), got ${o.topK}`);
  if (!(o.topP > 0 && o.topP <= 1)) throw new RangeError(`top_p must be in (0, 1], got ${o.topP}`);
  const penalty = o.repetitionPenalty ?? 1;
  if (!(penalty > 0) || !Number.isFinite(penalty)) throw new RangeError(`repetition_penalty must be a finite number > 0 (1 disables), got ${penalty}`);
  const minP = o.minP ?? 0;
  if (!(minP >= 0 && minP <= 1)) throw new RangeError(`min_p must be in [0, 1] (0 disables), got ${minP}`);
  for (const [name, v] of [['seed', o.seed], ['step', o.step], ['row_offset', o.rowOffset ?? 0]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${name} must be a 32-bit unsigned integer, got ${v}`);
  }
}

export interface SampleBuffers {
  /** [rows] u32 ids; NO_TOKEN for a row that could not be sampled. */
  tokens: GPUBuffer;
  /** [rows] f32; NaN with NO_TOKEN. */
  logprobs: GPUBuffer;
}

/**
 * Records one draw per row of `logits` ([rows, vocab]); returns pooled [rows] buffers.
 * `seen` is the rows' seen-id bitset ([rows, seenWords(vocab)] u32, see seenBitset): with a
 * repetition penalty other than 1 it is read for the penalty and each drawn id is added to it
 * on the GPU; without one the kernel never touches it (the binding still needs a buffer, so
 * callers keep one per call rather than one per draw).
 */
export function recordSample(rt: GpuRuntime, rec: Recorder, logits: GPUBuffer, o: SampleShape, seen: GPUBuffer): SampleBuffers {
  validateSampleOptions(o);
  const penalised = usesSeen(o);
  const tokens = rt.storage(o.rows * 4, 'sample.tokens');
  const logprobs = rt.storage(o.rows * 4, 'sample.logprobs');
  const data = new ArrayBuffer(48);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  u32[0] = o.rows;
  u32[1] = o.vocab;
  f32[2] = o.temperature === 0 ? 0 : 1 / o.temperature;
  u32[3] = o.topK;
  f32[4] = o.topP;
  u32[5] = o.seed >>> 0;
  u32[6] = o.step >>> 0;
  u32[7] = (o.rowOffset ?? 0) >>> 0;
  f32[8] = o.repetitionPenalty ?? 1;
  f32[9] = o.minP ?? 0;
  u32[10] = penalised ? seenWords(o.vocab) : 0;
  const [x, y] = rt.grid(o.rows);
  rec.dispatch(rt.pipeline(sampleKernel(o.vocab)), [rec.uniform(u32), logits, tokens, logprobs, seen], x, y);
  return { tokens, logprobs };
}

/**
 * Host wrapper: uploads logits, samples, reads back tokens and log-probs. `seenIds` (per row,
 * the ids already in its sequence) feeds the repetition penalty; `seen` returns the bitset
 * after the draw (unchanged without the penalty).
 */
export async function runSample(
  rt: GpuRuntime,
  logits: Float32Array,
  o: SampleShape,
  seenIds?: readonly (readonly number[])[],
): Promise<{ tokens: Uint32Array; logprobs: Float32Array; seen: Uint32Array }> {
  if (logits.length !== o.rows * o.vocab) throw new RangeError(`logits has ${logits.length} values, expected rows*vocab = ${o.rows * o.vocab}`);
  if (seenIds && seenIds.length !== o.rows) throw new RangeError(`seenIds has ${seenIds.length} rows, expected ${o.rows}`);
  const rec = rt.recorder('sample');
  const input = rt.upload(logits, 'sample.logits');
  const seen = rt.upload(seenBitset(seenIds ?? Array.from({ length: o.rows }, () => []), o.vocab), 'sample.seen');
  const out = recordSample(rt, rec, input, o, seen);
  const tokens = rec.readU32(out.tokens, o.rows);
  const logprobs = rec.readF32(out.logprobs, o.rows);
  const seenRead = rec.readU32(seen, o.rows * seenWords(o.vocab));
  try {
    await rec.submit();
    return { tokens: await tokens, logprobs: await logprobs, seen: await seenRead };
  } finally {
    rt.release(input, out.tokens, out.logprobs, seen);
  }
}
