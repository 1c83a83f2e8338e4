// Launcher for shaders/embedding.wgsl: token (+ position) embedding lookup, and its
// deterministic scatter-add backward. Layouts: ids, posIds [tokens] u32; table [vocab, dim];
// posTable [positions, dim]; out, dOut [tokens, dim]; gradients have their table's layout.
import code from '../../shaders/embedding.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Binding, Recorder } from '../gpu/recorder';
import type { KernelSpec } from '../gpu/pipelineCache';
import { checkBinding, recordFill } from './elementwise';

const WORKGROUP = 256;
const READ = 'read-only-storage';

function spec(entryPoint: string, bindings: KernelSpec['bindings']): KernelSpec {
  return { name: 'embedding', code, entryPoint, bindings };
}

const GATHER = spec('gather', ['uniform', READ, READ, 'storage']);
const GATHER_POS = spec('gather_pos', ['uniform', READ, READ, 'storage', READ, READ]);
const SCATTER_ADD = spec('scatter_add', ['uniform', READ, READ, 'storage']);

export interface EmbeddingShape {
  tokens: number;
  dim: number;
  /** Rows of the token table. */
  vocab: number;
  /** Rows of the learned position table (GPT-2's n_positions); absent or 0 when there is none. */
  positions?: number;
}

export interface PositionEmbedding {
  /** [tokens] u32 position id per token. */
  ids: GPUBuffer;
  /** [positions, dim]. */
  table: Binding;
}

function checkCount(name: string, n: number, min: number): void {
  if (!Number.isInteger(n) || n < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${n}`);
}

export function validateEmbeddingShape(shape: EmbeddingShape, maxBindingBytes: number): void {
  const { tokens, dim, vocab, positions = 0 } = shape;
  checkCount('tokens', tokens, 1);
  checkCount('dim', dim, 1);
  checkCount('vocab', vocab, 1);
  checkCount('positions', positions, 0);
  const limit = Math.min(maxBindingBytes, 2 ** 32 - 4);
  for (const [name, rows] of [['table', vocab], ['position table', positions], ['output', tokens]] as const) {
    if (rows * dim * 4 > limit) {
      throw new RangeError(`${name} of ${rows} x ${dim} floats exceeds this GPU's storage binding limit of ${limit} bytes`);
    }
  }
}

function paramsFor(tokens: number, dim: number, rows: number, positions: number, unique: number, accumulate: boolean): Uint32Array {
  return new Uint32Array([tokens, dim, rows, positions, unique, accumulate ? 1 : 0, 0, 0]);
}

/**
 * Records out[t] = table[ids[t]] (+ pos.table[pos.ids[t]]). Ids at or beyond their table's
 * rows read as NaN rows (ids on the GPU cannot be checked here; runEmbedding checks host ids),
 * so the sampler's NO_TOKEN poisons what follows rather than reading as a plausible input.
 * Returns a pooled [tokens, dim] buffer.
 */
export function recordEmbeddingForward(
  rt: GpuRuntime,
  rec: Recorder,
  shape: EmbeddingShape,
  ids: GPUBuffer,
  table: Binding,
  pos?: PositionEmbedding,
): GPUBuffer {
  validateEmbeddingShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const { tokens, dim, vocab, positions = 0 } = shape;
  if (pos && positions < 1) throw new RangeError('a position table needs positions >= 1 in the shape');
  if (!pos && positions > 0) throw new RangeError(`positions = ${positions} but no position ids and table were given`);
  checkBinding('embedding', 'ids', ids, tokens);
  checkBinding('embedding', 'table', table, vocab * dim);
  if (pos) {
    checkBinding('embedding', 'position ids', pos.ids, tokens);
    checkBinding('embedding', 'position table', pos.table, positions * dim);
  }
  const out = rt.storage(tokens * dim * 4, 'embedding.out');
  const params = rec.uniform(paramsFor(tokens, dim, vocab, positions, 0, false));
  const [y, z] = rt.grid(tokens);
  const columns = Math.ceil(dim / WORKGROUP);
  if (pos) rec.dispatch(rt.pipeline(GATHER_POS), [params, ids, table, out, pos.ids, pos.table], columns, y, z);
  else rec.dispatch(rt.pipeline(GATHER), [params, ids, table, out], columns, y, z);
  return out;
}

/** CSR of token positions per id: one u32 array [unique ids (U) | offsets (U + 1) | positions (T)]. */
export interface ScatterIndex {
  unique: number;
  data: Uint32Array;
}

/**
 * Groups token positions by id: unique ids ascending, and each id's positions ascending, so
 * the backward sums every row in one fixed order. Throws a RangeError naming the first id
 * outside [0, rows).
 */
export function buildScatterIndex(ids: ArrayLike<number>, rows: number, name = 'ids'): ScatterIndex {
  const tokens = ids.length;
  for (let t = 0; t < tokens; t++) {
    const id = ids[t];
    if (!Number.isInteger(id) || id < 0 || id >= rows) {
      throw new RangeError(`${name}[${t}] = ${id} is outside the table of ${rows} rows`);
    }
  }
  const order = Array.from({ length: tokens }, (_, t) => t).sort((a, b) => ids[a] - ids[b] || a - b);
  const uniqueIds: number[] = [];
  const offsets: number[] = [];
  for (let p = 0; p < tokens; p++) {
    if (p === 0 || ids[order[p]] !== ids[order[p - 1]]) {
      uniqueIds.push(ids[order[p]]);
      offsets.push(p);
    }
  }
  offsets.push(tokens);
  const unique = uniqueIds.length;
  const data = new Uint32Array(2 * unique + 1 + tokens);
  data.set(uniqueIds, 0);
  data.set(offsets, unique);
  data.set(order, 2 * unique + 1);
  return { unique, data };
}

/**
 * Records dTable[v] (+)= sum over t with ids[t] = v of dOut[t] for a [rows, dim] table (the
 * token table, or the position table with position ids). `ids` are the host copies of the
 * ids the forward pass used. With `into` the sums are added to that buffer (returned);
 * otherwise a pooled buffer is zero-filled and returned. Bit-for-bit reproducible.
 */
export function recordEmbeddingBackward<Into extends Binding = GPUBuffer>(
  rt: GpuRuntime,
  rec: Recorder,
  dOut: GPUBuffer,
  ids: ArrayLike<number>,
  shape: { dim: number; rows: number },
  into?: Into,
): Into | GPUBuffer {
  const { dim, rows } = shape;
  const tokens = ids.length;
  validateEmbeddingShape({ tokens, dim, vocab: rows }, rt.device.limits.maxStorageBufferBindingSize);
  checkBinding('embedding backward', 'dOut', dOut, tokens * dim);
  if (into) checkBinding('embedding backward', 'gradient', into, rows * dim);
  const index = buildScatterIndex(ids, rows);
  const grad = into ?? rt.storage(rows * dim * 4, 'embedding.grad');
  if (!into) recordFill(rt, rec, grad, rows * dim, 0);
  const csr = rec.scratch(index.data.byteLength, 'embedding.csr');
  rt.device.queue.writeBuffer(csr, 0, index.data.buffer, index.data.byteOffset, index.data.byteLength);
  const params = rec.uniform(paramsFor(tokens, dim, rows, 0, index.unique, into !== undefined));
  const [x, y] = rt.grid(index.unique);
  rec.dispatch(rt.pipeline(SCATTER_ADD), [params, csr, dOut, grad], x, y);
  return grad;
}

export interface EmbeddingHostInput extends EmbeddingShape {
  ids: Uint32Array;
  table: Float32Array;
  posIds?: Uint32Array;
  posTable?: Float32Array;
  /** Upstream gradient [tokens, dim]; when given, the backward pass runs too. */
  dOut?: Float32Array;
  /** Existing gradients to accumulate into. */
  dTableInit?: Float32Array;
  dPosInit?: Float32Array;
}

export interface EmbeddingHostOutput {
  out: Float32Array;
  dTable?: Float32Array;
  dPos?: Float32Array;
}

/** Host arrays in, host arrays out: forward (and backward when dOut is given), one submission. */
export async function runEmbedding(rt: GpuRuntime, input: EmbeddingHostInput): Promise<EmbeddingHostOutput> {
  validateEmbeddingShape(input, rt.device.limits.maxStorageBufferBindingSize);
  const { tokens, dim, vocab, positions = 0 } = input;
  const expect = (name: string, v: ArrayLike<number> | undefined, n: number) => {
    if (v && v.length !== n) throw new RangeError(`embedding: ${name} has ${v.length} values, expected ${n}`);
  };
  expect('ids', input.ids, tokens);
  expect('table', input.table, vocab * dim);
  expect('posIds', input.posIds, tokens);
  expect('posTable', input.posTable, positions * dim);
  expect('dOut', input.dOut, tokens * dim);
  expect('dTableInit', input.dTableInit, vocab * dim);
  expect('dPosInit', input.dPosInit, positions * dim);
  const hasPos = positions > 0;
  if (hasPos !== (input.posIds !== undefined) || hasPos !== (input.posTable !== undefined)) {
    throw new RangeError('embedding: positions > 0, posIds and posTable go together');
  }
  if ((input.dTableInit || input.dPosInit) && !input.dOut) throw new RangeError('embedding: gradient inits need dOut');
  if (input.dPosInit && !hasPos) throw new RangeError('embedding: dPosInit without a position table');
  // Host ids are checked here, so the GPU never sees an id outside its table.
  buildScatterIndex(input.ids, vocab, 'ids');
  if (input.posIds) buildScatterIndex(input.posIds, positions, 'posIds');

  const rec = rt.recorder('embedding');
  const owned: GPUBuffer[] = [];
  const upload = (v: ArrayBufferView, label: string) => {
    const b = rt.upload(v, label);
    owned.push(b);
    return b;
  };
  try {
    const ids = upload(input.ids, 'ids');
    const table = upload(input.table, 'table');
    const pos =
      input.posIds && input.posTable
        ? { ids: upload(input.posIds, 'pos_ids'), table: upload(input.posTable, 'pos_table') }
        : undefined;
    const out = recordEmbeddingForward(rt, rec, input, ids, table, pos);
    owned.push(out);
    const outRead = rec.readF32(out, tokens * dim);
    let dTableRead: Promise<Float32Array> | undefined;
    let dPosRead: Promise<Float32Array> | undefined;
    if (input.dOut) {
      const dOut = upload(input.dOut, 'd_out');
      const into = input.dTableInit ? upload(input.dTableInit, 'd_table') : undefined;
      const dTable = recordEmbeddingBackward(rt, rec, dOut, input.ids, { dim, rows: vocab }, into);
      if (!into) owned.push(dTable);
      dTableRead = rec.readF32(dTable, vocab * dim);
      if (input.posIds) {
        const posInto = input.dPosInit ? upload(input.dPosInit, 'd_pos') : undefined;
        const dPos = recordEmbeddingBackward(rt, rec, dOut, input.posIds, { dim, rows: positions }, posInto);
        if (!posInto) owned.push(dPos);
        dPosRead = rec.readF32(dPos, positions * dim);
      }
    }
    await rec.submit();
    return { out: await outRead, dTable: dTableRead && (await dTableRead), dPos: dPosRead && (await dPosRead) };
  } finally {
    rt.release(...owned);
  }
}
