// LayerNorm (GPT-2) and RMSNorm (Llama) over the last dimension, forward and backward.
// Float64 twin: src/ops/norm.reference.ts.
//
// Per row of D = dim values; `center` = 1 for LayerNorm, 0 for RMSNorm:
//   LayerNorm: mean = sum x / D, rstd = 1 / sqrt(sum (x - mean)^2 / D + eps), y = xhat * gamma + beta
//   RMSNorm:   mean = 0,         rstd = 1 / sqrt(sum x^2 / D + eps),          y = xhat * gamma
//   with xhat = (x - mean) * rstd. Saved per row: stats[r] = (mean, rstd).
// Backward, with g = dy * gamma:
//   dx_i     = rstd * (g_i - center * sum_j g_j / D - xhat_i * sum_j g_j xhat_j / D)
//   dgamma_i = sum_r dy_ri xhat_ri,   dbeta_i = sum_r dy_ri
// dgamma and dbeta are reductions over rows, done without atomics so they are bit-for-bit
// reproducible: param_partials sums blocks of chunk_rows rows into partials[chunk, 2, D]
// (dgamma part, then dbeta part), and reduce_* sums those chunks in order.
//
// Rows of up to chunk_rows rows skip the partials: param_grads_* sum every row of a column in
// one pass and write (or add into) dgamma/dbeta directly, one dispatch instead of two.
//
// Dispatches (entry point: bindings after params):
//   forward            one workgroup per row:      x, gamma, beta, y, stats
//   add_forward        one workgroup per row:      x, gamma, beta, y, stats, x2, sum (of x + x2)
//   backward_input     one workgroup per row:      x, gamma, stats, dy, dx
//   backward_input_add one workgroup per row:      x, gamma, stats, dy, dx, residual
//                      (dx = residual + the norm's dx: the residual stream's gradient joins here)
//   param_partials     (ceil(D/COLS), chunks):     x, stats, dy, partials
//   reduce_gamma       ceil(D/COLS) (RMSNorm):     partials, dgamma
//   reduce_gamma_beta  ceil(D/COLS) (LayerNorm):   partials, dgamma, dbeta
//   param_grads_gamma       ceil(D/COLS) (RMSNorm, one chunk):   x, stats, dy, dgamma
//   param_grads_gamma_beta  ceil(D/COLS) (LayerNorm, one chunk): x, stats, dy, dgamma, dbeta
// Each entry point declares its own resource variables; binding numbers are reused across
// entry points (WGSL forbids aliasing only within one entry point's interface).

// Threads per row of the row kernels: the launcher (src/ops/norm.ts normRowThreads) rewrites
// this per adapter and row length (4 on a software adapter, where a workgroup of one SIMD group
// makes the barriers free). It must stay a power of two for the reduction trees.
const WG: u32 = 256u;
// Threads (columns) per workgroup of the column kernels (param_*, reduce_*): rewritten with WG,
// to the same count, so that dispatch pairing can run a norm's dx and its dgamma/dbeta as one.
const COLS: u32 = 256u;

struct Params {
  rows: u32,
  dim: u32,
  eps: f32,
  // 1: LayerNorm (subtract the mean, add beta); 0: RMSNorm.
  center: u32,
  // param_partials: rows summed by one partial.
  chunk_rows: u32,
  // reduce_*: number of partials per column.
  chunks: u32,
  // reduce_*: 1 adds into dgamma/dbeta (gradient accumulation), 0 overwrites them.
  accumulate: u32,
  _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// forward, backward_input, param_partials.
@group(0) @binding(1) var<storage, read> x: array<f32>;
// forward, backward_input.
@group(0) @binding(2) var<storage, read> gamma: array<f32>;

// forward. RMSNorm binds gamma as beta and never reads it.
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats_out: array<f32>;

// add_forward: the residual stream's other term and the sum (x + x2, written once).
@group(0) @binding(6) var<storage, read> x2: array<f32>;
@group(0) @binding(7) var<storage, read_write> sum_out: array<f32>;

// backward_input, backward_input_add.
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> dy: array<f32>;
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;
// backward_input_add: the gradient reaching x around the norm (the residual branch).
@group(0) @binding(6) var<storage, read> residual: array<f32>;

// param_partials, param_grads_*.
@group(0) @binding(2) var<storage, read> part_stats: array<f32>;
@group(0) @binding(3) var<storage, read> part_dy: array<f32>;
// param_partials.
@group(0) @binding(4) var<storage, read_write> partials_out: array<f32>;
// param_grads_gamma, param_grads_gamma_beta.
@group(0) @binding(4) var<storage, read_write> grads_gamma: array<f32>;
// param_grads_gamma_beta.
@group(0) @binding(5) var<storage, read_write> grads_beta: array<f32>;

// reduce_gamma, reduce_gamma_beta.
@group(0) @binding(1) var<storage, read> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> dgamma: array<f32>;
// reduce_gamma_beta.
@group(0) @binding(3) var<storage, read_write> dbeta: array<f32>;

var<workgroup> red_a: array<f32, WG>;
var<workgroup> red_b: array<f32, WG>;

// Sums (a, b) over the workgroup with a fixed tree, so the result is deterministic.
// Call from uniform control flow; every thread gets the sums. Where a workgroup is exactly one
// subgroup the launcher (src/ops/norm.ts sizedCode) swaps this function for subgroupAdd.
fn workgroup_sum2(tid: u32, a: f32, b: f32) -> vec2<f32> {
  red_a[tid] = a;
  red_b[tid] = b;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) {
      red_a[tid] += red_a[tid + stride];
      red_b[tid] += red_b[tid + stride];
    }
    workgroupBarrier();
  }
  let sums = vec2<f32>(red_a[0], red_b[0]);
  // Everyone has read the sums before a later call overwrites the arrays.
  workgroupBarrier();
  return sums;
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  // Uniform: the whole workgroup leaves together.
  if (row >= params.rows) { return; }
  let dim = params.dim;
  let base = row * dim;
  let center = params.center == 1u;

  // LayerNorm sums x - x[0], not x: a constant row then has exactly zero variance (y = beta),
  // and a row with a large common offset loses no digits to cancellation.
  var shift = 0.0;
  var offset = 0.0;
  var mean_square = 0.0;
  if (center) {
    shift = x[base];
    var acc = 0.0;
    for (var i = tid; i < dim; i += WG) { acc += x[base + i] - shift; }
    offset = workgroup_sum2(tid, acc, 0.0).x / f32(dim);
    // Two passes (mean, then squared deviations): no E[x^2] - E[x]^2 cancellation.
    var acc2 = 0.0;
    for (var i = tid; i < dim; i += WG) {
      let d = x[base + i] - shift - offset;
      acc2 += d * d;
    }
    mean_square = workgroup_sum2(tid, acc2, 0.0).x / f32(dim);
  } else {
    var acc2 = 0.0;
    for (var i = tid; i < dim; i += WG) {
      let v = x[base + i];
      acc2 += v * v;
    }
    mean_square = workgroup_sum2(tid, acc2, 0.0).x / f32(dim);
  }
  let rstd = inverseSqrt(mean_square + params.eps);

  for (var i = tid; i < dim; i += WG) {
    let xhat = (x[base + i] - shift - offset) * rstd;
    var v = xhat * gamma[i];
    if (center) { v += beta[i]; }
    y[base + i] = v;
  }
  if (tid == 0u) {
    stats_out[2u * row] = shift + offset;
    stats_out[2u * row + 1u] = rstd;
  }
}

// forward of (x + x2), also writing that sum: a residual add and the norm that follows it in
// one dispatch (decode). Every read of x in forward reads the f32 sum x[i] + x2[i] here, which
// is the value a separate add would have stored, so y, stats and the sum are bit-identical to
// elementwise add followed by forward. Kept apart from forward: a binding a function uses
// joins the interface of every entry point that calls it.
@compute @workgroup_size(WG)
fn add_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= params.rows) { return; }
  let dim = params.dim;
  let base = row * dim;
  let center = params.center == 1u;

  var shift = 0.0;
  var offset = 0.0;
  var mean_square = 0.0;
  if (center) {
    shift = x[base] + x2[base];
    var acc = 0.0;
    for (var i = tid; i < dim; i += WG) { acc += (x[base + i] + x2[base + i]) - shift; }
    offset = workgroup_sum2(tid, acc, 0.0).x / f32(dim);
    var acc2 = 0.0;
    for (var i = tid; i < dim; i += WG) {
      let d = (x[base + i] + x2[base + i]) - shift - offset;
      acc2 += d * d;
    }
    mean_square = workgroup_sum2(tid, acc2, 0.0).x / f32(dim);
  } else {
    var acc2 = 0.0;
    for (var i = tid; i < dim; i += WG) {
      let v = x[base + i] + x2[base + i];
      acc2 += v * v;
    }
    mean_square = workgroup_sum2(tid, acc2, 0.0).x / f32(dim);
  }
  let rstd = inverseSqrt(mean_square + params.eps);

  for (var i = tid; i < dim; i += WG) {
    let s = x[base + i] + x2[base + i];
    sum_out[base + i] = s;
    let xhat = (s - shift - offset) * rstd;
    var v = xhat * gamma[i];
    if (center) { v += beta[i]; }
    y[base + i] = v;
  }
  if (tid == 0u) {
    stats_out[2u * row] = shift + offset;
    stats_out[2u * row + 1u] = rstd;
  }
}

// Per-row means of g = dy * gamma and of g * xhat (the first is 0 for RMSNorm), shared by
// both backward_input entry points. Call from uniform control flow.
fn backward_means(tid: u32, base: u32, mean: f32, rstd: f32) -> vec2<f32> {
  let dim = params.dim;
  var sum_g = 0.0;
  var sum_gx = 0.0;
  for (var i = tid; i < dim; i += WG) {
    let g = dy[base + i] * gamma[i];
    sum_g += g;
    sum_gx += g * (x[base + i] - mean) * rstd;
  }
  let sums = workgroup_sum2(tid, sum_g, sum_gx);
  let inv_dim = 1.0 / f32(dim);
  return vec2<f32>(select(0.0, sums.x * inv_dim, params.center == 1u), sums.y * inv_dim);
}

// The norm's dx at base + i (column i), given the row's backward_means.
fn backward_value(base: u32, i: u32, mean: f32, rstd: f32, means: vec2<f32>) -> f32 {
  let g = dy[base + i] * gamma[i];
  let xhat = (x[base + i] - mean) * rstd;
  return rstd * (g - means.x - xhat * means.y);
}

@compute @workgroup_size(WG)
fn backward_input(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= params.rows) { return; }
  let base = row * params.dim;
  let mean = stats[2u * row];
  let rstd = stats[2u * row + 1u];
  let means = backward_means(tid, base, mean, rstd);
  for (var i = tid; i < params.dim; i += WG) {
    dx[base + i] = backward_value(base, i, mean, rstd, means);
  }
}

// dx = norm dx + residual: the value elementwise accumulate (dx += 1 * residual) would leave
// after backward_input, without that second pass over dx.
@compute @workgroup_size(WG)
fn backward_input_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= params.rows) { return; }
  let base = row * params.dim;
  let mean = stats[2u * row];
  let rstd = stats[2u * row + 1u];
  let means = backward_means(tid, base, mean, rstd);
  for (var i = tid; i < params.dim; i += WG) {
    dx[base + i] = backward_value(base, i, mean, rstd, means) + residual[base + i];
  }
}

@compute @workgroup_size(COLS)
fn param_partials(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let col = gid.x;
  let dim = params.dim;
  if (col >= dim) { return; }
  let chunk = wid.y;
  let first = chunk * params.chunk_rows;
  let last = min(first + params.chunk_rows, params.rows);
  let sums = column_sums(col, first, last);
  partials_out[2u * chunk * dim + col] = sums.x;
  partials_out[(2u * chunk + 1u) * dim + col] = sums.y;
}

// (sum of dy * xhat, sum of dy) over rows first..last-1 of column col, in row order.
fn column_sums(col: u32, first: u32, last: u32) -> vec2<f32> {
  let dim = params.dim;
  var sum_gx = 0.0;
  var sum_g = 0.0;
  // Neighbouring threads read neighbouring columns of one row: coalesced.
  for (var r = first; r < last; r++) {
    let g = part_dy[r * dim + col];
    sum_gx += g * (x[r * dim + col] - part_stats[2u * r]) * part_stats[2u * r + 1u];
    sum_g += g;
  }
  return vec2<f32>(sum_gx, sum_g);
}

// One chunk (rows <= chunk_rows): the column sums are the gradients; no partials, no reduce.
@compute @workgroup_size(COLS)
fn param_grads_gamma(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  if (col >= params.dim) { return; }
  let g = column_sums(col, 0u, params.rows).x;
  grads_gamma[col] = select(g, grads_gamma[col] + g, params.accumulate == 1u);
}

@compute @workgroup_size(COLS)
fn param_grads_gamma_beta(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  if (col >= params.dim) { return; }
  let sums = column_sums(col, 0u, params.rows);
  let acc = params.accumulate == 1u;
  grads_gamma[col] = select(sums.x, grads_gamma[col] + sums.x, acc);
  grads_beta[col] = select(sums.y, grads_beta[col] + sums.y, acc);
}

// Sum over chunks, in chunk order, of partials[chunk, part, col].
fn sum_chunks(part: u32, col: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < params.chunks; c++) { s += partials[(2u * c + part) * params.dim + col]; }
  return s;
}

@compute @workgroup_size(COLS)
fn reduce_gamma(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  if (col >= params.dim) { return; }
  let g = sum_chunks(0u, col);
  dgamma[col] = select(g, dgamma[col] + g, params.accumulate == 1u);
}

@compute @workgroup_size(COLS)
fn reduce_gamma_beta(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  if (col >= params.dim) { return; }
  let g = sum_chunks(0u, col);
  let b = sum_chunks(1u, col);
  let acc = params.accumulate == 1u;
  dgamma[col] = select(g, dgamma[col] + g, acc);
  dbeta[col] = select(b, dbeta[col] + b, acc);
}
