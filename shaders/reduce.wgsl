// out[slot] = sum_i w[i] * x[i] over n values, in one workgroup with a fixed summation order
// (strided partial sums, then thread 0 adds them in order), so the result is reproducible bit for bit. Used for
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
  // One barrier, then thread 0 in order (a tree's log2(WG) barriers cost a software adapter more).
  workgroupBarrier();
  if (tid == 0u) {
    var total = partial[0];
    for (var t = 1u; t < WG; t++) { total += partial[t]; }
    out[params.slot] = total;
  }
}
