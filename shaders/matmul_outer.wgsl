// Weight-gradient products on a software adapter: C = alpha * A^T . B + beta * C (+ bias), A
// stored [K, M] and B [K, N] (dW = X^T dY, or dY^T X), as outer products. The same contract as
// matmul.wgsl (Params, bindings 0-4; outer_tn_sum also binding 5 and SUM_K, as its fused
// kernels: 1 sums op(B)'s columns, 2 op(A)'s rows, into extra with alpha and beta).
// A thread keeps an 8 x 8 block of C in registers and walks K: per k it loads 8 values of A's
// row k (two vec4) and 8 of B's (two vec4), 64 multiply-adds, no shared memory and no barrier
// (8 x 8 measured faster than the first 8 x 4 block: fewer loads per multiply-add). The k-sums
// are a separate pass over K by the threads that store them.
// On SwiftShader that is 2-2.5x faster than the tiled kernel at K = 64 (a 2 x 32-token step);
// the advantage fades towards K = 1024, and on a GPU a tiled kernel's reuse wins, so
// src/ops/matmulOuter.ts takes it only on a software adapter for K <= 512. Needs M, N, lda,
// ldb, ldc (and with batch > 1 the batch strides) multiples of 4; batch z's bias and k-sums sit
// at z * stride_bias. outer_tn_ragged (no k-sums, batch 1) lifts that for M and lda: a
// tied vocabulary head's dE = dLogits^T X, M = 259 or 50,257, which the tiled kernel took
// 4.1 s for at GPT-2 small's size (1 x 8 tokens). Float64 twin: src/ops/matmul.reference.ts
// (matmulRef, matmulFusedRef for the sums).

override SUM_K: u32 = 0u;

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;

// The invocation's batch (dispatch z), set first thing by each entry point.
var<private> batch_z: u32;

/**
 * A thread's 8 x 8 block of C: rows 4 rq .. 4 rq + 7 (lo: the first row quad, hi: the next),
 * columns 4 q .. 4 q + 7 (_l: the first column quad, _h: the next), a vec4 of 4 columns each.
 */
struct Block {
  lo_l: array<vec4<f32>, 4>,
  lo_h: array<vec4<f32>, 4>,
  hi_l: array<vec4<f32>, 4>,
  hi_h: array<vec4<f32>, 4>,
}

/** Adds a_row[i] * b_row to the 4 rows of one quarter of the block. */
fn add_outer(acc: ptr<function, array<vec4<f32>, 4>>, a: vec4<f32>, b: vec4<f32>) {
  (*acc)[0] += a.x * b;
  (*acc)[1] += a.y * b;
  (*acc)[2] += a.z * b;
  (*acc)[3] += a.w * b;
}

/**
 * The block at column quads q, q_hi and row quads rq, rq_hi (q_hi = q + 1 and rq_hi = rq + 1,
 * or q and rq again at the matrix's edge: those are computed twice and stored once).
 */
fn accumulate(q: u32, q_hi: u32, rq: u32, rq_hi: u32) -> Block {
  var blk: Block;
  let lda4 = params.lda / 4u;
  let ldb4 = params.ldb / 4u;
  let base_a4 = batch_z * params.stride_a / 4u;
  let base_b4 = batch_z * params.stride_b / 4u;
  for (var kk = 0u; kk < params.k; kk++) {
    let b_l = b4[base_b4 + kk * ldb4 + q];
    let b_h = b4[base_b4 + kk * ldb4 + q_hi];
    let a_lo = a4[base_a4 + kk * lda4 + rq];
    let a_hi = a4[base_a4 + kk * lda4 + rq_hi];
    add_outer(&blk.lo_l, a_lo, b_l);
    add_outer(&blk.lo_h, a_lo, b_h);
    add_outer(&blk.hi_l, a_hi, b_l);
    add_outer(&blk.hi_h, a_hi, b_h);
  }
  return blk;
}

/** Stores one quarter of the block: rows 4 rq.. (those below M), column quad q. */
fn store_quarter(q: u32, rq: u32, acc: array<vec4<f32>, 4>) {
  let ldc4 = params.ldc / 4u;
  let base_c4 = batch_z * params.stride_c / 4u;
  let at = batch_z * params.stride_bias + 4u * q;
  var bq = vec4<f32>(0.0);
  if (params.has_bias == 1u) { bq = vec4<f32>(bias[at], bias[at + 1u], bias[at + 2u], bias[at + 3u]); }
  for (var i = 0u; i < min(4u, params.m - 4u * rq); i++) {
    let slot = base_c4 + (4u * rq + i) * ldc4 + q;
    var v = params.alpha * acc[i];
    if (params.read_c == 1u) { v += params.beta * c4[slot]; }
    c4[slot] = v + bq;
  }
}

/** Stores the block, each row and column quad once. */
fn store_c(q: u32, q_hi: u32, rq: u32, rq_hi: u32, blk: Block) {
  store_quarter(q, rq, blk.lo_l);
  if (q_hi != q) { store_quarter(q_hi, rq, blk.lo_h); }
  if (rq_hi == rq) { return; }
  store_quarter(q, rq_hi, blk.hi_l);
  if (q_hi != q) { store_quarter(q_hi, rq_hi, blk.hi_h); }
}

/** Row quads of C: the last one part full when M is not a multiple of 4 (outer_tn_ragged). */
fn row_quads() -> u32 {
  return (params.m + 3u) / 4u;
}

/** The thread's quads: x over pairs of column quads, y over pairs of row quads. */
fn quads(gid: vec3<u32>) -> vec4<u32> {
  let n4 = params.n / 4u;
  let m4 = row_quads();
  let q = 2u * gid.x;
  let rq = 2u * gid.y;
  return vec4<u32>(q, min(q + 1u, n4 - 1u), rq, min(rq + 1u, m4 - 1u));
}

fn inside(gid: vec3<u32>) -> bool {
  return 2u * gid.x < params.n / 4u && 2u * gid.y < row_quads();
}

@compute @workgroup_size(16)
fn outer_tn(@builtin(global_invocation_id) gid: vec3<u32>) {
  batch_z = gid.z;
  if (!inside(gid)) { return; }
  let t = quads(gid);
  store_c(t.x, t.y, t.z, t.w, accumulate(t.x, t.y, t.z, t.w));
}

@group(0) @binding(5) var<storage, read_write> extra: array<f32>;

fn store_sum(j: u32, s: f32) {
  let e = batch_z * params.stride_bias + j;
  var v = params.alpha * s;
  if (params.read_c == 1u) { v += params.beta * extra[e]; }
  extra[e] = v;
}

/**
 * Sums over k of quad p of B's rows (SUM_K 1: columns of C) or of A's (SUM_K 2: rows of C), in
 * a pass of its own: only the first row (column) of threads needs them, so the product's loop
 * stays free of them.
 */
fn k_sum(p: u32) -> vec4<f32> {
  var s = vec4<f32>(0.0);
  if (SUM_K == 1u) {
    let ldb4 = params.ldb / 4u;
    let base_b4 = batch_z * params.stride_b / 4u;
    for (var kk = 0u; kk < params.k; kk++) { s += b4[base_b4 + kk * ldb4 + p]; }
  } else {
    let lda4 = params.lda / 4u;
    let base_a4 = batch_z * params.stride_a / 4u;
    for (var kk = 0u; kk < params.k; kk++) { s += a4[base_a4 + kk * lda4 + p]; }
  }
  return s;
}

fn store_sums(p: u32) {
  let s = k_sum(p);
  for (var j = 0u; j < 4u; j++) { store_sum(4u * p + j, s[j]); }
}

@compute @workgroup_size(16)
fn outer_tn_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
  batch_z = gid.z;
  if (!inside(gid)) { return; }
  let t = quads(gid);
  store_c(t.x, t.y, t.z, t.w, accumulate(t.x, t.y, t.z, t.w));
  // The first row of threads writes the column sums, the first column the row sums.
  let first = select(gid.x, gid.y, SUM_K == 1u) == 0u;
  if (first) {
    let p = select(t.z, t.x, SUM_K == 1u);
    let p_hi = select(t.w, t.y, SUM_K == 1u);
    store_sums(p);
    if (p_hi != p) { store_sums(p_hi); }
  }
}

// ---- Ragged variant: M or lda not a multiple of 4 (a vocabulary head's dE, M = V). A's rows are
// read element by element (the threads of a workgroup share them, so these are broadcasts, not
// gathers), row M - 1 again past M; B and C as above; rows past M store nothing. No k-sums. ----

@group(0) @binding(1) var<storage, read> a: array<f32>;

/** Row quad rq of A's row kk: C's rows 4 rq .. 4 rq + 3, those past M reading row M - 1. */
fn a_quad(kk: u32, rq: u32) -> vec4<f32> {
  let base = kk * params.lda;
  let last = params.m - 1u;
  let i = 4u * rq;
  return vec4<f32>(a[base + min(i, last)], a[base + min(i + 1u, last)], a[base + min(i + 2u, last)], a[base + min(i + 3u, last)]);
}

/** accumulate() with A read through a_quad. */
fn accumulate_ragged(q: u32, q_hi: u32, rq: u32, rq_hi: u32) -> Block {
  var blk: Block;
  let ldb4 = params.ldb / 4u;
  for (var kk = 0u; kk < params.k; kk++) {
    let b_l = b4[kk * ldb4 + q];
    let b_h = b4[kk * ldb4 + q_hi];
    let a_lo = a_quad(kk, rq);
    let a_hi = a_quad(kk, rq_hi);
    add_outer(&blk.lo_l, a_lo, b_l);
    add_outer(&blk.lo_h, a_lo, b_h);
    add_outer(&blk.hi_l, a_hi, b_l);
    add_outer(&blk.hi_h, a_hi, b_h);
  }
  return blk;
}

@compute @workgroup_size(16)
fn outer_tn_ragged(@builtin(global_invocation_id) gid: vec3<u32>) {
  batch_z = 0u;
  if (!inside(gid)) { return; }
  let t = quads(gid);
  store_c(t.x, t.y, t.z, t.w, accumulate_ragged(t.x, t.y, t.z, t.w));
}
