// Counterfactual rubric-context credit (CoRT, seed 000 #2): each completion is scored twice by the
// current policy, under a rubric-conditioned prompt (the prompt plus the rubric's criteria as
// text) and under the criteria-free prompt the policy trains on. The per-token log-likelihood
// contrast says how much a token depends on the rubric; it becomes a bounded, response-normalised
// weight that redistributes the signed advantage. The abstract gives no formula; ours:
//   c_j = log π(y_j | x + rubric, y_<j) − log π(y_j | x, y_<j)           (both inference passes)
//   r_j = exp(clamp(c_j, −20, 20))   (the likelihood ratio; a non-finite c_j counts as 0, r_j = 1)
//   w_j = clip(λ r_j, cort_weight_min, cort_weight_max), λ > 0 chosen so mean_j w_j = 1
// cort_weight_min <= 1 <= cort_weight_max, so λ exists; mean_j f(λ) rises with λ and is found by
// bisection on log λ. Tokens the rubric made likelier get more of the advantage, tokens it made
// less likely get less, and the completion's total advantage is conserved (mean 1).

/** The rubric-conditioned prompt: the prompt, then the criteria as a list (pitfalls as things to avoid). */
export function rubricConditionedPrompt(prompt: string, criteria: readonly { text: string; weight: number }[]): string {
  const meet = criteria.filter((c) => c.weight > 0).map((c) => `- ${c.text}`);
  const avoid = criteria.filter((c) => c.weight < 0).map((c) => `- ${c.text}`);
  const parts = [prompt, '', 'A good answer meets these criteria:', ...meet];
  if (avoid.length) parts.push('It avoids:', ...avoid);
  return parts.join('\n');
}

const CLAMP = 20;

/** CoRT weights of one completion from its contrasts (mean 1, within [min, max]; empty for an empty completion). */
export function cortWeights(contrast: ArrayLike<number>, min: number, max: number): Float64Array {
  const n = contrast.length;
  if (!(min <= 1 && 1 <= max)) throw new RangeError(`cort weights need cort_weight_min <= 1 <= cort_weight_max, got ${min} and ${max}`);
  const raw = Float64Array.from({ length: n }, (_, j) => {
    const c = contrast[j];
    return Number.isFinite(c) ? Math.exp(Math.min(CLAMP, Math.max(-CLAMP, c))) : 1;
  });
  const at = (logLambda: number) => {
    const l = Math.exp(logLambda);
    return raw.map((r) => Math.min(max, Math.max(min, l * r)));
  };
  const mean = (w: Float64Array) => w.reduce((a, b) => a + b, 0) / Math.max(n, 1);
  if (n === 0) return raw;
  // mean(at(lo)) <= 1 <= mean(at(hi)): raw is within [e^-20, e^20].
  let lo = -2 * CLAMP - 1;
  let hi = 2 * CLAMP + 1;
  for (let i = 0; i < 200 && hi - lo > 1e-13; i++) {
    const mid = (lo + hi) / 2;
    if (mean(at(mid)) < 1) lo = mid;
    else hi = mid;
  }
  // The bisection leaves mean(w) within ~1e-12 of 1 (λ to 13 digits).
  return at((lo + hi) / 2);
}
