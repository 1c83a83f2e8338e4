// Skinny products, M <= 8 rows (decoding: one row per sequence), the same contract as
// matmul.wgsl (same Params, bindings 0-4, beta/bias/batch semantics; see its header):
//   C[b] = alpha * op(A[b]) . op(B[b]) + beta * C[b] + bias
// Register-blocked, with no shared memory and no barrier: a thread keeps all M rows of its
// output in registers and walks the whole of K. On a software adapter (SwiftShader) the tiled
// and small_m kernels pay for their workgroup barriers and shared-memory staging; these run
// 5-15x faster there at decode shapes (8 x 128 x 512: 15.7 -> 1.0-1.5 ms). On a GPU they
// are a plain GEMV-style kernel over a few rows. src/ops/matmul.ts picks them when M <= 8, no
// k-sum is asked for, and the layout allows the vector loads below; else small_m.
// skinny_nn_fused / skinny_nt_fused store through EPILOGUE (binding 5, `extra`, as matmul.wgsl's
// fused kernels: shaders/matmul_epilogue.wgsl): the residual add, GELU or GELU' of a decode
// step's product in the product's own dispatch.
//
// skinny_nn: op(B) = B stored [K, N]: a thread per 4 adjacent columns (vec4 loads of B and
//            stores of C; N, ldb, ldc, stride_b, stride_c multiples of 4), K unrolled by 4.
//            A is read as scalars (row-major, or [K, M] with TRANS_A).
// skinny_nt: op(B) = B^T, B stored [N, K]: a thread per 4 columns, K walked as vec4 (4 steps)
//            of A's rows and the 4 columns' rows of B, transposed in registers (K, lda, ldb,
//            stride_a, stride_b multiples of 4; A not transposed). A thread per column with
//            vec4 dot products (A loaded 4x as often) was 2.4x slower at 8 x 2048 x 576.
// The 8 rows are written out, not looped over: SwiftShader does not unroll such a loop, and an
// accumulator array indexed by its counter then lives in memory. The row count is a pipeline
// constant (M_ROWS, one pipeline per M), not the uniform's m: the rows past M then vanish at
// compile time instead of being tested at every step of K (SwiftShader, 2048 x 2048:
// M = 1 42 -> 9.3 ms, M = 4 42 -> 17.5 ms, M = 8 34 -> 24 ms, same bits).
// src/ops/matmul.ts sets M_ROWS = params.m.
// Float64 twin: src/ops/matmul.reference.ts (matmulRef), the same product.

const ROWS: u32 = 8u;
const WG: u32 = 16u;

override TRANS_A: bool = false;
// Rows of A and C (1..8); equals params.m.
override M_ROWS: u32 = 8u;
// The _fused kernels only: 0 none, 1 residual, 2 gelu, 3 gelu_backward.
override EPILOGUE: u32 = 0u;
// skinny_nn and skinny_nt only: C = alpha * sum over the batches of op(A[b]) . op(B[b]) + beta *
// C + bias, one C (at batch 0's place), dispatched with one z (matmul_blocked.wgsl's SUM_BATCHES).
override SUM_BATCHES: bool = false;

/** Adds the rows of `more` into `acc`, written out (no loop over an array: see above). */
fn add_rows(acc: ptr<function, array<vec4<f32>, ROWS>>, more: array<vec4<f32>, ROWS>) {
  (*acc)[0] += more[0]; (*acc)[1] += more[1]; (*acc)[2] += more[2]; (*acc)[3] += more[3];
  (*acc)[4] += more[4]; (*acc)[5] += more[5]; (*acc)[6] += more[6]; (*acc)[7] += more[7];
}

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;

fn a_at(base: u32, r: u32, kk: u32) -> f32 {
  return a[base + select(r * params.lda + kk, kk * params.lda + r, TRANS_A)];
}

/** Row r of A's 4 steps of K from kk times the 4 x 4 block b0..b3 of B (rows kk.., 4 columns). */
fn nn_step(base: u32, r: u32, kk: u32, b0: vec4<f32>, b1: vec4<f32>, b2: vec4<f32>, b3: vec4<f32>) -> vec4<f32> {
  return a_at(base, r, kk) * b0 + a_at(base, r, kk + 1u) * b1 + a_at(base, r, kk + 2u) * b2 + a_at(base, r, kk + 3u) * b3;
}

// skinny_nn's output view (vec4); skinny_nt binds the same slot as scalars (c below).
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read_write> extra: array<f32>;

// INCLUDE matmul_epilogue.wgsl

/** skinny_nn's rows: acc[r] is row r of batch z's product at columns 4q..4q+3. */
fn nn_rows(q: u32, z: u32) -> array<vec4<f32>, ROWS> {
  let base_a = z * params.stride_a;
  let base_b4 = z * params.stride_b / 4u;
  let ldb4 = params.ldb / 4u;
  // Rows >= M_ROWS are never read or written.
  var acc: array<vec4<f32>, ROWS>;
  var kk = 0u;
  for (; kk + 4u <= params.k; kk += 4u) {
    let row_b = base_b4 + kk * ldb4 + q;
    let b0 = b4[row_b];
    let b1 = b4[row_b + ldb4];
    let b2 = b4[row_b + 2u * ldb4];
    let b3 = b4[row_b + 3u * ldb4];
    if (0u < M_ROWS) { acc[0] += nn_step(base_a, 0u, kk, b0, b1, b2, b3); }
    if (1u < M_ROWS) { acc[1] += nn_step(base_a, 1u, kk, b0, b1, b2, b3); }
    if (2u < M_ROWS) { acc[2] += nn_step(base_a, 2u, kk, b0, b1, b2, b3); }
    if (3u < M_ROWS) { acc[3] += nn_step(base_a, 3u, kk, b0, b1, b2, b3); }
    if (4u < M_ROWS) { acc[4] += nn_step(base_a, 4u, kk, b0, b1, b2, b3); }
    if (5u < M_ROWS) { acc[5] += nn_step(base_a, 5u, kk, b0, b1, b2, b3); }
    if (6u < M_ROWS) { acc[6] += nn_step(base_a, 6u, kk, b0, b1, b2, b3); }
    if (7u < M_ROWS) { acc[7] += nn_step(base_a, 7u, kk, b0, b1, b2, b3); }
  }
  for (; kk < params.k; kk++) {
    let bk = b4[base_b4 + kk * ldb4 + q];
    if (0u < M_ROWS) { acc[0] += a_at(base_a, 0u, kk) * bk; }
    if (1u < M_ROWS) { acc[1] += a_at(base_a, 1u, kk) * bk; }
    if (2u < M_ROWS) { acc[2] += a_at(base_a, 2u, kk) * bk; }
    if (3u < M_ROWS) { acc[3] += a_at(base_a, 3u, kk) * bk; }
    if (4u < M_ROWS) { acc[4] += a_at(base_a, 4u, kk) * bk; }
    if (5u < M_ROWS) { acc[5] += a_at(base_a, 5u, kk) * bk; }
    if (6u < M_ROWS) { acc[6] += a_at(base_a, 6u, kk) * bk; }
    if (7u < M_ROWS) { acc[7] += a_at(base_a, 7u, kk) * bk; }
  }
  return acc;
}

/** Column quad q's bias for batch z (0 without one). */
fn bias_quad(q: u32, z: u32) -> vec4<f32> {
  let at = z * params.stride_bias + 4u * q;
  if (params.has_bias == 1u) { return vec4<f32>(bias[at], bias[at + 1u], bias[at + 2u], bias[at + 3u]); }
  return vec4<f32>(0.0);
}

/** C's vec4 slot of row r, column quad q, batch z. */
fn nn_slot(q: u32, r: u32, z: u32) -> u32 {
  return z * params.stride_c / 4u + r * (params.ldc / 4u) + q;
}

/** alpha * acc + beta * C + bias: the value stored at `slot` (before any epilogue). */
fn nn_value(acc: vec4<f32>, slot: u32, bq: vec4<f32>) -> vec4<f32> {
  var v = params.alpha * acc;
  if (params.read_c == 1u) { v += params.beta * c4[slot]; }
  return v + bq;
}

@compute @workgroup_size(WG)
fn skinny_nn(@builtin(global_invocation_id) gid: vec3<u32>) {
  let q = gid.x;
  if (q >= params.n / 4u) { return; }
  var acc = nn_rows(q, gid.z);
  if (SUM_BATCHES) {
    for (var b = 1u; b < params.batch; b++) { add_rows(&acc, nn_rows(q, b)); }
  }
  let bq = bias_quad(q, gid.z);
  for (var r = 0u; r < ROWS; r++) {
    if (r >= M_ROWS) { break; }
    let slot = nn_slot(q, r, gid.z);
    c4[slot] = nn_value(acc[r], slot, bq);
  }
}

@compute @workgroup_size(WG)
fn skinny_nn_fused(@builtin(global_invocation_id) gid: vec3<u32>) {
  let q = gid.x;
  if (q >= params.n / 4u) { return; }
  let acc = nn_rows(q, gid.z);
  let bq = bias_quad(q, gid.z);
  for (var r = 0u; r < ROWS; r++) {
    if (r >= M_ROWS) { break; }
    let slot = nn_slot(q, r, gid.z);
    store_fused4(slot, nn_value(acc[r], slot, bq));
  }
}

// skinny_nt's views: A rows and B rows (columns of op(B)) as vec4 along K; C as scalars (c).
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;

/**
 * A row's vec4 of A (4 steps of K, at slot a_slot) times 4 columns' vec4s along the same steps:
 * the 4 columns' partial dot products. Step t of the columns is (c0[t], c1[t], c2[t], c3[t]),
 * a transpose in registers (free on a CPU adapter, where a vec4 is 4 scalars).
 */
fn nt_step(a_slot: u32, c0: vec4<f32>, c1: vec4<f32>, c2: vec4<f32>, c3: vec4<f32>) -> vec4<f32> {
  let av = a4[a_slot];
  return av.x * vec4<f32>(c0.x, c1.x, c2.x, c3.x) + av.y * vec4<f32>(c0.y, c1.y, c2.y, c3.y) +
         av.z * vec4<f32>(c0.z, c1.z, c2.z, c3.z) + av.w * vec4<f32>(c0.w, c1.w, c2.w, c3.w);
}

/** skinny_nt's rows: acc[r] is row r of batch z's product at columns col0..col0+3 (past N: column N - 1 again). */
fn nt_rows(col0: u32, z: u32) -> array<vec4<f32>, ROWS> {
  let k4 = params.k / 4u;
  let lda4 = params.lda / 4u;
  let ldb4 = params.ldb / 4u;
  let base_a4 = z * params.stride_a / 4u;
  let base_b4 = z * params.stride_b / 4u;
  let last = params.n - 1u;
  let row0 = base_b4 + col0 * ldb4;
  let row1 = base_b4 + min(col0 + 1u, last) * ldb4;
  let row2 = base_b4 + min(col0 + 2u, last) * ldb4;
  let row3 = base_b4 + min(col0 + 3u, last) * ldb4;
  // acc[r]: row r's 4 columns.
  var acc: array<vec4<f32>, ROWS>;
  for (var kq = 0u; kq < k4; kq++) {
    let c0 = b4[row0 + kq];
    let c1 = b4[row1 + kq];
    let c2 = b4[row2 + kq];
    let c3 = b4[row3 + kq];
    if (0u < M_ROWS) { acc[0] += nt_step(base_a4 + 0u * lda4 + kq, c0, c1, c2, c3); }
    if (1u < M_ROWS) { acc[1] += nt_step(base_a4 + 1u * lda4 + kq, c0, c1, c2, c3); }
    if (2u < M_ROWS) { acc[2] += nt_step(base_a4 + 2u * lda4 + kq, c0, c1, c2, c3); }
    if (3u < M_ROWS) { acc[3] += nt_step(base_a4 + 3u * lda4 + kq, c0, c1, c2, c3); }
    if (4u < M_ROWS) { acc[4] += nt_step(base_a4 + 4u * lda4 + kq, c0, c1, c2, c3); }
    if (5u < M_ROWS) { acc[5] += nt_step(base_a4 + 5u * lda4 + kq, c0, c1, c2, c3); }
    if (6u < M_ROWS) { acc[6] += nt_step(base_a4 + 6u * lda4 + kq, c0, c1, c2, c3); }
    if (7u < M_ROWS) { acc[7] += nt_step(base_a4 + 7u * lda4 + kq, c0, c1, c2, c3); }
  }
  return acc;
}

/** alpha * acc + beta * C + bias for C's element `index` (column col of batch z), before any epilogue. */
fn nt_value(acc: f32, index: u32, col: u32, z: u32) -> f32 {
  var v = params.alpha * acc;
  if (params.read_c == 1u) { v += params.beta * c[index]; }
  if (params.has_bias == 1u) { v += bias[z * params.stride_bias + col]; }
  return v;
}

// Columns 4 gid.x .. 4 gid.x + 3, those below N stored.
@compute @workgroup_size(WG)
fn skinny_nt(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col0 = 4u * gid.x;
  if (col0 >= params.n) { return; }
  var acc = nt_rows(col0, gid.z);
  if (SUM_BATCHES) {
    for (var b = 1u; b < params.batch; b++) { add_rows(&acc, nt_rows(col0, b)); }
  }
  for (var r = 0u; r < ROWS; r++) {
    if (r >= M_ROWS) { break; }
    for (var j = 0u; j < min(4u, params.n - col0); j++) {
      let index = gid.z * params.stride_c + r * params.ldc + col0 + j;
      c[index] = nt_value(acc[r][j], index, col0 + j, gid.z);
    }
  }
}

@compute @workgroup_size(WG)
fn skinny_nt_fused(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col0 = 4u * gid.x;
  if (col0 >= params.n) { return; }
  let acc = nt_rows(col0, gid.z);
  for (var r = 0u; r < ROWS; r++) {
    if (r >= M_ROWS) { break; }
    for (var j = 0u; j < min(4u, params.n - col0); j++) {
      let index = gid.z * params.stride_c + r * params.ldc + col0 + j;
      store_fused(index, nt_value(acc[r][j], index, col0 + j, gid.z));
    }
  }
}
