// Float64 reference twin of shaders/embedding.wgsl: plain gather and scatter-add loops.

export interface EmbeddingProblem {
  ids: ArrayLike<number>;
  /** [vocab, dim]. */
  table: ArrayLike<number>;
  dim: number;
  /** Position ids per token and the [positions, dim] table, when the model has one (GPT-2). */
  posIds?: ArrayLike<number>;
  posTable?: ArrayLike<number>;
}

/**
 * out[t, :] = table[ids[t], :] (+ posTable[posIds[t], :]); [tokens, dim]. An id outside its
 * table reads as NaN, as in the kernel.
 */
export function embeddingForwardRef(p: EmbeddingProblem): Float64Array {
  const { dim } = p;
  const out = new Float64Array(p.ids.length * dim);
  const lookup = (table: ArrayLike<number>, id: number, j: number) => (id < table.length / dim ? table[id * dim + j] : NaN);
  for (let t = 0; t < p.ids.length; t++) {
    for (let j = 0; j < dim; j++) {
      let v = lookup(p.table, p.ids[t], j);
      if (p.posIds && p.posTable) v += lookup(p.posTable, p.posIds[t], j);
      out[t * dim + j] = v;
    }
  }
  return out;
}

/**
 * Gradient of sum(dOut * out) with respect to a [rows, dim] table looked up with `ids`:
 * grad[v, :] = init[v, :] + sum over t with ids[t] = v of dOut[t, :], in increasing t.
 */
export function embeddingBackwardRef(
  ids: ArrayLike<number>,
  dOut: ArrayLike<number>,
  rows: number,
  dim: number,
  init?: ArrayLike<number>,
): Float64Array {
  const grad = init ? Float64Array.from(init) : new Float64Array(rows * dim);
  for (let t = 0; t < ids.length; t++) {
    for (let j = 0; j < dim; j++) grad[ids[t] * dim + j] += dOut[t * dim + j];
  }
  return grad;
}
