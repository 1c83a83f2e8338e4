// Per-token divergence between teacher and student next-token distributions over the whole
// vocabulary (or the teacher's top K), and its gradient with respect to the student logits.
// Semantics of TRL's `generalized_jsd_loss`, per token: p = softmax(student / T), q =
// softmax(teacher / T) on the support S;
//   mode 0 (beta = 0): KL(q || p)           forward KL
//   mode 1 (beta = 1): KL(p || q)           reverse KL
//   mode 2 (else):     beta KL(q || m) + (1 - beta) KL(p || m),  log m = logaddexp(log p + log(1-beta), log q + log beta)
// S is the whole vocabulary, or (top_k > 0) the teacher's top_k largest logits, ties to the lower
// id, over entries that are neither -inf in the teacher nor excluded (special tokens); both
// distributions are renormalised on S. 0 log 0 = 0; mass where the other side is -inf gives +inf
// (KL(q||p) with q > 0 where the student is -inf), counted, never computed as inf - inf.
//
// Forward: one workgroup per row (token). With top_k, a radix select finds the K-th key (4 passes
// of 8 bits over an order-preserving u32 key of the raw teacher logit) and then the last id taken
// among the tied keys (3 passes over id bits, so vocab < 2^24); each pass is a strided walk of the
// row with a 256-bin workgroup histogram, so no thread walks a whole row. Then pass A: online
// (max, sum exp) of the student and teacher on S, merged in a workgroup tree; pass B: the
// divergence sums, a second tree. A row with a NaN or +inf logit (either side) or an overflow of
// logit / temperature, or with no unmasked student or teacher entry on S, is NaN (loss and
// gradient), as in shaders/logprobs.wgsl; checked with bit tests, since SwiftShader's exp/log of
// NaN are finite.
//
// Backward: one thread per (row, vocab entry). With c = grad_loss * token_weight, a = log p,
// b = log q, D the row's divergence:
//   forward: c (p - q) / T;  reverse: c p ((a - b) - D) / T;
//   jsd:     c (1 - beta) p ((a - log m) - KL(p || m)) / T;
// 0 off S and on -inf student logits; 0 for the whole row when c == 0 (a masked token); NaN on a
// poisoned row or a row whose divergence is +inf (the derivative of an infinite loss is undefined).

const WG: u32 = 256u;
const LOWEST: f32 = -3.4028234663852886e38;
const NEG_INF_BITS: u32 = 0xff800000u;
const POS_INF_BITS: u32 = 0x7f800000u;
const NAN_BITS: u32 = 0x7fc00000u;
const FLAG_BAD: u32 = 1u;
const FLAG_INFINITE: u32 = 2u;

struct Params {
  rows: u32,
  vocab: u32,
  inv_temperature: f32,
  // 0 forward KL, 1 reverse KL, 2 generalized JSD.
  mode: u32,
  beta: f32,
  log_beta: f32,
  log_one_minus_beta: f32,
  // 0: the whole vocabulary.
  top_k: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> student: array<f32>;
@group(0) @binding(2) var<storage, read> teacher: array<f32>;
// Per vocabulary entry: 1 = never in the top-K support (special tokens).
@group(0) @binding(3) var<storage, read> excluded: array<u32>;
// Per row: the loss weight; 0 for a masked token.
@group(0) @binding(4) var<storage, read> token_weight: array<f32>;
@group(0) @binding(5) var<storage, read_write> loss: array<f32>;
// Per row: student max and log sum exp, teacher max and log sum exp (of z = logit / T on S),
// the divergence D and KL(p || m) (jsd only).
@group(0) @binding(6) var<storage, read_write> row_stats: array<f32>;
// Per row: K-th key, last id taken at that key, 1 if all eligible entries are taken, flags.
@group(0) @binding(7) var<storage, read_write> row_select: array<u32>;

fn is_neg_inf(x: f32) -> bool {
  return bitcast<u32>(x) == NEG_INF_BITS;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// Order-preserving key: a < b as floats iff key(a) < key(b) as u32.
fn order_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn eligible(raw_teacher: f32, i: u32) -> bool {
  return !is_neg_inf(raw_teacher) && !is_nan(raw_teacher) && excluded[i] == 0u;
}

fn in_support(raw_teacher: f32, i: u32, tau: u32, id_tau: u32, all: u32) -> bool {
  if (params.top_k == 0u) { return true; }
  if (!eligible(raw_teacher, i)) { return false; }
  if (all != 0u) { return true; }
  let k = order_key(raw_teacher);
  return k > tau || (k == tau && i <= id_tau);
}

// log m for the generalized JSD; at least one side is unmasked.
fn log_mixture(a: f32, b: f32, s_masked: bool, t_masked: bool) -> f32 {
  if (s_masked) { return b + params.log_beta; }
  if (t_masked) { return a + params.log_one_minus_beta; }
  let x = a + params.log_one_minus_beta;
  let y = b + params.log_beta;
  let hi = max(x, y);
  return hi + log(1.0 + exp(min(x, y) - hi));
}

var<workgroup> hist: array<atomic<u32>, WG>;
var<workgroup> sel_key: u32;
var<workgroup> sel_id: u32;
var<workgroup> sel_need: u32;
var<workgroup> sel_all: u32;
var<workgroup> wg_ms: array<f32, WG>;
var<workgroup> wg_ss: array<f32, WG>;
var<workgroup> wg_mt: array<f32, WG>;
var<workgroup> wg_st: array<f32, WG>;
var<workgroup> wg_bad: array<u32, WG>;
var<workgroup> wg_acc1: array<f32, WG>;
var<workgroup> wg_acc2: array<f32, WG>;
var<workgroup> wg_inf: array<u32, WG>;

struct Pair { m: f32, s: f32 }

fn merge(a: Pair, b: Pair) -> Pair {
  let m = max(a.m, b.m);
  return Pair(m, a.s * exp(a.m - m) + b.s * exp(b.m - m));
}

fn push(t: Pair, z: f32) -> Pair {
  if (z <= t.m) { return Pair(t.m, t.s + exp(z - t.m)); }
  return Pair(z, t.s * exp(t.m - z) + 1.0);
}

// The top-K threshold of one row: the K-th largest key, then among entries with that key the
// id of the last one taken (ties go to the lower id). Call from uniform control flow.
fn select_top_k(in_range: bool, base: u32, tid: u32) {
  if (tid == 0u) {
    sel_key = 0u;
    sel_id = 0u;
    sel_need = params.top_k;
    sel_all = 0u;
  }
  for (var round = 0u; round < 4u; round++) {
    let shift = 24u - 8u * round;
    atomicStore(&hist[tid], 0u);
    workgroupBarrier();
    let prefix = sel_key;
    let high = select(0xffffffffu << (shift + 8u), 0u, round == 0u);
    if (in_range) {
      for (var i = tid; i < params.vocab; i += WG) {
        let raw = teacher[base + i];
        if (!eligible(raw, i)) { continue; }
        let k = order_key(raw);
        if ((k & high) != (prefix & high)) { continue; }
        atomicAdd(&hist[(k >> shift) & 0xffu], 1u);
      }
    }
    workgroupBarrier();
    if (tid == 0u) {
      let need = sel_need;
      if (round == 0u) {
        var total = 0u;
        for (var d = 0u; d < WG; d++) { total += atomicLoad(&hist[d]); }
        if (total <= need) { sel_all = 1u; }
      }
      var d = 255u;
      var acc = 0u;
      loop {
        let c = atomicLoad(&hist[d]);
        if (acc + c >= need || d == 0u) { break; }
        acc += c;
        d -= 1u;
      }
      sel_key = prefix | (d << shift);
      sel_need = need - acc;
    }
    workgroupBarrier();
  }
  for (var round = 0u; round < 3u; round++) {
    let shift = 16u - 8u * round;
    atomicStore(&hist[tid], 0u);
    workgroupBarrier();
    let tau = sel_key;
    let prefix = sel_id;
    let high = 0xffffffffu << (shift + 8u);
    if (in_range) {
      for (var i = tid; i < params.vocab; i += WG) {
        if ((i & high) != (prefix & high)) { continue; }
        let raw = teacher[base + i];
        if (!eligible(raw, i) || order_key(raw) != tau) { continue; }
        atomicAdd(&hist[(i >> shift) & 0xffu], 1u);
      }
    }
    workgroupBarrier();
    if (tid == 0u) {
      let need = sel_need;
      var d = 0u;
      var acc = 0u;
      loop {
        let c = atomicLoad(&hist[d]);
        if (acc + c >= need || d == 255u) { break; }
        acc += c;
        d += 1u;
      }
      sel_id = prefix | (d << shift);
      sel_need = need - acc;
    }
    workgroupBarrier();
  }
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  // Uniform control flow: every thread of a workgroup agrees on `in_range`.
  let in_range = row < params.rows;
  let vocab = params.vocab;
  let base = row * vocab;
  let inv_t = params.inv_temperature;

  var tau = 0u;
  var id_tau = 0u;
  var all = 0u;
  if (params.top_k > 0u) {
    select_top_k(in_range, base, tid);
    tau = sel_key;
    id_tau = sel_id;
    all = sel_all;
  }

  // Pass A: normalisers of both distributions on S, and the row's non-finite count.
  var ps = Pair(LOWEST, 0.0);
  var pt = Pair(LOWEST, 0.0);
  var bad = 0u;
  if (in_range) {
    for (var i = tid; i < vocab; i += WG) {
      let rs = student[base + i];
      let rt = teacher[base + i];
      let zs = rs * inv_t;
      let zt = rt * inv_t;
      let s_ok = !is_neg_inf(rs) && is_finite(zs);
      let t_ok = !is_neg_inf(rt) && is_finite(zt);
      if (!is_neg_inf(rs) && !s_ok) { bad += 1u; }
      if (!is_neg_inf(rt) && !t_ok) { bad += 1u; }
      if (!in_support(rt, i, tau, id_tau, all)) { continue; }
      if (s_ok) { ps = push(ps, zs); }
      if (t_ok) { pt = push(pt, zt); }
    }
  }
  wg_ms[tid] = ps.m;
  wg_ss[tid] = ps.s;
  wg_mt[tid] = pt.m;
  wg_st[tid] = pt.s;
  wg_bad[tid] = bad;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) {
      let s = merge(Pair(wg_ms[tid], wg_ss[tid]), Pair(wg_ms[tid + stride], wg_ss[tid + stride]));
      let t = merge(Pair(wg_mt[tid], wg_st[tid]), Pair(wg_mt[tid + stride], wg_st[tid + stride]));
      wg_ms[tid] = s.m;
      wg_ss[tid] = s.s;
      wg_mt[tid] = t.m;
      wg_st[tid] = t.s;
      wg_bad[tid] += wg_bad[tid + stride];
    }
    workgroupBarrier();
  }
  let ms = wg_ms[0];
  let ss = wg_ss[0];
  let mt = wg_mt[0];
  let st = wg_st[0];
  let log_ss = log(ss);
  let log_st = log(st);
  // No unmasked entry on S for one side: that distribution is undefined.
  let row_bad = wg_bad[0] > 0u || !(ss > 0.0) || !(st > 0.0);

  // Pass B: the divergence sums. acc1: KL(q||p), KL(p||q) or KL(q||m); acc2: KL(p||m).
  var acc1 = 0.0;
  var acc2 = 0.0;
  var inf_count = 0u;
  if (in_range && !row_bad) {
    for (var i = tid; i < vocab; i += WG) {
      let rs = student[base + i];
      let rt = teacher[base + i];
      if (!in_support(rt, i, tau, id_tau, all)) { continue; }
      let s_masked = is_neg_inf(rs);
      let t_masked = is_neg_inf(rt);
      if (s_masked && t_masked) { continue; }
      let a = (rs * inv_t - ms) - log_ss;
      let b = (rt * inv_t - mt) - log_st;
      if (params.mode == 0u) {
        if (!t_masked) {
          if (s_masked) { inf_count += 1u; } else { acc1 += exp(b) * (b - a); }
        }
      } else if (params.mode == 1u) {
        if (!s_masked) {
          if (t_masked) { inf_count += 1u; } else { acc1 += exp(a) * (a - b); }
        }
      } else {
        let lm = log_mixture(a, b, s_masked, t_masked);
        if (!t_masked) { acc1 += exp(b) * (b - lm); }
        if (!s_masked) { acc2 += exp(a) * (a - lm); }
      }
    }
  }
  wg_acc1[tid] = acc1;
  wg_acc2[tid] = acc2;
  wg_inf[tid] = inf_count;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) {
      wg_acc1[tid] += wg_acc1[tid + stride];
      wg_acc2[tid] += wg_acc2[tid + stride];
      wg_inf[tid] += wg_inf[tid + stride];
    }
    workgroupBarrier();
  }
  if (in_range && tid == 0u) {
    var d = wg_acc1[0];
    let kl_s = wg_acc2[0];
    if (params.mode == 2u) { d = params.beta * d + (1.0 - params.beta) * kl_s; }
    var flags = 0u;
    if (wg_inf[0] > 0u) { flags = FLAG_INFINITE; }
    if (row_bad) { flags = FLAG_BAD; }
    let w = token_weight[row];
    var l = w * d;
    if (flags == FLAG_INFINITE) { l = w * bitcast<f32>(POS_INF_BITS | (flags & 0u)); }
    if (flags == FLAG_BAD) { l = bitcast<f32>(NAN_BITS | flags); }
    if (w == 0.0) { l = 0.0; } // a masked token: 0 whatever its row holds
    loss[row] = l;
    let o = 6u * row;
    row_stats[o] = ms;
    row_stats[o + 1u] = log_ss;
    row_stats[o + 2u] = mt;
    row_stats[o + 3u] = log_st;
    row_stats[o + 4u] = d;
    row_stats[o + 5u] = kl_s;
    let q = 4u * row;
    row_select[q] = tau;
    row_select[q + 1u] = id_tau;
    row_select[q + 2u] = all;
    row_select[q + 3u] = flags;
  }
}

@group(0) @binding(8) var<storage, read> grad_loss: array<f32>;
@group(0) @binding(9) var<storage, read_write> grad_student: array<f32>;

@compute @workgroup_size(WG)
fn backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) tid: u32) {
  let i = wid.x * WG + tid;
  let row = wid.y + wid.z * nwg.y;
  if (i >= params.vocab || row >= params.rows) { return; }
  let index = row * params.vocab + i;
  let c = grad_loss[row] * token_weight[row];
  let rs = student[index];
  let rt = teacher[index];
  let q4 = 4u * row;
  if (c == 0.0 || is_neg_inf(rs) || !in_support(rt, i, row_select[q4], row_select[q4 + 1u], row_select[q4 + 2u])) {
    grad_student[index] = 0.0;
    return;
  }
  let flags = row_select[q4 + 3u];
  if (flags != 0u) {
    grad_student[index] = bitcast<f32>(NAN_BITS | flags);
    return;
  }
  let o = 6u * row;
  let inv_t = params.inv_temperature;
  let t_masked = is_neg_inf(rt);
  let a = (rs * inv_t - row_stats[o]) - row_stats[o + 1u];
  let b = (rt * inv_t - row_stats[o + 2u]) - row_stats[o + 3u];
  let p = exp(a);
  var g: f32;
  if (params.mode == 0u) {
    g = p - select(exp(b), 0.0, t_masked);
  } else if (params.mode == 1u) {
    g = p * ((a - b) - row_stats[o + 4u]); // t_masked here would have made D infinite
  } else {
    let lm = log_mixture(a, b, false, t_masked);
    g = (1.0 - params.beta) * p * ((a - lm) - row_stats[o + 5u]);
  }
  grad_student[index] = c * g * inv_t;
}
