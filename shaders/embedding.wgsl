// Embedding lookup (token table, plus an optional learned position table as in GPT-2) and
// its deterministic scatter-add backward. Float64 twin: src/ops/embedding.reference.ts.
//
// Forward, T tokens, width D:
//   out[t, :] = table[ids[t], :]  (+ pos_table[pos_ids[t], :] in gather_pos)
// An id at or beyond its table's row count reads as a NaN row (the launcher's host helper
// rejects such ids before they get here; ids made on the GPU cannot be checked there). NaN,
// not zeros: the sampler's "no token" id (0xffffffff, for a row of NaN logits) must keep
// poisoning what follows instead of becoming a plausible input.
//
// Backward: dtable[v, :] = sum over t with ids[t] = v of dout[t, :]. No float atomics: the
// launcher builds a CSR index on the host, one u32 array
//   [unique ids (U) | offsets (U + 1) | token positions (T)],
// where the token positions of unique id k are positions[offsets[k] .. offsets[k + 1]) in
// increasing order. One workgroup per unique id sums its rows in that order, so the result
// is the same bits on every run. Rows of dtable that no token uses are left untouched (the
// launcher zero-fills a fresh gradient first); accumulate = 1 adds into existing values.
//
// Dispatches (entry point: bindings after params):
//   gather       (ceil(D/WG), T split over (y, z)):  ids, table, out
//   gather_pos   (ceil(D/WG), T split over (y, z)):  ids, table, out, pos_ids, pos_table
//   scatter_add  one workgroup per unique id:        index, dout, dtable
// Binding numbers are reused across entry points (each declares its own variables).

const WG: u32 = 256u;

struct Params {
  tokens: u32,
  dim: u32,
  // Rows of the table being read (gather) or written (scatter_add).
  rows: u32,
  // gather_pos: rows of the position table.
  positions: u32,
  // scatter_add: number of unique ids U.
  unique: u32,
  // scatter_add: 1 adds into dtable, 0 overwrites the rows it touches.
  accumulate: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// gather, gather_pos.
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// gather_pos.
@group(0) @binding(4) var<storage, read> pos_ids: array<u32>;
@group(0) @binding(5) var<storage, read> pos_table: array<f32>;

// scatter_add.
@group(0) @binding(1) var<storage, read> index: array<u32>;
@group(0) @binding(2) var<storage, read> dout: array<f32>;
@group(0) @binding(3) var<storage, read_write> dtable: array<f32>;

// A quiet NaN. WGSL rejects NaN constants, so the bits come from a run-time value.
fn quiet_nan(runtime_bits: u32) -> f32 {
  return bitcast<f32>(runtime_bits | 0x7fc00000u);
}

fn token_value(t: u32, j: u32) -> f32 {
  let id = ids[t];
  if (id >= params.rows) { return quiet_nan(id); }
  return table[id * params.dim + j];
}

@compute @workgroup_size(WG)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) tid: u32) {
  let j = wid.x * WG + tid;
  let t = wid.y + wid.z * nwg.y;
  if (j >= params.dim || t >= params.tokens) { return; }
  out[t * params.dim + j] = token_value(t, j);
}

@compute @workgroup_size(WG)
fn gather_pos(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) tid: u32) {
  let j = wid.x * WG + tid;
  let t = wid.y + wid.z * nwg.y;
  if (j >= params.dim || t >= params.tokens) { return; }
  var v = token_value(t, j);
  let p = pos_ids[t];
  if (p < params.positions) {
    v += pos_table[p * params.dim + j];
  } else {
    v = quiet_nan(p);
  }
  out[t * params.dim + j] = v;
}

@compute @workgroup_size(WG)
fn scatter_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  let k = wid.x + wid.y * nwg.x;
  let unique = params.unique;
  if (k >= unique) { return; }
  let id = index[k];
  if (id >= params.rows) { return; }
  let start = index[unique + k];
  let end = index[unique + k + 1u];
  let positions = 2u * unique + 1u;
  let dim = params.dim;
  for (var j = tid; j < dim; j += WG) {
    var s = 0.0;
    for (var p = start; p < end; p++) { s += dout[index[positions + p] * dim + j]; }
    let o = id * dim + j;
    dtable[o] = select(s, dtable[o] + s, params.accumulate == 1u);
  }
}
