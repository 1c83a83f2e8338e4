// GRPO-family clipped policy loss (TRL GRPOTrainer semantics, verl's dual clip), its
// gradients with respect to the current log-probs and the entropies, and the metrics.
// Float64 twin: src/ops/policyLoss.reference.ts (the full formulas are in its header).
//
// N sequences x L positions, row-major; mask m in [0, 1]; A = advantages[i].
//   log r = logp - old;  token: rho = exp(log r);  sequence (GSPO): rho = s_i = exp(sum m log r / max(sum m, 1))
//   l by loss_type (TRL GRPOTrainer):
//     grpo/bnpo/dapo/dr_grpo: l = -min(rho' A, clip(rho, 1 - eps, 1 + eps_high) A),
//       rho' = min(rho, delta) with TRL's `delta` (two-sided clip), else rho;
//       dual clip (c, A < 0): l = min(l, -c A)
//     cispo: l = -sg(min(rho, eps_high)) A logp   (direct dl/dlogp = -min(rho, eps_high) A)
//     sapo:  l = -sigmoid(tau (rho - 1)) 4 / tau A, tau = tau_pos if A > 0 else tau_neg
//   D (Delta = ref - logp): k1 = logp - ref, k2 = Delta^2 / 2, k3 = exp(Delta) - Delta - 1;
//     use_bias_correction_kl: D rho (rho not detached)
//   L = w l + beta D - entropy_coef H,  loss = sum c L,  c = m / normaliser(loss_type)
//     (sapo normalises as grpo, cispo as dapo)
//   grad_logprobs: token c (w dl/drho rho + w dl/dlogp + beta dD/dlogp);
//                  sequence (sum_t' c w dl/ds) s m / max(sum m, 1) + c w dl/dlogp + c beta dD/dlogp
//     bias-corrected KL: token c beta (dD/dlogp + D) rho;
//                        sequence c beta dD/dlogp s + beta inv_i (sum_t' m D) s m / max(sum m, 1)
//   grad_entropy = -entropy_coef c
// Clip metrics as TRL: low/high on rho' for the clipped types; cispo counts rho > eps_high with
// A > 0 as high (TRL's cispo_clip_ratio) and no low; sapo clips nothing (0).
// Tokens with m = 0 are skipped (gradient 0, no contribution), so -inf padding is harmless.
// No clamping (as TRL): exp overflows f32 for log-ratios or Delta above ~88.
// NaN in, NaN out, as torch: without old log-probs log r = logp - logp.detach() is 0 only for a
// finite logp (NaN for NaN or +-inf), and a NaN ratio or advantage makes l and dl/drho NaN
// (min/max/clamp would otherwise return a finite branch). Tests are bit tests (fast-math safe),
// and exp goes through exp_keep_nan: SwiftShader's exp(NaN) is +inf, which the clip would cap.
//
// Dispatches, all in one submission:
//   seq_stats    one workgroup per sequence: sum m, sum m w, s_i, sum m H, A, sum m D -> records
//   batch_stats  one workgroup: sum m over the batch -> records[N * REC]
//   token_loss   one workgroup per tile of TILE tokens: gradients + per-tile partial sums
//   entropy_grad (only when entropy_coef != 0) one thread per token: grad_entropy
//   finalize     one workgroup: partials + per-sequence entropy sums -> scalars
// Each entry point declares its own resource variables; binding numbers are reused across
// entry points (WGSL forbids aliasing only within one entry point's interface), so every
// entry point stays within the default limit of 8 storage buffers.

const WG: u32 = 256u;
const ITEMS: u32 = 4u;
const TILE: u32 = WG * ITEMS;
// f32 per sequence record: [sum m, sum m w, s_i, sum m H, A, sum m D, 0, 0]
// (sum m D only for the bias-corrected KL at sequence level with beta != 0, else 0).
const REC: u32 = 8u;
// f32 per token_loss tile: [loss, policy, low, high, ratio, kl, dual, 0].
const PART: u32 = 8u;

const HAS_OLD: u32 = 1u;
const HAS_REF: u32 = 2u;
const HAS_WEIGHTS: u32 = 4u;
const HAS_ENTROPY: u32 = 8u;
const USE_DUAL: u32 = 16u;
const SEQ_LEVEL: u32 = 32u;
const HAS_NUM_ITEMS: u32 = 64u;
const USE_DELTA: u32 = 128u;
const BIAS_KL: u32 = 256u;

// loss_type codes (LOSS_TYPES order); kl_estimator codes are 0 = k1, 1 = k2, 2 = k3.
const GRPO: u32 = 0u;
const BNPO: u32 = 1u;
const DAPO: u32 = 2u;
const DR_GRPO: u32 = 3u;
const CISPO: u32 = 4u;
const SAPO: u32 = 5u;

struct Params {
  n: u32,
  l: u32,
  tiles: u32,
  flags: u32,
  eps_low: f32,
  eps_high: f32,
  dual_clip: f32,
  beta: f32,
  entropy_coef: f32,
  loss_type: u32,
  kl_estimator: u32,
  max_len: f32,
  num_items: f32,
  delta: f32,
  sapo_tau_pos: f32,
  sapo_tau_neg: f32,
}

@group(0) @binding(0) var<uniform> params: Params;

fn has(flag: u32) -> bool {
  return (params.flags & flag) != 0u;
}

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

// A quiet NaN from x's bits (WGSL rejects NaN constants, so it is made at run time).
fn nan_from(x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(x) | 0x7fc00000u);
}

// exp that keeps a NaN (SwiftShader's exp(NaN) is +inf).
fn exp_keep_nan(x: f32) -> f32 {
  return select(exp(x), x, is_nan(x));
}

// log r for one token: logp - old, or logp - logp.detach() without old log-probs, which is 0
// for a finite logp and NaN otherwise (the compiler may not fold x - x to 0 here).
fn log_ratio(lp: f32, old: f32) -> f32 {
  if (has(HAS_OLD)) { return lp - old; }
  return select(nan_from(lp), 0.0, is_finite(lp));
}

/// 1 / normaliser for sequence i, given its mask sum and the batch's.
fn inv_norm(seq_mask: f32, batch_mask: f32) -> f32 {
  switch params.loss_type {
    case GRPO, SAPO: { return 1.0 / (max(seq_mask, 1.0) * f32(params.n)); }
    case BNPO: { return 1.0 / max(batch_mask, 1.0); }
    case DAPO, CISPO: { return 1.0 / max(select(batch_mask, params.num_items, has(HAS_NUM_ITEMS)), 1.0); }
    default: { return 1.0 / (f32(params.n) * params.max_len); } // DR_GRPO
  }
}

struct Policy {
  loss: f32,
  d_ratio: f32,
  // Direct dl/dlogp at a fixed ratio (cispo only).
  d_logp: f32,
  low: f32,
  high: f32,
  dual: f32,
}

fn policy_term(rho: f32, a: f32, lp: f32) -> Policy {
  if (params.loss_type == CISPO) {
    // The weight is stop-gradient; min would turn a NaN ratio into eps_high, so keep the NaN.
    let weight = select(min(rho, params.eps_high), rho, is_nan(rho));
    return Policy(-weight * a * lp, 0.0, -weight * a, 0.0, select(0.0, 1.0, rho > params.eps_high && a > 0.0), 0.0);
  }
  if (params.loss_type == SAPO) {
    let tau = select(params.sapo_tau_neg, params.sapo_tau_pos, a > 0.0);
    let x = tau * (rho - 1.0);
    // sigmoid and sigmoid' = e / (1 + e)^2 from e = exp(-|x|) <= 1: no overflow either side.
    let e = exp_keep_nan(-abs(x));
    let sigma = select(e / (1.0 + e), 1.0 / (1.0 + e), x >= 0.0 || is_nan(x));
    let slope = e / ((1.0 + e) * (1.0 + e));
    return Policy(-sigma * (4.0 / tau) * a, -4.0 * slope * a, 0.0, 0.0, 0.0, 0.0);
  }
  let lo = 1.0 - params.eps_low;
  let hi = 1.0 + params.eps_high;
  // TRL's delta caps the unclipped branch's ratio (slope 1 up to delta inclusive, as torch.clamp).
  let capped = has(USE_DELTA) && rho > params.delta;
  let rho_u = select(rho, params.delta, capped);
  let unclipped = rho_u * a;
  let clipped = min(max(rho, lo), hi) * a;
  var p = Policy(-min(unclipped, clipped), 0.0, 0.0, 0.0, 0.0, 0.0);
  // The unclipped branch is the min (ties included, where both agree): gradient -A (0 beyond delta).
  if (unclipped <= clipped && !capped) { p.d_ratio = -a; }
  // A NaN ratio or advantage (or 0 * inf): min/max would pick a finite branch; keep the NaN.
  if (is_nan(unclipped) || is_nan(clipped)) {
    let nan = nan_from(unclipped);
    p.loss = nan;
    p.d_ratio = nan;
  }
  if (has(USE_DUAL) && a < 0.0) {
    let cap = -params.dual_clip * a;
    if (cap < p.loss) {
      p.loss = cap;
      p.d_ratio = 0.0;
      p.dual = 1.0;
    }
  }
  // TRL counts clipping on the delta-capped ratio.
  p.low = select(0.0, 1.0, rho_u < lo && a < 0.0);
  p.high = select(0.0, 1.0, rho_u > hi && a > 0.0);
  return p;
}

/// (D, dD/dlogp) for delta = ref - logp.
fn kl_term(delta: f32) -> vec2<f32> {
  switch params.kl_estimator {
    case 0u: { return vec2<f32>(-delta, 1.0); }
    case 1u: { return vec2<f32>(0.5 * delta * delta, -delta); }
    default: {
      // k3 = expm1(delta) - delta. Near 0 the direct form cancels to nothing in f32, so use
      // the series delta^2 (1/2 + delta/6 + ...) (truncation < 2e-9 relative at |delta| = 0.5);
      // expm1 = delta + D there.
      var d: f32;
      var em1: f32;
      if (abs(delta) < 0.5) {
        var s = 1.0 / 362880.0;
        s = 1.0 / 40320.0 + delta * s;
        s = 1.0 / 5040.0 + delta * s;
        s = 1.0 / 720.0 + delta * s;
        s = 1.0 / 120.0 + delta * s;
        s = 1.0 / 24.0 + delta * s;
        s = 1.0 / 6.0 + delta * s;
        s = 0.5 + delta * s;
        d = delta * delta * s;
        em1 = delta + d;
      } else {
        em1 = exp_keep_nan(delta) - 1.0;
        d = em1 - delta;
      }
      return vec2<f32>(d, -em1);
    }
  }
}

// Workgroup reduction of up to 9 sums per thread: after one barrier thread 0 adds each slot's
// WG values in order, then a barrier publishes red[k * WG]. (A tree takes log2(WG) barriers,
// and a software adapter pays each as a switch of every thread of the workgroup.)
const SLOTS: u32 = 9u;
var<workgroup> red: array<f32, 2304>; // SLOTS * WG

fn reduce(tid: u32, count: u32) {
  workgroupBarrier();
  if (tid == 0u) {
    for (var k = 0u; k < count; k++) {
      var s = red[k * WG];
      for (var t = 1u; t < WG; t++) { s += red[k * WG + t]; }
      red[k * WG] = s;
    }
  }
  workgroupBarrier();
}

// ---- seq_stats -------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> ss_logp: array<f32>;
@group(0) @binding(2) var<storage, read> ss_old: array<f32>;
@group(0) @binding(3) var<storage, read> ss_mask: array<f32>;
@group(0) @binding(4) var<storage, read> ss_weights: array<f32>;
@group(0) @binding(5) var<storage, read> ss_entropy: array<f32>;
@group(0) @binding(6) var<storage, read> ss_adv: array<f32>;
@group(0) @binding(7) var<storage, read_write> ss_records: array<f32>;
@group(0) @binding(8) var<storage, read> ss_ref: array<f32>;

@compute @workgroup_size(WG)
fn seq_stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) tid: u32) {
  let i = wid.x + wid.y * nwg.x;
  // Uniform control flow: every thread of a workgroup agrees on `in_range`.
  let in_range = i < params.n;
  // sum m D feeds the bias-corrected KL's path through s_i.
  let kl_path = has(SEQ_LEVEL) && has(BIAS_KL) && has(HAS_REF) && params.beta != 0.0;
  var ms = 0.0;
  var mw = 0.0;
  var mlr = 0.0;
  var mh = 0.0;
  var md = 0.0;
  if (in_range) {
    let base = i * params.l;
    for (var t = tid; t < params.l; t += WG) {
      let m = ss_mask[base + t];
      if (m == 0.0) { continue; }
      ms += m;
      mw += m * select(1.0, ss_weights[base + t], has(HAS_WEIGHTS));
      var old = 0.0;
      if (has(HAS_OLD)) { old = ss_old[base + t]; }
      mlr += m * log_ratio(ss_logp[base + t], old);
      if (has(HAS_ENTROPY)) { mh += m * ss_entropy[base + t]; }
      if (kl_path) { md += m * kl_term(ss_ref[base + t] - ss_logp[base + t]).x; }
    }
  }
  red[tid] = ms;
  red[WG + tid] = mw;
  red[2u * WG + tid] = mlr;
  red[3u * WG + tid] = mh;
  red[4u * WG + tid] = md;
  reduce(tid, 5u);
  if (in_range && tid == 0u) {
    let r = i * REC;
    ss_records[r] = red[0];
    ss_records[r + 1u] = red[WG];
    ss_records[r + 2u] = exp_keep_nan(red[2u * WG] / max(red[0], 1.0));
    ss_records[r + 3u] = red[3u * WG];
    ss_records[r + 4u] = ss_adv[i];
    ss_records[r + 5u] = red[4u * WG];
    ss_records[r + 6u] = 0.0;
    ss_records[r + 7u] = 0.0;
  }
}

// ---- batch_stats -----------------------------------------------------------------------
@group(0) @binding(1) var<storage, read_write> bs_records: array<f32>;

@compute @workgroup_size(WG)
fn batch_stats(@builtin(local_invocation_index) tid: u32) {
  var ms = 0.0;
  for (var i = tid; i < params.n; i += WG) { ms += bs_records[i * REC]; }
  red[tid] = ms;
  reduce(tid, 1u);
  if (tid == 0u) { bs_records[params.n * REC] = red[0]; }
}

// ---- token_loss ------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> tl_logp: array<f32>;
@group(0) @binding(2) var<storage, read> tl_old: array<f32>;
@group(0) @binding(3) var<storage, read> tl_ref: array<f32>;
@group(0) @binding(4) var<storage, read> tl_mask: array<f32>;
@group(0) @binding(5) var<storage, read> tl_weights: array<f32>;
@group(0) @binding(6) var<storage, read> tl_records: array<f32>;
@group(0) @binding(7) var<storage, read_write> tl_grad: array<f32>;
@group(0) @binding(8) var<storage, read_write> tl_partials: array<f32>;

@compute @workgroup_size(WG)
fn token_loss(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let tile = wid.x + wid.y * nwg.x;
  let in_range = tile < params.tiles;
  let count = params.n * params.l;
  let batch_mask = tl_records[params.n * REC];
  var acc_loss = 0.0;
  var acc_policy = 0.0;
  var acc_low = 0.0;
  var acc_high = 0.0;
  var acc_ratio = 0.0;
  var acc_kl = 0.0;
  var acc_dual = 0.0;
  for (var k = 0u; k < ITEMS; k++) {
    let idx = tile * TILE + k * WG + tid;
    if (!in_range || idx >= count) { break; }
    let m = tl_mask[idx];
    if (m == 0.0) {
      tl_grad[idx] = 0.0;
      continue;
    }
    let r = (idx / params.l) * REC;
    let seq_mask = tl_records[r];
    let a = tl_records[r + 4u];
    let inv = inv_norm(seq_mask, batch_mask);
    let c = m * inv;
    let lp = tl_logp[idx];
    let w = select(1.0, tl_weights[idx], has(HAS_WEIGHTS));
    var rho: f32;
    if (has(SEQ_LEVEL)) {
      rho = tl_records[r + 2u];
    } else {
      var old = 0.0;
      if (has(HAS_OLD)) { old = tl_old[idx]; }
      rho = exp_keep_nan(log_ratio(lp, old));
    }
    let p = policy_term(rho, a, lp);
    var g: f32;
    if (params.loss_type == CISPO) {
      // The weight is detached: no path through the ratio (none through s_i either).
      g = c * w * p.d_logp;
    } else if (has(SEQ_LEVEL)) {
      // d loss/d s_i = dl/ds sum_t' c w (dl/ds is the same for every token of the sequence),
      // d s_i / d logp_t = s_i m_t / max(sum m, 1).
      g = p.d_ratio * tl_records[r + 1u] * inv * rho * (m / max(seq_mask, 1.0));
    } else {
      g = c * w * p.d_ratio * rho;
    }
    var token = w * p.loss;
    if (has(HAS_REF)) {
      let kl = kl_term(tl_ref[idx] - lp);
      let value = select(kl.x, kl.x * rho, has(BIAS_KL));
      acc_kl += m * value;
      // Skipped at beta = 0 so an overflowing D cannot become 0 * inf = NaN.
      if (params.beta != 0.0) {
        token += params.beta * value;
        if (!has(BIAS_KL)) {
          g += c * params.beta * kl.y;
        } else if (!has(SEQ_LEVEL)) {
          g += c * params.beta * (kl.y + kl.x) * rho;
        } else {
          g += c * params.beta * kl.y * rho + params.beta * inv * tl_records[r + 5u] * rho * (m / max(seq_mask, 1.0));
        }
      }
    }
    tl_grad[idx] = g;
    acc_loss += c * token;
    acc_policy += c * w * p.loss;
    acc_low += m * p.low;
    acc_high += m * p.high;
    acc_ratio += m * rho;
    acc_dual += m * p.dual;
  }
  red[tid] = acc_loss;
  red[WG + tid] = acc_policy;
  red[2u * WG + tid] = acc_low;
  red[3u * WG + tid] = acc_high;
  red[4u * WG + tid] = acc_ratio;
  red[5u * WG + tid] = acc_kl;
  red[6u * WG + tid] = acc_dual;
  reduce(tid, 7u);
  if (in_range && tid < PART) {
    tl_partials[tile * PART + tid] = select(0.0, red[tid * WG], tid < 7u);
  }
}

// ---- entropy_grad ----------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> eg_mask: array<f32>;
@group(0) @binding(2) var<storage, read> eg_records: array<f32>;
@group(0) @binding(3) var<storage, read_write> eg_grad: array<f32>;

@compute @workgroup_size(WG)
fn entropy_grad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) tid: u32) {
  let idx = (wid.x + wid.y * nwg.x) * WG + tid;
  if (idx >= params.n * params.l) { return; }
  let m = eg_mask[idx];
  if (m == 0.0) {
    eg_grad[idx] = 0.0;
    return;
  }
  let r = (idx / params.l) * REC;
  eg_grad[idx] = -params.entropy_coef * m * inv_norm(eg_records[r], eg_records[params.n * REC]);
}

// ---- finalize --------------------------------------------------------------------------
@group(0) @binding(1) var<storage, read> fz_records: array<f32>;
@group(0) @binding(2) var<storage, read> fz_partials: array<f32>;
@group(0) @binding(3) var<storage, read_write> fz_scalars: array<f32>;

@compute @workgroup_size(WG)
fn finalize(@builtin(local_invocation_index) tid: u32) {
  var acc: array<f32, 7>;
  for (var k = 0u; k < 7u; k++) { acc[k] = 0.0; }
  for (var tile = tid; tile < params.tiles; tile += WG) {
    for (var k = 0u; k < 7u; k++) { acc[k] += fz_partials[tile * PART + k]; }
  }
  // The entropy term sum_t c H = inv_i sum_t m H per sequence, from seq_stats' sums.
  let batch_mask = fz_records[params.n * REC];
  var mh = 0.0;
  var ent_loss = 0.0;
  for (var i = tid; i < params.n; i += WG) {
    let h = fz_records[i * REC + 3u];
    mh += h;
    ent_loss += h * inv_norm(fz_records[i * REC], batch_mask);
  }
  for (var k = 0u; k < 7u; k++) { red[k * WG + tid] = acc[k]; }
  red[7u * WG + tid] = mh;
  red[8u * WG + tid] = ent_loss;
  reduce(tid, SLOTS);
  if (tid == 0u) {
    // Mask-weighted means; an empty batch (sum m = 0) reports 0.
    let inv_batch = select(0.0, 1.0 / batch_mask, batch_mask > 0.0);
    var loss = red[0];
    if (has(HAS_ENTROPY) && params.entropy_coef != 0.0) { loss -= params.entropy_coef * red[8u * WG]; }
    fz_scalars[0] = loss;
    fz_scalars[1] = red[WG];
    fz_scalars[2] = red[2u * WG] * inv_batch;
    fz_scalars[3] = red[3u * WG] * inv_batch;
    fz_scalars[4] = (red[2u * WG] + red[3u * WG]) * inv_batch;
    fz_scalars[5] = red[4u * WG] * inv_batch;
    fz_scalars[6] = red[5u * WG] * inv_batch;
    fz_scalars[7] = red[7u * WG] * inv_batch;
    fz_scalars[8] = red[6u * WG] * inv_batch;
    fz_scalars[9] = batch_mask;
  }
}
