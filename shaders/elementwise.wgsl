// Elementwise ops for the residual stream and gradient bookkeeping, one thread per element.
// Float64 twin: src/ops/elementwise.reference.ts.
//
//   add         out = a + alpha * b      (residual add: alpha = 1; LoRA: base + (alpha/r) * delta)
//   accumulate  acc = acc + alpha * a    (in place: gradient accumulation, residual gradients)
//   scale       out = alpha * a
//   fill        out = alpha              (zero a gradient buffer)
// Backward of add is the identity: d a = d out, d b = alpha * d out (scale when alpha != 1);
// no kernel of its own.
//
// Dispatches (entry point: bindings after params), ceil(count / WG) workgroups split over (x, y):
//   add         a, b, out
//   accumulate  a, acc
//   scale       a, scaled
//   fill        filled
// Binding numbers are reused across entry points (each declares its own variables).

const WG: u32 = 256u;

struct Params {
  count: u32,
  alpha: f32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// add, accumulate, scale.
@group(0) @binding(1) var<storage, read> a: array<f32>;
// add.
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> sum: array<f32>;
// accumulate.
@group(0) @binding(2) var<storage, read_write> acc: array<f32>;
// scale.
@group(0) @binding(2) var<storage, read_write> scaled: array<f32>;
// fill.
@group(0) @binding(1) var<storage, read_write> filled: array<f32>;

fn element(wid: vec3<u32>, nwg: vec3<u32>, tid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + tid;
}

@compute @workgroup_size(WG)
fn add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  sum[i] = a[i] + params.alpha * b[i];
}

@compute @workgroup_size(WG)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  acc[i] = acc[i] + params.alpha * a[i];
}

@compute @workgroup_size(WG)
fn scale(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  scaled[i] = params.alpha * a[i];
}

@compute @workgroup_size(WG)
fn fill(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let i = element(wid, nwg, tid);
  if (i >= params.count) { return; }
  filled[i] = params.alpha;
}
