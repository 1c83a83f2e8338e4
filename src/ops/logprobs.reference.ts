// Float64 reference twin of shaders/logprobs.wgsl. Plain two-pass log-softmax, written
// for clarity rather than speed; tests compare the WGSL kernel against it. A row with a
// non-finite logit / temperature other than a masked -inf logit gets NaN statistics, as
// the kernel's (NaN log-prob, entropy and gradients; a masked chosen token still gives -inf).

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
    const raw = p.logits[r * p.vocab + p.tokens[r]];
    // Subtract the max before the log-sum so logits of ~1e4 lose no digits.
    logprobs[r] = raw === -Infinity ? -Infinity : raw / p.temperature - max - logSum;
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
      const raw = p.logits[r * p.vocab + i];
      if (raw === -Infinity) continue;
      const logP = raw / p.temperature - max - logSum;
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
  const undefinedRow = { max: NaN, logSum: NaN, entropy: NaN };
  // The kernel scales by the f32 reciprocal of T; masked entries are the -inf logits.
  const invT = Math.fround(1 / p.temperature);
  let max = -Infinity;
  for (let i = 0; i < p.vocab; i++) {
    const raw = p.logits[r * p.vocab + i];
    if (raw === -Infinity) continue;
    if (!Number.isFinite(Math.fround(raw * invT))) return undefinedRow; // NaN or inf: poisoned
    max = Math.max(max, raw / p.temperature);
  }
  if (max === -Infinity) return undefinedRow; // every entry masked: undefined
  let sum = 0;
  let weighted = 0;
  for (let i = 0; i < p.vocab; i++) {
    const raw = p.logits[r * p.vocab + i];
    if (raw === -Infinity) continue;
    const z = raw / p.temperature;
    const e = Math.exp(z - max);
    sum += e;
    weighted += e * (z - max);
  }
  const logSum = Math.log(sum);
  return { max, logSum, entropy: logSum - weighted / sum };
}
