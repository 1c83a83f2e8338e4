// Entropy-gated credit and the targeted → uniform schedule.
//
// Entropy pivots (ERPO's Critical Decision Pivots, seed 000 #103; DGPO's entropy gating, #107):
// the abstracts give no formula; ours, per completion (a trajectory percentile, as #87 suggests):
//   τ   = the (1 − q) quantile of the completion's token entropies (q = entropy_pivot_quantile)
//   g_j = b if H_j >= τ else 1                                (b = entropy_pivot_boost >= 1)
//   then g is divided by its mean over the completion (mean 1: the total advantage is conserved).
//
// Schedule (#87, "prioritising targeted tokens ... gradually attenuating toward general
// optimisation"): the targeted weights t_j are mixed with uniform credit 1,
//   m_j = α(step) t_j + (1 − α(step)),  α from 1 at step 0 to 0 at credit_schedule_steps,
// linearly or along a half cosine; "constant" keeps α = 1. Mean 1 is kept by the mix.
import { maskedQuantile } from '../rolloutBatch';

/** Pivot weights of one completion's entropies (mean 1 over the completion; all 1 when q = 0 or empty). */
export function entropyPivotWeights(entropy: ArrayLike<number>, quantile: number, boost: number): Float64Array {
  const n = entropy.length;
  const g = new Float64Array(n).fill(1);
  if (n === 0 || quantile <= 0 || boost === 1) return g;
  const finite = Array.from(entropy, (h) => (Number.isFinite(h) ? 1 : 0));
  const tau = maskedQuantile(entropy, finite, 1 - quantile);
  for (let j = 0; j < n; j++) g[j] = finite[j] && entropy[j] >= tau ? boost : 1;
  return normaliseMean(g);
}

/** x / mean(x) (x unchanged when its mean is not positive). */
export function normaliseMean(x: Float64Array): Float64Array {
  if (x.length === 0) return x;
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  if (mean > 0 && Number.isFinite(mean)) for (let j = 0; j < x.length; j++) x[j] /= mean;
  return x;
}

export type CreditSchedule = 'constant' | 'linear' | 'cosine';

/** α(step): 1 = fully targeted credit, 0 = uniform. */
export function creditScheduleAlpha(schedule: CreditSchedule, step: number, steps: number): number {
  if (schedule === 'constant') return 1;
  const p = Math.min(1, Math.max(0, step / Math.max(steps, 1)));
  return schedule === 'linear' ? 1 - p : 0.5 * (1 + Math.cos(Math.PI * p));
}
