// General matrix multiply and column sum, row-major f32.
//
//   C[b] = alpha * op(A[b]) . op(B[b]) + beta * C[b] + bias      (b < batch: dispatch z)
//
// op(X) is X or X^T (override constants TRANS_A, TRANS_B). op(A) is [M,K], op(B) is [K,N],
// C is [M,N]; bias[N] (when has_bias) is added to every row, batch b's at b * stride_bias. Element (i,j) of a stored
// matrix X lives at X[b * stride_x + i * ldx + j]: leading dimensions and batch strides let
// callers address sub-matrices (one head of [T, H*D]) and broadcast (stride 0). When
// read_c is 0, C is written without being read, so stale or NaN contents of a fresh output
// buffer never leak in (the BLAS meaning of beta = 0).
//
// Entry points:
// - tiled / tiled_vec4: a 64x64 output tile per workgroup of 8x8 threads, each thread an
//   8x8 block (rows ty*4+i and 32+ty*4+i, columns likewise, so neighbouring threads read
//   neighbouring vec4s of the tiles). A and B stream through workgroup memory TK steps of
//   K at a time: each global element is fetched 64x less often than by a naive kernel,
//   and per K step a thread does 64 FMAs for 4 vec4 tile reads. (On SwiftShader 8x8 blocks
//   in 64-thread groups ran 2-3x faster than 4x4 blocks in 256-thread groups, and TK = 32
//   beat 16: fewer invocations and barriers per FMA.) The vec4 variant loads and
//   stores vec4<f32> along each matrix's contiguous dimension; the launcher picks it when
//   every contiguous extent, leading dimension and batch stride is a multiple of 4.
// - small_m: M <= 8 (decode-time rows). A 64-row tile would idle at least 56 of its rows;
//   instead a workgroup owns 8 or 16 columns, its 64 threads split K, and partial sums
//   meet in workgroup memory. Each B element (the weight matrix) is read once, coalesced.
// - column_sum: out[j] = alpha * sum_i X[i, j] + beta * out[j] (a bias gradient).
// - tiled_fused / tiled_vec4_fused / small_m_fused: the same products with one more binding,
//   `extra` (5), and what the override constants EPILOGUE and SUM_K ask of it (one dispatch
//   instead of two; separate entry points, so the plain kernels bind nothing more):
//     EPILOGUE 1 residual:       C = (product as above) + extra          (extra laid out like C)
//     EPILOGUE 2 gelu:           C = product; extra = gelu(C)            (pre-activation and activation)
//     EPILOGUE 3 gelu_backward:  C = product * gelu'(extra)              (extra: the pre-activation)
//     SUM_K 1: extra[j] = alpha * sum_k op(B)[k, j] + beta * extra[j]    (j < n: dW = X^T dY's bias grad)
//     SUM_K 2: extra[i] = alpha * sum_k op(A)[i, k] + beta * extra[i]    (i < m: dW = dY^T X's bias grad)
//   The sums come from the tiles the product stages anyway: the workgroups of the first row
//   tile (SUM_K 1) or column tile (SUM_K 2) add them up, one thread per tile column (row).
//   extra is indexed like C from its binding's start (the k-sums: batch b's at b * stride_bias);
//   SUM_K needs the tiled kernels.
//   For M <= 8 the launcher runs the register-blocked skinny kernels instead
//   (shaders/matmul_skinny.wgsl, several times faster than small_m there; their _fused variants
//   store through the same epilogue); small_m_fused serves the layouts they refuse.

const WG: u32 = 256u;      // column_sum
const SMALL_WG: u32 = 64u; // small_m
const TILE_WG: u32 = 64u;  // tiled kernels: 8 x 8 threads
const TILE: u32 = 64u;
const TILE4: u32 = 16u;    // vec4 slots per tile row (TILE / 4)
const HALF: u32 = 32u;     // a thread's second row (column) group starts TILE / 2 further
const TK: u32 = 32u;       // K steps per stage: 2 tiles of 32 x 64 floats = 16 KiB
const SMALL_ROWS: u32 = 8u;

override TRANS_A: bool = false;
override TRANS_B: bool = false;
// Fused entry points only (see the header): 0 none, 1 residual, 2 gelu, 3 gelu_backward.
override EPILOGUE: u32 = 0u;
// Fused entry points only: 0 none, 1 sum op(B) over k (columns), 2 sum op(A) over k (rows).
override SUM_K: u32 = 0u;
// tiled and tiled_vec4 only: C = alpha * sum over the batches of op(A[b]) . op(B[b]) + beta * C
// + bias, one C (at batch 0's place), dispatched with one z: the input gradient of a stack of
// projections (q, k, v) in one dispatch, as matmul_blocked.wgsl's SUM_BATCHES.
override SUM_BATCHES: bool = false;

/** The batches a workgroup sums: its own (wid.z), or with SUM_BATCHES all of them. */
fn batch_count() -> u32 { return select(1u, params.batch, SUM_BATCHES); }
fn batch_of(wid: vec3<u32>, i: u32) -> u32 { return select(wid.z, i, SUM_BATCHES); }

// INCLUDE matmul_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
// Scalar and vec4 views of the same bindings; an entry point uses one view of each.
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> bias4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(4) var<storage, read_write> c4: array<vec4<f32>>;

// Tile of op(A): slot kk * TILE4 + r / 4 holds rows r..r+3 of column kk, so the inner loop
// reads 4 rows of a thread's block as one vec4. Tile of op(B): row kk, 4 columns a slot.
var<workgroup> tile_a: array<vec4<f32>, TK * TILE4>;
var<workgroup> tile_b: array<vec4<f32>, TK * TILE4>;

// A thread's 8x8 block: acc[(h * 4 + i) * 2 + g] holds row h*32 + ty*4 + i and the 4
// columns g*32 + tx*4 .. +3 of the workgroup's tile.
alias Block = array<vec4<f32>, 16>;

/** Row (or column) of the tile that element i of group h of thread t covers. */
fn block_offset(h: u32, t: u32, i: u32) -> u32 { return h * HALF + t * 4u + i; }

/** Multiplies the staged tiles into the thread's block. */
fn accumulate_tiles(acc: ptr<function, Block>, tx: u32, ty: u32) {
  for (var kk = 0u; kk < TK; kk++) {
    let a0 = tile_a[kk * TILE4 + ty];
    let a1 = tile_a[kk * TILE4 + HALF / 4u + ty];
    let b0 = tile_b[kk * TILE4 + tx];
    let b1 = tile_b[kk * TILE4 + HALF / 4u + tx];
    (*acc)[0] += a0.x * b0;
    (*acc)[1] += a0.x * b1;
    (*acc)[2] += a0.y * b0;
    (*acc)[3] += a0.y * b1;
    (*acc)[4] += a0.z * b0;
    (*acc)[5] += a0.z * b1;
    (*acc)[6] += a0.w * b0;
    (*acc)[7] += a0.w * b1;
    (*acc)[8] += a1.x * b0;
    (*acc)[9] += a1.x * b1;
    (*acc)[10] += a1.y * b0;
    (*acc)[11] += a1.y * b1;
    (*acc)[12] += a1.z * b0;
    (*acc)[13] += a1.z * b1;
    (*acc)[14] += a1.w * b0;
    (*acc)[15] += a1.w * b1;
  }
}

/** Stages op(A)[row0.., k0..] and op(B)[k0.., col0..] with scalar loads, zero outside. */
fn load_tiles(k0: u32, row0: u32, col0: u32, base_a: u32, base_b: u32, tid: u32) {
  // Consecutive threads take consecutive addresses of the stored (contiguous) dimension.
  for (var idx = tid; idx < TK * TILE; idx += TILE_WG) {
    var r: u32;
    var kk: u32;
    if (TRANS_A) { r = idx % TILE; kk = idx / TILE; } else { kk = idx % TK; r = idx / TK; }
    let gr = row0 + r;
    let gk = k0 + kk;
    var v = 0.0;
    if (gr < params.m && gk < params.k) {
      v = a[base_a + select(gr * params.lda + gk, gk * params.lda + gr, TRANS_A)];
    }
    tile_a[kk * TILE4 + r / 4u][r % 4u] = v;
  }
  for (var idx = tid; idx < TK * TILE; idx += TILE_WG) {
    var col: u32;
    var kk: u32;
    if (TRANS_B) { kk = idx % TK; col = idx / TK; } else { col = idx % TILE; kk = idx / TILE; }
    let gc = col0 + col;
    let gk = k0 + kk;
    var v = 0.0;
    if (gc < params.n && gk < params.k) {
      v = b[base_b + select(gk * params.ldb + gc, gc * params.ldb + gk, TRANS_B)];
    }
    tile_b[kk * TILE4 + col / 4u][col % 4u] = v;
  }
}

/** The same tiles with vec4 loads; a vec4 is wholly inside or outside (extents are multiples of 4). */
fn load_tiles_vec4(k0: u32, row0: u32, col0: u32, base_a: u32, base_b: u32, tid: u32) {
  let zero = vec4<f32>(0.0);
  for (var idx = tid; idx < TK * TILE4; idx += TILE_WG) {
    if (TRANS_A) {
      // Stored [K, M]: a vec4 holds 4 rows of op(A) in one column, exactly one tile slot.
      let rq = idx % TILE4;
      let kk = idx / TILE4;
      let gr = row0 + rq * 4u;
      let gk = k0 + kk;
      var v = zero;
      if (gr < params.m && gk < params.k) { v = a4[(base_a + gk * params.lda + gr) / 4u]; }
      tile_a[kk * TILE4 + rq] = v;
    } else {
      // Stored [M, K]: a vec4 holds 4 steps of K in one row; scatter them to 4 tile columns.
      let kq = idx % (TK / 4u);
      let r = idx / (TK / 4u);
      let gr = row0 + r;
      let gk = k0 + kq * 4u;
      var v = zero;
      if (gr < params.m && gk < params.k) { v = a4[(base_a + gr * params.lda + gk) / 4u]; }
      let slot = kq * 4u * TILE4 + r / 4u;
      tile_a[slot][r % 4u] = v.x;
      tile_a[slot + TILE4][r % 4u] = v.y;
      tile_a[slot + 2u * TILE4][r % 4u] = v.z;
      tile_a[slot + 3u * TILE4][r % 4u] = v.w;
    }
  }
  for (var idx = tid; idx < TK * TILE4; idx += TILE_WG) {
    if (TRANS_B) {
      // Stored [N, K]: a vec4 holds 4 steps of K for one column; scatter to 4 tile rows.
      let kq = idx % (TK / 4u);
      let col = idx / (TK / 4u);
      let gc = col0 + col;
      let gk = k0 + kq * 4u;
      var v = zero;
      if (gc < params.n && gk < params.k) { v = b4[(base_b + gc * params.ldb + gk) / 4u]; }
      let slot = kq * 4u * TILE4 + col / 4u;
      tile_b[slot][col % 4u] = v.x;
      tile_b[slot + TILE4][col % 4u] = v.y;
      tile_b[slot + 2u * TILE4][col % 4u] = v.z;
      tile_b[slot + 3u * TILE4][col % 4u] = v.w;
    } else {
      // Stored [K, N]: a vec4 is 4 columns of one row, exactly one tile slot.
      let cq = idx % TILE4;
      let kk = idx / TILE4;
      let gc = col0 + cq * 4u;
      let gk = k0 + kk;
      var v = zero;
      if (gc < params.n && gk < params.k) { v = b4[(base_b + gk * params.ldb + gc) / 4u]; }
      tile_b[kk * TILE4 + cq] = v;
    }
  }
}

@compute @workgroup_size(8, 8)
fn tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
         @builtin(local_invocation_index) tid: u32) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc: Block;
  for (var i = 0u; i < batch_count(); i++) {
    let z = batch_of(wid, i);
    for (var k0 = 0u; k0 < params.k; k0 += TK) {
      load_tiles(k0, row0, col0, z * params.stride_a, z * params.stride_b, tid);
      workgroupBarrier();
      accumulate_tiles(&acc, lid.x, lid.y);
      workgroupBarrier();
    }
  }
  let base_c = wid.z * params.stride_c;
  for (var h = 0u; h < 2u; h++) {
    for (var i = 0u; i < 4u; i++) {
      let row = row0 + block_offset(h, lid.y, i);
      if (row >= params.m) { break; }
      for (var g = 0u; g < 2u; g++) {
        let v4 = acc[(h * 4u + i) * 2u + g];
        for (var j = 0u; j < 4u; j++) {
          let col = col0 + block_offset(g, lid.x, j);
          if (col >= params.n) { break; }
          let index = base_c + row * params.ldc + col;
          var v = params.alpha * v4[j];
          if (params.read_c == 1u) { v += params.beta * c[index]; }
          if (params.has_bias == 1u) { v += bias[wid.z * params.stride_bias + col]; }
          c[index] = v;
        }
      }
    }
  }
}

@compute @workgroup_size(8, 8)
fn tiled_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc: Block;
  for (var i = 0u; i < batch_count(); i++) {
    let z = batch_of(wid, i);
    for (var k0 = 0u; k0 < params.k; k0 += TK) {
      load_tiles_vec4(k0, row0, col0, z * params.stride_a, z * params.stride_b, tid);
      workgroupBarrier();
      accumulate_tiles(&acc, lid.x, lid.y);
      workgroupBarrier();
    }
  }
  let base_c = wid.z * params.stride_c;
  for (var h = 0u; h < 2u; h++) {
    for (var i = 0u; i < 4u; i++) {
      let row = row0 + block_offset(h, lid.y, i);
      if (row >= params.m) { break; }
      for (var g = 0u; g < 2u; g++) {
        let col = col0 + block_offset(g, lid.x, 0u);
        if (col >= params.n) { break; }
        let slot = (base_c + row * params.ldc + col) / 4u;
        var v = params.alpha * acc[(h * 4u + i) * 2u + g];
        if (params.read_c == 1u) { v += params.beta * c4[slot]; }
        if (params.has_bias == 1u) { v += bias4[(wid.z * params.stride_bias + col) / 4u]; }
        c4[slot] = v;
      }
    }
  }
}

var<workgroup> partial: array<f32, SMALL_ROWS * SMALL_WG>;

/** small_m's columns per workgroup: B stored [N, K] (TRANS_B) 8, else 16. */
fn small_cols() -> u32 { return select(16u, 8u, TRANS_B); }

/**
 * small_m's products: each thread's partial sums over its share of K for the workgroup's
 * columns and the M rows, left in `partial` (after a barrier) for small_output to add up.
 */
fn small_accumulate(wid: vec3<u32>, tid: u32) {
  // B stored [N, K] (TRANS_B): 8 lanes walk one column's contiguous K, 8 columns a group.
  // B stored [K, N]: 16 adjacent columns read one row together, 4 lanes split K.
  let cols = small_cols();
  let lanes = SMALL_WG / cols;
  var c_local: u32;
  var lane: u32;
  if (TRANS_B) { lane = tid % lanes; c_local = tid / lanes; } else { c_local = tid % cols; lane = tid / cols; }
  let col = wid.x * cols + c_local;
  let base_a = wid.z * params.stride_a;
  let base_b = wid.z * params.stride_b;
  // Fixed trip count over SMALL_ROWS keeps acc in registers; rows >= m contribute zeros.
  var acc: array<f32, SMALL_ROWS>;
  if (col < params.n) {
    for (var kk = lane; kk < params.k; kk += lanes) {
      let bv = b[base_b + select(kk * params.ldb + col, col * params.ldb + kk, TRANS_B)];
      for (var r = 0u; r < SMALL_ROWS; r++) {
        if (r < params.m) {
          acc[r] += a[base_a + select(r * params.lda + kk, kk * params.lda + r, TRANS_A)] * bv;
        }
      }
    }
  }
  for (var r = 0u; r < SMALL_ROWS; r++) { partial[r * SMALL_WG + tid] = acc[r]; }
  workgroupBarrier();
}

/** Output o of the workgroup (row o / cols, its column o % cols): where it goes and its value. */
struct SmallOutput {
  index: u32,
  value: f32,
  inside: bool,
}

/** Adds output o's lanes' partial sums in a fixed order; alpha, beta and bias applied. */
fn small_output(wid: vec3<u32>, o: u32) -> SmallOutput {
  let cols = small_cols();
  let lanes = SMALL_WG / cols;
  let r = o / cols;
  let out_local = o % cols;
  let out_col = wid.x * cols + out_local;
  if (out_col >= params.n) { return SmallOutput(0u, 0.0, false); }
  var s = 0.0;
  for (var l = 0u; l < lanes; l++) {
    let t = select(l * cols + out_local, out_local * lanes + l, TRANS_B);
    s += partial[r * SMALL_WG + t];
  }
  let index = wid.z * params.stride_c + r * params.ldc + out_col;
  var v = params.alpha * s;
  if (params.read_c == 1u) { v += params.beta * c[index]; }
  if (params.has_bias == 1u) { v += bias[wid.z * params.stride_bias + out_col]; }
  return SmallOutput(index, v, true);
}

@compute @workgroup_size(SMALL_WG)
fn small_m(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  small_accumulate(wid, tid);
  for (var o = tid; o < params.m * small_cols(); o += SMALL_WG) {
    let res = small_output(wid, o);
    if (res.inside) { c[res.index] = res.value; }
  }
}

// ---- Fused variants (EPILOGUE, SUM_K): the plain kernels' code, plus `extra`. ----

@group(0) @binding(5) var<storage, read_write> extra: array<f32>;

// INCLUDE matmul_epilogue.wgsl

// SUM_K: thread tid's running sum of tile column (SUM_K 1) or row (SUM_K 2) tid (TILE_WG = TILE).
var<private> k_sum: f32;

/** Adds the staged tiles' share of the k-sums, in the workgroups that own them. */
fn sum_tiles(wid: vec3<u32>, tid: u32) {
  if (SUM_K == 1u && wid.y == 0u) {
    for (var kk = 0u; kk < TK; kk++) { k_sum += tile_b[kk * TILE4 + tid / 4u][tid % 4u]; }
  } else if (SUM_K == 2u && wid.x == 0u) {
    for (var kk = 0u; kk < TK; kk++) { k_sum += tile_a[kk * TILE4 + tid / 4u][tid % 4u]; }
  }
}

/** Writes the k-sums (alpha, beta as the product's). */
fn store_sum(wid: vec3<u32>, tid: u32) {
  var j: u32;
  var len: u32;
  if (SUM_K == 1u) {
    if (wid.y != 0u) { return; }
    j = wid.x * TILE + tid;
    len = params.n;
  } else {
    if (wid.x != 0u) { return; }
    j = wid.y * TILE + tid;
    len = params.m;
  }
  if (j >= len) { return; }
  let e = wid.z * params.stride_bias + j;
  var v = params.alpha * k_sum;
  if (params.read_c == 1u) { v += params.beta * extra[e]; }
  extra[e] = v;
}

@compute @workgroup_size(8, 8)
fn tiled_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc: Block;
  for (var k0 = 0u; k0 < params.k; k0 += TK) {
    load_tiles(k0, row0, col0, wid.z * params.stride_a, wid.z * params.stride_b, tid);
    workgroupBarrier();
    accumulate_tiles(&acc, lid.x, lid.y);
    sum_tiles(wid, tid);
    workgroupBarrier();
  }
  if (SUM_K != 0u) { store_sum(wid, tid); }
  let base_c = wid.z * params.stride_c;
  for (var h = 0u; h < 2u; h++) {
    for (var i = 0u; i < 4u; i++) {
      let row = row0 + block_offset(h, lid.y, i);
      if (row >= params.m) { break; }
      for (var g = 0u; g < 2u; g++) {
        let v4 = acc[(h * 4u + i) * 2u + g];
        for (var j = 0u; j < 4u; j++) {
          let col = col0 + block_offset(g, lid.x, j);
          if (col >= params.n) { break; }
          let index = base_c + row * params.ldc + col;
          var v = params.alpha * v4[j];
          if (params.read_c == 1u) { v += params.beta * c[index]; }
          if (params.has_bias == 1u) { v += bias[wid.z * params.stride_bias + col]; }
          store_fused(index, v);
        }
      }
    }
  }
}

@compute @workgroup_size(8, 8)
fn tiled_vec4_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                    @builtin(local_invocation_index) tid: u32) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc: Block;
  for (var k0 = 0u; k0 < params.k; k0 += TK) {
    load_tiles_vec4(k0, row0, col0, wid.z * params.stride_a, wid.z * params.stride_b, tid);
    workgroupBarrier();
    accumulate_tiles(&acc, lid.x, lid.y);
    sum_tiles(wid, tid);
    workgroupBarrier();
  }
  if (SUM_K != 0u) { store_sum(wid, tid); }
  let base_c = wid.z * params.stride_c;
  for (var h = 0u; h < 2u; h++) {
    for (var i = 0u; i < 4u; i++) {
      let row = row0 + block_offset(h, lid.y, i);
      if (row >= params.m) { break; }
      for (var g = 0u; g < 2u; g++) {
        let col = col0 + block_offset(g, lid.x, 0u);
        if (col >= params.n) { break; }
        let slot = (base_c + row * params.ldc + col) / 4u;
        var v = params.alpha * acc[(h * 4u + i) * 2u + g];
        if (params.read_c == 1u) { v += params.beta * c4[slot]; }
        if (params.has_bias == 1u) { v += bias4[(wid.z * params.stride_bias + col) / 4u]; }
        store_fused4(slot, v);
      }
    }
  }
}

/** small_m with an epilogue (SUM_K is served by the tiled kernels). */
@compute @workgroup_size(SMALL_WG)
fn small_m_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  small_accumulate(wid, tid);
  for (var o = tid; o < params.m * small_cols(); o += SMALL_WG) {
    let res = small_output(wid, o);
    if (res.inside) { store_fused(res.index, res.value); }
  }
}

// column_sum bindings: 0 params (m rows, n columns, lda row stride, alpha, beta, read_c),
// 1 X (the a view), 2 out.
@group(0) @binding(2) var<storage, read_write> col_out: array<f32>;

const SUM_COLS: u32 = 32u;
const SUM_LANES: u32 = 8u; // WG / SUM_COLS

var<workgroup> col_partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn column_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  // 32 adjacent columns read one row together (coalesced); 8 lanes split the rows.
  let c_local = tid % SUM_COLS;
  let lane = tid / SUM_COLS;
  let col = wid.x * SUM_COLS + c_local;
  var s = 0.0;
  if (col < params.n) {
    for (var r = lane; r < params.m; r += SUM_LANES) { s += a[r * params.lda + col]; }
  }
  col_partial[tid] = s;
  workgroupBarrier();
  if (lane != 0u || col >= params.n) { return; }
  var total = 0.0;
  for (var l = 0u; l < SUM_LANES; l++) { total += col_partial[l * SUM_COLS + c_local]; }
  var v = params.alpha * total;
  if (params.read_c == 1u) { v += params.beta * col_out[col]; }
  col_out[col] = v;
}
