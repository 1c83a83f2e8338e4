// The AdamW update of one element (and update4: of four, through it),
// shared by adamw.wgsl, adamw_multi.wgsl and adamw_moments.wgsl:
// the launcher (src/ops/adamw.ts, includeWgsl) pastes this text where a shader has the line
// `// INCLUDE adamw_update.wgsl`, so the three kernels run one arithmetic and give the same bits.
// torch.optim.AdamW in torch's operation order; adamw.wgsl's header has the formula.
//
// The including shader declares `params` (beta1, beta2, one_minus_beta1, one_minus_beta2,
// step_size, bias_correction2_sqrt, eps) and `step_state` (grad_norm.wgsl:finish's, whose [1]
// holds the clip scale's bits).

// New (param, exp_avg, exp_avg_sq) of one element; `decay` is 1 - lr * weight_decay.
fn update(p: f32, grad: f32, m0: f32, v0: f32, decay: f32) -> vec3<f32> {
  let g = grad * bitcast<f32>(step_state[1]);
  let m = params.beta1 * m0 + params.one_minus_beta1 * g;
  let v = params.beta2 * v0 + params.one_minus_beta2 * g * g;
  let denom = sqrt(v) / params.bias_correction2_sqrt + params.eps;
  return vec3<f32>(p * decay - params.step_size * (m / denom), m, v);
}

// update() on four elements at once (adamw.wgsl's adamw_step4): each component through update()
// itself, so one text holds the arithmetic and the bits are the same. Returns the new params,
// exp_avg and exp_avg_sq.
struct Update4 {
  p: vec4<f32>,
  m: vec4<f32>,
  v: vec4<f32>,
}

fn update4(p: vec4<f32>, grad: vec4<f32>, m0: vec4<f32>, v0: vec4<f32>, decay: f32) -> Update4 {
  let r0 = update(p.x, grad.x, m0.x, v0.x, decay);
  let r1 = update(p.y, grad.y, m0.y, v0.y, decay);
  let r2 = update(p.z, grad.z, m0.z, v0.z, decay);
  let r3 = update(p.w, grad.w, m0.w, v0.w, decay);
  return Update4(vec4<f32>(r0.x, r1.x, r2.x, r3.x), vec4<f32>(r0.y, r1.y, r2.y, r3.y), vec4<f32>(r0.z, r1.z, r2.z, r3.z));
}
