// out[slot] = sum_i w[i] * x[i] over n values, in one workgroup with a fixed summation order
// (strided partial sums, then a tree), so the result is reproducible bit for bit. Used for
// scalar losses (e.g. SFT cross-entropy: x = log-probs, w = -mask / count) that are the only
// thing a training step reads back.

const WG: u32 = 256u;

struct Params {
  n: u32,
  slot: u32,
  _a: u32,
  _b: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn weighted_sum(@builtin(local_invocation_index) tid: u32) {
  var s = 0.0;
  for (var i = tid; i < params.n; i += WG) {
    // Skip zero weights so masked entries (possibly -inf log-probs) cannot make NaN.
    if (w[i] != 0.0) { s += w[i] * x[i]; }
  }
  partial[tid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (tid < stride) { partial[tid] += partial[tid + stride]; }
    workgroupBarrier();
  }
  if (tid == 0u) { out[params.slot] = partial[0]; }
}
