// Float64 twin of loraLinear.ts (one adapter, its dropout included): the output delta
// scale·(drop(x)·Aᵀ)·B_jᵀ of each block and the gradients of Σ_j <dy_j, delta_j>.
import { dropoutRef } from '../ops/dropout.reference';

export interface LoraRefInput {
  rows: number;
  inDim: number;
  r: number;
  scale: number;
  /** [rows, inDim]. */
  x: ArrayLike<number>;
  /** [r, inDim]. */
  a: ArrayLike<number>;
  /** B_j [outDim_j, r]. */
  b: ArrayLike<number>[];
  outDims: number[];
  dropout: { p: number; seed: number } | null;
}

function input(s: LoraRefInput): ArrayLike<number> {
  return s.dropout && s.dropout.p > 0 ? dropoutRef(s.x, s.dropout.p, s.dropout.seed) : s.x;
}

/** H = drop(x)·Aᵀ [rows, r] and each block's delta [rows, outDim_j]. */
export function loraForwardRef(s: LoraRefInput): { h: Float64Array; deltas: Float64Array[] } {
  const xd = input(s);
  const h = new Float64Array(s.rows * s.r);
  for (let i = 0; i < s.rows; i++)
    for (let q = 0; q < s.r; q++) {
      let sum = 0;
      for (let c = 0; c < s.inDim; c++) sum += xd[i * s.inDim + c] * s.a[q * s.inDim + c];
      h[i * s.r + q] = sum;
    }
  const deltas = s.b.map((b, j) => {
    const out = s.outDims[j];
    const d = new Float64Array(s.rows * out);
    for (let i = 0; i < s.rows; i++)
      for (let o = 0; o < out; o++) {
        let sum = 0;
        for (let q = 0; q < s.r; q++) sum += h[i * s.r + q] * b[o * s.r + q];
        d[i * out + o] = s.scale * sum;
      }
    return d;
  });
  return { h, deltas };
}

/** Gradients of Σ_j <dys[j], delta_j> with respect to x, A and every B_j. */
export function loraBackwardRef(s: LoraRefInput, dys: ArrayLike<number>[]): { dx: Float64Array; dA: Float64Array; dB: Float64Array[] } {
  const xd = input(s);
  const { h } = loraForwardRef(s);
  const dh = new Float64Array(s.rows * s.r);
  const dB = s.b.map((b, j) => {
    const out = s.outDims[j];
    const g = new Float64Array(out * s.r);
    for (let i = 0; i < s.rows; i++)
      for (let o = 0; o < out; o++) {
        const dy = s.scale * dys[j][i * out + o];
        for (let q = 0; q < s.r; q++) {
          dh[i * s.r + q] += dy * b[o * s.r + q];
          g[o * s.r + q] += dy * h[i * s.r + q];
        }
      }
    return g;
  });
  const dA = new Float64Array(s.r * s.inDim);
  const dxd = new Float64Array(s.rows * s.inDim);
  for (let i = 0; i < s.rows; i++)
    for (let q = 0; q < s.r; q++) {
      const g = dh[i * s.r + q];
      for (let c = 0; c < s.inDim; c++) {
        dA[q * s.inDim + c] += g * xd[i * s.inDim + c];
        dxd[i * s.inDim + c] += g * s.a[q * s.inDim + c];
      }
    }
  const dx = s.dropout && s.dropout.p > 0 ? dropoutRef(dxd, s.dropout.p, s.dropout.seed) : dxd;
  return { dx, dA, dB };
}
