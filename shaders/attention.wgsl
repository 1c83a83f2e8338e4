// Causal grouped-query attention over left-padded batches, FlashAttention-2 style, its
// backward, and a decode variant that reads a KV cache. Two kinds of kernels compute the same
// thing: tiles (forward, backward_prep, backward_dq, backward_dkdv, decode; below) for hardware
// GPUs, and rows (forward_rows, backward_dq_rows, backward_dkdv_rows, decode_rows; further down),
// one thread per row without barriers, for software adapters.
//
// Layouts (row-major f32): q, out, dout, dq [B, T, Hq, DH]; k, v, dk, dv [B, T, Hkv, DH];
// lse [B, Hq, T]; pad [B] (u32, clamped to T). Query head h reads kv head h / G, G = Hq / Hkv.
// Key j is visible to query i of sequence b iff pad[b] <= j <= i; rows i < pad[b] give 0.
//
// Forward: one workgroup per (b, h, block of TILE queries); thread (r, c) = (tid / TILE,
// tid % TILE). Over blocks of TILE keys, with s_ij = scale * q_i . k_j (online softmax):
//   m' = max(m, max_j s_ij),  l' = l e^(m - m') + sum_j e^(s_ij - m'),
//   o' = o e^(m - m') + sum_j e^(s_ij - m') v_j;   out_i = o / l,  lse_i = m + log l.
// Only a TILE x TILE block of scores is ever held (in workgroup memory), never T x T.
//
// Backward (FlashAttention-2, probabilities rebuilt from lse): P_ij = exp(s_ij - lse_i),
//   D_i = dout_i . out_i,  dP_ij = dout_i . v_j,  dS_ij = P_ij (dP_ij - D_i),
//   dq_i = scale sum_j dS_ij k_j,  dk_j = scale sum_(h in group, i) dS_ij q_i,
//   dv_j = sum_(h in group, i) P_ij dout_i.
// backward_prep packs (lse_i, D_i) per row; backward_dq owns query blocks; backward_dkdv owns
// key blocks and loops over the G query heads of its kv head. Every gradient element is
// summed by one thread in a fixed order: deterministic, no atomics.
//
// Decode: one workgroup per (b, h): one query q [B, Hq, DH] against caches k, v laid out
// [B, Hkv, TMAX, DH] (params.max_seq_len = TMAX), keys j in [pad[b], len), len = seq_len.
//
// NaN and Inf: a NaN or +inf score (from a NaN or inf in q or k) makes its row's out and lse
// NaN; so does a row whose every visible score is -inf (no probability mass, as in torch). This
// is decided with bit tests on the scores, because max() drops a NaN and SwiftShader computes
// exp(NaN) = +inf and log(NaN) = 89: an lse of +inf would make every backward probability
// exp(s - inf) = 0 and hide the NaN from dk and dv. The backward takes exp of (score - lse)
// through exp_keep_nan for the same reason. A NaN or inf in v flows through the weighted sums
// by plain arithmetic. Masked (invisible) keys can spread a NaN within a tile of the training
// kernels (p = 0 times a NaN value is NaN): that may add NaNs, never hide one. Decode rows
// without any key still give 0.
//
// Workgroup memory: TILES tiles of TILE rows padded to ROW = DH + 1 floats (no bank conflicts
// between rows), then a TILE x TILE score block; forward 2 tiles, backward 3. TILE = 16 needs
// 25.2 KiB at DH = 128; TILE = 8 fits 16 KiB for every DH <= 128. The launcher picks TILE.
// (One array with offsets: Chrome's compiler crashes on pointers to override-sized arrays.)

override DH: u32 = 64u;
override TILE: u32 = 16u;
override ROW: u32 = DH + 1u;
override TILE_FLOATS: u32 = TILE * ROW;
override TILE_SQ: u32 = TILE * TILE;
override TILES: u32 = 3u;
override SCORES: u32 = TILES * TILE_FLOATS;
override SHM_FLOATS: u32 = SCORES + TILE_SQ;
// Output columns per thread: thread lane c owns columns c, c + TILE, c + 2 TILE, ...
override COLS: u32 = (DH + TILE - 1u) / TILE;

// Private arrays need const sizes: COLS <= 16 for DH <= 128 and TILE >= 8.
const MAX_COLS: u32 = 16u;
const MAX_TILE: u32 = 16u;
const WG: u32 = 256u;
const DEC_WG: u32 = 128u; // >= DH: decode thread d owns output column d
const LOWEST: f32 = -3.4028234663852886e38;
const NAN_BITS: u32 = 0x7fc00000u;

struct Params {
  batch: u32,
  // T; decode: len, the number of filled cache positions.
  seq_len: u32,
  num_heads: u32,
  num_kv_heads: u32,
  scale: f32,
  // ceil(T / TILE): query blocks (forward, dq) or key blocks (dkdv).
  blocks: u32,
  // Decode: TMAX, the rows of each (b, kv head) cache.
  max_seq_len: u32,
  // backward_prep: B * Hq * T.
  rows: u32,
}

// Entry points give some binding numbers to different variables (WGSL allows it when no entry
// point uses both), so each binds at most 8 storage buffers, the WebGPU default.
@group(0) @binding(0) var<uniform> params: Params;
// forward, backward_dq, backward_dkdv, decode
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> pad: array<u32>;
// forward, decode
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
// forward
@group(0) @binding(6) var<storage, read_write> lse: array<f32>;
// backward_prep
@group(0) @binding(1) var<storage, read> fwd_out: array<f32>;
@group(0) @binding(2) var<storage, read> grad_out: array<f32>;
@group(0) @binding(3) var<storage, read> fwd_lse: array<f32>;
// backward_prep writes (lse_i, D_i) per row [B, Hq, T, 2]; backward_dq and backward_dkdv read
// them through stats_in (read-only, so the two share nothing they write: the Recorder may run
// them as one dispatch).
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read> stats_in: array<f32>;
// backward_dq, backward_dkdv
@group(0) @binding(6) var<storage, read> dout: array<f32>;
@group(0) @binding(7) var<storage, read_write> dq: array<f32>;
@group(0) @binding(7) var<storage, read_write> dk: array<f32>;
@group(0) @binding(8) var<storage, read_write> dv: array<f32>;

// NaN or +inf: a score that poisons its row (a -inf score is a probability of 0).
fn poisons(score: f32) -> bool {
  let u = bitcast<u32>(score);
  return (u & 0x7fffffffu) > 0x7f800000u || u == 0x7f800000u;
}

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// A quiet NaN. WGSL rejects NaN constants, so the bits come from a run-time value.
fn quiet_nan(runtime_bits: u32) -> f32 {
  return bitcast<f32>(runtime_bits | NAN_BITS);
}

// exp that keeps a NaN (SwiftShader's exp(NaN) is +inf).
fn exp_keep_nan(x: f32) -> f32 {
  return select(exp(x), x, is_nan(x));
}

var<workgroup> shm: array<f32, SHM_FLOATS>;
// Offsets of the tiles in shm; the score block starts at SCORES.
const TILE_A: u32 = 0u;
override TILE_B: u32 = TILE_FLOATS;
override TILE_C: u32 = 2u * TILE_FLOATS;

/** Index of element 0 of token t, head `head` of sequence b in a [B, T, heads, DH] tensor. */
fn token_base(b: u32, t: u32, heads: u32, head: u32) -> u32 {
  return ((b * params.seq_len + t) * heads + head) * DH;
}

/** First key that is not padding; pad values past T mean "all padding". */
fn first_key(b: u32) -> u32 {
  return min(pad[b], params.seq_len);
}

// Tile loaders: TILE consecutive tokens from t0 into padded rows; tokens past T load 0.
// Consecutive threads read consecutive floats of one row (coalesced).
fn load_q(dst: u32, tid: u32, b: u32, t0: u32, head: u32) {
  for (var e = tid; e < TILE * DH; e += TILE_SQ) {
    let r = e / DH;
    let c = e % DH;
    var x = 0.0;
    if (t0 + r < params.seq_len) { x = q[token_base(b, t0 + r, params.num_heads, head) + c]; }
    shm[dst + r * ROW + c] = x;
  }
}

fn load_k(dst: u32, tid: u32, b: u32, t0: u32, head: u32) {
  for (var e = tid; e < TILE * DH; e += TILE_SQ) {
    let r = e / DH;
    let c = e % DH;
    var x = 0.0;
    if (t0 + r < params.seq_len) { x = k[token_base(b, t0 + r, params.num_kv_heads, head) + c]; }
    shm[dst + r * ROW + c] = x;
  }
}

fn load_v(dst: u32, tid: u32, b: u32, t0: u32, head: u32) {
  for (var e = tid; e < TILE * DH; e += TILE_SQ) {
    let r = e / DH;
    let c = e % DH;
    var x = 0.0;
    if (t0 + r < params.seq_len) { x = v[token_base(b, t0 + r, params.num_kv_heads, head) + c]; }
    shm[dst + r * ROW + c] = x;
  }
}

fn load_dout(dst: u32, tid: u32, b: u32, t0: u32, head: u32) {
  for (var e = tid; e < TILE * DH; e += TILE_SQ) {
    let r = e / DH;
    let c = e % DH;
    var x = 0.0;
    if (t0 + r < params.seq_len) { x = dout[token_base(b, t0 + r, params.num_heads, head) + c]; }
    shm[dst + r * ROW + c] = x;
  }
}

/** Row ra of the tile at offset a dotted with row rb of the tile at offset b. */
fn dot_rows(a: u32, ra: u32, b: u32, rb: u32) -> f32 {
  let oa = a + ra * ROW;
  let ob = b + rb * ROW;
  var s = 0.0;
  for (var d = 0u; d < DH; d++) { s += shm[oa + d] * shm[ob + d]; }
  return s;
}

@compute @workgroup_size(TILE_SQ)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
  let w = wid.x + wid.y * nwg.x;
  let T = params.seq_len;
  let Hq = params.num_heads;
  // Uniform: the whole workgroup leaves together (grid rounding), before any barrier.
  if (w >= params.batch * Hq * params.blocks) { return; }
  let qb = w % params.blocks;
  let h = (w / params.blocks) % Hq;
  let b = w / (params.blocks * Hq);
  let kvh = h / (Hq / params.num_kv_heads);
  let p0 = first_key(b);
  let t0 = qb * TILE;
  let r = tid / TILE;
  let lane = tid % TILE;
  let i = t0 + r;
  let row_valid = i >= p0 && i < T;

  load_q(TILE_A, tid, b, t0, h);
  var m = LOWEST; // finite, so exp(m - m') never meets inf - inf
  var l = 0.0;
  var row_poisoned = false;
  var acc: array<f32, MAX_COLS>;
  var p: array<f32, MAX_TILE>;
  let row_end = min(t0 + TILE, T);
  // Key blocks from the one holding key p0 to the one holding the last query of this block.
  if (p0 < row_end) {
    for (var j0 = (p0 / TILE) * TILE; j0 < row_end; j0 += TILE) {
      load_k(TILE_B, tid, b, j0, kvh);
      workgroupBarrier();
      shm[SCORES + tid] = dot_rows(TILE_A, r, TILE_B, lane) * params.scale;
      workgroupBarrier(); // K is consumed: V may overwrite tile B
      load_v(TILE_B, tid, b, j0, kvh);
      workgroupBarrier();
      var m_blk = LOWEST;
      for (var jj = 0u; jj < TILE; jj++) {
        let j = j0 + jj;
        if (row_valid && j >= p0 && j <= i) {
          let score = shm[SCORES + r * TILE + jj];
          if (poisons(score)) {
            row_poisoned = true;
          } else {
            m_blk = max(m_blk, score);
          }
        }
      }
      let m_new = max(m, m_blk);
      let alpha = exp(m - m_new);
      var sum = 0.0;
      for (var jj = 0u; jj < TILE; jj++) {
        let j = j0 + jj;
        var e = 0.0;
        let score = shm[SCORES + r * TILE + jj];
        if (row_valid && j >= p0 && j <= i && !poisons(score)) { e = exp(score - m_new); }
        p[jj] = e;
        sum += e;
      }
      l = l * alpha + sum;
      m = m_new;
      for (var c = 0u; c < COLS; c++) {
        let col = lane + c * TILE;
        if (col < DH) {
          var o = acc[c] * alpha;
          for (var jj = 0u; jj < TILE; jj++) { o += p[jj] * shm[TILE_B + jj * ROW + col]; }
          acc[c] = o;
        }
      }
      workgroupBarrier(); // before the next block overwrites tile B and the scores
    }
  }
  if (i < T) {
    // A valid row sees key i, so l >= exp(0) there unless every score is -inf; padded rows
    // write zeros.
    let inv = select(0.0, 1.0 / l, row_valid);
    var row_lse = select(0.0, m + log(l), row_valid);
    let nan_row = row_valid && (row_poisoned || l == 0.0);
    let nan = quiet_nan(bitcast<u32>(l));
    if (nan_row) { row_lse = nan; }
    let base = token_base(b, i, Hq, h);
    for (var c = 0u; c < COLS; c++) {
      let col = lane + c * TILE;
      if (col < DH) { out[base + col] = select(acc[c] * inv, nan, nan_row); }
    }
    if (lane == 0u) { lse[(b * Hq + h) * T + i] = row_lse; }
  }
}

@compute @workgroup_size(WG)
fn backward_prep(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) tid: u32) {
  let row = (wid.x + wid.y * nwg.x) * WG + tid; // (b * Hq + h) * T + i
  if (row >= params.rows) { return; }
  let T = params.seq_len;
  let i = row % T;
  let bh = row / T;
  let h = bh % params.num_heads;
  let b = bh / params.num_heads;
  var row_lse = 0.0;
  var delta = 0.0;
  if (i >= first_key(b)) {
    row_lse = fwd_lse[row];
    let base = token_base(b, i, params.num_heads, h);
    for (var d = 0u; d < DH; d++) { delta += grad_out[base + d] * fwd_out[base + d]; }
  }
  stats[2u * row] = row_lse;
  stats[2u * row + 1u] = delta;
}

@compute @workgroup_size(TILE_SQ)
fn backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  let w = wid.x + wid.y * nwg.x;
  let T = params.seq_len;
  let Hq = params.num_heads;
  if (w >= params.batch * Hq * params.blocks) { return; }
  let qb = w % params.blocks;
  let h = (w / params.blocks) % Hq;
  let b = w / (params.blocks * Hq);
  let kvh = h / (Hq / params.num_kv_heads);
  let p0 = first_key(b);
  let t0 = qb * TILE;
  let r = tid / TILE;
  let lane = tid % TILE;
  let i = t0 + r;
  let row_valid = i >= p0 && i < T;

  load_q(TILE_A, tid, b, t0, h);
  load_dout(TILE_C, tid, b, t0, h);
  var row_lse = 0.0;
  var delta = 0.0;
  if (row_valid) {
    let srow = (b * Hq + h) * T + i;
    row_lse = stats_in[2u * srow];
    delta = stats_in[2u * srow + 1u];
  }
  var acc: array<f32, MAX_COLS>;
  let row_end = min(t0 + TILE, T);
  if (p0 < row_end) {
    for (var j0 = (p0 / TILE) * TILE; j0 < row_end; j0 += TILE) {
      let j = j0 + lane;
      let visible = row_valid && j >= p0 && j <= i;
      load_v(TILE_B, tid, b, j0, kvh);
      workgroupBarrier();
      let dp = dot_rows(TILE_C, r, TILE_B, lane);
      workgroupBarrier(); // V is consumed: K may overwrite it
      load_k(TILE_B, tid, b, j0, kvh);
      workgroupBarrier();
      var ds = 0.0;
      if (visible) {
        let prob = exp_keep_nan(dot_rows(TILE_A, r, TILE_B, lane) * params.scale - row_lse);
        ds = prob * (dp - delta);
      }
      shm[SCORES + tid] = ds;
      workgroupBarrier();
      for (var c = 0u; c < COLS; c++) {
        let col = lane + c * TILE;
        if (col < DH) {
          var g = acc[c];
          for (var jj = 0u; jj < TILE; jj++) { g += shm[SCORES + r * TILE + jj] * shm[TILE_B + jj * ROW + col]; }
          acc[c] = g;
        }
      }
      workgroupBarrier();
    }
  }
  if (i < T) {
    let base = token_base(b, i, Hq, h);
    for (var c = 0u; c < COLS; c++) {
      let col = lane + c * TILE;
      if (col < DH) { dq[base + col] = select(0.0, acc[c] * params.scale, row_valid); }
    }
  }
}

@compute @workgroup_size(TILE_SQ)
fn backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) tid: u32) {
  let w = wid.x + wid.y * nwg.x;
  let T = params.seq_len;
  let Hq = params.num_heads;
  let Hkv = params.num_kv_heads;
  if (w >= params.batch * Hkv * params.blocks) { return; }
  let kb = w % params.blocks;
  let kvh = (w / params.blocks) % Hkv;
  let b = w / (params.blocks * Hkv);
  let G = Hq / Hkv;
  let p0 = first_key(b);
  let j0 = kb * TILE;
  // Score phase: thread (query r, key lane). Accumulate phase: thread (key r, column lane).
  let r = tid / TILE;
  let lane = tid % TILE;
  let j = j0 + lane;

  load_k(TILE_B, tid, b, j0, kvh);
  load_v(TILE_C, tid, b, j0, kvh);
  var dk_acc: array<f32, MAX_COLS>;
  var dv_acc: array<f32, MAX_COLS>;
  let key_end = min(j0 + TILE, T);
  // Skip blocks of padding keys; queries before this block (or before p0) see none of its keys.
  if (p0 < key_end) {
    let t_start = (max(j0, p0) / TILE) * TILE;
    for (var g = 0u; g < G; g++) {
      let h = kvh * G + g;
      for (var t0 = t_start; t0 < T; t0 += TILE) {
        let i = t0 + r;
        let visible = i < T && j >= p0 && j <= i;
        let srow = (b * Hq + h) * T + i;
        load_q(TILE_A, tid, b, t0, h);
        workgroupBarrier();
        var prob = 0.0;
        if (visible) { prob = exp_keep_nan(dot_rows(TILE_A, r, TILE_B, lane) * params.scale - stats_in[2u * srow]); }
        workgroupBarrier(); // Q is consumed: dout may overwrite it
        load_dout(TILE_A, tid, b, t0, h);
        workgroupBarrier();
        var ds = 0.0;
        if (visible) { ds = prob * (dot_rows(TILE_A, r, TILE_C, lane) - stats_in[2u * srow + 1u]); }
        shm[SCORES + lane * TILE + r] = prob; // transposed: [key][query]
        workgroupBarrier();
        for (var c = 0u; c < COLS; c++) {
          let col = lane + c * TILE;
          if (col < DH) {
            var g_v = dv_acc[c];
            for (var ii = 0u; ii < TILE; ii++) { g_v += shm[SCORES + r * TILE + ii] * shm[TILE_A + ii * ROW + col]; }
            dv_acc[c] = g_v;
          }
        }
        workgroupBarrier();
        shm[SCORES + lane * TILE + r] = ds;
        load_q(TILE_A, tid, b, t0, h);
        workgroupBarrier();
        for (var c = 0u; c < COLS; c++) {
          let col = lane + c * TILE;
          if (col < DH) {
            var g_k = dk_acc[c];
            for (var ii = 0u; ii < TILE; ii++) { g_k += shm[SCORES + r * TILE + ii] * shm[TILE_A + ii * ROW + col]; }
            dk_acc[c] = g_k;
          }
        }
        workgroupBarrier();
      }
    }
  }
  let key = j0 + r;
  if (key < T) {
    let keep = key >= p0; // padding keys get exactly zero gradient
    let base = token_base(b, key, Hkv, kvh);
    for (var c = 0u; c < COLS; c++) {
      let col = lane + c * TILE;
      if (col < DH) {
        dk[base + col] = select(0.0, dk_acc[c] * params.scale, keep);
        dv[base + col] = select(0.0, dv_acc[c], keep);
      }
    }
  }
}

// Row kernels: one thread per query row (forward_rows, backward_dq_rows) or per key row
// (backward_dkdv_rows), no workgroup memory and no barriers. On a software adapter a barrier
// switches every group of SIMD lanes of the workgroup, which cost more than the tiles saved;
// the rows of a workgroup read the same keys in the same order (one cache line for all).
// Rows are read as vec4 (DH % 4 == 0; the launcher uses tiles otherwise). For DH <= 32 the
// launcher writes out every `for (var d = 0u; d < DH4; d++)` loop (src/ops/wgslUnroll.ts), so
// keep that exact form: the private row arrays then live in registers on SwiftShader.
// The backward's row statistics are [lse (B Hq T) | D (B Hq T)]: the launcher copies lse in,
// backward_dq_rows writes D_i = dout_i . out_i (no prologue dispatch), backward_dkdv_rows reads both.
const MAX_DH4: u32 = 32u;
override ROW_WG: u32 = 64u;
override DH4: u32 = DH / 4u;
@group(0) @binding(1) var<storage, read> q4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> out4: array<vec4<f32>>;
// backward_dq_rows: out is read, the row statistics (lse, D) written.
@group(0) @binding(5) var<storage, read> row_out4: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> dout4: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dq4: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dk4: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> dv4: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> row_stats: array<f32>;

/** Forward and dq: row = (b * Hq + h) * T + i. dkdv: row = (b * Hkv + kvh) * T + j. */
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROW_WG + lid;
}

/** Index of vec4 0 of token t, head `head` of sequence b in a [B, T, heads, DH] tensor. */
fn token_base4(b: u32, t: u32, heads: u32, head: u32) -> u32 {
  return ((b * params.seq_len + t) * heads + head) * DH4;
}

fn hsum(x: vec4<f32>) -> f32 {
  return (x.x + x.y) + (x.z + x.w);
}

fn exp_keep_nan4(x: vec4<f32>) -> vec4<f32> {
  let nan = (bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
  return select(exp(x), x, nan);
}

fn poisons4(s: vec4<f32>) -> vec4<bool> {
  return vec4<bool>(poisons(s.x), poisons(s.y), poisons(s.z), poisons(s.w));
}

// The row kernels take 4 keys (forward, dq) or 4 queries (dkdv) a step: each private row
// element is loaded and stored once per 4 products. A step past the last key or query
// repeats the last one (in bounds) with weight 0.
@compute @workgroup_size(ROW_WG)
fn forward_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  if (row >= params.rows) { return; }
  let T = params.seq_len;
  let Hq = params.num_heads;
  let Hkv = params.num_kv_heads;
  let i = row % T;
  let h = (row / T) % Hq;
  let b = row / (T * Hq);
  let kvh = h / (Hq / Hkv);
  let p0 = first_key(b);
  let base = token_base4(b, i, Hq, h);
  if (i < p0) {
    for (var d = 0u; d < DH4; d++) { out4[base + d] = vec4<f32>(0.0); }
    lse[row] = 0.0;
    return;
  }
  var qs: array<vec4<f32>, MAX_DH4>;
  var acc: array<vec4<f32>, MAX_DH4>;
  for (var d = 0u; d < DH4; d++) { qs[d] = q4[base + d] * params.scale; }
  var m = LOWEST; // finite, so exp(m - s) never meets inf - inf
  var l = 0.0;
  var poisoned = false;
  let kv0 = token_base4(b, 0u, Hkv, kvh);
  let kv_step = Hkv * DH4; // vec4s from one token to the next
  for (var j = p0; j <= i; j += 4u) {
    let kb0 = kv0 + j * kv_step;
    let kb1 = kv0 + min(j + 1u, i) * kv_step;
    let kb2 = kv0 + min(j + 2u, i) * kv_step;
    let kb3 = kv0 + min(j + 3u, i) * kv_step;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    for (var d = 0u; d < DH4; d++) {
      let x = qs[d];
      a0 += x * k4[kb0 + d];
      a1 += x * k4[kb1 + d];
      a2 += x * k4[kb2 + d];
      a3 += x * k4[kb3 + d];
    }
    let s = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
    let valid = vec4<u32>(j) + vec4<u32>(0u, 1u, 2u, 3u) <= vec4<u32>(i);
    let bad = poisons4(s);
    poisoned = poisoned || any(valid & bad);
    let keep = valid & !bad;
    let sm = select(vec4<f32>(LOWEST), s, keep);
    let m_blk = max(max(sm.x, sm.y), max(sm.z, sm.w));
    // Online softmax, rescaling only when the running maximum grows.
    if (m_blk > m) {
      let alpha = exp(m - m_blk);
      l *= alpha;
      for (var d = 0u; d < DH4; d++) { acc[d] *= alpha; }
      m = m_blk;
    }
    let p = select(vec4<f32>(0.0), exp(sm - m), keep);
    l += hsum(p);
    for (var d = 0u; d < DH4; d++) {
      acc[d] += p.x * v4[kb0 + d] + p.y * v4[kb1 + d] + p.z * v4[kb2 + d] + p.w * v4[kb3 + d];
    }
  }
  // Key i is visible, so l >= 1 unless every score is -inf (NaN, as in torch).
  let nan_row = poisoned || l == 0.0;
  let nan = quiet_nan(bitcast<u32>(l));
  let inv = 1.0 / l;
  for (var d = 0u; d < DH4; d++) { out4[base + d] = select(acc[d] * inv, vec4<f32>(nan), nan_row); }
  lse[row] = select(m + log(l), nan, nan_row);
}

@compute @workgroup_size(ROW_WG)
fn backward_dq_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let rows = params.rows;
  if (row >= rows) { return; }
  let T = params.seq_len;
  let Hq = params.num_heads;
  let Hkv = params.num_kv_heads;
  let i = row % T;
  let h = (row / T) % Hq;
  let b = row / (T * Hq);
  let kvh = h / (Hq / Hkv);
  let p0 = first_key(b);
  let base = token_base4(b, i, Hq, h);
  if (i < p0) {
    for (var d = 0u; d < DH4; d++) { dq4[base + d] = vec4<f32>(0.0); }
    row_stats[rows + row] = 0.0;
    return;
  }
  var qs: array<vec4<f32>, MAX_DH4>;
  var gs: array<vec4<f32>, MAX_DH4>;
  var acc: array<vec4<f32>, MAX_DH4>;
  var delta4 = vec4<f32>(0.0);
  for (var d = 0u; d < DH4; d++) {
    let g = dout4[base + d];
    gs[d] = g;
    delta4 += g * row_out4[base + d];
    qs[d] = q4[base + d] * params.scale;
  }
  let delta = hsum(delta4);
  row_stats[rows + row] = delta;
  let row_lse = row_stats[row];
  let kv0 = token_base4(b, 0u, Hkv, kvh);
  let kv_step = Hkv * DH4;
  for (var j = p0; j <= i; j += 4u) {
    let kb0 = kv0 + j * kv_step;
    let kb1 = kv0 + min(j + 1u, i) * kv_step;
    let kb2 = kv0 + min(j + 2u, i) * kv_step;
    let kb3 = kv0 + min(j + 3u, i) * kv_step;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var c0 = vec4<f32>(0.0);
    var c1 = vec4<f32>(0.0);
    var c2 = vec4<f32>(0.0);
    var c3 = vec4<f32>(0.0);
    for (var d = 0u; d < DH4; d++) {
      let x = qs[d];
      let g = gs[d];
      a0 += x * k4[kb0 + d];
      a1 += x * k4[kb1 + d];
      a2 += x * k4[kb2 + d];
      a3 += x * k4[kb3 + d];
      c0 += g * v4[kb0 + d];
      c1 += g * v4[kb1 + d];
      c2 += g * v4[kb2 + d];
      c3 += g * v4[kb3 + d];
    }
    let s = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
    let dp = vec4<f32>(hsum(c0), hsum(c1), hsum(c2), hsum(c3));
    let valid = vec4<u32>(j) + vec4<u32>(0u, 1u, 2u, 3u) <= vec4<u32>(i);
    let ds = select(vec4<f32>(0.0), exp_keep_nan4(s - row_lse) * (dp - delta), valid);
    for (var d = 0u; d < DH4; d++) {
      acc[d] += ds.x * k4[kb0 + d] + ds.y * k4[kb1 + d] + ds.z * k4[kb2 + d] + ds.w * k4[kb3 + d];
    }
  }
  for (var d = 0u; d < DH4; d++) { dq4[base + d] = acc[d] * params.scale; }
}

@compute @workgroup_size(ROW_WG)
fn backward_dkdv_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  if (row >= params.rows) { return; }
  let T = params.seq_len;
  let Hq = params.num_heads;
  let Hkv = params.num_kv_heads;
  let G = Hq / Hkv;
  let j = row % T;
  let kvh = (row / T) % Hkv;
  let b = row / (T * Hkv);
  let p0 = first_key(b);
  let base = token_base4(b, j, Hkv, kvh);
  if (j < p0) { // padding keys get exactly zero gradient
    for (var d = 0u; d < DH4; d++) {
      dk4[base + d] = vec4<f32>(0.0);
      dv4[base + d] = vec4<f32>(0.0);
    }
    return;
  }
  var ks: array<vec4<f32>, MAX_DH4>;
  var vs: array<vec4<f32>, MAX_DH4>;
  var gk: array<vec4<f32>, MAX_DH4>;
  var gv: array<vec4<f32>, MAX_DH4>;
  for (var d = 0u; d < DH4; d++) {
    ks[d] = k4[base + d] * params.scale;
    vs[d] = v4[base + d];
  }
  let q_rows = params.batch * Hq * T; // D_i follows the B Hq T lse values
  let q_step = Hq * DH4;
  let last = T - 1u;
  for (var g = 0u; g < G; g++) {
    let h = kvh * G + g;
    let srow = (b * Hq + h) * T;
    let q0 = token_base4(b, 0u, Hq, h);
    for (var i = j; i < T; i += 4u) {
      let i1 = min(i + 1u, last);
      let i2 = min(i + 2u, last);
      let i3 = min(i + 3u, last);
      let qb0 = q0 + i * q_step;
      let qb1 = q0 + i1 * q_step;
      let qb2 = q0 + i2 * q_step;
      let qb3 = q0 + i3 * q_step;
      var a0 = vec4<f32>(0.0);
      var a1 = vec4<f32>(0.0);
      var a2 = vec4<f32>(0.0);
      var a3 = vec4<f32>(0.0);
      var c0 = vec4<f32>(0.0);
      var c1 = vec4<f32>(0.0);
      var c2 = vec4<f32>(0.0);
      var c3 = vec4<f32>(0.0);
      for (var d = 0u; d < DH4; d++) {
        let x = ks[d];
        let y = vs[d];
        a0 += q4[qb0 + d] * x;
        a1 += q4[qb1 + d] * x;
        a2 += q4[qb2 + d] * x;
        a3 += q4[qb3 + d] * x;
        c0 += dout4[qb0 + d] * y;
        c1 += dout4[qb1 + d] * y;
        c2 += dout4[qb2 + d] * y;
        c3 += dout4[qb3 + d] * y;
      }
      let s = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
      let dp = vec4<f32>(hsum(c0), hsum(c1), hsum(c2), hsum(c3));
      let row_lse = vec4<f32>(stats_in[srow + i], stats_in[srow + i1], stats_in[srow + i2], stats_in[srow + i3]);
      let d0 = q_rows + srow;
      let delta = vec4<f32>(stats_in[d0 + i], stats_in[d0 + i1], stats_in[d0 + i2], stats_in[d0 + i3]);
      let valid = vec4<u32>(i) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(T);
      let p = select(vec4<f32>(0.0), exp_keep_nan4(s - row_lse), valid);
      let ds = p * (dp - delta);
      for (var d = 0u; d < DH4; d++) {
        gk[d] += ds.x * q4[qb0 + d] + ds.y * q4[qb1 + d] + ds.z * q4[qb2 + d] + ds.w * q4[qb3 + d];
        gv[d] += p.x * dout4[qb0 + d] + p.y * dout4[qb1 + d] + p.z * dout4[qb2 + d] + p.w * dout4[qb3 + d];
      }
    }
  }
  for (var d = 0u; d < DH4; d++) {
    dk4[base + d] = gk[d] * params.scale;
    dv4[base + d] = gv[d];
  }
}

// Decode by rows (software adapters): one thread per (b, h), 4 cache positions a step, as in
// forward_rows; a position is poisoned (NaN or +inf score) or -inf as there. No barriers.
@compute @workgroup_size(ROW_WG)
fn decode_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // b * Hq + h
  let Hq = params.num_heads;
  if (row >= params.batch * Hq) { return; }
  let h = row % Hq;
  let b = row / Hq;
  let kvh = h / (Hq / params.num_kv_heads);
  let len = params.seq_len;
  let p0 = min(pad[b], len);
  let base = row * DH4;
  if (p0 >= len) {
    for (var d = 0u; d < DH4; d++) { out4[base + d] = vec4<f32>(0.0); }
    return;
  }
  var qs: array<vec4<f32>, MAX_DH4>;
  var acc: array<vec4<f32>, MAX_DH4>;
  for (var d = 0u; d < DH4; d++) { qs[d] = q4[base + d] * params.scale; }
  var m = LOWEST;
  var l = 0.0;
  var poisoned = false;
  let kv0 = (b * params.num_kv_heads + kvh) * params.max_seq_len * DH4;
  let last = len - 1u;
  for (var j = p0; j < len; j += 4u) {
    let kb0 = kv0 + j * DH4;
    let kb1 = kv0 + min(j + 1u, last) * DH4;
    let kb2 = kv0 + min(j + 2u, last) * DH4;
    let kb3 = kv0 + min(j + 3u, last) * DH4;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    for (var d = 0u; d < DH4; d++) {
      let x = qs[d];
      a0 += x * k4[kb0 + d];
      a1 += x * k4[kb1 + d];
      a2 += x * k4[kb2 + d];
      a3 += x * k4[kb3 + d];
    }
    let s = vec4<f32>(hsum(a0), hsum(a1), hsum(a2), hsum(a3));
    let valid = vec4<u32>(j) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(len);
    let bad = poisons4(s);
    poisoned = poisoned || any(valid & bad);
    let keep = valid & !bad;
    let sm = select(vec4<f32>(LOWEST), s, keep);
    let m_blk = max(max(sm.x, sm.y), max(sm.z, sm.w));
    if (m_blk > m) {
      let alpha = exp(m - m_blk);
      l *= alpha;
      for (var d = 0u; d < DH4; d++) { acc[d] *= alpha; }
      m = m_blk;
    }
    let p = select(vec4<f32>(0.0), exp(sm - m), keep);
    l += hsum(p);
    for (var d = 0u; d < DH4; d++) {
      acc[d] += p.x * v4[kb0 + d] + p.y * v4[kb1 + d] + p.z * v4[kb2 + d] + p.w * v4[kb3 + d];
    }
  }
  // NaN when a score was NaN or +inf, or every score was -inf (l = 0).
  let nan_row = poisoned || l == 0.0;
  let nan = quiet_nan(bitcast<u32>(l));
  let inv = 1.0 / l;
  for (var d = 0u; d < DH4; d++) { out4[base + d] = select(acc[d] * inv, vec4<f32>(nan), nan_row); }
}

var<workgroup> dec_q: array<f32, DH>;
var<workgroup> dec_red: array<f32, DEC_WG>;
var<workgroup> dec_p: array<f32, DEC_WG>;

fn dec_reduce_max(tid: u32, x: f32) -> f32 {
  dec_red[tid] = x;
  workgroupBarrier();
  for (var stride = DEC_WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) { dec_red[tid] = max(dec_red[tid], dec_red[tid + stride]); }
    workgroupBarrier();
  }
  let result = dec_red[0];
  workgroupBarrier(); // everyone has read it before dec_red is reused
  return result;
}

fn dec_reduce_sum(tid: u32, x: f32) -> f32 {
  dec_red[tid] = x;
  workgroupBarrier();
  for (var stride = DEC_WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) { dec_red[tid] = dec_red[tid] + dec_red[tid + stride]; }
    workgroupBarrier();
  }
  let result = dec_red[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(DEC_WG)
fn decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) tid: u32) {
  let w = wid.x + wid.y * nwg.x;
  let Hq = params.num_heads;
  if (w >= params.batch * Hq) { return; }
  let h = w % Hq;
  let b = w / Hq;
  let kvh = h / (Hq / params.num_kv_heads);
  let len = params.seq_len;
  let p0 = min(pad[b], len);
  let qbase = (b * Hq + h) * DH;
  for (var d = tid; d < DH; d += DEC_WG) { dec_q[d] = q[qbase + d] * params.scale; }
  // Row of cache position 0 for (b, kvh); the cache holds max_seq_len rows per (b, kv head).
  let cache0 = (b * params.num_kv_heads + kvh) * params.max_seq_len;
  var m = LOWEST;
  var l = 0.0;
  var acc = 0.0; // column tid of the output, for tid < DH
  workgroupBarrier();
  // Chunks of DEC_WG keys: thread tid scores key j0 + tid, then thread d sums column d.
  for (var j0 = p0; j0 < len; j0 += DEC_WG) {
    let j = j0 + tid;
    let valid = j < len;
    var s = LOWEST;
    var bad = false;
    if (valid) {
      let kbase = (cache0 + j) * DH;
      var dotp = 0.0;
      for (var d = 0u; d < DH; d++) { dotp += dec_q[d] * k[kbase + d]; }
      bad = poisons(dotp);
      s = select(dotp, LOWEST, bad); // kept out of the max
    }
    let m_new = max(m, dec_reduce_max(tid, s));
    var e = 0.0;
    if (valid) { e = exp(s - m_new); }
    // A poisoned key's weight is an explicit NaN (not exp(NaN)): plain sums carry it into l
    // and into every output column.
    if (bad) { e = quiet_nan(j); }
    dec_p[tid] = e;
    let sum = dec_reduce_sum(tid, e); // its barriers also publish dec_p
    let alpha = exp(m - m_new);
    l = l * alpha + sum;
    m = m_new;
    if (tid < DH) {
      let count = min(DEC_WG, len - j0);
      var o = acc * alpha;
      for (var t = 0u; t < count; t++) { o += dec_p[t] * v[(cache0 + j0 + t) * DH + tid]; }
      acc = o;
    }
    workgroupBarrier(); // before the next chunk overwrites dec_p
  }
  // Zero only when no key is visible; NaN when a score was NaN or +inf (NaN weights above),
  // or every score was -inf (l = 0).
  if (tid < DH) {
    var o = acc / l;
    if (l == 0.0) { o = quiet_nan(bitcast<u32>(l)); }
    out[qbase + tid] = select(o, 0.0, p0 >= len);
  }
}
