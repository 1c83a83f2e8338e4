// Sampling one next token per sequence from logits, as Hugging Face generate does:
// repetition penalty, temperature, then top-k, then top-p (on the top-k renormalised
// distribution), then min-p, then a draw.
// One workgroup per row; every pass is a strided walk over the vocabulary + workgroup reduction.
//
// - temperature == 0 means greedy: argmax, lowest index on ties.
// - top-k / top-p thresholds are found by bisection on the logit value (32 steps each), so no
//   sort of 151,936 entries is needed: kept = { z >= theta }. Ties at the threshold are all kept.
// - The uniform draw comes from a counter-based hash of (seed, row, step): the same seed gives
//   the same tokens on the same device, and no random numbers travel from the host.
// - The returned log-prob is log softmax(logits / temperature)[token] over the FULL vocabulary,
//   i.e. what the training log-prob kernel computes, so it can serve as old_logprobs.
// -inf logits (masked entries) are never sampled.
// - No token: a row whose logits hold a NaN or +inf, or whose scaled logits z = logit / T
//   overflow (any non-finite z that is not a masked -inf), gets token NO_TOKEN (0xffffffff,
//   outside every vocabulary) and log-prob NaN, greedy or not; so does a row with every entry
//   masked. max/min and the threshold comparisons would silently skip a NaN and return a
//   plausible token; torch.multinomial raises on such rows, and a kernel cannot raise, so it
//   flags. (Embedding lookups read NO_TOKEN as a NaN row, so the flag is never laundered.)
//   Log-probs are written as u32 bits so the NaN survives fast-math compilers.
// - Repetition penalty (HF RepetitionPenaltyLogitsProcessor): an id already in the row's
//   prompt + completion (a bit set in `seen`, [rows, seen_words] u32) has its logit divided by
//   the penalty if > 0, else multiplied by it, before everything else (greedy included). The
//   drawn token's bit is set at the end, so the next step sees it without a host round trip.
//   seen_words == 0 disables it (a 1-word dummy is bound). The returned log-prob stays that of
//   the UNPENALISED logits / T: the policy's own log-prob, what TRL recomputes for the ratio.
// - min-p (HF MinPLogitsWarper, after top-p): keep p >= min_p * p_max, i.e. z >= zmax + log(min_p)
//   on the penalised scaled logits; 0 disables.

// Threads per row (src/ops/rowThreads.ts picks it by vocabulary: 64 for small ones, where most of
// 256 threads would hold one entry and wait at every barrier; 256 for large ones).
override WG: u32 = 256u;
const LOWEST: f32 = -3.4028234663852886e38;
const NEG_INF_BITS: u32 = 0xff800000u;
const NAN_BITS: u32 = 0x7fc00000u;
const NO_TOKEN: u32 = 0xffffffffu;
const BISECTION_STEPS: u32 = 32u;

struct Params {
  rows: u32,
  vocab: u32,
  inv_temperature: f32,   // 0 selects greedy decoding
  top_k: u32,             // 0 disables
  top_p: f32,             // 1 disables
  seed: u32,
  step: u32,
  row_offset: u32,        // global index of row 0, so chunked batches draw the same numbers
  penalty: f32,           // repetition penalty (> 0); used only when seen_words > 0
  min_p: f32,             // 0 disables
  seen_words: u32,        // u32 words per row of `seen`; 0 disables the repetition penalty
  _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> tokens: array<u32>;
// f32 bits.
@group(0) @binding(3) var<storage, read_write> token_logprobs: array<u32>;
// Bitset of ids already in each row's sequence; the drawn id is added.
@group(0) @binding(4) var<storage, read_write> seen: array<u32>;

var<workgroup> red_f: array<f32, WG>;
var<workgroup> red_g: array<f32, WG>;
var<workgroup> red_u: array<u32, WG>;

fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == NEG_INF_BITS; }

fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }

// The flagged result: no token, NaN log-prob.
fn write_no_token(row: u32) {
  tokens[row] = NO_TOKEN;
  token_logprobs[row] = NAN_BITS;
}

fn pcg(v: u32) -> u32 {
  let state = v * 747796405u + 2891336453u;
  let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

/** Uniform in [0, 1) with 24 random bits. */
fn uniform01(seed: u32, row: u32, step: u32) -> f32 {
  let h = pcg(seed ^ pcg(row ^ pcg(step)));
  return f32(h >> 8u) / 16777216.0;
}

fn z_at(base: u32, i: u32) -> f32 {
  return logits[base + i] * params.inv_temperature;
}

/** The logit after the repetition penalty (row-local index `row`). */
fn pen_at(row: u32, base: u32, i: u32) -> f32 {
  let raw = logits[base + i];
  if (params.seen_words == 0u) { return raw; }
  let bits = seen[row * params.seen_words + (i >> 5u)];
  if (((bits >> (i & 31u)) & 1u) == 0u) { return raw; }
  return select(raw * params.penalty, raw / params.penalty, raw > 0.0);
}

/** Adds a drawn id to its row's seen set (one workgroup per row: no other writer). */
fn mark_seen(row: u32, token: u32) {
  if (params.seen_words == 0u || token == NO_TOKEN) { return; }
  let w = row * params.seen_words + (token >> 5u);
  seen[w] = seen[w] | (1u << (token & 31u));
}

fn reduce_max(tid: u32, v: f32) -> f32 {
  red_f[tid] = v;
  workgroupBarrier();
  // Thread 0 combines the WG values in order: one barrier where a tree takes log2(WG), and on a
  // software adapter every barrier is a switch of all the workgroup's threads.
  if (tid == 0u) {
    var r = red_f[0];
    for (var k = 1u; k < WG; k++) { r = max(r, red_f[k]); }
    red_f[0] = r;
  }
  // workgroupUniformLoad makes the result uniform, so later branches may hold barriers.
  let r = workgroupUniformLoad(&red_f[0]);
  workgroupBarrier();
  return r;
}

fn reduce_min(tid: u32, v: f32) -> f32 {
  red_f[tid] = v;
  workgroupBarrier();
  // Thread 0 combines the WG values in order: one barrier where a tree takes log2(WG), and on a
  // software adapter every barrier is a switch of all the workgroup's threads.
  if (tid == 0u) {
    var r = red_f[0];
    for (var k = 1u; k < WG; k++) { r = min(r, red_f[k]); }
    red_f[0] = r;
  }
  // workgroupUniformLoad makes the result uniform, so later branches may hold barriers.
  let r = workgroupUniformLoad(&red_f[0]);
  workgroupBarrier();
  return r;
}

fn reduce_sum(tid: u32, v: f32) -> f32 {
  red_f[tid] = v;
  workgroupBarrier();
  // Thread 0 combines the WG values in order: one barrier where a tree takes log2(WG), and on a
  // software adapter every barrier is a switch of all the workgroup's threads.
  if (tid == 0u) {
    var r = red_f[0];
    for (var k = 1u; k < WG; k++) { r = r + red_f[k]; }
    red_f[0] = r;
  }
  // workgroupUniformLoad makes the result uniform, so later branches may hold barriers.
  let r = workgroupUniformLoad(&red_f[0]);
  workgroupBarrier();
  return r;
}

fn reduce_max_u(tid: u32, v: u32) -> u32 {
  red_u[tid] = v;
  workgroupBarrier();
  // Thread 0 combines the WG values in order: one barrier where a tree takes log2(WG), and on a
  // software adapter every barrier is a switch of all the workgroup's threads.
  if (tid == 0u) {
    var r = red_u[0];
    for (var k = 1u; k < WG; k++) { r = max(r, red_u[k]); }
    red_u[0] = r;
  }
  // workgroupUniformLoad makes the result uniform, so later branches may hold barriers.
  let r = workgroupUniformLoad(&red_u[0]);
  workgroupBarrier();
  return r;
}

fn reduce_count(tid: u32, v: u32) -> u32 {
  red_u[tid] = v;
  workgroupBarrier();
  // Thread 0 combines the WG values in order: one barrier where a tree takes log2(WG), and on a
  // software adapter every barrier is a switch of all the workgroup's threads.
  if (tid == 0u) {
    var r = red_u[0];
    for (var k = 1u; k < WG; k++) { r = r + red_u[k]; }
    red_u[0] = r;
  }
  // workgroupUniformLoad makes the result uniform, so later branches may hold barriers.
  let r = workgroupUniformLoad(&red_u[0]);
  workgroupBarrier();
  return r;
}

/** Σ exp(z - zmax) over entries with z >= theta (penalised z). */
fn kept_mass(tid: u32, row: u32, base: u32, theta: f32, zmax: f32) -> f32 {
  var s = 0.0;
  for (var i = tid; i < params.vocab; i += WG) {
    let raw = pen_at(row, base, i);
    if (is_neg_inf(raw)) { continue; }
    let z = raw * params.inv_temperature;
    if (z >= theta) { s += exp(z - zmax); }
  }
  return reduce_sum(tid, s);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= params.rows) { return; } // uniform per workgroup: safe before barriers
  let vocab = params.vocab;
  let base = row * vocab;

  if (params.inv_temperature == 0.0) {
    // Greedy: argmax of the (penalised) logits, lowest index on ties.
    var best = LOWEST;
    var best_i = NO_TOKEN;
    var bad = 0u;
    for (var i = tid; i < vocab; i += WG) {
      let raw = pen_at(row, base, i);
      if (is_neg_inf(raw)) { continue; }
      if (!is_finite(raw)) { bad += 1u; }
      if (raw > best || best_i == NO_TOKEN) { best = raw; best_i = i; }
    }
    let row_bad = reduce_count(tid, bad);
    red_f[tid] = best;
    red_u[tid] = best_i;
    workgroupBarrier();
    if (tid == 0u) {
      // The best over the threads in order (one barrier; see reduce_max), lowest index on ties.
      for (var o = 1u; o < WG; o++) {
        let take = red_u[o] != NO_TOKEN &&
          (red_u[0] == NO_TOKEN || red_f[o] > red_f[0] || (red_f[o] == red_f[0] && red_u[o] < red_u[0]));
        if (take) { red_f[0] = red_f[o]; red_u[0] = red_u[o]; }
      }
      if (row_bad > 0u || red_u[0] == NO_TOKEN) {
        write_no_token(row);
      } else {
        tokens[row] = red_u[0];
        token_logprobs[row] = 0u; // a point mass: log 1 = 0.0
        mark_seen(row, red_u[0]);
      }
    }
    return;
  }

  // Range of finite scaled (penalised) logits; rmax: the unpenalised max, for the log-prob.
  var lmax = LOWEST;
  var lmin = 3.4028234663852886e38;
  var rmax_t = LOWEST;
  var finite = 0u;
  var bad = 0u;
  for (var i = tid; i < vocab; i += WG) {
    let raw = logits[base + i];
    if (is_neg_inf(raw)) { continue; }
    let r = raw * params.inv_temperature;
    let z = pen_at(row, base, i) * params.inv_temperature;
    if (!is_finite(z) || !is_finite(r)) { bad += 1u; }
    lmax = max(lmax, z);
    lmin = min(lmin, z);
    rmax_t = max(rmax_t, r);
    finite += 1u;
  }
  let zmax = reduce_max(tid, lmax);
  let rmax = reduce_max(tid, rmax_t);
  let zmin = reduce_min(tid, lmin);
  let count_finite = reduce_count(tid, finite);
  // Uniform (workgroupUniformLoad results): the whole workgroup leaves together.
  if (reduce_count(tid, bad) > 0u || count_finite == 0u) {
    if (tid == 0u) { write_no_token(row); }
    return;
  }

  // Top-k: the largest theta with count(z >= theta) >= k.
  var theta = zmin;
  if (params.top_k > 0u && params.top_k < count_finite) {
    var lo = zmin;
    var hi = zmax;
    for (var it = 0u; it < BISECTION_STEPS; it++) {
      let mid = lo + (hi - lo) * 0.5;
      var c = 0u;
      for (var i = tid; i < vocab; i += WG) {
        let raw = pen_at(row, base, i);
        if (!is_neg_inf(raw) && raw * params.inv_temperature >= mid) { c += 1u; }
      }
      if (reduce_count(tid, c) >= params.top_k) { lo = mid; } else { hi = mid; }
    }
    // If hi itself still keeps k entries (e.g. ties at the max), it is the tighter threshold.
    theta = lo;
  }

  // Top-p on the top-k distribution: the largest theta' >= theta keeping mass >= top_p.
  if (params.top_p < 1.0) {
    let total_k = kept_mass(tid, row, base, theta, zmax);
    var lo = theta;
    var hi = zmax;
    for (var it = 0u; it < BISECTION_STEPS; it++) {
      let mid = lo + (hi - lo) * 0.5;
      if (kept_mass(tid, row, base, mid, zmax) >= params.top_p * total_k) { lo = mid; } else { hi = mid; }
    }
    if (kept_mass(tid, row, base, hi, zmax) >= params.top_p * total_k) { lo = hi; }
    theta = lo;
  }

  // min-p on what top-k / top-p kept: p / p_max = exp(z - zmax) >= min_p. The max is always kept.
  if (params.min_p > 0.0) {
    theta = max(theta, min(zmax, zmax + log(params.min_p)));
  }

  // Draw: contiguous chunk per thread, chunk masses, scan, the owning thread walks its chunk.
  let chunk = (vocab + WG - 1u) / WG;
  let begin = min(tid * chunk, vocab);
  let end = min(begin + chunk, vocab);
  var mass = 0.0;
  var last_kept = 0xffffffffu;
  for (var i = begin; i < end; i++) {
    let raw = pen_at(row, base, i);
    if (is_neg_inf(raw)) { continue; }
    let z = raw * params.inv_temperature;
    if (z >= theta) { mass += exp(z - zmax); last_kept = i; }
  }
  red_g[tid] = mass;
  workgroupBarrier();
  if (tid == 0u) {
    // Exclusive prefix sum over the WG chunk masses, in a fixed order (deterministic).
    var acc = 0.0;
    for (var t = 0u; t < WG; t++) {
      let m = red_g[t];
      red_g[t] = acc;
      acc += m;
    }
    red_f[0] = acc;
  }
  workgroupBarrier();
  let total = red_f[0];
  let draw = uniform01(params.seed, params.row_offset + row, params.step) * total;
  let start = red_g[tid];
  // The last non-empty chunk also owns any draw pushed past the total by rounding.
  let last_chunk_owner = reduce_max_u(tid, select(0u, tid + 1u, mass > 0.0)) - 1u;
  red_u[0] = NO_TOKEN;
  workgroupBarrier();
  let owns = mass > 0.0 && ((draw >= start && draw < start + mass) || (tid == last_chunk_owner && draw >= start + mass));
  if (owns) {
    var acc = start;
    var chosen = last_kept;
    for (var i = begin; i < end; i++) {
      let raw = pen_at(row, base, i);
      if (is_neg_inf(raw)) { continue; }
      let z = raw * params.inv_temperature;
      if (z < theta) { continue; }
      acc += exp(z - zmax);
      if (draw < acc) { chosen = i; break; }
    }
    red_u[0] = chosen;
  }
  workgroupBarrier();
  let token = red_u[0];

  // Log-prob of the token under the full temperature-scaled distribution, unpenalised.
  var full = 0.0;
  for (var i = tid; i < vocab; i += WG) {
    let raw = logits[base + i];
    if (!is_neg_inf(raw)) { full += exp(raw * params.inv_temperature - rmax); }
  }
  let log_z = log(reduce_sum(tid, full));
  if (tid == 0u) {
    if (token == NO_TOKEN) {
      write_no_token(row); // no chunk owned the draw (not expected; never read past the row)
    } else {
      tokens[row] = token;
      token_logprobs[row] = bitcast<u32>((z_at(base, token) - rmax) - log_z);
      mark_seen(row, token);
    }
  }
}
