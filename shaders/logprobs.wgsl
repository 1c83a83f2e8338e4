// Token log-probs and entropies of softmax(logits / temperature), and their backward.
//
// Forward: one workgroup per row (token position). Each thread walks the vocabulary with
// stride WG keeping an online triple (m, s, w): running max m of z = logit/temperature,
// s = sum exp(z - m) and w = sum exp(z - m) * (z - m). Thread 0 merges the WG triples in
// order after one barrier (a tree costs log2(WG) barriers, each a switch of every thread on a
// software adapter), so a row of 151,936 logits costs ~600 strided reads per thread, never one thread per row.
// Keeping w relative to m avoids cancellation when logits are ~1e4:
//   log Z = m + log s,  logprob(tok) = (z_tok - m) - log s,  entropy = log s - w / s.
// -inf logits (masked vocabulary entries) are skipped exactly; they get probability 0.
// NaN and Inf: a row with any other non-finite z (a NaN or +-inf logit, or an overflow of
// logit / temperature) gets NaN log-prob, entropy and row statistics, so its backward is NaN
// too (torch gives NaN there as well). Counted with bit tests, because nothing else is
// reliable: max() drops a NaN, and SwiftShader computes exp(NaN) = +inf and log(NaN) = 89,
// so the online sums would hand back a finite, wrong log-prob.
//
// Backward: one thread per (row, vocab entry); with p = softmax(z) and H the entropy,
//   dL/dz_i = g_lp * (onehot_i - p_i) - g_H * p_i * (log p_i + H),  dL/dlogit_i = dL/dz_i / T.

// Forward: threads per row, an override (src/ops/rowThreads.ts: 64 for vocabularies up to 4096,
// 256 above). Backward: entries per workgroup, the default.
override WG: u32 = 256u;
const LOWEST: f32 = -3.4028234663852886e38;
const NEG_INF_BITS: u32 = 0xff800000u;
const NAN_BITS: u32 = 0x7fc00000u;

struct Params {
  rows: u32,
  vocab: u32,
  inv_temperature: f32,
  // Backward only: 1 when grad_entropy is bound and should be used.
  use_grad_entropy: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> tokens: array<u32>;
// Forward writes, backward reads.
@group(0) @binding(3) var<storage, read_write> logprobs: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
// Per row: (m, log s), what the backward pass needs to rebuild probabilities.
@group(0) @binding(5) var<storage, read_write> row_stats: array<f32>;

fn is_neg_inf(x: f32) -> bool {
  // A bit test, so fast-math compilers cannot fold it away.
  return bitcast<u32>(x) == NEG_INF_BITS;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// A quiet NaN. WGSL rejects NaN constants, so the bits come from a run-time value.
fn quiet_nan(runtime_bits: u32) -> f32 {
  return bitcast<f32>(runtime_bits | NAN_BITS);
}

var<workgroup> wg_m: array<f32, WG>;
var<workgroup> wg_s: array<f32, WG>;
var<workgroup> wg_w: array<f32, WG>;
// Entries of the row whose z is non-finite (masked -inf logits excluded).
var<workgroup> wg_bad: array<u32, WG>;

struct Triple { m: f32, s: f32, w: f32 }

fn merge(a: Triple, b: Triple) -> Triple {
  let m = max(a.m, b.m);
  let ea = exp(a.m - m);
  let eb = exp(b.m - m);
  return Triple(m, a.s * ea + b.s * eb, ea * (a.w + a.s * (a.m - m)) + eb * (b.w + b.s * (b.m - m)));
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * nwg.x;
  // Uniform control flow: every thread of a workgroup agrees on `in_range`.
  let in_range = row < params.rows;
  let vocab = params.vocab;
  let base = row * vocab;

  var t = Triple(LOWEST, 0.0, 0.0);
  var bad = 0u;
  if (in_range) {
    for (var i = tid; i < vocab; i += WG) {
      let raw = logits[base + i];
      if (is_neg_inf(raw)) { continue; }
      let z = raw * params.inv_temperature;
      if (!is_finite(z)) {
        bad += 1u; // the row's results are NaN; keep the sums finite meanwhile
        continue;
      }
      if (z <= t.m) {
        let e = exp(z - t.m);
        t.s += e;
        t.w += e * (z - t.m);
      } else {
        let d = t.m - z;
        let scale = exp(d);
        t.w = scale * (t.w + t.s * d);
        t.s = t.s * scale + 1.0;
        t.m = z;
      }
    }
  }
  wg_m[tid] = t.m;
  wg_s[tid] = t.s;
  wg_w[tid] = t.w;
  wg_bad[tid] = bad;
  workgroupBarrier();
  if (in_range && tid == 0u) {
    for (var k = 1u; k < WG; k++) {
      let r = merge(Triple(wg_m[0], wg_s[0], wg_w[0]), Triple(wg_m[k], wg_s[k], wg_w[k]));
      wg_m[0] = r.m;
      wg_s[0] = r.s;
      wg_w[0] = r.w;
      wg_bad[0] += wg_bad[k];
    }
  }
  if (in_range && tid == 0u) {
    var m = wg_m[0];
    let s = wg_s[0];
    var log_s = log(s);
    let raw = logits[base + tokens[row]];
    var lp = (raw * params.inv_temperature - m) - log_s;
    var h = log_s - wg_w[0] / s;
    let row_bad = wg_bad[0];
    if (row_bad > 0u) {
      let nan = quiet_nan(row_bad);
      m = nan;
      log_s = nan;
      lp = nan;
      h = nan;
    }
    if (is_neg_inf(raw)) { lp = raw; } // the chosen token is masked: -inf
    logprobs[row] = lp;
    entropy[row] = h;
    row_stats[2u * row] = m;
    row_stats[2u * row + 1u] = log_s;
  }
}

@group(0) @binding(6) var<storage, read> grad_logprobs: array<f32>;
@group(0) @binding(7) var<storage, read> grad_entropy: array<f32>;
@group(0) @binding(8) var<storage, read_write> grad_logits: array<f32>;

@compute @workgroup_size(WG)
fn backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) tid: u32) {
  let i = wid.x * WG + tid;
  let row = wid.y + wid.z * nwg.y;
  if (i >= params.vocab || row >= params.rows) { return; }
  let index = row * params.vocab + i;
  let raw = logits[index];
  if (is_neg_inf(raw)) {
    grad_logits[index] = 0.0;
    return;
  }
  let log_p = (raw * params.inv_temperature - row_stats[2u * row]) - row_stats[2u * row + 1u];
  let p = exp(log_p);
  var g = -grad_logprobs[row] * p;
  if (i == tokens[row]) { g += grad_logprobs[row]; }
  if (params.use_grad_entropy == 1u) {
    g -= grad_entropy[row] * p * (log_p + entropy[row]);
  }
  // A poisoned row (NaN statistics) or a NaN logit: NaN, whatever exp(NaN) gives here.
  grad_logits[index] = select(g * params.inv_temperature, log_p, is_nan(log_p));
}
