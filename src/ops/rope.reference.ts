// Float64 reference twin of shaders/rope.wgsl: rotary position embedding in the Hugging Face
// Llama convention, x [N, H, Dh], positions [N]. Angles are exact here (float64); the kernel's
// table holds Hugging Face's f32 roundings of the same numbers.

export interface RopeProblem {
  x: ArrayLike<number>;
  positions: ArrayLike<number>;
  tokens: number;
  numHeads: number;
  headDim: number;
  /** Default 10000. */
  theta?: number;
}

/** Rotates each pair (x_i, x_(i + Dh/2)) by pos * theta^(-2i/Dh), times `sign` (+1 forward, -1 backward). */
function rotate(p: RopeProblem, values: ArrayLike<number>, sign: number): Float64Array {
  const { tokens, numHeads, headDim } = p;
  const theta = p.theta ?? 10000;
  const half = headDim / 2;
  const y = new Float64Array(tokens * numHeads * headDim);
  for (let n = 0; n < tokens; n++) {
    for (let h = 0; h < numHeads; h++) {
      const base = (n * numHeads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const angle = sign * p.positions[n] * Math.pow(theta, (-2 * i) / headDim);
        const c = Math.cos(angle);
        const s = Math.sin(angle);
        const x0 = values[base + i];
        const x1 = values[base + i + half];
        // rotate_half(x) = (-x1, x0):  y = x cos + rotate_half(x) sin
        y[base + i] = x0 * c - x1 * s;
        y[base + i + half] = x1 * c + x0 * s;
      }
    }
  }
  return y;
}

export function ropeForwardRef(p: RopeProblem): Float64Array {
  return rotate(p, p.x, 1);
}

/** dL/dx for dL/dy = dy: the transpose of a rotation is the rotation by -angle. */
export function ropeBackwardRef(p: RopeProblem, dy: ArrayLike<number>): Float64Array {
  return rotate(p, dy, -1);
}
