// Register-blocked products for M > 8 rows on a software adapter, the same contract as
// matmul.wgsl (Params, bindings 0-4, alpha/beta/bias/batch; blocked_fused also takes `extra`
// (5) and EPILOGUE as matmul.wgsl's fused kernels do, through shaders/matmul_epilogue.wgsl):
//   C[b] = alpha * A[b] . op(B[b]) + beta * C[b] + bias      (A not transposed)
// A thread keeps an 8 x 8 block of C in registers (rows row0.., two quads of 4 adjacent
// columns, a vec4 each) and walks the whole of K four steps at a time, with no shared memory
// and no barrier: per 4 steps it loads a vec4 of K from each of its 8 rows of A and the 4 x 8
// block of op(B) (8 vec4), and does 256 multiply-adds.
// - B stored [K, N] (TRANS_B false): the block of op(B) is 4 rows of B, two vec4 each.
// - op(B) = B^T, B stored [N, K] (TRANS_B; a Linear weight): each of the 8 columns' rows along
//   K as a vec4, transposed in registers (free on a CPU adapter, where a vec4 is 4 scalars).
// The rows are written out, not looped over, and the block of op(B) travels as separate vec4
// values, not an array: SwiftShader does not unroll such loops, so an array indexed by the
// loop counter lives in memory (a loop over the rows was 1.3-1.8x slower, a loop over an
// array of B values 3x). 8 x 8 beat 8 x 4 blocks by 10-20% (fewer loads per multiply-add).
// On SwiftShader the tiled kernels' staging and barriers cost more than their reuse saves
// (the reason for matmul_skinny.wgsl and matmul_outer.wgsl too): one page, interleaved,
// 1.9-2.1x tiled_vec4 at K = 128, 1.1-1.4x at K = 512, 1.25-1.5x at K = 768-2048, level at
// K = 3072 with M = N = K; at long K with few rows or columns (a tied head's input gradient
// dLogits . E, K = the vocabulary) it is well ahead: 32 x 96 x 4096 2.6x, 232 x 96 x 4096 1.6x,
// 32 x 576 x 8192 2.1x, 64 x 576 x 49152 1.2x, and level (0.95-1.13x over reruns) at 64 x 768 x
// 8192, 256 x 128 x 8192 and 512 x 512 x 4096. So src/ops/matmulBlocked.ts takes these on a
// software adapter at every K; on a GPU the tiled kernels stay. Needs K, N, lda, ldb, ldc (and the batch strides, batch > 1)
// multiples of 4; blocked_ragged (A.B^T only, no epilogue) lifts that for N, ldc and C's
// stride. Rows past M (columns past N) of the last block read row M - 1 (the last column quad,
// or B's row N - 1) again and store nothing. Float64 twin: src/ops/matmul.reference.ts (matmulRef,
// matmulFusedRef).

const ROWS: u32 = 8u;
const WG: u32 = 16u;

// op(B) = B^T: B stored [N, K] rather than [K, N].
override TRANS_B: bool = false;
// blocked_fused only: 0 none, 1 residual, 2 gelu, 3 gelu_backward.
override EPILOGUE: u32 = 0u;
// blocked only: C = alpha * sum over the batches of A[b] . op(B[b]) + beta * C + bias, one C (at
// batch 0's place), dispatched with one z. The input gradient of a stack of projections (q, k,
// v): dX = dq . Wq^T + dk . Wk^T + dv . Wv^T in one pass over C instead of three.
override SUM_BATCHES: bool = false;

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;

/** A thread's block: row row0 + r is lo[r] (columns 4q..4q+3) and hi[r] (the next quad). */
struct Block {
  lo: array<vec4<f32>, ROWS>,
  hi: array<vec4<f32>, ROWS>,
}

/**
 * Adds 4 steps of K (quad kq): each row's vec4 of A (row row0 + r of the batch at base_a4, or
 * row M - 1 past M) times the 4 x 8 block of op(B): b_t, d_t its row 4 kq + t in the low and
 * high column quad.
 */
fn multiply_add(acc: ptr<function, Block>, base_a4: u32, row0: u32, kq: u32,
                b0: vec4<f32>, b1: vec4<f32>, b2: vec4<f32>, b3: vec4<f32>,
                d0: vec4<f32>, d1: vec4<f32>, d2: vec4<f32>, d3: vec4<f32>) {
  let lda4 = params.lda / 4u;
  let av0 = a4[base_a4 + min(row0 + 0u, params.m - 1u) * lda4 + kq];
  (*acc).lo[0] += av0.x * b0 + av0.y * b1 + av0.z * b2 + av0.w * b3;
  (*acc).hi[0] += av0.x * d0 + av0.y * d1 + av0.z * d2 + av0.w * d3;
  let av1 = a4[base_a4 + min(row0 + 1u, params.m - 1u) * lda4 + kq];
  (*acc).lo[1] += av1.x * b0 + av1.y * b1 + av1.z * b2 + av1.w * b3;
  (*acc).hi[1] += av1.x * d0 + av1.y * d1 + av1.z * d2 + av1.w * d3;
  let av2 = a4[base_a4 + min(row0 + 2u, params.m - 1u) * lda4 + kq];
  (*acc).lo[2] += av2.x * b0 + av2.y * b1 + av2.z * b2 + av2.w * b3;
  (*acc).hi[2] += av2.x * d0 + av2.y * d1 + av2.z * d2 + av2.w * d3;
  let av3 = a4[base_a4 + min(row0 + 3u, params.m - 1u) * lda4 + kq];
  (*acc).lo[3] += av3.x * b0 + av3.y * b1 + av3.z * b2 + av3.w * b3;
  (*acc).hi[3] += av3.x * d0 + av3.y * d1 + av3.z * d2 + av3.w * d3;
  let av4 = a4[base_a4 + min(row0 + 4u, params.m - 1u) * lda4 + kq];
  (*acc).lo[4] += av4.x * b0 + av4.y * b1 + av4.z * b2 + av4.w * b3;
  (*acc).hi[4] += av4.x * d0 + av4.y * d1 + av4.z * d2 + av4.w * d3;
  let av5 = a4[base_a4 + min(row0 + 5u, params.m - 1u) * lda4 + kq];
  (*acc).lo[5] += av5.x * b0 + av5.y * b1 + av5.z * b2 + av5.w * b3;
  (*acc).hi[5] += av5.x * d0 + av5.y * d1 + av5.z * d2 + av5.w * d3;
  let av6 = a4[base_a4 + min(row0 + 6u, params.m - 1u) * lda4 + kq];
  (*acc).lo[6] += av6.x * b0 + av6.y * b1 + av6.z * b2 + av6.w * b3;
  (*acc).hi[6] += av6.x * d0 + av6.y * d1 + av6.z * d2 + av6.w * d3;
  let av7 = a4[base_a4 + min(row0 + 7u, params.m - 1u) * lda4 + kq];
  (*acc).lo[7] += av7.x * b0 + av7.y * b1 + av7.z * b2 + av7.w * b3;
  (*acc).hi[7] += av7.x * d0 + av7.y * d1 + av7.z * d2 + av7.w * d3;
}

/** The block at column quads q, q + 1 (or q again at N's end), rows row0.., of batch z; B stored [K, N]. */
fn accumulate_nn(q: u32, row0: u32, z: u32) -> Block {
  var acc: Block;
  let ldb4 = params.ldb / 4u;
  let base_a4 = z * params.stride_a / 4u;
  let lo = z * params.stride_b / 4u + q;
  let hi = z * params.stride_b / 4u + min(q + 1u, params.n / 4u - 1u);
  for (var kq = 0u; kq < params.k / 4u; kq++) {
    let row = 4u * kq * ldb4;
    multiply_add(&acc, base_a4, row0, kq,
                 b4[lo + row], b4[lo + row + ldb4], b4[lo + row + 2u * ldb4], b4[lo + row + 3u * ldb4],
                 b4[hi + row], b4[hi + row + ldb4], b4[hi + row + 2u * ldb4], b4[hi + row + 3u * ldb4]);
  }
  return acc;
}

/** Step t of four columns' vec4s along K: (c0[t], c1[t], c2[t], c3[t]), the 4 columns at that step. */
fn step_of(c0: vec4<f32>, c1: vec4<f32>, c2: vec4<f32>, c3: vec4<f32>, t: u32) -> vec4<f32> {
  return vec4<f32>(c0[t], c1[t], c2[t], c3[t]);
}

/**
 * The same block with B stored [N, K]: the columns of op(B) are B's rows. Columns past N (N
 * need not be a multiple of 4 here, see blocked_ragged) read B's row N - 1 again.
 */
fn accumulate_nt(q: u32, row0: u32, z: u32) -> Block {
  var acc: Block;
  let ldb4 = params.ldb / 4u;
  let base_a4 = z * params.stride_a / 4u;
  let base_b4 = z * params.stride_b / 4u;
  let last = params.n - 1u;
  let col = 4u * q;
  let hi = 4u * min(q + 1u, (params.n + 3u) / 4u - 1u);
  let l0 = base_b4 + min(col, last) * ldb4;
  let l1 = base_b4 + min(col + 1u, last) * ldb4;
  let l2 = base_b4 + min(col + 2u, last) * ldb4;
  let l3 = base_b4 + min(col + 3u, last) * ldb4;
  let h0 = base_b4 + min(hi, last) * ldb4;
  let h1 = base_b4 + min(hi + 1u, last) * ldb4;
  let h2 = base_b4 + min(hi + 2u, last) * ldb4;
  let h3 = base_b4 + min(hi + 3u, last) * ldb4;
  for (var kq = 0u; kq < params.k / 4u; kq++) {
    let c0 = b4[l0 + kq];
    let c1 = b4[l1 + kq];
    let c2 = b4[l2 + kq];
    let c3 = b4[l3 + kq];
    let e0 = b4[h0 + kq];
    let e1 = b4[h1 + kq];
    let e2 = b4[h2 + kq];
    let e3 = b4[h3 + kq];
    multiply_add(&acc, base_a4, row0, kq,
                 step_of(c0, c1, c2, c3, 0u), step_of(c0, c1, c2, c3, 1u), step_of(c0, c1, c2, c3, 2u), step_of(c0, c1, c2, c3, 3u),
                 step_of(e0, e1, e2, e3, 0u), step_of(e0, e1, e2, e3, 1u), step_of(e0, e1, e2, e3, 2u), step_of(e0, e1, e2, e3, 3u));
  }
  return acc;
}

fn accumulate_batch(q: u32, row0: u32, z: u32) -> Block {
  if (TRANS_B) { return accumulate_nt(q, row0, z); }
  return accumulate_nn(q, row0, z);
}

/** Adds block `more` into `acc`, the rows written out (see the header: no loop over an array). */
fn add_block(acc: ptr<function, Block>, more: Block) {
  (*acc).lo[0] += more.lo[0]; (*acc).hi[0] += more.hi[0];
  (*acc).lo[1] += more.lo[1]; (*acc).hi[1] += more.hi[1];
  (*acc).lo[2] += more.lo[2]; (*acc).hi[2] += more.hi[2];
  (*acc).lo[3] += more.lo[3]; (*acc).hi[3] += more.hi[3];
  (*acc).lo[4] += more.lo[4]; (*acc).hi[4] += more.hi[4];
  (*acc).lo[5] += more.lo[5]; (*acc).hi[5] += more.hi[5];
  (*acc).lo[6] += more.lo[6]; (*acc).hi[6] += more.hi[6];
  (*acc).lo[7] += more.lo[7]; (*acc).hi[7] += more.hi[7];
}

/** Batch z's block, or with SUM_BATCHES the sum of every batch's (each summed over K first). */
fn accumulate(q: u32, row0: u32, z: u32) -> Block {
  if (!SUM_BATCHES) { return accumulate_batch(q, row0, z); }
  var acc = accumulate_batch(q, row0, 0u);
  for (var b = 1u; b < params.batch; b++) { add_block(&acc, accumulate_batch(q, row0, b)); }
  return acc;
}

/** alpha, beta and bias applied to a vec4 of the block: the value for C's vec4 slot `slot` (column quad q). */
fn finish(acc: vec4<f32>, slot: u32, q: u32, z: u32) -> vec4<f32> {
  var v = params.alpha * acc;
  if (params.read_c == 1u) { v += params.beta * c4[slot]; }
  let at = z * params.stride_bias + 4u * q;
  if (params.has_bias == 1u) { v += vec4<f32>(bias[at], bias[at + 1u], bias[at + 2u], bias[at + 3u]); }
  return v;
}

/** C's vec4 slot of row row0 + r, column quad q, batch z. */
fn slot_of(q: u32, row0: u32, r: u32, z: u32) -> u32 {
  return (z * params.stride_c + (row0 + r) * params.ldc) / 4u + q;
}

// Workgroups: x over pairs of column quads, y over blocks of ROWS rows, z over batches.
@compute @workgroup_size(WG)
fn blocked(@builtin(global_invocation_id) gid: vec3<u32>) {
  let q = 2u * gid.x;
  let row0 = gid.y * ROWS;
  if (q >= params.n / 4u || row0 >= params.m) { return; }
  let acc = accumulate(q, row0, gid.z);
  let two = q + 1u < params.n / 4u;
  for (var r = 0u; r < min(ROWS, params.m - row0); r++) {
    let slot = slot_of(q, row0, r, gid.z);
    c4[slot] = finish(acc.lo[r], slot, q, gid.z);
    if (two) { c4[slot + 1u] = finish(acc.hi[r], slot + 1u, q + 1u, gid.z); }
  }
}

// ---- Fused variant: the same products stored through EPILOGUE (binding 5, `extra`). ----

@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read_write> extra: array<f32>;

// INCLUDE matmul_epilogue.wgsl

@compute @workgroup_size(WG)
fn blocked_fused(@builtin(global_invocation_id) gid: vec3<u32>) {
  let q = 2u * gid.x;
  let row0 = gid.y * ROWS;
  if (q >= params.n / 4u || row0 >= params.m) { return; }
  let acc = accumulate(q, row0, gid.z);
  let two = q + 1u < params.n / 4u;
  for (var r = 0u; r < min(ROWS, params.m - row0); r++) {
    let slot = slot_of(q, row0, r, gid.z);
    store_fused4(slot, finish(acc.lo[r], slot, q, gid.z));
    if (two) { store_fused4(slot + 1u, finish(acc.hi[r], slot + 1u, q + 1u, gid.z)); }
  }
}

// ---- Ragged variant: A.B^T with N, ldc or C's batch stride not a multiple of 4 (a vocabulary-
// sized head: logits = X . E^T with N = 259). The same block and loads (B's rows, along K), C
// stored element by element, columns past N skipped. No epilogue. ----

/** Stores 4 columns col0.. of one row of C (starting at element `row_base`), those below N. */
fn store_ragged(row_base: u32, bias_base: u32, col0: u32, acc: vec4<f32>) {
  for (var t = 0u; t < 4u; t++) {
    let col = col0 + t;
    if (col < params.n) {
      var v = params.alpha * acc[t];
      if (params.read_c == 1u) { v += params.beta * c[row_base + col]; }
      if (params.has_bias == 1u) { v += bias[bias_base + col]; }
      c[row_base + col] = v;
    }
  }
}

@compute @workgroup_size(WG)
fn blocked_ragged(@builtin(global_invocation_id) gid: vec3<u32>) {
  let q = 2u * gid.x;
  let row0 = gid.y * ROWS;
  if (q >= (params.n + 3u) / 4u || row0 >= params.m) { return; }
  let acc = accumulate_nt(q, row0, gid.z);
  for (var r = 0u; r < min(ROWS, params.m - row0); r++) {
    let row_base = gid.z * params.stride_c + (row0 + r) * params.ldc;
    store_ragged(row_base, gid.z * params.stride_bias, 4u * q, acc.lo[r]);
    store_ragged(row_base, gid.z * params.stride_bias, 4u * q + 4u, acc.hi[r]);
  }
}
