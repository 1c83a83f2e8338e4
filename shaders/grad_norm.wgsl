// Global L2 norm of many gradient tensors, and the clip coefficient of
// torch.nn.utils.clip_grad_norm_ (norm_type 2), all on the GPU so a step reads nothing back:
//   grad_norm  = sqrt(sum_t sum_i g_ti^2)
//   clip_scale = min(1, max_grad_norm / (grad_norm + 1e-6))   (1 when clipping is off)
//   finite     = grad_norm is neither NaN nor Inf; when it is not, clip_scale = 0 and the
//                AdamW kernel skips the step.
// Written to step_state (f32): [grad_norm, clip_scale, finite (1 or 0), non-finite entries].
//
// Two passes, deterministic (a fixed element -> thread -> workgroup assignment and fixed summation
// orders, so the same gradients give the same bits on every run):
//   partial_sums  per tensor: up to MAX_PARTIALS workgroups (host-chosen) grid-stride over the
//                 tensor and reduce to one partial (sum of squares, NaN count, Inf count);
//                 partial_sums4 is the same pass with the same bits for a tensor of a multiple
//                 of 4 values bound 16-byte aligned (a software adapter: see there);
//   partial_sums_flat(4)  the same for many tensors bound as one range, one dispatch;
//   sums_finish   one workgroup: a thread per tensor sums its partials in order -> tensor_stats,
//                 then one reduce over the threads -> step_state (one dispatch, few barriers).
// Entries are loaded as u32 and tested on bits (fast-math compilers may fold x != x away);
// non-finite ones are counted and kept out of the sums. A NaN entry makes the norm NaN, else an
// infinite entry or an f32 overflow of the sum makes it +Inf, which is what torch's f32 norm gives.

const WG: u32 = 64u;
const ABS_MASK: u32 = 0x7fffffffu;
const INF_BITS: u32 = 0x7f800000u;
const NAN_BITS: u32 = 0x7fc00000u;
const ONE_BITS: u32 = 0x3f800000u;
// torch.nn.utils.clip_grad_norm_: clip_coef = max_norm / (total_norm + 1e-6).
const CLIP_EPS: f32 = 1e-6;

struct Params {
  // partial_sums: elements of this tensor; sums_finish: number of tensors.
  count: u32,
  // partial_sums: this tensor's first slot in the partials array.
  base: u32,
  // sums_finish: the clipping threshold, used when clip == 1.
  max_grad_norm: f32,
  clip: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// partial_sums: the gradient (f32 bits); sums_finish: partials.
@group(0) @binding(1) var<storage, read> src: array<u32>;
// partial_sums: partials [3 per slot: sum bits, NaN count, Inf count];
// sums_finish: tensor_stats [T sums of squares (f32 bits), then T non-finite counts].
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
// sums_finish only: [T + 1] first partial slot of each tensor, then the end.
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
// sums_finish only: step_state [4 f32].
@group(0) @binding(4) var<storage, read_write> step_state: array<u32>;

var<workgroup> wg_sum: array<f32, WG>;
var<workgroup> wg_a: array<u32, WG>;
var<workgroup> wg_b: array<u32, WG>;

fn is_nan_bits(u: u32) -> bool {
  return (u & ABS_MASK) > INF_BITS;
}

fn is_inf_bits(u: u32) -> bool {
  return (u & ABS_MASK) == INF_BITS;
}

// Reduction (sums) of one f32 and two u32 values per thread; the result lands in index 0.
// Must be called in uniform control flow.
fn reduce(tid: u32, sum: f32, a: u32, b: u32) {
  wg_sum[tid] = sum;
  wg_a[tid] = a;
  wg_b[tid] = b;
  workgroupBarrier();
  if (tid == 0u) { sum_in_order(); }
}

// Thread 0 adds the WG values in order: one barrier instead of a tree of log2(WG), which a
// software adapter pays for as a context switch of every thread of the workgroup.
fn sum_in_order() {
  for (var k = 1u; k < WG; k++) {
    wg_sum[0] += wg_sum[k];
    wg_a[0] += wg_a[k];
    wg_b[0] += wg_b[k];
  }
}

// Stores workgroup wid's partial (index 0 of the reduction).
fn store_partial(wid: u32) {
  let slot = 3u * (params.base + wid);
  dst[slot] = bitcast<u32>(wg_sum[0]);
  dst[slot + 1u] = wg_a[0];
  dst[slot + 2u] = wg_b[0];
}

// partial_sums' pass over one tensor, elements [first, first + count) of src: workgroup `local`
// of the tensor's `groups` sums the elements its threads stride over, into partial slot `slot`.
// Call in uniform control flow (it has barriers).
fn tensor_partial(tid: u32, local: u32, groups: u32, first: u32, count: u32, slot: u32) {
  var sum = 0.0;
  var nan = 0u;
  var inf = 0u;
  for (var i = local * WG + tid; i < count; i += groups * WG) {
    let u = src[first + i];
    if (is_nan_bits(u)) {
      nan += 1u;
    } else if (is_inf_bits(u)) {
      inf += 1u;
    } else {
      let g = bitcast<f32>(u);
      sum += g * g;
    }
  }
  reduce(tid, sum, nan, inf);
  if (tid == 0u) { store_partial(slot); }
}

@compute @workgroup_size(WG)
fn partial_sums(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) tid: u32) {
  tensor_partial(tid, wid.x, nwg.x, 0u, params.count, wid.x);
}

@group(0) @binding(1) var<storage, read> src4: array<vec4<u32>>;

// tensor_partial with the same bits, a vec4 an invocation (`first` a multiple of 4, src bound
// 16-byte aligned): invocation tid plays tensor_partial's threads 4 tid .. 4 tid + 3
// (consecutive elements, so one vec4 load serves the four), each component summing that
// thread's elements in its order, and the reduction adds the WG thread values in the same
// order. A non-finite entry, or one past the tensor's end in its last vec4, adds +0.0 instead
// of nothing, which leaves a sum that starts at +0.0 and only grows unchanged. On SwiftShader a
// quarter of the invocations and no branch per element: 2.5-3x faster.
fn tensor_partial4(tid: u32, local: u32, groups: u32, first: u32, count: u32, slot: u32) {
  var sum = vec4<f32>(0.0);
  var nan = vec4<u32>(0u);
  var inf = vec4<u32>(0u);
  for (var q = local * WG / 4u + tid; q < (count + 3u) / 4u; q += groups * WG / 4u) {
    let inside = vec4<u32>(4u * q) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(count);
    let u = select(vec4<u32>(0u), src4[first / 4u + q], inside);
    let mag = u & vec4<u32>(ABS_MASK);
    nan += select(vec4<u32>(0u), vec4<u32>(1u), mag > vec4<u32>(INF_BITS));
    inf += select(vec4<u32>(0u), vec4<u32>(1u), mag == vec4<u32>(INF_BITS));
    let g = select(bitcast<vec4<f32>>(u), vec4<f32>(0.0), mag >= vec4<u32>(INF_BITS));
    sum += g * g;
  }
  for (var c = 0u; c < 4u; c++) {
    wg_sum[4u * tid + c] = sum[c];
    wg_a[4u * tid + c] = nan[c];
    wg_b[4u * tid + c] = inf[c];
  }
  workgroupBarrier();
  if (tid == 0u) {
    sum_in_order();
    store_partial(slot);
  }
}

// partial_sums for a tensor of a multiple of 4 values bound 16-byte aligned (a software adapter).
@compute @workgroup_size(WG / 4u)
fn partial_sums4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) tid: u32) {
  tensor_partial4(tid, wid.x, nwg.x, 0u, params.count, wid.x);
}

// partial_sums over several tensors bound as one range (ParameterStore's gradient arena): one
// dispatch for them all. The host writes per tensor (elements, first element in src, first
// workgroup of this dispatch, workgroups) in `flat_tensors`, sorted by first workgroup;
// params.count is the number of tensors and params.base the dispatch's first partial slot.
// Workgroup w plays workgroup w - first of partial_sums on its tensor, with that tensor's
// workgroup count as the stride, so the partials are partial_sums' bits.
@group(0) @binding(3) var<storage, read> flat_tensors: array<vec4<u32>>;

// The tensor workgroup w works on: the last one whose first workgroup is <= w.
fn tensor_of(w: u32) -> vec4<u32> {
  var lo = 0u;
  var hi = params.count - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) / 2u;
    if (flat_tensors[mid].z <= w) { lo = mid; } else { hi = mid - 1u; }
  }
  return flat_tensors[lo];
}

// The dispatch's workgroup number (a 2-D grid past 65535 workgroups), or none past the last.
fn flat_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  let last = flat_tensors[params.count - 1u];
  let w = wid.x + wid.y * nwg.x;
  return select(0xffffffffu, w, w < last.z + last.w);
}

@compute @workgroup_size(WG)
fn partial_sums_flat(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) tid: u32) {
  let w = flat_workgroup(wid, nwg);
  if (w == 0xffffffffu) { return; }
  let t = tensor_of(w);
  tensor_partial(tid, w - t.z, t.w, t.y, t.x, w);
}

// partial_sums_flat as partial_sums4 (a software adapter): every tensor's first element a
// multiple of 4, its length any.
@compute @workgroup_size(WG / 4u)
fn partial_sums_flat4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) tid: u32) {
  let w = flat_workgroup(wid, nwg);
  if (w == 0xffffffffu) { return; }
  let t = tensor_of(w);
  tensor_partial4(tid, w - t.z, t.w, t.y, t.x, w);
}

@compute @workgroup_size(WG)
fn sums_finish(@builtin(local_invocation_index) tid: u32) {
  let tensors = params.count;
  // A thread per tensor sums that tensor's partials in slot order (at most MAX_PARTIALS of
  // them) -> tensor_stats, and carries its tensors' totals into one reduce. Not a tree per
  // tensor: on a software adapter every barrier of a 256-thread workgroup is a context switch
  // of all its threads, and a tree per tensor cost 9 barriers a tensor (0.8 s a step for the
  // default model's 68 tensors, more than its whole forward + backward).
  var sum = 0.0;
  var nan_tensors = 0u;
  var nonfinite = 0u;
  for (var t = tid; t < tensors; t += WG) {
    var s = 0.0;
    var nan = 0u;
    var inf = 0u;
    for (var p = offsets[t]; p < offsets[t + 1u]; p++) {
      s += bitcast<f32>(src[3u * p]);
      nan += src[3u * p + 1u];
      inf += src[3u * p + 2u];
    }
    // Sums of squares are >= 0, so the f32 sum is finite or +Inf (overflow), never NaN.
    var bits = bitcast<u32>(s);
    if (nan > 0u) {
      bits = NAN_BITS;
      nan_tensors += 1u;
    } else {
      if (inf > 0u) { bits = INF_BITS; }
      // +Inf (an infinite entry or an overflow) stays +Inf through the sum.
      sum += bitcast<f32>(bits);
    }
    dst[t] = bits;
    dst[tensors + t] = nan + inf;
    nonfinite += nan + inf;
  }
  reduce(tid, sum, nan_tensors, nonfinite);
  if (tid == 0u) {
    var norm_bits = NAN_BITS;
    if (wg_a[0] == 0u) {
      let total = wg_sum[0];
      if (is_inf_bits(bitcast<u32>(total))) {
        norm_bits = INF_BITS;
      } else {
        norm_bits = bitcast<u32>(sqrt(total));
      }
    }
    let finite = (norm_bits & ABS_MASK) < INF_BITS;
    var clip_bits = ONE_BITS;
    if (!finite) {
      clip_bits = 0u;
    } else if (params.clip == 1u) {
      clip_bits = bitcast<u32>(min(1.0, params.max_grad_norm / (bitcast<f32>(norm_bits) + CLIP_EPS)));
    }
    step_state[0] = norm_bits;
    step_state[1] = clip_bits;
    step_state[2] = select(0u, ONE_BITS, finite);
    step_state[3] = bitcast<u32>(f32(wg_b[0]));
  }
}
