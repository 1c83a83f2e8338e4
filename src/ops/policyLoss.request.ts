// JSON request/response of the `policy_loss` kernel for scripts/kernel.mjs and the tests:
//   in  {logprobs: number[N][L], old_logprobs?, ref_logprobs?, mask, token_weights?, entropy?: number[N][L],
//        advantages: number[N], epsilon?, epsilon_high?, dual_clip?, delta?, beta?, kl_estimator?, entropy_coef?,
//        loss_type?, importance_sampling_level?, max_completion_length?, num_items_in_batch?,
//        sapo_temperature_pos?, sapo_temperature_neg?, use_bias_correction_kl?}
//   out {loss, policy_loss, grad_logprobs: number[N][L], grad_entropy?: number[N][L] (entropy_coef != 0),
//        clip_ratio_low, clip_ratio_high, clip_ratio_region, ratio_mean, kl_mean (null without ref_logprobs),
//        entropy_mean (null without entropy), dual_clip_ratio}
//   (for loss_type cispo, clip_ratio_high and clip_ratio_region are TRL's cispo_clip_ratio; sapo reports 0)
// Option names and defaults are TRL's GRPOConfig (src/ops/policyLoss.reference.ts).
import type { GpuRuntime } from '../gpu/runtime';
import { runPolicyLoss } from './policyLoss';
import {
  IMPORTANCE_SAMPLING_LEVELS,
  KL_ESTIMATORS,
  LOSS_TYPES,
  resolvePolicyLossOptions,
  type PolicyLossOptions,
} from './policyLoss.reference';
import {
  asObject,
  matrix,
  oneOf,
  optionalNumber,
  positiveInteger,
  rejectUnknownFields,
  toRows,
  vector,
  KernelRequestError,
  type JsonObject,
} from './requestFields';

const FIELDS = [
  'logprobs',
  'old_logprobs',
  'ref_logprobs',
  'mask',
  'advantages',
  'token_weights',
  'entropy',
  'epsilon',
  'epsilon_high',
  'dual_clip',
  'beta',
  'kl_estimator',
  'entropy_coef',
  'loss_type',
  'importance_sampling_level',
  'max_completion_length',
  'num_items_in_batch',
  'delta',
  'sapo_temperature_pos',
  'sapo_temperature_neg',
  'use_bias_correction_kl',
] as const;

export async function policyLossRequest(rt: GpuRuntime, request: unknown): Promise<object> {
  const obj = asObject(request);
  rejectUnknownFields(obj, FIELDS);
  const logprobs = matrix(obj, 'logprobs');
  const n = logprobs.rows;
  const l = logprobs.cols;
  const shape = { rows: n, cols: l };
  const optionalMatrix = (field: string): Float32Array | null =>
    obj[field] === undefined || obj[field] === null ? null : new Float32Array(matrix(obj, field, {}, shape).data);
  const mask = matrix(obj, 'mask', { min: 0 }, shape);
  mask.data.forEach((m, k) => {
    if (m > 1) throw new KernelRequestError(`mask[${Math.floor(k / l)}][${k % l}]`, `expected a value in [0, 1], got ${m}`);
  });
  const advantages = vector(obj, 'advantages', {}, n);

  const options = parseOptions(obj, l);
  const refLogprobs = optionalMatrix('ref_logprobs');
  const entropy = optionalMatrix('entropy');
  if (options.beta !== 0 && !refLogprobs) throw new KernelRequestError('ref_logprobs', `is required when beta != 0 (beta = ${options.beta})`);
  if (options.entropyCoef !== 0 && !entropy) {
    throw new KernelRequestError('entropy', `is required when entropy_coef != 0 (entropy_coef = ${options.entropyCoef})`);
  }

  const out = await runPolicyLoss(rt, {
    n,
    l,
    logprobs: new Float32Array(logprobs.data),
    oldLogprobs: optionalMatrix('old_logprobs'),
    refLogprobs,
    mask: new Float32Array(mask.data),
    advantages: new Float32Array(advantages),
    tokenWeights: optionalMatrix('token_weights'),
    entropy,
    options,
    readGradients: true,
  });
  return {
    loss: out.loss,
    policy_loss: out.policyLoss,
    grad_logprobs: toRows(out.gradLogprobs!, n, l),
    ...(out.gradEntropy ? { grad_entropy: toRows(out.gradEntropy, n, l) } : {}),
    clip_ratio_low: out.clipRatioLow,
    clip_ratio_high: out.clipRatioHigh,
    clip_ratio_region: out.clipRatioRegion,
    ratio_mean: out.ratioMean,
    kl_mean: out.klMean,
    entropy_mean: out.entropyMean,
    dual_clip_ratio: out.dualClipRatio,
  };
}

function parseOptions(obj: JsonObject, l: number): PolicyLossOptions {
  const epsilon = optionalNumber(obj, 'epsilon', 0.2);
  if (epsilon < 0) throw new KernelRequestError('epsilon', `must be >= 0, got ${epsilon}`);
  const epsilonHigh = optionalNumber(obj, 'epsilon_high', epsilon);
  if (epsilonHigh < 0) throw new KernelRequestError('epsilon_high', `must be >= 0, got ${epsilonHigh}`);
  let dualClip: number | null = null;
  if (obj.dual_clip !== undefined && obj.dual_clip !== null) {
    dualClip = optionalNumber(obj, 'dual_clip', NaN);
    if (!(dualClip > 1)) throw new KernelRequestError('dual_clip', `must be null (off) or a number > 1, got ${dualClip}`);
  }
  let delta: number | null = null;
  if (obj.delta !== undefined && obj.delta !== null) {
    delta = optionalNumber(obj, 'delta', NaN);
    if (!(delta > 1)) throw new KernelRequestError('delta', `must be null (off) or a number > 1, got ${delta}`);
  }
  const useBiasCorrectionKl = obj.use_bias_correction_kl ?? false;
  if (typeof useBiasCorrectionKl !== 'boolean') {
    throw new KernelRequestError('use_bias_correction_kl', `must be true or false, got ${JSON.stringify(useBiasCorrectionKl)}`);
  }
  const beta = optionalNumber(obj, 'beta', 0);
  if (beta < 0) throw new KernelRequestError('beta', `must be >= 0, got ${beta}`);
  let numItemsInBatch: number | null = null;
  if (obj.num_items_in_batch !== undefined && obj.num_items_in_batch !== null) {
    numItemsInBatch = optionalNumber(obj, 'num_items_in_batch', NaN);
    if (!(numItemsInBatch > 0)) throw new KernelRequestError('num_items_in_batch', `must be null or a number > 0, got ${numItemsInBatch}`);
  }
  const partial: PolicyLossOptions = {
    epsilon,
    epsilonHigh,
    dualClip,
    delta,
    sapoTemperaturePos: optionalNumber(obj, 'sapo_temperature_pos', 1.0),
    sapoTemperatureNeg: optionalNumber(obj, 'sapo_temperature_neg', 1.05),
    useBiasCorrectionKl,
    beta,
    klEstimator: oneOf(obj, 'kl_estimator', KL_ESTIMATORS, 'k3'),
    entropyCoef: optionalNumber(obj, 'entropy_coef', 0),
    lossType: oneOf(obj, 'loss_type', LOSS_TYPES, 'dapo'),
    importanceSamplingLevel: oneOf(obj, 'importance_sampling_level', IMPORTANCE_SAMPLING_LEVELS, 'token'),
    maxCompletionLength: positiveInteger(obj, 'max_completion_length', l),
    numItemsInBatch,
  };
  // Same checks the launcher makes; its messages also start with the field name.
  return resolvePolicyLossOptions(partial, l);
}
