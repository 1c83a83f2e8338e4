// adamw.wgsl's update over several parameter tensors in one dispatch: ceil(T / TENSORS)
// dispatches per optimizer step instead of T. The arithmetic per element is adamw.wgsl's
// (torch.optim.AdamW, clip scale and finite flag from grad_norm.wgsl's step state; the same
// text, adamw_update.wgsl); see there.
// Float64 twin: src/ops/adamw.reference.ts.
//
// WGSL cannot index an array of buffers, so the launcher (src/ops/adamw.ts) writes four
// bindings per tensor (grad, param, exp_avg, exp_avg_sq): it replaces TENSORS and the marked
// lines below, `#` standing for the tensor's number and `$b` for its first binding.

const WG: u32 = 256u;
const TENSORS: u32 = 2u;
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
  // Tensors bound in this dispatch (<= TENSORS).
  tensors: u32,
  // Per tensor: (elements, first workgroup here, bits of 1 - lr * its weight_decay, unused).
  t: array<vec4<u32>, TENSORS>,
}

@group(0) @binding(0) var<uniform> params: Params;
// [grad_norm, clip_scale, finite, non-finite count] as f32 bits, from grad_norm.wgsl:finish.
@group(0) @binding(1) var<storage, read> step_state: array<u32>;
// TENSOR_BINDING @group(0) @binding($b) var<storage, read> g#: array<f32>; @group(0) @binding($b+1) var<storage, read_write> p#: array<f32>; @group(0) @binding($b+2) var<storage, read_write> m#: array<f32>; @group(0) @binding($b+3) var<storage, read_write> v#: array<f32>;

// update(p, grad, exp_avg, exp_avg_sq, decay): adamw.wgsl's arithmetic, one text for all three kernels.
// INCLUDE adamw_update.wgsl

@compute @workgroup_size(WG)
fn adamw_step_multi(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) tid: u32) {
  let w = wid.x + wid.y * nwg.x;
  var j = 0u;
  for (var k = 1u; k < params.tensors; k++) {
    if (w >= params.t[k].y) { j = k; }
  }
  let e = params.t[j];
  let i = (w - e.y) * WG + tid;
  // The flag is compared as bits: exactly 1.0 means finite.
  if (j >= params.tensors || i >= e.x || step_state[2] != ONE_BITS) { return; }
  let decay = bitcast<f32>(e.z);
  switch j {
    // TENSOR_CASE case #u: { let r = update(p#[i], g#[i], m#[i], v#[i], decay); p#[i] = r.x; m#[i] = r.y; v#[i] = r.z; }
    default: {}
  }
}
