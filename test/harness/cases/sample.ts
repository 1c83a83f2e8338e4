// Page side of test/browser/sample.test.ts.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { runSample, type SampleShape } from '../../../src/ops/sample';

export async function sample(rt: GpuRuntime, input: { logits: number[]; options: SampleShape; seen?: number[][] }) {
  const out = await runSample(rt, new Float32Array(input.logits), input.options, input.seen);
  return { tokens: Array.from(out.tokens), logprobs: Array.from(out.logprobs), seen: Array.from(out.seen) };
}

/** The same row of logits repeated `rows` times: each row gets its own draw. */
export async function histogram(rt: GpuRuntime, input: { row: number[]; rows: number; options: Omit<SampleShape, 'rows' | 'vocab'> }) {
  const vocab = input.row.length;
  const logits = new Float32Array(vocab * input.rows);
  for (let r = 0; r < input.rows; r++) logits.set(input.row, r * vocab);
  const out = await runSample(rt, logits, { ...input.options, rows: input.rows, vocab });
  const counts = new Array(vocab).fill(0);
  for (const t of out.tokens) counts[t]++;
  return counts;
}
