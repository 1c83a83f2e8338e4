// The uniform block of every matmul kernel (matmul.wgsl, matmul_skinny.wgsl, matmul_outer.wgsl),
// written by src/ops/matmul.ts gemmParams; pasted where a shader has `// INCLUDE matmul_params.wgsl`.
// stride_bias: elements between consecutive batches' bias (0: one bias for every batch) and, with
// a k-sum, between their k-sums in extra (a stack of projections: q, k and v in one dispatch).
struct Params {
  m: u32,
  n: u32,
  k: u32,
  has_bias: u32,
  lda: u32,
  ldb: u32,
  ldc: u32,
  read_c: u32,
  stride_a: u32,
  stride_b: u32,
  stride_c: u32,
  batch: u32,
  alpha: f32,
  beta: f32,
  stride_bias: u32,
  _pad1: u32,
}
