// The linear-probe judge's model (issue 13; seed 000 #40): per criterion, a logistic regression
// on the judge model's final hidden state h (the final-norm output at the judge prompt's last
// token, the vector the LM head reads), trained in the page from the user's verdict labels:
//
//   P(yes | h) = σ(w·h + b)
//
// Fit: standardise each feature on the training set (z_j = (h_j − μ_j) / s_j, s_j the population
// standard deviation, 1 where it is 0), then minimise the L2-regularised negative log-likelihood
//
//   L(v, c) = Σ_i [softplus(u_i) − y_i·u_i] + (l2 / 2)·|v|²,   u_i = v·z_i + c
//
// (the bias c is not penalised; l2 is 1/C of scikit-learn's LogisticRegression, default 1) by
// Newton's method (IRLS) with step halving, in float64, deterministic (no random start: v = 0,
// c = logit of the yes rate). When there are fewer examples than dimensions (n < D, the usual
// case: tens of labels, hundreds of hidden units) the optimum lies in the span of the
// standardised examples (∇ of the penalty and of the loss both do), so the fit runs in an
// orthonormal basis Q of that span (modified Gram–Schmidt, r ≤ n dimensions) and maps back
// w_z = Qᵀv: the same optimum, with an (r+1)² Newton system instead of a (D+1)² one.
// The standardisation is folded into the stored weights (w_j = w_z,j / s_j, b = c − Σ w_j μ_j),
// so a stored probe is D + 1 numbers and scoring is one dot product.
// Why the last token (not mean pooling): in a causal model only the last position has read the
// whole prompt, and it is where the yes/no judge reads its answer: the log-prob margin
// z_yes − z_no is itself linear in that vector, (W_yes − W_no)·h, so the probe is the P(yes)
// judge's own read-out, re-fitted to the user's labels.

export interface ProbeFitOptions {
  /** The L2 penalty on the standardised weights (1/C of scikit-learn); default 1. */
  l2?: number;
  /** Newton iterations at most (default 100). */
  maxIterations?: number;
  /** Stop when the gradient's largest entry is below this (default 1e-10). */
  tolerance?: number;
}

export interface LinearProbe {
  /** Weights on the raw hidden state (standardisation folded in), length D. */
  weights: number[];
  bias: number;
}

export interface ProbeFit extends LinearProbe {
  /** Newton iterations taken. */
  iterations: number;
  /** The objective L at the optimum (standardised coordinates). */
  objective: number;
  /** Largest |∂L| at the end. */
  gradient: number;
}

export const DEFAULT_PROBE_L2 = 1;

const softplus = (u: number) => Math.max(u, 0) + Math.log1p(Math.exp(-Math.abs(u)));
export const sigmoid = (u: number) => (u >= 0 ? 1 / (1 + Math.exp(-u)) : Math.exp(u) / (1 + Math.exp(u)));

/** P(yes) of a hidden state under a probe; RangeError when the sizes differ. */
export function probeScore(probe: LinearProbe, hidden: ArrayLike<number>): number {
  if (hidden.length !== probe.weights.length) throw new RangeError(`the hidden state has ${hidden.length} values; the probe was trained on ${probe.weights.length}`);
  let u = probe.bias;
  for (let j = 0; j < hidden.length; j++) u += probe.weights[j] * hidden[j];
  return sigmoid(u);
}

/** Cholesky solve of the SPD system A x = g (A m×m row-major, overwritten); null when not SPD. */
function choleskySolve(A: Float64Array, g: Float64Array, m: number): Float64Array | null {
  for (let j = 0; j < m; j++) {
    let d = A[j * m + j];
    for (let k = 0; k < j; k++) d -= A[j * m + k] * A[j * m + k];
    if (!(d > 0)) return null;
    const ljj = Math.sqrt(d);
    A[j * m + j] = ljj;
    for (let i = j + 1; i < m; i++) {
      let s = A[i * m + j];
      for (let k = 0; k < j; k++) s -= A[i * m + k] * A[j * m + k];
      A[i * m + j] = s / ljj;
    }
  }
  const x = Float64Array.from(g);
  for (let i = 0; i < m; i++) {
    let s = x[i];
    for (let k = 0; k < i; k++) s -= A[i * m + k] * x[k];
    x[i] = s / A[i * m + i];
  }
  for (let i = m - 1; i >= 0; i--) {
    let s = x[i];
    for (let k = i + 1; k < m; k++) s -= A[k * m + i] * x[k];
    x[i] = s / A[i * m + i];
  }
  return x;
}

const norm2 = (v: Float64Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/** An orthonormal basis (rows, length D) of the span of `rows` (modified Gram–Schmidt). */
function spanBasis(rows: readonly Float64Array[], D: number): Float64Array[] {
  const basis: Float64Array[] = [];
  for (const row of rows) {
    const v = Float64Array.from(row);
    const norm0 = norm2(v);
    for (let pass = 0; pass < 2; pass++) {
      // Twice: one pass loses orthogonality on nearly dependent rows.
      for (const q of basis) {
        let d = 0;
        for (let j = 0; j < D; j++) d += q[j] * v[j];
        for (let j = 0; j < D; j++) v[j] -= d * q[j];
      }
    }
    const norm = norm2(v);
    if (norm > 1e-10 * Math.max(1, norm0)) basis.push(v.map((x) => x / norm));
  }
  return basis;
}

/**
 * Fits one probe: `features[i]` is example i's hidden state (all the same length D), `targets[i]`
 * its label (true = yes). Both classes must be present (else the bias runs to ±∞): RangeError.
 */
export function fitProbe(features: readonly ArrayLike<number>[], targets: readonly boolean[], options: ProbeFitOptions = {}): ProbeFit {
  const l2 = options.l2 ?? DEFAULT_PROBE_L2;
  const maxIterations = options.maxIterations ?? 100;
  const tolerance = options.tolerance ?? 1e-10;
  if (!(l2 > 0 && Number.isFinite(l2))) throw new RangeError(`the probe's l2 must be a positive number, got ${l2}`);
  const n = features.length;
  if (n !== targets.length) throw new RangeError(`${n} hidden states for ${targets.length} labels`);
  const yes = targets.filter(Boolean).length;
  if (yes === 0 || yes === n) throw new RangeError(`a probe needs both "yes" and "no" labels, got ${yes} yes and ${n - yes} no`);
  const D = features[0].length;
  if (D === 0) throw new RangeError('the hidden states are empty');
  features.forEach((f, i) => {
    if (f.length !== D) throw new RangeError(`hidden state ${i + 1} has ${f.length} values, the first has ${D}`);
    for (let j = 0; j < D; j++) if (!Number.isFinite(f[j])) throw new RangeError(`hidden state ${i + 1} has a non-finite value at ${j}`);
  });
  // Standardise.
  const mean = new Float64Array(D);
  const scale = new Float64Array(D);
  for (const f of features) for (let j = 0; j < D; j++) mean[j] += f[j] / n;
  for (const f of features) for (let j = 0; j < D; j++) scale[j] += (f[j] - mean[j]) ** 2 / n;
  for (let j = 0; j < D; j++) scale[j] = scale[j] > 0 ? Math.sqrt(scale[j]) : 1;
  const Z = features.map((f) => Float64Array.from({ length: D }, (_, j) => (f[j] - mean[j]) / scale[j]));
  // Coordinates: the span of the examples when it is smaller than D (see the header).
  const basis = n < D ? spanBasis(Z, D) : null;
  const X = basis ? Z.map((z) => Float64Array.from(basis, (q) => q.reduce((s, qj, j) => s + qj * z[j], 0))) : Z;
  const r = basis ? basis.length : D;
  const m = r + 1; // [v, c]
  const y = targets.map((t) => (t ? 1 : 0));
  const theta = new Float64Array(m);
  theta[r] = Math.log(yes / (n - yes));
  const margins = (t: Float64Array) => X.map((x) => x.reduce((s, xj, j) => s + xj * t[j], t[r]));
  const objective = (t: Float64Array) => {
    let L = 0;
    margins(t).forEach((u, i) => (L += softplus(u) - y[i] * u));
    for (let j = 0; j < r; j++) L += (l2 / 2) * t[j] * t[j];
    return L;
  };
  let L = objective(theta);
  let iterations = 0;
  let gmax = Infinity;
  for (; iterations < maxIterations; iterations++) {
    const u = margins(theta);
    const p = u.map(sigmoid);
    const g = new Float64Array(m);
    const H = new Float64Array(m * m);
    for (let i = 0; i < n; i++) {
      const e = p[i] - y[i];
      const s = p[i] * (1 - p[i]);
      const xi = X[i];
      for (let a = 0; a <= r; a++) {
        const xa = a < r ? xi[a] : 1;
        g[a] += e * xa;
        const sa = s * xa;
        for (let b = 0; b <= a; b++) H[a * m + b] += sa * (b < r ? xi[b] : 1);
      }
    }
    for (let a = 0; a < r; a++) {
      g[a] += l2 * theta[a];
      H[a * m + a] += l2;
    }
    for (let a = 0; a < m; a++) for (let b = 0; b < a; b++) H[b * m + a] = H[a * m + b];
    gmax = g.reduce((mx, v) => Math.max(mx, Math.abs(v)), 0);
    if (gmax < tolerance) break;
    H[r * m + r] += 1e-12 * n; // the bias row alone is unpenalised: keep it positive when p saturates
    const step = choleskySolve(H, g, m);
    if (!step) throw new Error('the probe fit failed: its Newton system is not positive definite');
    // Step halving: Newton can overshoot far from the optimum.
    let t = 1;
    let next = theta.map((v, k) => v - step[k]);
    let Ln = objective(next);
    while (!(Ln <= L) && t > 1e-12) {
      t /= 2;
      next = theta.map((v, k) => v - t * step[k]);
      Ln = objective(next);
    }
    if (!(Ln <= L)) break; // no decrease along the Newton direction: at the optimum to float64 precision
    const moved = step.reduce((mx, v) => Math.max(mx, Math.abs(t * v)), 0);
    theta.set(next);
    L = Ln;
    if (moved < 1e-14) {
      iterations++;
      break;
    }
  }
  // Back to the standardised space, then to raw hidden states.
  const wz = basis ? Float64Array.from({ length: D }, (_, j) => basis.reduce((s, q, k) => s + theta[k] * q[j], 0)) : theta.subarray(0, D);
  const weights = Array.from({ length: D }, (_, j) => wz[j] / scale[j]);
  const bias = theta[r] - weights.reduce((s, w, j) => s + w * mean[j], 0);
  return { weights, bias, iterations, objective: L, gradient: gmax };
}
