// Threads per row for the kernels that walk a row of logits with one workgroup and reduce it
// (shaders/sample.wgsl, the forward of shaders/logprobs.wgsl): few for a small vocabulary,
// where most of 256 threads would hold one entry and wait at the barrier (the byte-level
// default model's 259 entries sample 5-8x faster with 64 on SwiftShader), many for a large one.

/** Vocabularies up to this size get SMALL_ROW_THREADS. */
export const SMALL_VOCAB_MAX = 4096;
export const SMALL_ROW_THREADS = 64;
export const LARGE_ROW_THREADS = 256;

export function rowThreads(vocab: number): number {
  return vocab <= SMALL_VOCAB_MAX ? SMALL_ROW_THREADS : LARGE_ROW_THREADS;
}
