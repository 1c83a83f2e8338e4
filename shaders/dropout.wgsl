// Inverted dropout with a counter-based mask (LoRA's lora_dropout). Element i is kept iff
// hash(seed, i) >> 8 >= threshold, where threshold = ceil(p * 2^24); kept values are scaled by
// 1 / (1 - p). The mask is a pure function of (seed, i), so the backward pass regenerates it
// instead of storing it, and because dropout is linear its backward is the same map applied to
// the upstream gradient. Float64 twin: src/ops/dropout.reference.ts.
//
//   apply       out = mask(x)          bindings: params, x, out
//   accumulate  acc = acc + mask(x)    bindings: params, x, acc
// ceil(count / WG) workgroups split over (x, y).

const WG: u32 = 256u;

struct Params {
  count: u32,
  seed: u32,
  threshold: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
// apply.
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
// accumulate.
@group(0) @binding(2) var<storage, read_write> acc: array<f32>;

fn pcg(v: u32) -> u32 {
  let state = v * 747796405u + 2891336453u;
  let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

fn kept(i: u32) -> f32 {
  let h = pcg(params.seed ^ pcg(i));
  return select(0.0, params.scale, (h >> 8u) >= params.threshold);
}

fn element(wid: vec3<u32>, nwg: vec3<u32>, tid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + tid;
}

@compute @workgroup_size(WG)
fn apply(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  out[i] = x[i] * kept(i);
}

@compute @workgroup_size(WG)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  acc[i] = acc[i] + x[i] * kept(i);
}
