// Writes the keys and the values of T new positions into a layer's KV cache: each source
// [B, T, Hkv, Dh] (the layout projections produce) → its cache [B, Hkv, Tmax, Dh] (the layout
// decode attention reads), at positions start .. start + T - 1. One thread per element, keys
// and values in one dispatch (the first `total` threads the keys, the next the values);
// prefill uses T = prompt length, each decode step T = 1.

const WG: u32 = 256u;

struct Params {
  batch: u32,
  tokens: u32,
  heads: u32,
  head_dim: u32,
  max_seq: u32,
  start: u32,
  total: u32, // batch * tokens * heads * head_dim
  _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys_src: array<f32>;
@group(0) @binding(2) var<storage, read_write> keys: array<f32>;
@group(0) @binding(3) var<storage, read> values_src: array<f32>;
@group(0) @binding(4) var<storage, read_write> values: array<f32>;

@compute @workgroup_size(WG)
fn write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * nwg.x * WG;
  if (g >= 2u * params.total) { return; }
  let is_value = g >= params.total;
  let i = select(g, g - params.total, is_value);
  let d = i % params.head_dim;
  let h = (i / params.head_dim) % params.heads;
  let t = (i / (params.head_dim * params.heads)) % params.tokens;
  let b = i / (params.head_dim * params.heads * params.tokens);
  let dst = ((b * params.heads + h) * params.max_seq + params.start + t) * params.head_dim + d;
  if (is_value) { values[dst] = values_src[i]; } else { keys[dst] = keys_src[i]; }
}
