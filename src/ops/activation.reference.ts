// Float64 reference twin of shaders/activation.wgsl, written in the textbook forms (tanh for
// GELU); the kernel uses the algebraically equal sigmoid forms for f32 accuracy.

const K = Math.sqrt(2 / Math.PI);
const C = 0.044715;

/** GPT-2 gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
export function geluRef(x: ArrayLike<number>): Float64Array {
  const y = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    y[i] = 0.5 * v * (1 + Math.tanh(K * (v + C * v * v * v)));
  }
  return y;
}

/** dx = dy * gelu'(x), gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(u). */
export function geluBackwardRef(x: ArrayLike<number>, dy: ArrayLike<number>): Float64Array {
  const dx = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    const t = Math.tanh(K * (v + C * v * v * v));
    dx[i] = dy[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * K * (1 + 3 * C * v * v));
  }
  return dx;
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** h = silu(gate) * up, silu(g) = g sigmoid(g). */
export function swigluRef(gate: ArrayLike<number>, up: ArrayLike<number>): Float64Array {
  const h = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) h[i] = gate[i] * sigmoid(gate[i]) * up[i];
  return h;
}

/** d_gate = dh * up * silu'(gate) with silu'(g) = s + g s (1 - s); d_up = dh * silu(gate). */
export function swigluBackwardRef(
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
  dh: ArrayLike<number>,
): { dGate: Float64Array; dUp: Float64Array } {
  const dGate = new Float64Array(gate.length);
  const dUp = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) {
    const g = gate[i];
    const s = sigmoid(g);
    dGate[i] = dh[i] * up[i] * (s + g * s * (1 - s));
    dUp[i] = dh[i] * g * s;
  }
  return { dGate, dUp };
}
