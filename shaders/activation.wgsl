// MLP activations, forward and backward, one thread per element.
// Float64 twin: src/ops/activation.reference.ts.
//
// GELU, tanh approximation (GPT-2's gelu_new), with u = k (x + c x^3), k = sqrt(2/pi), c = 0.044715:
//   gelu(x) = 0.5 x (1 + tanh u) = x * sigmoid(2u)
//   gelu'(x) = sigmoid(2u) + x * 2 sigmoid(2u) (1 - sigmoid(2u)) * k (1 + 3 c x^2)
// The sigmoid form is the same function, but 1 + tanh(u) cancels catastrophically for x < 0
// (at x = -5 it keeps 3 digits in f32); 1 / (1 + exp(-2u)) keeps full relative precision.
// SwiGLU (Llama MLP), inputs gate and up of the same shape:
//   h = silu(gate) * up,  silu(g) = g * sigmoid(g),  silu'(g) = s (1 + g (1 - s)), s = sigmoid(g)
//   d_gate = dh * up * silu'(gate),  d_up = dh * silu(gate)
// Arguments of exp are clamped so no intermediate is ever inf (fast-math safe); the clamps
// change results by less than 1e-30 (absolute).
//
// Dispatches (entry point: bindings after params), ceil(count / WG) workgroups split over (x, y):
//   gelu_forward     x, y
//   gelu_backward    x, dy, dx
//   swiglu_forward   gate, up, h
//   swiglu_backward  gate, up, dh, d_gate, d_up
// Binding numbers are reused across entry points (each declares its own variables).

const WG: u32 = 256u;
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_C: f32 = 0.044715;

struct Params {
  count: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// gelu_forward, gelu_backward.
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

// swiglu_forward, swiglu_backward.
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> h: array<f32>;
@group(0) @binding(3) var<storage, read> dh: array<f32>;
@group(0) @binding(4) var<storage, read_write> d_gate: array<f32>;
@group(0) @binding(5) var<storage, read_write> d_up: array<f32>;

fn element(wid: vec3<u32>, nwg: vec3<u32>, tid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + tid;
}

// Sigmoid of z and e = exp(-z). z is clamped below at -80 so e <= exp(80) = 5.5e34 stays
// finite; sigmoid(-80) = 1.8e-35 is already 0 to f32 precision. Large z only underflows e to 0.
struct Sigmoid { s: f32, e: f32 }

// max/clamp return the other operand for a NaN input on most GPUs, and the clamps map -inf
// to -20 or -80, which would turn a non-finite activation into a finite one and hide a
// corrupted weight from the trainer's NaN guard. So non-finite inputs give what torch gives:
// forward NaN -> NaN, -inf -> NaN (-inf * 0), +inf -> +inf (the plain formula already does);
// backward NaN for any non-finite x (inf * 0 in the derivative). Bit tests: fast-math safe.
fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

// NaN or -inf: the forward outputs that must be NaN.
fn nan_forward(x: f32) -> bool {
  return is_nan(x) || bitcast<u32>(x) == 0xff800000u;
}

// A quiet NaN from x's bits (WGSL rejects NaN constants, so it is made at run time).
fn nan_from(x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(x) | 0x7fc00000u);
}

fn sigmoid(z: f32) -> Sigmoid {
  let e = exp(-max(z, -80.0));
  return Sigmoid(1.0 / (1.0 + e), e);
}

// 2u for GELU. |x| <= 20 already saturates the sigmoid (2u >= 600 at 20), so clamping x keeps
// x^3 finite for any input without changing the result.
fn gelu_two_u(x_in: f32) -> f32 {
  let v = clamp(x_in, -20.0, 20.0);
  return 2.0 * SQRT_2_OVER_PI * (v + GELU_C * v * v * v);
}

@compute @workgroup_size(WG)
fn gelu_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  let v = x[i];
  // Below -20 gelu is under 1e-80: multiply -20, not x, so x = -1e30 cannot give -1e30 * 1.8e-35.
  y[i] = select(max(v, -20.0) * sigmoid(gelu_two_u(v)).s, nan_from(v), nan_forward(v));
}

@compute @workgroup_size(WG)
fn gelu_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  let v = x[i];
  let sg = sigmoid(gelu_two_u(v));
  // s (1 - s) = e s^2 with e = exp(-2u): no 1 - s cancellation.
  let ds = sg.e * sg.s * sg.s;
  let vc = clamp(v, -20.0, 20.0);
  let du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * vc * vc);
  dx[i] = select(dy[i] * (sg.s + 2.0 * vc * ds * du), nan_from(v), !is_finite(v));
}

@compute @workgroup_size(WG)
fn swiglu_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  // Below -80, silu(g) = g e^g is under 1.5e-33: use g = -80 there so g * s stays tiny for
  // any g (g = -1e30 would otherwise give -1e30 * 1.8e-35).
  let raw = gate[i];
  let g = max(raw, -80.0);
  h[i] = select(g * sigmoid(g).s * up[i], nan_from(raw), nan_forward(raw));
}

@compute @workgroup_size(WG)
fn swiglu_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  let raw = gate[i];
  let g = max(raw, -80.0);
  let sg = sigmoid(g);
  let grad = dh[i];
  // 1 - s = e s.
  d_gate[i] = select(grad * up[i] * sg.s * (1.0 + g * sg.e * sg.s), nan_from(raw), !is_finite(raw));
  d_up[i] = select(grad * g * sg.s, nan_from(raw), nan_forward(raw));
}
