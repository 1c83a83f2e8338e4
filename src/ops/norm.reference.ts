// Float64 reference twin of shaders/norm.wgsl: LayerNorm and RMSNorm, forward and backward,
// in plain two-pass loops. Layouts as the kernel: x, y, dy, dx [rows, dim]; gamma, beta [dim].

export interface NormProblem {
  kind: 'layernorm' | 'rmsnorm';
  x: ArrayLike<number>;
  gamma: ArrayLike<number>;
  /** LayerNorm only. */
  beta?: ArrayLike<number>;
  rows: number;
  dim: number;
  eps: number;
}

export interface NormResult {
  y: Float64Array;
  /** Per row; 0 for RMSNorm. */
  mean: Float64Array;
  rstd: Float64Array;
}

export interface NormGradsRef {
  dx: Float64Array;
  dGamma: Float64Array;
  /** LayerNorm only. */
  dBeta?: Float64Array;
}

/** LayerNorm: y = (x - mean) rstd gamma + beta. RMSNorm: y = x rstd gamma, rstd = 1/sqrt(mean(x^2) + eps). */
export function normForwardRef(p: NormProblem): NormResult {
  const { rows, dim } = p;
  const y = new Float64Array(rows * dim);
  const mean = new Float64Array(rows);
  const rstd = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const base = r * dim;
    let m = 0;
    if (p.kind === 'layernorm') {
      for (let i = 0; i < dim; i++) m += p.x[base + i];
      m /= dim;
    }
    let ms = 0;
    for (let i = 0; i < dim; i++) ms += (p.x[base + i] - m) ** 2;
    const s = 1 / Math.sqrt(ms / dim + p.eps);
    for (let i = 0; i < dim; i++) {
      y[base + i] = (p.x[base + i] - m) * s * p.gamma[i] + (p.beta ? p.beta[i] : 0);
    }
    mean[r] = m;
    rstd[r] = s;
  }
  return { y, mean, rstd };
}

/**
 * Twin of norm.wgsl add_forward: the residual sum x + b as the f32 kernel stores it (one f32
 * rounding), then the norm of that sum in float64.
 */
export function addNormForwardRef(p: NormProblem, b: ArrayLike<number>): NormResult & { sum: Float64Array } {
  const sum = Float64Array.from(p.x, (v, i) => Math.fround(v + b[i]));
  return { ...normForwardRef({ ...p, x: sum }), sum };
}

/**
 * Gradients of sum(dy * y) with respect to x, gamma (and beta for LayerNorm). With `residual`
 * (twin of backward_input_add) dx is residual + the norm's dx: the gradient of x that also
 * reaches the loss around the norm.
 */
export function normBackwardRef(p: NormProblem, dy: ArrayLike<number>, residual?: ArrayLike<number>): NormGradsRef {
  const { rows, dim } = p;
  const { mean, rstd } = normForwardRef(p);
  const center = p.kind === 'layernorm';
  const dx = new Float64Array(rows * dim);
  const dGamma = new Float64Array(dim);
  const dBeta = new Float64Array(dim);
  for (let r = 0; r < rows; r++) {
    const base = r * dim;
    let sumG = 0;
    let sumGx = 0;
    for (let i = 0; i < dim; i++) {
      const xhat = (p.x[base + i] - mean[r]) * rstd[r];
      const g = dy[base + i] * p.gamma[i];
      sumG += g;
      sumGx += g * xhat;
      dGamma[i] += dy[base + i] * xhat;
      dBeta[i] += dy[base + i];
    }
    for (let i = 0; i < dim; i++) {
      const xhat = (p.x[base + i] - mean[r]) * rstd[r];
      const g = dy[base + i] * p.gamma[i];
      dx[base + i] = rstd[r] * (g - (center ? sumG / dim : 0) - (xhat * sumGx) / dim) + (residual ? residual[base + i] : 0);
    }
  }
  return center ? { dx, dGamma, dBeta } : { dx, dGamma };
}
