// Plain-JS float32 baseline of the log-prob kernel's forward + backward, for bench/kernels.ts.
// The float64 twin (src/ops/logprobs.reference.ts) is written for clarity and allocates per call;
// this one is written for speed, so the WGSL/JS ratio is not flattered by a slow baseline:
// Float32Array buffers allocated once, three unit-stride passes per row (max; exp stored, sum and
// entropy; gradient), one exp per logit, no allocation inside the loops.

export interface LogprobsF32 {
  /** Forward + backward over all rows; fills logprobs, entropy and grad. */
  run(): void;
  readonly logprobs: Float32Array;
  readonly entropy: Float32Array;
  /** [rows, vocab] gradient with respect to the raw logits. */
  readonly grad: Float32Array;
}

/**
 * Same quantities as logprobsForwardRef + logprobsBackwardRef: log softmax(logits / T)[token],
 * the entropy, and d/d logits of sum_r gradLogprobs[r] logprob[r] + gradEntropy[r] entropy[r].
 * Masked (-inf) logits get probability 0 and gradient 0.
 */
export function logprobsF32(
  logits: Float32Array,
  tokens: Uint32Array,
  rows: number,
  vocab: number,
  temperature: number,
  gradLogprobs: Float32Array,
  gradEntropy: Float32Array,
): LogprobsF32 {
  const logprobs = new Float32Array(rows);
  const entropy = new Float32Array(rows);
  const grad = new Float32Array(rows * vocab);
  const invT = Math.fround(1 / temperature);
  const run = () => {
    for (let r = 0; r < rows; r++) {
      const base = r * vocab;
      let max = -Infinity;
      for (let i = 0; i < vocab; i++) {
        const z = logits[base + i] * invT;
        if (z > max) max = z;
      }
      // grad holds exp(z - max) until the third pass turns it into the gradient.
      let sum = 0;
      let weighted = 0;
      for (let i = 0; i < vocab; i++) {
        const d = logits[base + i] * invT - max;
        const e = Math.exp(d);
        grad[base + i] = e;
        sum += e;
        if (e > 0) weighted += e * d;
      }
      const logSum = Math.log(sum);
      const h = logSum - weighted / sum;
      const token = tokens[r];
      const raw = logits[base + token];
      logprobs[r] = raw === -Infinity ? -Infinity : raw * invT - max - logSum;
      entropy[r] = h;
      const gl = gradLogprobs[r];
      const gh = gradEntropy[r];
      const inv = 1 / sum;
      const shift = max + logSum;
      for (let i = 0; i < vocab; i++) {
        const prob = grad[base + i] * inv;
        // d logprob = onehot - p; d entropy = -p (log p + h); masked entries have p = 0.
        const logP = prob > 0 ? logits[base + i] * invT - shift : 0;
        grad[base + i] = (-gl * prob - gh * prob * (logP + h)) * invT;
      }
      if (raw !== -Infinity) grad[base + token] += gl * invT;
    }
  };
  return { run, logprobs, entropy, grad };
}
