// Group-relative advantages for GRPO (TRL GRPOTrainer semantics, research/anchors-grpo-trainers.md 3.2).
//
// Input: rewards[N, K] (N = B groups x G generations, K criteria; NaN = missing) and weights[K].
// A plain reward vector is the K = 1, weight 1 case (1 * r == r exactly in f32).
//
// sum_then_normalize (default): r_i = sum_k w_k r_ik over the valid criteria of rollout i
// (missing when all K are missing). Per group g, over its valid members: mean mu_g and
// unbiased std s_g. A group is "zero-std" when it has >= 1 valid member and one valid member
// or max == min (exact and robust in f32, unlike isclose(std, 0)); "empty" with none.
//   grpo:  A_i = (r_i - mu_g) / (sigma + eps), sigma = s_g ("group") or the unbiased std of
//          every valid r in the batch ("batch"); A_i = r_i - mu_g for "none".
//   rank:  A_i = (2 * rank_i - (n - 1)) / (n - 1), 0-based ranks over the n valid members,
//          ties averaged; so A lies in [-1, 1]. scale_rewards and eps do not apply.
//   rloo:  A_i = r_i - (sum_{j != i} r_j) / (n - 1) over the n valid members (TRL RLOOTrainer's
//          leave-one-out baseline), computed as n / (n - 1) (r_i - mu_g) from the two-pass mean
//          (a common offset keeps its digits). scale_rewards and eps do not apply.
//   A_i = 0 when r_i is missing or its group is zero-std or empty.
// normalize_then_sum (GDPO): per (group, criterion) over valid entries, mu_gk and s_gk;
//   rt_ik = (r_ik - mu_gk) / (s_gk + eps), or 0 when missing or (g, k) is zero-std;
//   r_i = sum_k w_k rt_ik, scorable iff any criterion is valid; then
//   A_i = (r_i - mean) / (std + eps) with the mean and unbiased std over the scorable r_i of
//   the whole batch; A_i = 0 when unscorable, or fewer than 2 scorable, or all equal.
//   scale_rewards does not apply (GDPO always normalises per criterion, then per batch).
//   Its group is zero-std when it has a valid entry and every criterion is zero-std or empty.
//
// Design: N is small (hundreds to a few thousands of rollouts), so the whole computation is ONE
// workgroup of WG threads and one dispatch; threads stride over (group, criterion) pairs, then
// rollouts, then groups, then rollouts again, with storageBarrier() between the phases, and
// workgroup tree reductions for the batch statistics. Means and stds are two-pass (mean first,
// then squared deviations) so rewards with a large common offset lose no digits.
//
// Missing values are found with a bit test on u32 loads, never x != x, which fast-math
// compilers may fold to false; NaN outputs are written as u32 bit patterns for the same reason.
//
// Non-finite rewards: an input NaN is "missing" (above), but +-Inf is a value, and so is a
// combined reward that overflows or comes out NaN (Inf - Inf, 0 * Inf). Such a value poisons
// every statistic it enters, so nothing turns it into a quiet 0: a poisoned group (or GDPO
// (group, criterion) column) has NaN mean and std and NaN advantages for its scored members,
// and a poisoned batch makes every advantage that uses the batch statistics NaN ("batch"
// scaling, GDPO). Zero-std and empty groups still give 0; missing rewards still give 0. NaN
// advantages make the policy loss NaN, so the trainer skips the step instead of silently
// learning nothing from the group. In the combined-reward scratch a missing value is
// MISSING_BITS, a signalling-NaN pattern arithmetic never produces, so a computed NaN stays
// distinguishable from "missing".

const WG: u32 = 256u;
const NAN_BITS: u32 = 0x7fc00000u;
const MISSING_BITS: u32 = 0x7f800001u;

// Group and (group, criterion) states.
const FLAG_OK: u32 = 0u;
const FLAG_ZERO_STD: u32 = 1u;
const FLAG_EMPTY: u32 = 2u;
// Holds a non-finite valid value: statistics and advantages are NaN.
const FLAG_POISONED: u32 = 3u;

// Source selector for stats_of().
const SRC_REWARDS: u32 = 0u;
const SRC_COMBINED: u32 = 1u;

struct Params {
  n: u32, // rollouts, B * G
  g: u32, // num_generations
  b: u32, // groups
  k: u32, // criteria
  aggregation: u32, // 0 sum_then_normalize, 1 normalize_then_sum
  scale: u32, // 0 group, 1 batch, 2 none
  estimator: u32, // 0 grpo, 1 rank, 2 rloo
  eps: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
// f32 bits, row-major [N, K]; read as u32 so NaN (missing) is tested on bits before any float op.
@group(0) @binding(1) var<storage, read> rewards: array<u32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
// [N] f32: the output the policy-loss kernel consumes.
@group(0) @binding(3) var<storage, read_write> advantages: array<f32>;
// [2B] f32 bits: group means, then group unbiased stds of r; NaN bits when undefined.
@group(0) @binding(4) var<storage, read_write> group_stats: array<u32>;
// [4]: zero_std_groups, unscorable, unscorable_groups, scorable.
@group(0) @binding(5) var<storage, read_write> stats: array<u32>;
// Scratch, f32 bits: [N] combined r (MISSING_BITS = unscorable); GDPO adds [B*K] (mean, std + eps).
@group(0) @binding(6) var<storage, read_write> work: array<u32>;
// Scratch: [B] group flags; GDPO adds [B*K] (group, criterion) flags.
@group(0) @binding(7) var<storage, read_write> flags: array<u32>;

var<workgroup> red_sum: array<f32, WG>;
var<workgroup> red_lo: array<f32, WG>;
var<workgroup> red_hi: array<f32, WG>;
var<workgroup> red_n: array<u32, WG>;
var<workgroup> red_bad: array<u32, WG>;
// zero_std_groups, unscorable, unscorable_groups (workgroup memory starts zeroed).
var<workgroup> counters: array<atomic<u32>, 3>;

fn is_nan_bits(u: u32) -> bool {
  return (u & 0x7fffffffu) > 0x7f800000u;
}

fn is_nonfinite_bits(u: u32) -> bool {
  return (u & 0x7fffffffu) >= 0x7f800000u;
}

// A quiet NaN. WGSL rejects NaN constants, so the bits come from a run-time value.
fn quiet_nan(runtime_bits: u32) -> f32 {
  return bitcast<f32>(runtime_bits | NAN_BITS);
}

// Input rewards: any NaN is missing. Combined rewards: only MISSING_BITS is.
fn is_valid(src: u32, bits: u32) -> bool {
  if (src == SRC_REWARDS) {
    return !is_nan_bits(bits);
  }
  return bits != MISSING_BITS;
}

fn load(src: u32, index: u32) -> u32 {
  if (src == SRC_REWARDS) {
    return rewards[index];
  }
  return work[index];
}

struct Stats {
  n: u32,
  mean: f32,
  sd: f32, // unbiased; 0 when n < 2 (callers check n)
  lo: f32,
  hi: f32,
  // Some valid value is +-Inf or a computed NaN: mean, sd, lo and hi mean nothing.
  poisoned: bool,
}

// Two-pass statistics of the valid values src[first + j * stride], j < count. One thread walks
// a whole group sequentially, so the first pass sums x - x0 (x0 = the first valid value):
// rewards with a large common offset (1000 + noise) keep their digits in the mean.
fn stats_of(src: u32, first: u32, stride: u32, count: u32) -> Stats {
  var n = 0u;
  var bad = 0u;
  var shifted_sum = 0.0;
  var x0 = 0.0;
  var lo = 0.0;
  var hi = 0.0;
  for (var j = 0u; j < count; j++) {
    let bits = load(src, first + j * stride);
    if (!is_valid(src, bits)) { continue; }
    if (is_nonfinite_bits(bits)) { bad++; }
    let x = bitcast<f32>(bits);
    if (n == 0u) {
      x0 = x;
      lo = x;
      hi = x;
    } else {
      lo = min(lo, x);
      hi = max(hi, x);
      shifted_sum += x - x0;
    }
    n++;
  }
  var s = Stats(n, 0.0, 0.0, lo, hi, bad > 0u);
  if (n == 0u || s.poisoned) { return s; }
  s.mean = x0 + shifted_sum / f32(n);
  if (n < 2u) { return s; }
  var ss = 0.0;
  for (var j = 0u; j < count; j++) {
    let bits = load(src, first + j * stride);
    if (!is_valid(src, bits)) { continue; }
    let d = bitcast<f32>(bits) - s.mean;
    ss += d * d;
  }
  s.sd = sqrt(ss / f32(n - 1u));
  return s;
}

fn zero_std(s: Stats) -> bool {
  return s.n >= 1u && !s.poisoned && (s.n == 1u || s.hi == s.lo);
}

fn group_flag(s: Stats) -> u32 {
  if (s.n == 0u) { return FLAG_EMPTY; }
  if (s.poisoned) { return FLAG_POISONED; }
  if (zero_std(s)) { return FLAG_ZERO_STD; }
  return FLAG_OK;
}

// Tree reductions over the workgroup; every thread gets the result. Called from uniform
// control flow only. The leading barrier keeps a reduction from overwriting red_* while a
// thread is still reading the previous result.
fn reduce_batch(tid: u32, n: u32, bad: u32, sum: f32, lo: f32, hi: f32) -> Stats {
  workgroupBarrier();
  red_n[tid] = n;
  red_bad[tid] = bad;
  red_sum[tid] = sum;
  red_lo[tid] = lo;
  red_hi[tid] = hi;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) {
      let other = tid + stride;
      let na = red_n[tid];
      let nb = red_n[other];
      // Empty partials carry no min/max: take the other side's.
      if (na == 0u) {
        red_lo[tid] = red_lo[other];
        red_hi[tid] = red_hi[other];
      } else if (nb != 0u) {
        red_lo[tid] = min(red_lo[tid], red_lo[other]);
        red_hi[tid] = max(red_hi[tid], red_hi[other]);
      }
      red_n[tid] = na + nb;
      red_bad[tid] += red_bad[other];
      red_sum[tid] += red_sum[other];
    }
    workgroupBarrier();
  }
  let total = red_n[0];
  var s = Stats(total, 0.0, 0.0, red_lo[0], red_hi[0], red_bad[0] > 0u);
  if (total > 0u) { s.mean = red_sum[0] / f32(total); }
  return s;
}

fn reduce_sum(tid: u32, v: f32) -> f32 {
  workgroupBarrier();
  red_sum[tid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) { red_sum[tid] += red_sum[tid + stride]; }
    workgroupBarrier();
  }
  return red_sum[0];
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32) {
  let n = params.n;
  let gen = params.g;
  let groups = params.b;
  let kk = params.k;
  let gdpo = params.aggregation == 1u;
  let pairs = groups * kk;

  // Phase 1 (GDPO): statistics of every (group, criterion) column.
  if (gdpo) {
    for (var p = tid; p < pairs; p += WG) {
      let g = p / kk;
      let c = p % kk;
      let s = stats_of(SRC_REWARDS, g * gen * kk + c, kk, gen);
      flags[groups + p] = group_flag(s);
      work[n + 2u * p] = bitcast<u32>(s.mean);
      work[n + 2u * p + 1u] = bitcast<u32>(s.sd + params.eps);
    }
  }
  storageBarrier();

  // Phase 2: one combined reward per rollout.
  for (var i = tid; i < n; i += WG) {
    let g = i / gen;
    var acc = 0.0;
    var any_valid = false;
    for (var c = 0u; c < kk; c++) {
      let bits = rewards[i * kk + c];
      if (is_nan_bits(bits)) { continue; }
      any_valid = true;
      let x = bitcast<f32>(bits);
      if (!gdpo) {
        acc += weights[c] * x;
      } else {
        let p = g * kk + c;
        let denom = bitcast<f32>(work[n + 2u * p + 1u]);
        let flag = flags[groups + p];
        // denom > 0 only fails for eps = 0 with an underflowed std: treat as zero-std.
        if (flag == FLAG_OK && denom > 0.0) {
          acc += weights[c] * ((x - bitcast<f32>(work[n + 2u * p])) / denom);
        } else if (flag == FLAG_POISONED) {
          acc += quiet_nan(bits);
        }
      }
    }
    if (any_valid) {
      work[i] = bitcast<u32>(acc);
    } else {
      work[i] = MISSING_BITS;
      atomicAdd(&counters[1], 1u);
    }
  }
  storageBarrier();

  // Phase 3: group statistics of the combined reward, group flags and counts.
  for (var g = tid; g < groups; g += WG) {
    let s = stats_of(SRC_COMBINED, g * gen, 1u, gen);
    var flag = group_flag(s);
    if (gdpo && flag != FLAG_EMPTY) {
      // GDPO: zero-std when every criterion column is zero-std or empty (none OK or poisoned).
      flag = FLAG_ZERO_STD;
      for (var c = 0u; c < kk; c++) {
        let column = flags[groups + g * kk + c];
        if (column == FLAG_OK || column == FLAG_POISONED) { flag = FLAG_OK; }
      }
    }
    if (flag == FLAG_EMPTY) { atomicAdd(&counters[2], 1u); }
    if (flag == FLAG_ZERO_STD) { atomicAdd(&counters[0], 1u); }
    flags[g] = flag;
    var mean_bits = NAN_BITS;
    var std_bits = NAN_BITS;
    if (s.n >= 1u && !s.poisoned) { mean_bits = bitcast<u32>(s.mean); }
    if (s.n >= 2u && !s.poisoned) { std_bits = bitcast<u32>(s.sd); }
    group_stats[g] = mean_bits;
    group_stats[groups + g] = std_bits;
  }

  // Phase 4: batch statistics over every valid (scorable) combined reward.
  var local_n = 0u;
  var local_bad = 0u;
  var local_sum = 0.0;
  var local_lo = 0.0;
  var local_hi = 0.0;
  for (var i = tid; i < n; i += WG) {
    let bits = work[i];
    if (bits == MISSING_BITS) { continue; }
    if (is_nonfinite_bits(bits)) { local_bad++; }
    let x = bitcast<f32>(bits);
    if (local_n == 0u) {
      local_lo = x;
      local_hi = x;
    } else {
      local_lo = min(local_lo, x);
      local_hi = max(local_hi, x);
    }
    local_sum += x;
    local_n++;
  }
  let batch = reduce_batch(tid, local_n, local_bad, local_sum, local_lo, local_hi);
  var local_ss = 0.0;
  for (var i = tid; i < n; i += WG) {
    let bits = work[i];
    if (bits == MISSING_BITS) { continue; }
    let d = bitcast<f32>(bits) - batch.mean;
    local_ss += d * d;
  }
  let batch_ss = reduce_sum(tid, local_ss);
  var batch_std = 0.0;
  if (batch.n >= 2u) { batch_std = sqrt(batch_ss / f32(batch.n - 1u)); }
  storageBarrier(); // group flags and stats of phase 3

  // Phase 5: advantages.
  for (var i = tid; i < n; i += WG) {
    let bits = work[i];
    let g = i / gen;
    var a = 0.0;
    if (bits == MISSING_BITS) {
      advantages[i] = 0.0;
      continue;
    }
    let r = bitcast<f32>(bits);
    // A NaN advantage: a poisoned batch (when its statistics are used) or group.
    let poisoned = quiet_nan(bits);
    if (gdpo) {
      let denom = batch_std + params.eps;
      if (batch.poisoned) {
        a = poisoned;
      } else if (batch.n >= 2u && batch.hi != batch.lo && denom > 0.0) {
        a = (r - batch.mean) / denom;
      }
    } else if (flags[g] == FLAG_POISONED || (flags[g] == FLAG_OK && params.scale == 1u && params.estimator == 0u && batch.poisoned)) {
      a = poisoned;
    } else if (flags[g] == FLAG_OK) {
      if (params.estimator == 1u) {
        // Ties averaged: rank = less + (equal - 1) / 2, so 2 rank - (m - 1) = 2 less + equal - m.
        var less = 0i;
        var equal = 0i;
        var m = 0i;
        for (var j = g * gen; j < (g + 1u) * gen; j++) {
          let other = work[j];
          if (other == MISSING_BITS) { continue; }
          let y = bitcast<f32>(other);
          m++;
          if (y < r) { less++; }
          if (y == r) { equal++; }
        }
        a = f32(2i * less + equal - m) / f32(m - 1i);
      } else if (params.estimator == 2u) {
        // n >= 2 here (a one-member group is zero-std). Valid members counted as in phase 3.
        var m = 0u;
        for (var j = g * gen; j < (g + 1u) * gen; j++) {
          if (work[j] != MISSING_BITS) { m++; }
        }
        a = (r - bitcast<f32>(group_stats[g])) * (f32(m) / f32(m - 1u));
      } else {
        let centered = r - bitcast<f32>(group_stats[g]);
        if (params.scale == 2u) {
          a = centered;
        } else {
          var sigma = bitcast<f32>(group_stats[groups + g]);
          if (params.scale == 1u) { sigma = batch_std; }
          let denom = sigma + params.eps;
          if (denom > 0.0) { a = centered / denom; }
        }
      }
    }
    advantages[i] = a;
  }

  workgroupBarrier();
  if (tid == 0u) {
    stats[0] = atomicLoad(&counters[0]);
    stats[1] = atomicLoad(&counters[1]);
    stats[2] = atomicLoad(&counters[2]);
    stats[3] = batch.n;
  }
}
