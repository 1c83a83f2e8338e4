// Rotary position embedding, Hugging Face Llama convention (rotate_half), and its backward.
//
// x, y [N, H, DH] with N = B * T tokens; positions [N] (u32); table [P, DH / 2, 2] holding
// (cos, sin) of angle = pos * inv_freq_i, inv_freq_i = theta^(-2i / DH), built on the host in
// the f32 numbers Hugging Face computes (GPU sin/cos of large angles are too coarse). For the
// pair (x_i, x_(i + DH/2)), i < DH/2:
//   y_i = x_i cos - x_(i + DH/2) sin,   y_(i + DH/2) = x_(i + DH/2) cos + x_i sin.
// The map is a rotation, so its backward is the rotation by -angle: sign = -1 negates sin.
// One thread per pair. Positions past the table are clamped to its last row (the launcher
// validates them on the host).

const WG: u32 = 256u;

struct Params {
  // N * H * DH / 2
  pairs: u32,
  num_heads: u32,
  half_dim: u32,
  max_positions: u32,
  // +1 forward, -1 backward
  sign: f32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<u32>;
@group(0) @binding(3) var<storage, read> table: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let idx = (wid.x + wid.y * nwg.x) * WG + tid;
  if (idx >= params.pairs) { return; }
  let half = params.half_dim;
  let i = idx % half;
  let row = idx / half; // token * H + head
  let pos = min(positions[row / params.num_heads], params.max_positions - 1u);
  let t = 2u * (pos * half + i);
  let c = table[t];
  let s = table[t + 1u] * params.sign;
  let base = row * 2u * half;
  let x0 = x[base + i];
  let x1 = x[base + i + half];
  y[base + i] = x0 * c - x1 * s;
  y[base + i + half] = x1 * c + x0 * s;
}
