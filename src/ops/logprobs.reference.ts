// Float64 reference twin of shaders/logprobs.wgsl. Plain two-pass log-softmax, written
// for clarity rather than speed; tests compare the WGSL kernel against it.

export interface LogprobsProblem {
  /** Row-major [rows, vocab]; -Infinity marks a masked vocabulary entry. */
  logits: ArrayLike<number>;
  /** Chosen token id per row. */
  tokens: ArrayLike<number>;
  rows: number;
  vocab: number;
  temperature: number;
}

export interface LogprobsResult {
  logprobs: Float64Array;
  entropy: Float64Array;
}

/** log softmax(logits/temperature)[token] and the entropy of that distribution, per row. */
export function logprobsForwardRef(p: LogprobsProblem): LogprobsResult {
  const logprobs = new Float64Array(p.rows);
  const entropy = new Float64Array(p.rows);
  for (let r = 0; r < p.rows; r++) {
    const { max, logSum, entropy: h } = rowStats(p, r);
    const z = p.logits[r * p.vocab + p.tokens[r]] / p.temperature;
    // Subtract the max before the log-sum so logits of ~1e4 lose no digits.
    logprobs[r] = z === -Infinity ? -Infinity : z - max - logSum;
    entropy[r] = h;
  }
  return { logprobs, entropy };
}

/**
 * Gradient with respect to the raw logits of
 *   L = sum_r grad_logprobs[r] * logprob[r] + grad_entropy[r] * entropy[r].
 */
export function logprobsBackwardRef(
  p: LogprobsProblem,
  gradLogprobs: ArrayLike<number>,
  gradEntropy?: ArrayLike<number>,
): Float64Array {
  const grad = new Float64Array(p.rows * p.vocab);
  for (let r = 0; r < p.rows; r++) {
    const { max, logSum, entropy: h } = rowStats(p, r);
    const gl = gradLogprobs[r];
    const gh = gradEntropy ? gradEntropy[r] : 0;
    for (let i = 0; i < p.vocab; i++) {
      const z = p.logits[r * p.vocab + i] / p.temperature;
      if (z === -Infinity) continue;
      const logP = z - max - logSum;
      const prob = Math.exp(logP);
      let g = gl * ((i === p.tokens[r] ? 1 : 0) - prob);
      g -= gh * prob * (logP + h);
      grad[r * p.vocab + i] = g / p.temperature;
    }
  }
  return grad;
}

/** Max of z = logits/T, log sum exp(z - max), and entropy -sum p log p = log sum - sum p (z - max). */
function rowStats(p: LogprobsProblem, r: number): { max: number; logSum: number; entropy: number } {
  let max = -Infinity;
  for (let i = 0; i < p.vocab; i++) max = Math.max(max, p.logits[r * p.vocab + i] / p.temperature);
  if (max === -Infinity) return { max: NaN, logSum: NaN, entropy: NaN }; // every entry masked: undefined
  let sum = 0;
  let weighted = 0;
  for (let i = 0; i < p.vocab; i++) {
    const z = p.logits[r * p.vocab + i] / p.temperature;
    if (z === -Infinity) continue;
    const e = Math.exp(z - max);
    sum += e;
    weighted += e * (z - max);
  }
  const logSum = Math.log(sum);
  return { max, logSum, entropy: logSum - weighted / sum };
}
