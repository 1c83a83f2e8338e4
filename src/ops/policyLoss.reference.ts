// Float64 reference twin of shaders/policy_loss.wgsl: the GRPO-family clipped policy loss
// (TRL GRPOTrainer semantics, plus verl's dual clip), its gradient with respect to the
// current log-probs and the entropies, and the logged metrics. Written for clarity; tests
// compare the WGSL kernel against it and check its gradients by finite differences.
//
// N sequences x L positions, row-major. For sequence i, token t, mask m in [0, 1]:
//   log r = logp - old                      (old defaults to logp.detach(): r = 1)
//   token level:    rho_t = exp(log r_t)
//   sequence level: rho_t = s_i = exp(sum_t m log r_t / max(sum_t m, 1))   (GSPO)
//   per-token policy loss l by loss_type (TRL GRPOTrainer._compute_loss):
//     grpo, bnpo, dapo, dr_grpo: l = -min(rho' A, clip(rho, 1 - eps, 1 + eps_high) A), where
//       rho' = min(rho, delta) when `delta` is set (INTELLECT-2 two-sided clip), else rho;
//       if dual_clip c (verl) and A < 0: l = min(l, -c A)
//     cispo: l = -sg(min(rho, eps_high)) A logp   (a REINFORCE weight capped at eps_high itself,
//       not 1 + eps_high, as TRL; ScaleRL recommends eps_high = 5; sg = stop-gradient)
//     sapo:  l = -f(rho) A,  f(rho) = sigmoid(tau (rho - 1)) 4 / tau,
//       tau = sapo_temperature_pos if A > 0 else sapo_temperature_neg
//   D (Delta = ref - logp): k1 logp - ref, k2 Delta^2 / 2, k3 exp(Delta) - Delta - 1;
//     use_bias_correction_kl: D rho instead (DeepSeek-V3.2's unbiased KL; rho not detached)
//   L_t = w_t l_t + beta D_t - entropy_coef H_t,   loss = sum c_t L_t
//   c_t = m_t / normaliser: grpo and sapo max(sum_t m_i, 1) N, bnpo max(sum m, 1),
//         dapo and cispo max(num_items_in_batch, 1), dr_grpo N max_completion_length.
// Clip metrics follow TRL: clip_ratio_low/high count rho' < 1 - eps with A < 0 and rho' > 1 + eps_high
// with A > 0 for the clipped types; for cispo clip_ratio_high (= region) is TRL's cispo_clip_ratio,
// rho > eps_high with A > 0, and low is 0; sapo clips nothing and reports 0 (TRL logs none).
// Tokens with m = 0 are skipped entirely (zero gradient, no contribution) so padding that
// holds -inf or NaN log-probs cannot poison the loss; TRL's `x * mask` would give NaN there.
// Elsewhere NaN in gives NaN out, as in torch: without old log-probs log r = logp - logp.detach()
// is NaN for a non-finite logp, and a NaN ratio or advantage makes l and dl/drho NaN.

export type LossType = 'grpo' | 'bnpo' | 'dapo' | 'dr_grpo' | 'cispo' | 'sapo';
export type KlEstimator = 'k1' | 'k2' | 'k3';
export type ImportanceSamplingLevel = 'token' | 'sequence';

export const LOSS_TYPES: readonly LossType[] = ['grpo', 'bnpo', 'dapo', 'dr_grpo', 'cispo', 'sapo'];
/** The loss types with the PPO clipped surrogate, where delta and dual_clip apply. */
export const CLIPPED_LOSS_TYPES: readonly LossType[] = ['grpo', 'bnpo', 'dapo', 'dr_grpo'];
export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'k2', 'k3'];
export const IMPORTANCE_SAMPLING_LEVELS: readonly ImportanceSamplingLevel[] = ['token', 'sequence'];

/** Options, named after TRL's GRPOConfig (camelCase); defaults as TRL. */
export interface PolicyLossOptions {
  /** Lower clip: rho >= 1 - epsilon. */
  epsilon: number;
  /** Upper clip: rho <= 1 + epsilonHigh (DAPO clip-higher); defaults to epsilon. */
  epsilonHigh: number;
  /** verl's clip_ratio_c: for A < 0 the loss is capped at -dualClip * A. Null = off; else > 1. */
  dualClip: number | null;
  /** TRL's `delta` (INTELLECT-2 two-sided clip): the unclipped ratio is capped at delta. Null = off; else > 1. */
  delta: number | null;
  /** sapo's gate temperature for A > 0 (TRL sapo_temperature_pos). */
  sapoTemperaturePos: number;
  /** sapo's gate temperature for A <= 0 (TRL sapo_temperature_neg). */
  sapoTemperatureNeg: number;
  /** TRL use_bias_correction_kl: the KL term is D * rho (importance-sampling corrected). */
  useBiasCorrectionKl: boolean;
  /** KL coefficient; requires reference log-probs when non-zero. */
  beta: number;
  klEstimator: KlEstimator;
  /** Entropy bonus: the loss gets -entropyCoef * H per token; requires entropies when non-zero. */
  entropyCoef: number;
  lossType: LossType;
  importanceSamplingLevel: ImportanceSamplingLevel;
  /** dr_grpo's constant length normaliser; defaults to L. */
  maxCompletionLength: number;
  /** dapo's normaliser (active tokens in the whole generation batch); null = sum of the mask. */
  numItemsInBatch: number | null;
}

/** Applies TRL's defaults and checks values; errors start with the TRL option name. */
export function resolvePolicyLossOptions(partial: Partial<PolicyLossOptions>, l: number): PolicyLossOptions {
  const epsilon = partial.epsilon ?? 0.2;
  const o: PolicyLossOptions = {
    epsilon,
    epsilonHigh: partial.epsilonHigh ?? epsilon,
    dualClip: partial.dualClip ?? null,
    delta: partial.delta ?? null,
    sapoTemperaturePos: partial.sapoTemperaturePos ?? 1.0,
    sapoTemperatureNeg: partial.sapoTemperatureNeg ?? 1.05,
    useBiasCorrectionKl: partial.useBiasCorrectionKl ?? false,
    beta: partial.beta ?? 0,
    klEstimator: partial.klEstimator ?? 'k3',
    entropyCoef: partial.entropyCoef ?? 0,
    lossType: partial.lossType ?? 'dapo',
    importanceSamplingLevel: partial.importanceSamplingLevel ?? 'token',
    maxCompletionLength: partial.maxCompletionLength ?? l,
    numItemsInBatch: partial.numItemsInBatch ?? null,
  };
  const bad = (field: string, problem: string): never => {
    throw new RangeError(`${field}: ${problem}`);
  };
  const finite = (v: number) => typeof v === 'number' && Number.isFinite(v);
  if (!finite(o.epsilon) || o.epsilon < 0) bad('epsilon', `must be a finite number >= 0, got ${o.epsilon}`);
  if (!finite(o.epsilonHigh) || o.epsilonHigh < 0) bad('epsilon_high', `must be a finite number >= 0, got ${o.epsilonHigh}`);
  if (o.dualClip !== null && (!finite(o.dualClip) || o.dualClip <= 1)) {
    bad('dual_clip', `must be null (off) or a finite number > 1, got ${o.dualClip}`);
  }
  if (o.delta !== null && (!finite(o.delta) || o.delta <= 1)) {
    bad('delta', `must be null (off) or a finite number > 1 (TRL recommends > 1 + epsilon), got ${o.delta}`);
  }
  if (!finite(o.sapoTemperaturePos) || o.sapoTemperaturePos <= 0) bad('sapo_temperature_pos', `must be a finite number > 0, got ${o.sapoTemperaturePos}`);
  if (!finite(o.sapoTemperatureNeg) || o.sapoTemperatureNeg <= 0) bad('sapo_temperature_neg', `must be a finite number > 0, got ${o.sapoTemperatureNeg}`);
  if (typeof o.useBiasCorrectionKl !== 'boolean') bad('use_bias_correction_kl', `must be true or false, got ${String(o.useBiasCorrectionKl)}`);
  if (!finite(o.beta) || o.beta < 0) bad('beta', `must be a finite number >= 0, got ${o.beta}`);
  if (!finite(o.entropyCoef)) bad('entropy_coef', `must be a finite number, got ${o.entropyCoef}`);
  if (!KL_ESTIMATORS.includes(o.klEstimator)) bad('kl_estimator', `must be one of ${KL_ESTIMATORS.join(', ')}, got ${String(o.klEstimator)}`);
  if (!LOSS_TYPES.includes(o.lossType)) bad('loss_type', `must be one of ${LOSS_TYPES.join(', ')}, got ${String(o.lossType)}`);
  // TRL ignores delta outside the clipped types; here a setting that would do nothing is an error.
  if (!CLIPPED_LOSS_TYPES.includes(o.lossType)) {
    if (o.delta !== null) bad('delta', `applies only to loss_type ${CLIPPED_LOSS_TYPES.join(', ')}, not ${o.lossType}`);
    if (o.dualClip !== null) bad('dual_clip', `applies only to loss_type ${CLIPPED_LOSS_TYPES.join(', ')}, not ${o.lossType}`);
  }
  if (!IMPORTANCE_SAMPLING_LEVELS.includes(o.importanceSamplingLevel)) {
    bad('importance_sampling_level', `must be one of ${IMPORTANCE_SAMPLING_LEVELS.join(', ')}, got ${String(o.importanceSamplingLevel)}`);
  }
  if (!Number.isInteger(o.maxCompletionLength) || o.maxCompletionLength < 1) {
    bad('max_completion_length', `must be a positive integer, got ${o.maxCompletionLength}`);
  }
  if (o.numItemsInBatch !== null && (!finite(o.numItemsInBatch) || o.numItemsInBatch <= 0)) {
    bad('num_items_in_batch', `must be null (sum of the mask) or a finite number > 0, got ${o.numItemsInBatch}`);
  }
  return o;
}

/** The scalars both the twin and the kernel report. */
export interface PolicyLossMetrics {
  /** Total loss: sum c (w l + beta D - entropy_coef H). */
  loss: number;
  /** The policy term alone: sum c w l. */
  policyLoss: number;
  /** Mask-weighted fraction of tokens with rho' < 1 - eps and A < 0 (0 for cispo and sapo). */
  clipRatioLow: number;
  /** ... with rho' > 1 + eps_high and A > 0; for cispo TRL's cispo_clip_ratio (rho > eps_high, A > 0); 0 for sapo. */
  clipRatioHigh: number;
  clipRatioRegion: number;
  /** Mask-weighted mean of rho (s_i at sequence level). */
  ratioMean: number;
  /** Mask-weighted mean of D (D rho with use_bias_correction_kl); null without reference log-probs. */
  klMean: number | null;
  /** Mask-weighted mean of H; null without entropies. */
  entropyMean: number | null;
  /** Mask-weighted fraction of tokens where the dual clip replaced the loss. */
  dualClipRatio: number;
  /** Sum of the mask over the batch (metric denominators; 0 gives metrics of 0). */
  maskSum: number;
}

export interface PolicyLossProblem {
  n: number;
  l: number;
  /** [N*L] current log-probs: the variable the gradient is taken with respect to. */
  logprobs: ArrayLike<number>;
  /** [N*L] log-probs of the sampling policy; absent = logprobs (treated as constants). */
  oldLogprobs?: ArrayLike<number> | null;
  /** [N*L] reference-model log-probs; required when beta != 0. */
  refLogprobs?: ArrayLike<number> | null;
  /** [N*L] in [0, 1]. */
  mask: ArrayLike<number>;
  /** [N] one advantage per sequence. */
  advantages: ArrayLike<number>;
  /** [N*L] scale of the policy term per token; absent = 1. */
  tokenWeights?: ArrayLike<number> | null;
  /** [N*L] per-token entropies; required when entropyCoef != 0. */
  entropy?: ArrayLike<number> | null;
  options?: Partial<PolicyLossOptions>;
}

export interface PolicyLossRefResult extends PolicyLossMetrics {
  /** d loss / d logprobs, [N*L]. */
  gradLogprobs: Float64Array;
  /** d loss / d entropy = -entropy_coef * c, [N*L]; null when entropyCoef = 0. */
  gradEntropy: Float64Array | null;
  /** Per-token aggregation weights c and per-token losses L (tests scale tolerances by sum |c L|). */
  coef: Float64Array;
  tokenLoss: Float64Array;
  /** sum c (|w l| + |beta D| + |entropy_coef H|): the size of what `loss` sums (for tolerances). */
  absLossSum: number;
  /** rho per token (s_i at sequence level). */
  ratio: Float64Array;
}

export interface PolicyTerm {
  /** l */
  loss: number;
  /** dl/drho (the path through the ratio) */
  dLossDRatio: number;
  /** The direct partial dl/dlogp at a fixed ratio: cispo's -sg(min(rho, eps_high)) A, else 0. */
  dLossDLogp: number;
  clippedLow: boolean;
  clippedHigh: boolean;
  dualClipped: boolean;
}

/** The GRPO-family surrogate for one ratio and advantage, by loss type (see the header). */
export function policyTerm(rho: number, a: number, logp: number, o: PolicyLossOptions): PolicyTerm {
  if (o.lossType === 'cispo') {
    // TRL: clamp(coef_1, max=epsilon_high).detach(); NaN stays NaN (torch.clamp keeps it).
    const weight = Number.isNaN(rho) ? NaN : Math.min(rho, o.epsilonHigh);
    return {
      loss: -weight * a * logp,
      dLossDRatio: 0,
      dLossDLogp: -weight * a,
      clippedLow: false,
      clippedHigh: rho > o.epsilonHigh && a > 0,
      dualClipped: false,
    };
  }
  if (o.lossType === 'sapo') {
    // tau by the sign of A (A > 0: pos; else, NaN included, neg, as TRL's mask A > 0).
    const tau = a > 0 ? o.sapoTemperaturePos : o.sapoTemperatureNeg;
    const sigma = 1 / (1 + Math.exp(-tau * (rho - 1)));
    return {
      loss: -sigma * (4 / tau) * a,
      dLossDRatio: -4 * sigma * (1 - sigma) * a,
      dLossDLogp: 0,
      clippedLow: false,
      clippedHigh: false,
      dualClipped: false,
    };
  }
  const lo = 1 - o.epsilon;
  const hi = 1 + o.epsilonHigh;
  // delta caps the unclipped branch's ratio (torch.clamp(max=delta): slope 1 up to delta inclusive).
  const capped = o.delta !== null && rho > o.delta;
  const rhoU = capped ? o.delta! : rho;
  const unclipped = rhoU * a;
  const clipped = Math.min(Math.max(rho, lo), hi) * a;
  let loss = -Math.min(unclipped, clipped);
  // The unclipped branch is the min (ties included, where both branches agree): gradient -A
  // (0 beyond delta).
  let dLossDRatio = unclipped <= clipped && !capped ? -a : 0;
  // A NaN ratio or advantage (or 0 * inf) has no branch: the loss and its slope are NaN.
  if (Number.isNaN(unclipped) || Number.isNaN(clipped)) {
    loss = NaN;
    dLossDRatio = NaN;
  }
  let dualClipped = false;
  if (o.dualClip !== null && a < 0 && -o.dualClip * a < loss) {
    loss = -o.dualClip * a;
    dLossDRatio = 0;
    dualClipped = true;
  }
  // TRL counts clipping on the delta-capped ratio.
  return { loss, dLossDRatio, dLossDLogp: 0, clippedLow: rhoU < lo && a < 0, clippedHigh: rhoU > hi && a > 0, dualClipped };
}

/** KL estimate D(logp, ref) and dD/dlogp. No clamping (as TRL). */
export function klTerm(logp: number, ref: number, estimator: KlEstimator): { value: number; dLogp: number } {
  const delta = ref - logp;
  switch (estimator) {
    case 'k1':
      return { value: logp - ref, dLogp: 1 };
    case 'k2':
      return { value: 0.5 * delta * delta, dLogp: logp - ref };
    case 'k3': {
      const em1 = Math.expm1(delta);
      return { value: em1 - delta, dLogp: -em1 };
    }
  }
}

/** 1 / normaliser of the aggregation weight c = m / normaliser, for sequence i. */
function inverseNormaliser(o: PolicyLossOptions, n: number, seqMaskSum: number, batchMaskSum: number): number {
  switch (o.lossType) {
    case 'grpo':
    case 'sapo':
      return 1 / (Math.max(seqMaskSum, 1) * n);
    case 'bnpo':
      return 1 / Math.max(batchMaskSum, 1);
    case 'dapo':
    case 'cispo':
      return 1 / Math.max(o.numItemsInBatch ?? batchMaskSum, 1);
    case 'dr_grpo':
      return 1 / (n * o.maxCompletionLength);
  }
}

export function policyLossRef(p: PolicyLossProblem): PolicyLossRefResult {
  const { n, l } = p;
  const o = resolvePolicyLossOptions(p.options ?? {}, l);
  const size = n * l;
  for (const [name, arr] of [
    ['logprobs', p.logprobs],
    ['old_logprobs', p.oldLogprobs],
    ['ref_logprobs', p.refLogprobs],
    ['mask', p.mask],
    ['token_weights', p.tokenWeights],
    ['entropy', p.entropy],
  ] as const) {
    if (arr && arr.length !== size) throw new RangeError(`${name}: expected N*L = ${size} values, got ${arr.length}`);
  }
  if (p.advantages.length !== n) throw new RangeError(`advantages: expected N = ${n} values, got ${p.advantages.length}`);
  if (o.beta !== 0 && !p.refLogprobs) throw new RangeError('ref_logprobs: required when beta != 0');
  if (o.entropyCoef !== 0 && !p.entropy) throw new RangeError('entropy: required when entropy_coef != 0');

  const seqLevel = o.importanceSamplingLevel === 'sequence';
  const old = p.oldLogprobs ?? null;
  // Without old log-probs: logp - logp.detach(), 0 for a finite logp, NaN otherwise.
  const logRatio = (k: number) => (old ? p.logprobs[k] - old[k] : Number.isFinite(p.logprobs[k]) ? 0 : NaN);
  const weight = (k: number) => (p.tokenWeights ? p.tokenWeights[k] : 1);

  // Per-sequence mask sums, sum m w, and the GSPO sequence ratio s_i.
  const seqMask = new Float64Array(n);
  const seqMaskWeight = new Float64Array(n);
  const seqRatio = new Float64Array(n);
  // sum_t m D_t per sequence: the bias-corrected KL's path through the GSPO ratio s_i.
  const seqMaskKl = new Float64Array(n);
  const klOf = (k: number) => klTerm(p.logprobs[k], p.refLogprobs![k], o.klEstimator);
  const seqKlPath = seqLevel && o.useBiasCorrectionKl && o.beta !== 0 && !!p.refLogprobs;
  let batchMask = 0;
  for (let i = 0; i < n; i++) {
    let ms = 0;
    let mw = 0;
    let mlr = 0;
    for (let t = 0; t < l; t++) {
      const k = i * l + t;
      const m = p.mask[k];
      if (m === 0) continue;
      ms += m;
      mw += m * weight(k);
      mlr += m * logRatio(k);
      if (seqKlPath) seqMaskKl[i] += m * klOf(k).value;
    }
    seqMask[i] = ms;
    seqMaskWeight[i] = mw;
    seqRatio[i] = Math.exp(mlr / Math.max(ms, 1));
    batchMask += ms;
  }

  const gradLogprobs = new Float64Array(size);
  const gradEntropy = o.entropyCoef !== 0 ? new Float64Array(size) : null;
  const coef = new Float64Array(size);
  const tokenLoss = new Float64Array(size);
  const ratio = new Float64Array(size);
  let loss = 0;
  let absLossSum = 0;
  let policyLoss = 0;
  let low = 0;
  let high = 0;
  let ratioSum = 0;
  let klSum = 0;
  let entropySum = 0;
  let dual = 0;
  for (let i = 0; i < n; i++) {
    const a = p.advantages[i];
    const inv = inverseNormaliser(o, n, seqMask[i], batchMask);
    for (let t = 0; t < l; t++) {
      const k = i * l + t;
      const m = p.mask[k];
      if (m === 0) continue;
      const c = m * inv;
      const w = weight(k);
      const rho = seqLevel ? seqRatio[i] : Math.exp(logRatio(k));
      const pt = policyTerm(rho, a, p.logprobs[k], o);
      let tokenL = w * pt.loss;
      let tokenAbs = Math.abs(tokenL);
      let g: number;
      if (o.lossType === 'cispo') {
        // The weight is detached: no path through the ratio (none through s_i either).
        g = c * w * pt.dLossDLogp;
      } else if (seqLevel) {
        // d loss / d s_i = sum_t' c w dl/ds (dl/ds is the same for every t'), and
        // d s_i / d logp_t = s_i m_t / max(sum m, 1).
        g = pt.dLossDRatio * seqMaskWeight[i] * inv * rho * (m / Math.max(seqMask[i], 1));
      } else {
        g = c * w * pt.dLossDRatio * rho; // d rho / d logp = rho
      }
      if (p.refLogprobs) {
        const kl = klOf(k);
        // use_bias_correction_kl: D rho, through both factors (rho is not detached in TRL).
        const value = o.useBiasCorrectionKl ? kl.value * rho : kl.value;
        klSum += m * value;
        // Skipped at beta = 0 so an overflowing D does not turn into 0 * inf = NaN.
        if (o.beta !== 0) {
          tokenL += o.beta * value;
          tokenAbs += Math.abs(o.beta * value);
          if (!o.useBiasCorrectionKl) g += c * o.beta * kl.dLogp;
          else if (!seqLevel) g += c * o.beta * (kl.dLogp + kl.value) * rho;
          // sum_t' c_t' beta D_t' d s_i / d logp_t = beta inv (sum m D) s_i m_t / max(sum m, 1).
          else g += c * o.beta * kl.dLogp * rho + o.beta * inv * seqMaskKl[i] * rho * (m / Math.max(seqMask[i], 1));
        }
      }
      if (p.entropy) {
        entropySum += m * p.entropy[k];
        if (o.entropyCoef !== 0) {
          tokenL -= o.entropyCoef * p.entropy[k];
          tokenAbs += Math.abs(o.entropyCoef * p.entropy[k]);
        }
      }
      if (gradEntropy) gradEntropy[k] = -o.entropyCoef * c;
      gradLogprobs[k] = g;
      coef[k] = c;
      tokenLoss[k] = tokenL;
      ratio[k] = rho;
      loss += c * tokenL;
      absLossSum += c * tokenAbs;
      policyLoss += c * w * pt.loss;
      if (pt.clippedLow) low += m;
      if (pt.clippedHigh) high += m;
      if (pt.dualClipped) dual += m;
      ratioSum += m * rho;
    }
  }
  const mean = (x: number) => (batchMask > 0 ? x / batchMask : 0);
  return {
    loss,
    policyLoss,
    clipRatioLow: mean(low),
    clipRatioHigh: mean(high),
    clipRatioRegion: mean(low + high),
    ratioMean: mean(ratioSum),
    klMean: p.refLogprobs ? mean(klSum) : null,
    entropyMean: p.entropy ? mean(entropySum) : null,
    dualClipRatio: mean(dual),
    maskSum: batchMask,
    gradLogprobs,
    gradEntropy,
    coef,
    tokenLoss,
    absLossSum,
    ratio,
  };
}
