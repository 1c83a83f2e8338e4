// The fused epilogues of the matmul kernels (matmul.wgsl, matmul_blocked.wgsl): GELU and its
// derivative, and the store that applies EPILOGUE. Pasted where a shader has
// `// INCLUDE matmul_epilogue.wgsl`; that shader declares `override EPILOGUE: u32` and the
// bindings `c` (f32), `c4` (vec4<f32>) and `extra` (f32) these functions write.
//   EPILOGUE 1 residual:       C = product + extra          (extra laid out like C)
//   EPILOGUE 2 gelu:           C = product; extra = gelu(C)
//   EPILOGUE 3 gelu_backward:  C = product * gelu'(extra)   (extra: the pre-activation)

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_C: f32 = 0.044715;

// GELU (tanh approximation, gelu_new) and its derivative exactly as shaders/activation.wgsl
// computes them (same sigmoid forms, clamps and non-finite rules), so a fused epilogue gives
// the same bits as the separate activation dispatch it replaces.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }
fn nan_from(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | 0x7fc00000u); }
fn sigmoid_e(z: f32) -> vec2<f32> {
  let e = exp(-max(z, -80.0));
  return vec2<f32>(1.0 / (1.0 + e), e);
}
fn gelu_two_u(x_in: f32) -> f32 {
  let v = clamp(x_in, -20.0, 20.0);
  return 2.0 * SQRT_2_OVER_PI * (v + GELU_C * v * v * v);
}
fn gelu(v: f32) -> f32 {
  let nan_forward = is_nan(v) || bitcast<u32>(v) == 0xff800000u;
  return select(max(v, -20.0) * sigmoid_e(gelu_two_u(v)).x, nan_from(v), nan_forward);
}
/** gelu'(v), NaN for non-finite v. */
fn gelu_grad(v: f32) -> f32 {
  let sg = sigmoid_e(gelu_two_u(v));
  let ds = sg.y * sg.x * sg.x;
  let vc = clamp(v, -20.0, 20.0);
  let du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * vc * vc);
  return select(sg.x + 2.0 * vc * ds * du, nan_from(v), !is_finite(v));
}

/** Writes C[index] = v (alpha, beta and bias already applied) through the epilogue. */
fn store_fused(index: u32, v: f32) {
  if (EPILOGUE == 1u) {
    c[index] = v + extra[index];
  } else if (EPILOGUE == 2u) {
    c[index] = v;
    extra[index] = gelu(v);
  } else if (EPILOGUE == 3u) {
    c[index] = v * gelu_grad(extra[index]);
  } else {
    c[index] = v;
  }
}

/** store_fused for 4 adjacent columns; C is written as one vec4, extra element by element. */
fn store_fused4(slot: u32, v: vec4<f32>) {
  let i = slot * 4u;
  if (EPILOGUE == 1u) {
    c4[slot] = v + vec4<f32>(extra[i], extra[i + 1u], extra[i + 2u], extra[i + 3u]);
  } else if (EPILOGUE == 2u) {
    c4[slot] = v;
    for (var j = 0u; j < 4u; j++) { extra[i + j] = gelu(v[j]); }
  } else if (EPILOGUE == 3u) {
    let g = vec4<f32>(gelu_grad(extra[i]), gelu_grad(extra[i + 1u]), gelu_grad(extra[i + 2u]), gelu_grad(extra[i + 3u]));
    c4[slot] = v * g;
  } else {
    c4[slot] = v;
  }
}
