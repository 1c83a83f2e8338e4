// adamw.wgsl's update over many parameter tensors in one dispatch: their gradients are ranges
// of one buffer, their values ranges of another and their exp_avg / exp_avg_sq ranges of a
// third (ParameterStore's arenas), so a dispatch binds three buffers whatever the number of
// tensors, and a table in a storage buffer gives each tensor's offsets. The arithmetic per
// element is adamw.wgsl's (the same text, adamw_update.wgsl), so the results are bit-identical
// to one tensor a dispatch. Float64 twin: src/ops/adamw.reference.ts.
//   adamw_flat   one thread an element, each tensor its ceil(count / WG) workgroups (a GPU);
//   adamw_flat4  a vec4 an iteration, each tensor a few workgroups striding over it (a software
//                adapter; every offset a multiple of 4 elements; in a tensor's last vec4 the
//                elements past its end are written back unchanged).

const WG: u32 = 256u;
const WG4: u32 = 64u;
const ONE_BITS: u32 = 0x3f800000u;

struct Params {
  beta1: f32,
  beta2: f32,
  one_minus_beta1: f32,
  one_minus_beta2: f32,
  // lr / (1 - beta1^t)
  step_size: f32,
  // sqrt(1 - beta2^t)
  bias_correction2_sqrt: f32,
  eps: f32,
  // Tensors in `flat_tensors`.
  tensors: u32,
}

// One tensor: elements; first element of its gradient, value, exp_avg and exp_avg_sq in their
// bindings; bits of 1 - lr * its weight_decay; its first workgroup in this dispatch; workgroups.
struct FlatTensor {
  count: u32,
  grad: u32,
  param: u32,
  m: u32,
  v: u32,
  decay: u32,
  first: u32,
  workgroups: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// [grad_norm, clip_scale, finite, non-finite count] as f32 bits, from grad_norm.wgsl:finish.
@group(0) @binding(1) var<storage, read> step_state: array<u32>;
@group(0) @binding(2) var<storage, read> flat_tensors: array<FlatTensor>;
@group(0) @binding(3) var<storage, read> grad: array<f32>;
@group(0) @binding(4) var<storage, read_write> param: array<f32>;
// Every tensor's exp_avg and exp_avg_sq.
@group(0) @binding(5) var<storage, read_write> moments: array<f32>;

// update(p, grad, exp_avg, exp_avg_sq, decay): adamw.wgsl's arithmetic, one text for all the kernels.
// INCLUDE adamw_update.wgsl

// The tensor workgroup w works on: the last whose first workgroup is <= w (past every
// tensor's workgroups, the last tensor, whose element index then runs past its count).
fn tensor_of(w: u32) -> FlatTensor {
  var lo = 0u;
  var hi = params.tensors - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) / 2u;
    if (flat_tensors[mid].first <= w) { lo = mid; } else { hi = mid - 1u; }
  }
  return flat_tensors[lo];
}

@compute @workgroup_size(WG)
fn adamw_flat(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  // The flag is compared as bits: exactly 1.0 means finite.
  if (step_state[2] != ONE_BITS) { return; }
  let w = wid.x + wid.y * nwg.x;
  let t = tensor_of(w);
  let i = (w - t.first) * WG + tid;
  // Past the last tensor's workgroups (a 2-D grid's spare ones) i runs past its count too.
  if (i >= t.count) { return; }
  let r = update(param[t.param + i], grad[t.grad + i], moments[t.m + i], moments[t.v + i], bitcast<f32>(t.decay));
  param[t.param + i] = r.x;
  moments[t.m + i] = r.y;
  moments[t.v + i] = r.z;
}

@group(0) @binding(3) var<storage, read> grad4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> param4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> moments4: array<vec4<f32>>;

@compute @workgroup_size(WG4)
fn adamw_flat4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  if (step_state[2] != ONE_BITS) { return; }
  let t = tensor_of(wid.x);
  let decay = bitcast<f32>(t.decay);
  let g0 = t.grad / 4u;
  let p0 = t.param / 4u;
  let m0 = t.m / 4u;
  let v0 = t.v / 4u;
  for (var q = (wid.x - t.first) * WG4 + tid; q < (t.count + 3u) / 4u; q += t.workgroups * WG4) {
    // A tensor's last vec4 may pass its end: those elements (no tensor's) keep their values.
    let inside = vec4<u32>(4u * q) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(t.count);
    let p = param4[p0 + q];
    let m = moments4[m0 + q];
    let v = moments4[v0 + q];
    let r = update4(p, grad4[g0 + q], m, v, decay);
    param4[p0 + q] = select(p, r.p, inside);
    moments4[m0 + q] = select(m, r.m, inside);
    moments4[v0 + q] = select(v, r.v, inside);
  }
}
