// The first pass of grad_norm.wgsl (partial_sums) over several gradient tensors in one
// dispatch: a step of a model with T parameter tensors needs ceil(T / TENSORS) dispatches here
// instead of T. Each tensor keeps the workgroups, element -> thread assignment, tree order and
// partial slots that partial_sums gives it, so the partials (and the norm) are bit-identical
// to the one-tensor kernel's; sums_finish of grad_norm.wgsl then runs unchanged.
// Float64 twin: src/ops/gradNorm.reference.ts (the same sums).
//
// WGSL cannot index an array of buffers, so the launcher (src/ops/gradNorm.ts) writes one
// binding per tensor: it replaces TENSORS and the two marked lines below (declarations and
// switch cases, `#` standing for the tensor's number) for each group size it uses.

const WG: u32 = 64u;
const TENSORS: u32 = 2u;
const ABS_MASK: u32 = 0x7fffffffu;
const INF_BITS: u32 = 0x7f800000u;

struct Params {
  // Tensors bound in this dispatch (<= TENSORS).
  tensors: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
  // Per tensor: (elements, first partial slot, partials = its workgroups, first workgroup here).
  t: array<vec4<u32>, TENSORS>,
}

@group(0) @binding(0) var<uniform> params: Params;
// Partials [3 per slot: sum bits, NaN count, Inf count], as partial_sums writes them.
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
// TENSOR_BINDING @group(0) @binding($b) var<storage, read> g#: array<u32>;

fn load(j: u32, i: u32) -> u32 {
  switch j {
    // TENSOR_CASE case #u: { return g#[i]; }
    default: { return 0u; }
  }
}

var<workgroup> wg_sum: array<f32, WG>;
var<workgroup> wg_a: array<u32, WG>;
var<workgroup> wg_b: array<u32, WG>;

fn is_nan_bits(u: u32) -> bool {
  return (u & ABS_MASK) > INF_BITS;
}

fn is_inf_bits(u: u32) -> bool {
  return (u & ABS_MASK) == INF_BITS;
}

// grad_norm.wgsl's reduce: the same order. Must be called in uniform control flow.
fn reduce(tid: u32, sum: f32, a: u32, b: u32) {
  wg_sum[tid] = sum;
  wg_a[tid] = a;
  wg_b[tid] = b;
  workgroupBarrier();
  // Thread 0 adds the WG values in order: one barrier instead of a tree of log2(WG), which a
  // software adapter pays for as a context switch of every thread of the workgroup.
  if (tid == 0u) {
    for (var k = 1u; k < WG; k++) {
      wg_sum[0] += wg_sum[k];
      wg_a[0] += wg_a[k];
      wg_b[0] += wg_b[k];
    }
  }
}

@compute @workgroup_size(WG)
fn partial_sums_multi(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  // Which tensor this workgroup serves (workgroup-uniform: from wid and the uniform table).
  var j = 0u;
  for (var k = 1u; k < params.tensors; k++) {
    if (wid.x >= params.t[k].w) { j = k; }
  }
  let e = params.t[j];
  let chunk = wid.x - e.w;
  // As partial_sums with nwg.x = this tensor's partials.
  let stride = e.z * WG;
  var sum = 0.0;
  var nan = 0u;
  var inf = 0u;
  for (var i = chunk * WG + tid; i < e.x; i += stride) {
    let u = load(j, i);
    if (is_nan_bits(u)) {
      nan += 1u;
    } else if (is_inf_bits(u)) {
      inf += 1u;
    } else {
      let g = bitcast<f32>(u);
      sum += g * g;
    }
  }
  reduce(tid, sum, nan, inf);
  if (tid == 0u) {
    let slot = 3u * (e.y + chunk);
    dst[slot] = bitcast<u32>(wg_sum[0]);
    dst[slot + 1u] = wg_a[0];
    dst[slot + 2u] = wg_b[0];
  }
}
