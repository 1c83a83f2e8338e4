// Skinny products, M <= 8 rows (decoding: one row per sequence), the same contract as
// matmul.wgsl (same Params, bindings 0-4, beta/bias/batch semantics; see its header):
//   C[b] = alpha * op(A[b]) . op(B[b]) + beta * C[b] + bias
// Register-blocked, with no shared memory and no barrier: a thread keeps all M rows of its
// output in registers and walks the whole of K. On a software adapter (SwiftShader) the tiled
// and small_m kernels pay for their workgroup barriers and shared-memory staging; these run
// 5-15x faster there at decode shapes (8 x 128 x 512: 15.7 -> 1.0-1.5 ms). On a GPU they
// are a plain GEMV-style kernel over a few rows. src/ops/matmul.ts picks them when M <= 8, no
// epilogue or k-sum is asked for, and the layout allows the vector loads below; else small_m.
//
// skinny_nn: op(B) = B stored [K, N]: a thread per 4 adjacent columns (vec4 loads of B and
//            stores of C; N, ldb, ldc, stride_b, stride_c multiples of 4), K unrolled by 4.
//            A is read as scalars (row-major, or [K, M] with TRANS_A).
// skinny_nt: op(B) = B^T, B stored [N, K]: a thread per column, dot products along K as vec4
//            (K, lda, ldb, stride_a, stride_b multiples of 4; A not transposed).
// Float64 twin: src/ops/matmul.reference.ts (matmulRef), the same product.

const ROWS: u32 = 8u;
const WG: u32 = 16u;

override TRANS_A: bool = false;

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;

fn a_at(base: u32, r: u32, kk: u32) -> f32 {
  return a[base + select(r * params.lda + kk, kk * params.lda + r, TRANS_A)];
}

// skinny_nn's output view (vec4); skinny_nt binds the same slot as scalars (c_nt below).
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn skinny_nn(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n4 = params.n / 4u;
  let q = gid.x;
  if (q >= n4) { return; }
  let base_a = gid.z * params.stride_a;
  let base_b4 = gid.z * params.stride_b / 4u;
  let ldb4 = params.ldb / 4u;
  // A fixed trip count over ROWS keeps acc in registers; rows >= m are never read or written.
  var acc: array<vec4<f32>, ROWS>;
  var kk = 0u;
  for (; kk + 4u <= params.k; kk += 4u) {
    let row_b = base_b4 + kk * ldb4 + q;
    let b0 = b4[row_b];
    let b1 = b4[row_b + ldb4];
    let b2 = b4[row_b + 2u * ldb4];
    let b3 = b4[row_b + 3u * ldb4];
    for (var r = 0u; r < ROWS; r++) {
      if (r < params.m) {
        acc[r] += a_at(base_a, r, kk) * b0 + a_at(base_a, r, kk + 1u) * b1 + a_at(base_a, r, kk + 2u) * b2 + a_at(base_a, r, kk + 3u) * b3;
      }
    }
  }
  for (; kk < params.k; kk++) {
    let bk = b4[base_b4 + kk * ldb4 + q];
    for (var r = 0u; r < ROWS; r++) {
      if (r < params.m) { acc[r] += a_at(base_a, r, kk) * bk; }
    }
  }
  let base_c4 = gid.z * params.stride_c / 4u;
  let ldc4 = params.ldc / 4u;
  var bq = vec4<f32>(0.0);
  if (params.has_bias == 1u) { bq = vec4<f32>(bias[4u * q], bias[4u * q + 1u], bias[4u * q + 2u], bias[4u * q + 3u]); }
  for (var r = 0u; r < ROWS; r++) {
    if (r >= params.m) { break; }
    let slot = base_c4 + r * ldc4 + q;
    var v = params.alpha * acc[r];
    if (params.read_c == 1u) { v += params.beta * c4[slot]; }
    c4[slot] = v + bq;
  }
}

// skinny_nt's views: A rows and B rows (columns of op(B)) as vec4 along K; C as scalars.
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> c_nt: array<f32>;

@compute @workgroup_size(WG)
fn skinny_nt(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  if (col >= params.n) { return; }
  let k4 = params.k / 4u;
  let lda4 = params.lda / 4u;
  let base_a4 = gid.z * params.stride_a / 4u;
  let row_b4 = gid.z * params.stride_b / 4u + col * (params.ldb / 4u);
  var acc: array<vec4<f32>, ROWS>;
  for (var kq = 0u; kq < k4; kq++) {
    let bv = b4[row_b4 + kq];
    for (var r = 0u; r < ROWS; r++) {
      if (r < params.m) { acc[r] += a4[base_a4 + r * lda4 + kq] * bv; }
    }
  }
  let base_c = gid.z * params.stride_c;
  for (var r = 0u; r < ROWS; r++) {
    if (r >= params.m) { break; }
    let index = base_c + r * params.ldc + col;
    // The four lanes added in a fixed order.
    var v = params.alpha * ((acc[r].x + acc[r].y) + (acc[r].z + acc[r].w));
    if (params.read_c == 1u) { v += params.beta * c_nt[index]; }
    if (params.has_bias == 1u) { v += bias[col]; }
    c_nt[index] = v;
  }
}
