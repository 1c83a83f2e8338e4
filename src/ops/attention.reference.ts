// Float64 reference twin of shaders/attention.wgsl: causal grouped-query attention over
// left-padded batches with the full score matrix materialised, written for clarity.
// Layouts as in src/ops/attention.ts: q, out [B, T, Hq, Dh]; k, v [B, T, Hkv, Dh];
// lse [B, Hq, T]; decode caches [B, Hkv, Tmax, Dh].
// Every visible key enters every sum, even at probability 0, so a NaN or Inf value reaches
// the output as in torch (0 * NaN = NaN); invisible keys never do.

export interface AttentionProblem {
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  /** Padding tokens at the start of each sequence, [B]. */
  pad: ArrayLike<number>;
  batch: number;
  seqLen: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /** Default 1 / sqrt(headDim). */
  scale?: number;
}

export interface AttentionResult {
  out: Float64Array;
  /** log sum_j exp(s_ij) over visible keys; 0 on padded rows. */
  lse: Float64Array;
}

export interface AttentionGradientsRef {
  dq: Float64Array;
  dk: Float64Array;
  dv: Float64Array;
}

function scaleOf(p: { headDim: number; scale?: number }): number {
  return p.scale ?? 1 / Math.sqrt(p.headDim);
}

function qIndex(p: AttentionProblem, b: number, t: number, h: number): number {
  return ((b * p.seqLen + t) * p.numHeads + h) * p.headDim;
}

function kvIndex(p: AttentionProblem, b: number, t: number, g: number): number {
  return ((b * p.seqLen + t) * p.numKvHeads + g) * p.headDim;
}

function dot(a: ArrayLike<number>, ia: number, b: ArrayLike<number>, ib: number, n: number): number {
  let s = 0;
  for (let d = 0; d < n; d++) s += a[ia + d] * b[ib + d];
  return s;
}

/**
 * Softmax probabilities of row i of (b, h) over keys 0..i (0 for padding keys), or null for a
 * padded row. Also returns the row's log-sum-exp and its first visible key.
 */
function rowProbs(p: AttentionProblem, b: number, h: number, i: number): { probs: Float64Array; lse: number; start: number } | null {
  const start = Math.min(p.pad[b], p.seqLen);
  if (i < start) return null;
  const g = Math.floor(h / (p.numHeads / p.numKvHeads));
  const scale = scaleOf(p);
  const scores = new Float64Array(i + 1);
  let max = -Infinity;
  for (let j = start; j <= i; j++) {
    scores[j] = scale * dot(p.q, qIndex(p, b, i, h), p.k, kvIndex(p, b, j, g), p.headDim);
    max = Math.max(max, scores[j]);
  }
  let sum = 0;
  for (let j = start; j <= i; j++) sum += Math.exp(scores[j] - max);
  const probs = new Float64Array(i + 1);
  for (let j = start; j <= i; j++) probs[j] = Math.exp(scores[j] - max) / sum;
  return { probs, lse: max + Math.log(sum), start };
}

export function attentionForwardRef(p: AttentionProblem): AttentionResult {
  const { batch, seqLen, numHeads, numKvHeads, headDim } = p;
  const out = new Float64Array(batch * seqLen * numHeads * headDim);
  const lse = new Float64Array(batch * numHeads * seqLen);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < numHeads; h++) {
      const g = Math.floor(h / (numHeads / numKvHeads));
      for (let i = 0; i < seqLen; i++) {
        const row = rowProbs(p, b, h, i);
        if (!row) continue;
        lse[(b * numHeads + h) * seqLen + i] = row.lse;
        const o = qIndex(p, b, i, h);
        for (let j = row.start; j <= i; j++) {
          const pj = row.probs[j];
          const vj = kvIndex(p, b, j, g);
          for (let d = 0; d < headDim; d++) out[o + d] += pj * p.v[vj + d];
        }
      }
    }
  }
  return { out, lse };
}

/** Gradients of L = sum(dout * out) with respect to q, k and v (dk, dv summed over each group). */
export function attentionBackwardRef(p: AttentionProblem, dout: ArrayLike<number>): AttentionGradientsRef {
  const { batch, seqLen, numHeads, numKvHeads, headDim } = p;
  const scale = scaleOf(p);
  const dq = new Float64Array(batch * seqLen * numHeads * headDim);
  const dk = new Float64Array(batch * seqLen * numKvHeads * headDim);
  const dv = new Float64Array(batch * seqLen * numKvHeads * headDim);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < numHeads; h++) {
      const g = Math.floor(h / (numHeads / numKvHeads));
      for (let i = 0; i < seqLen; i++) {
        const row = rowProbs(p, b, h, i);
        if (!row) continue;
        const o = qIndex(p, b, i, h);
        // dP_ij = dout_i . v_j;  dS_ij = P_ij (dP_ij - sum_l P_il dP_il)
        const dP = new Float64Array(i + 1);
        let weighted = 0;
        for (let j = row.start; j <= i; j++) {
          dP[j] = dot(dout, o, p.v, kvIndex(p, b, j, g), headDim);
          weighted += row.probs[j] * dP[j];
        }
        for (let j = row.start; j <= i; j++) {
          const pj = row.probs[j];
          const kj = kvIndex(p, b, j, g);
          const dS = pj * (dP[j] - weighted);
          for (let d = 0; d < headDim; d++) {
            dq[o + d] += scale * dS * p.k[kj + d];
            dk[kj + d] += scale * dS * p.q[o + d];
            dv[kj + d] += pj * dout[o + d];
          }
        }
      }
    }
  }
  return { dq, dk, dv };
}

export interface AttentionDecodeProblem {
  /** [B, Hq, Dh]: the new token of each sequence. */
  q: ArrayLike<number>;
  /** [B, Hkv, Tmax, Dh]. */
  kcache: ArrayLike<number>;
  vcache: ArrayLike<number>;
  pad: ArrayLike<number>;
  batch: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  maxSeqLen: number;
  /** Keys [pad[b], length) are attended. */
  length: number;
  scale?: number;
}

/** out [B, Hq, Dh]: softmax over cache positions [pad[b], length); 0 where none is left. */
export function attentionDecodeRef(p: AttentionDecodeProblem): Float64Array {
  const { batch, numHeads, numKvHeads, headDim, maxSeqLen, length } = p;
  const scale = scaleOf(p);
  const out = new Float64Array(batch * numHeads * headDim);
  for (let b = 0; b < batch; b++) {
    const start = Math.min(p.pad[b], length);
    if (start >= length) continue;
    for (let h = 0; h < numHeads; h++) {
      const g = Math.floor(h / (numHeads / numKvHeads));
      const qi = (b * numHeads + h) * headDim;
      const cache = (b * numKvHeads + g) * maxSeqLen;
      const scores: number[] = [];
      for (let j = start; j < length; j++) scores.push(scale * dot(p.q, qi, p.kcache, (cache + j) * headDim, headDim));
      const max = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - max));
      const sum = weights.reduce((a, x) => a + x, 0);
      for (let j = start; j < length; j++) {
        const w = weights[j - start] / sum;
        const vj = (cache + j) * headDim;
        for (let d = 0; d < headDim; d++) out[qi + d] += w * p.vcache[vj + d];
      }
    }
  }
  return out;
}
