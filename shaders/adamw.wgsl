// One AdamW step of one parameter tensor: torch.optim.AdamW (amsgrad=False, maximize=False) in
// torch's operation order, on the gradient clipped by the global norm of grad_norm.wgsl:
//   if step_state.finite != 1: return          (params, m and v untouched: the step is skipped)
//   g = grad * clip_scale
//   p = p * (1 - lr * weight_decay)             (decoupled weight decay, before the update)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The host computes 1 - lr*wd, 1 - beta1, 1 - beta2, lr / (1 - beta1^t) and sqrt(1 - beta2^t)
// in float64 and passes them rounded to f32: in f32, 1 - 0.999 keeps only ~4 significant digits.
// adamw_step: one thread per element; the grid may be 2-D for tensors of more than 65535
// workgroups. adamw_step4 (a software adapter, a tensor of a multiple of 4 values, every binding
// 16-byte aligned): a vec4 an iteration, a few workgroups striding over the tensor; the same
// arithmetic per element, so the same bits. On SwiftShader it took 72-86 ms for 8.4 M values,
// where adamw_step's 33,000 workgroups of one element a thread took about 3x that.

const WG: u32 = 256u;
// adamw_step4's threads per workgroup.
const WG4: u32 = 64u;
const ONE_BITS: u32 = 0x3f800000u;

struct Params {
  count: u32,
  beta1: f32,
  beta2: f32,
  one_minus_beta1: f32,
  one_minus_beta2: f32,
  // 1 - lr * weight_decay
  decay: f32,
  // lr / (1 - beta1^t)
  step_size: f32,
  // sqrt(1 - beta2^t)
  bias_correction2_sqrt: f32,
  eps: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
// [grad_norm, clip_scale, finite, non-finite count] as f32 bits, from grad_norm.wgsl:finish.
@group(0) @binding(2) var<storage, read> step_state: array<u32>;
@group(0) @binding(3) var<storage, read_write> param: array<f32>;
// torch's exp_avg and exp_avg_sq.
@group(0) @binding(4) var<storage, read_write> exp_avg: array<f32>;
@group(0) @binding(5) var<storage, read_write> exp_avg_sq: array<f32>;

@compute @workgroup_size(WG)
fn adamw_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + tid;
  // The flag is compared as bits: exactly 1.0 means finite.
  if (i >= params.count || step_state[2] != ONE_BITS) { return; }
  let r = update(param[i], grad[i], exp_avg[i], exp_avg_sq[i], params.decay);
  param[i] = r.x;
  exp_avg[i] = r.y;
  exp_avg_sq[i] = r.z;
}

// The formula above, one text for adamw.wgsl, adamw_multi.wgsl and adamw_moments.wgsl.
// INCLUDE adamw_update.wgsl

@group(0) @binding(1) var<storage, read> grad4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> param4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> exp_avg4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> exp_avg_sq4: array<vec4<f32>>;

@compute @workgroup_size(WG4)
fn adamw_step4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  if (step_state[2] != ONE_BITS) { return; }
  for (var q = wid.x * WG4 + tid; q < params.count / 4u; q += nwg.x * WG4) {
    let r = update4(param4[q], grad4[q], exp_avg4[q], exp_avg_sq4[q], params.decay);
    param4[q] = r.p;
    exp_avg4[q] = r.m;
    exp_avg_sq4[q] = r.v;
  }
}
