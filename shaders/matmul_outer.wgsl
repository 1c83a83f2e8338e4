// Weight-gradient products on a software adapter: C = alpha * A^T . B + beta * C (+ bias), A
// stored [K, M] and B [K, N] (dW = X^T dY, or dY^T X), as outer products. The same contract as
// matmul.wgsl (Params, bindings 0-4; outer_tn_sum also binding 5 and SUM_K, as its fused
// kernels: 1 sums op(B)'s columns, 2 op(A)'s rows, into extra with alpha and beta).
// A thread keeps an 8 x 4 block of C in registers and walks K: per k it loads 8 values of A's
// row k (two vec4) and 4 of B's (one vec4), 32 multiply-adds, no shared memory and no barrier.
// On SwiftShader that is 2-2.5x faster than the tiled kernel at K = 64 (a 2 x 32-token step);
// the advantage fades towards K = 1024, and on a GPU a tiled kernel's reuse wins, so
// src/ops/matmulOuter.ts takes it only on a software adapter for K <= 512. Needs M, N, lda,
// ldb, ldc multiples of 4 and batch 1. Float64 twin: src/ops/matmul.reference.ts (matmulRef,
// matmulFusedRef for the sums).

override SUM_K: u32 = 0u;

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;

struct Block {
  // Rows 4 rq .. 4 rq + 3 and the next four, each a vec4 of 4 columns.
  lo: array<vec4<f32>, 4>,
  hi: array<vec4<f32>, 4>,
  // Sums over k of B's 4 columns, and of A's 8 rows (lo, hi).
  sum_b: vec4<f32>,
  sum_a_lo: vec4<f32>,
  sum_a_hi: vec4<f32>,
}

fn accumulate(q: u32, rq: u32, m4: u32) -> Block {
  var blk: Block;
  let lda4 = params.lda / 4u;
  let ldb4 = params.ldb / 4u;
  // A lone last row quad (M / 4 odd) reads its own quad twice and stores only the first.
  let rq_hi = min(rq + 1u, m4 - 1u);
  for (var kk = 0u; kk < params.k; kk++) {
    let b = b4[kk * ldb4 + q];
    let a_lo = a4[kk * lda4 + rq];
    let a_hi = a4[kk * lda4 + rq_hi];
    blk.lo[0] += a_lo.x * b;
    blk.lo[1] += a_lo.y * b;
    blk.lo[2] += a_lo.z * b;
    blk.lo[3] += a_lo.w * b;
    blk.hi[0] += a_hi.x * b;
    blk.hi[1] += a_hi.y * b;
    blk.hi[2] += a_hi.z * b;
    blk.hi[3] += a_hi.w * b;
    blk.sum_b += b;
    blk.sum_a_lo += a_lo;
    blk.sum_a_hi += a_hi;
  }
  return blk;
}

fn store_c(q: u32, rq: u32, m4: u32, blk: Block) {
  let ldc4 = params.ldc / 4u;
  var bq = vec4<f32>(0.0);
  if (params.has_bias == 1u) { bq = vec4<f32>(bias[4u * q], bias[4u * q + 1u], bias[4u * q + 2u], bias[4u * q + 3u]); }
  for (var i = 0u; i < 4u; i++) {
    let slot = (4u * rq + i) * ldc4 + q;
    var v = params.alpha * blk.lo[i];
    if (params.read_c == 1u) { v += params.beta * c4[slot]; }
    c4[slot] = v + bq;
  }
  if (rq + 1u >= m4) { return; }
  for (var i = 0u; i < 4u; i++) {
    let slot = (4u * rq + 4u + i) * ldc4 + q;
    var v = params.alpha * blk.hi[i];
    if (params.read_c == 1u) { v += params.beta * c4[slot]; }
    c4[slot] = v + bq;
  }
}

// Workgroups: x over column quads, y over pairs of row quads (8 rows).
@compute @workgroup_size(16)
fn outer_tn(@builtin(global_invocation_id) gid: vec3<u32>) {
  let m4 = params.m / 4u;
  if (gid.x >= params.n / 4u || 2u * gid.y >= m4) { return; }
  store_c(gid.x, 2u * gid.y, m4, accumulate(gid.x, 2u * gid.y, m4));
}

@group(0) @binding(5) var<storage, read_write> extra: array<f32>;

fn store_sum(j: u32, s: f32) {
  var v = params.alpha * s;
  if (params.read_c == 1u) { v += params.beta * extra[j]; }
  extra[j] = v;
}

@compute @workgroup_size(16)
fn outer_tn_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
  let m4 = params.m / 4u;
  let q = gid.x;
  let rq = 2u * gid.y;
  if (q >= params.n / 4u || rq >= m4) { return; }
  let blk = accumulate(q, rq, m4);
  store_c(q, rq, m4, blk);
  // The first row block writes the column sums, the first column quad the row sums.
  if (SUM_K == 1u && rq == 0u) {
    for (var j = 0u; j < 4u; j++) { store_sum(4u * q + j, blk.sum_b[j]); }
  }
  if (SUM_K == 2u && q == 0u) {
    for (var i = 0u; i < 4u; i++) { store_sum(4u * rq + i, blk.sum_a_lo[i]); }
    if (rq + 1u < m4) {
      for (var i = 0u; i < 4u; i++) { store_sum(4u * rq + 4u + i, blk.sum_a_hi[i]); }
    }
  }
}
