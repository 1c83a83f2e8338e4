// Launcher for shaders/policy_loss.wgsl: GRPO-family clipped policy loss, its gradients
// with respect to the current log-probs (and entropies, for the entropy bonus) and the
// metrics, as 4-5 dispatches recorded into the caller's submission. Semantics and the
// float64 twin: src/ops/policyLoss.reference.ts.
import code from '../../shaders/policy_loss.wgsl?raw';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import type { BindingKind, KernelSpec } from '../gpu/pipelineCache';
import {
  KL_ESTIMATORS,
  LOSS_TYPES,
  resolvePolicyLossOptions,
  type PolicyLossMetrics,
  type PolicyLossOptions,
} from './policyLoss.reference';

const WORKGROUP = 256;
/** Tokens per token_loss workgroup (WG * ITEMS in the shader). */
const TILE = WORKGROUP * 4;
/** f32 per sequence record and per tile partial, as in the shader. */
const REC = 8;
const PART = 8;

const R: BindingKind = 'read-only-storage';
const W: BindingKind = 'storage';
const spec = (entryPoint: string, bindings: BindingKind[]): KernelSpec => ({
  name: 'policy_loss',
  code,
  entryPoint,
  bindings: ['uniform', ...bindings],
});
const SEQ_STATS = spec('seq_stats', [R, R, R, R, R, R, W, R]);
const BATCH_STATS = spec('batch_stats', [W]);
const TOKEN_LOSS = spec('token_loss', [R, R, R, R, R, R, W, W]);
const ENTROPY_GRAD = spec('entropy_grad', [R, R, W]);
const FINALIZE = spec('finalize', [R, R, W]);

const FLAG = {
  old: 1,
  ref: 2,
  weights: 4,
  entropy: 8,
  dual: 16,
  sequence: 32,
  numItems: 64,
  delta: 128,
  biasKl: 256,
} as const;

/** Order of the values in the `scalars` buffer written by the finalize dispatch. */
export const POLICY_LOSS_SCALARS = [
  'loss',
  'policyLoss',
  'clipRatioLow',
  'clipRatioHigh',
  'clipRatioRegion',
  'ratioMean',
  'klMean',
  'entropyMean',
  'dualClipRatio',
  'maskSum',
] as const;

export interface PolicyLossShape {
  /** Sequences. */
  n: number;
  /** Positions per sequence (padded length). */
  l: number;
}

/** GPU inputs; f32 arrays of N*L values except advantages (N). Absent optional inputs are null. */
export interface PolicyLossInputs {
  logprobs: GPUBuffer;
  oldLogprobs?: GPUBuffer | null;
  refLogprobs?: GPUBuffer | null;
  mask: GPUBuffer;
  advantages: GPUBuffer;
  tokenWeights?: GPUBuffer | null;
  entropy?: GPUBuffer | null;
}

/** Pooled buffers (the caller releases them): gradients [N*L] and the scalars. */
export interface PolicyLossOutputs {
  gradLogprobs: GPUBuffer;
  /** Null when entropyCoef = 0. */
  gradEntropy: GPUBuffer | null;
  /** POLICY_LOSS_SCALARS.length f32 values; klMean/entropyMean read 0 when their input is absent. */
  scalars: GPUBuffer;
}

export function validatePolicyLossShape(shape: PolicyLossShape, maxBindingBytes: number): void {
  const { n, l } = shape;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n (sequences) must be a positive integer, got ${n}`);
  if (!Number.isInteger(l) || l < 1) throw new RangeError(`l (positions) must be a positive integer, got ${l}`);
  if (n * l * 4 > maxBindingBytes) {
    throw new RangeError(
      `${n} x ${l} tokens exceed this GPU's storage binding limit of ${maxBindingBytes} bytes per array; ` +
        `split the batch into micro-batches of at most ${Math.floor(maxBindingBytes / (l * 4))} sequences`,
    );
  }
}

/**
 * Records the policy loss over N x L tokens into `rec` (no submit). `options` may be partial:
 * TRL defaults fill the rest. Throws when beta != 0 without ref log-probs or entropyCoef != 0
 * without entropies. Intermediates are recorder scratch; outputs are pooled buffers.
 */
export function recordPolicyLoss(
  rt: GpuRuntime,
  rec: Recorder,
  shape: PolicyLossShape,
  inputs: PolicyLossInputs,
  options: Partial<PolicyLossOptions> = {},
): PolicyLossOutputs {
  validatePolicyLossShape(shape, rt.device.limits.maxStorageBufferBindingSize);
  const o = resolvePolicyLossOptions(options, shape.l);
  if (o.beta !== 0 && !inputs.refLogprobs) throw new RangeError('ref_logprobs: required when beta != 0');
  if (o.entropyCoef !== 0 && !inputs.entropy) throw new RangeError('entropy: required when entropy_coef != 0');
  const { n, l } = shape;
  const count = n * l;
  const tiles = Math.ceil(count / TILE);

  // Absent optional inputs get a stand-in buffer (never read: the flags say so).
  const old = inputs.oldLogprobs ?? inputs.logprobs;
  const ref = inputs.refLogprobs ?? inputs.logprobs;
  const weights = inputs.tokenWeights ?? inputs.mask;
  const entropy = inputs.entropy ?? inputs.mask;

  const params = rec.uniform(paramsFor(shape, tiles, o, inputs));
  // Per-sequence records, then the batch mask sum at [n * REC].
  const records = rec.scratch((n + 1) * REC * 4, 'policy_loss.records');
  const partials = rec.scratch(tiles * PART * 4, 'policy_loss.partials');
  const gradLogprobs = rt.storage(count * 4, 'grad_logprobs');
  const gradEntropy = o.entropyCoef !== 0 ? rt.storage(count * 4, 'grad_entropy') : null;
  const scalars = rt.storage(POLICY_LOSS_SCALARS.length * 4, 'policy_loss.scalars');

  const [sx, sy] = rt.grid(n);
  rec.dispatch(rt.pipeline(SEQ_STATS), [params, inputs.logprobs, old, inputs.mask, weights, entropy, inputs.advantages, records, ref], sx, sy);
  rec.dispatch(rt.pipeline(BATCH_STATS), [params, records], 1);
  const [tx, ty] = rt.grid(tiles);
  rec.dispatch(rt.pipeline(TOKEN_LOSS), [params, inputs.logprobs, old, ref, inputs.mask, weights, records, gradLogprobs, partials], tx, ty);
  if (gradEntropy) {
    const [ex, ey] = rt.grid(Math.ceil(count / WORKGROUP));
    rec.dispatch(rt.pipeline(ENTROPY_GRAD), [params, inputs.mask, records, gradEntropy], ex, ey);
  }
  rec.dispatch(rt.pipeline(FINALIZE), [params, records, partials, scalars], 1);
  return { gradLogprobs, gradEntropy, scalars };
}

function paramsFor(shape: PolicyLossShape, tiles: number, o: PolicyLossOptions, inputs: PolicyLossInputs): Uint32Array {
  const data = new ArrayBuffer(64);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  let flags = 0;
  if (inputs.oldLogprobs) flags |= FLAG.old;
  if (inputs.refLogprobs) flags |= FLAG.ref;
  if (inputs.tokenWeights) flags |= FLAG.weights;
  if (inputs.entropy) flags |= FLAG.entropy;
  if (o.dualClip !== null) flags |= FLAG.dual;
  if (o.importanceSamplingLevel === 'sequence') flags |= FLAG.sequence;
  if (o.numItemsInBatch !== null) flags |= FLAG.numItems;
  if (o.delta !== null) flags |= FLAG.delta;
  if (o.useBiasCorrectionKl) flags |= FLAG.biasKl;
  u32[0] = shape.n;
  u32[1] = shape.l;
  u32[2] = tiles;
  u32[3] = flags;
  f32[4] = o.epsilon;
  f32[5] = o.epsilonHigh;
  f32[6] = o.dualClip ?? 0;
  f32[7] = o.beta;
  f32[8] = o.entropyCoef;
  u32[9] = LOSS_TYPES.indexOf(o.lossType);
  u32[10] = KL_ESTIMATORS.indexOf(o.klEstimator);
  f32[11] = o.maxCompletionLength;
  f32[12] = o.numItemsInBatch ?? 0;
  f32[13] = o.delta ?? 0;
  f32[14] = o.sapoTemperaturePos;
  f32[15] = o.sapoTemperatureNeg;
  return u32;
}

/** Host arrays (f32) for runPolicyLoss; shapes as PolicyLossInputs. */
export interface PolicyLossHostInput extends PolicyLossShape {
  logprobs: Float32Array;
  oldLogprobs?: Float32Array | null;
  refLogprobs?: Float32Array | null;
  mask: Float32Array;
  advantages: Float32Array;
  tokenWeights?: Float32Array | null;
  entropy?: Float32Array | null;
  options?: Partial<PolicyLossOptions>;
  /** Also read back the gradient arrays (default false: scalars only). */
  readGradients?: boolean;
}

export interface PolicyLossHostOutput extends PolicyLossMetrics {
  gradLogprobs?: Float32Array;
  /** Present when gradients were asked for and entropyCoef != 0. */
  gradEntropy?: Float32Array;
}

/**
 * Host arrays in, host values out: uploads, records, submits once, reads the scalars (and
 * the gradients when asked), releases everything. For tests, the kernel runner, benchmarks.
 */
export async function runPolicyLoss(rt: GpuRuntime, input: PolicyLossHostInput): Promise<PolicyLossHostOutput> {
  const { n, l } = input;
  validatePolicyLossShape(input, rt.device.limits.maxStorageBufferBindingSize);
  const count = n * l;
  for (const [name, arr] of [
    ['logprobs', input.logprobs],
    ['old_logprobs', input.oldLogprobs],
    ['ref_logprobs', input.refLogprobs],
    ['mask', input.mask],
    ['token_weights', input.tokenWeights],
    ['entropy', input.entropy],
  ] as const) {
    if (arr && arr.length !== count) throw new RangeError(`${name} has ${arr.length} values, expected n*l = ${count}`);
  }
  if (input.advantages.length !== n) throw new RangeError(`advantages has ${input.advantages.length} values, expected n = ${n}`);

  const owned: GPUBuffer[] = [];
  const up = (data: Float32Array | null | undefined, label: string): GPUBuffer | null => {
    if (!data) return null;
    const b = rt.upload(data, label);
    owned.push(b);
    return b;
  };
  try {
    const rec = rt.recorder('policy_loss');
    const inputs: PolicyLossInputs = {
      logprobs: up(input.logprobs, 'logprobs')!,
      oldLogprobs: up(input.oldLogprobs, 'old_logprobs'),
      refLogprobs: up(input.refLogprobs, 'ref_logprobs'),
      mask: up(input.mask, 'mask')!,
      advantages: up(input.advantages, 'advantages')!,
      tokenWeights: up(input.tokenWeights, 'token_weights'),
      entropy: up(input.entropy, 'entropy'),
    };
    const out = recordPolicyLoss(rt, rec, input, inputs, input.options);
    owned.push(out.gradLogprobs, out.scalars, ...(out.gradEntropy ? [out.gradEntropy] : []));
    const scalars = rec.readF32(out.scalars, POLICY_LOSS_SCALARS.length);
    const gradLogprobs = input.readGradients ? rec.readF32(out.gradLogprobs, count) : undefined;
    const gradEntropy = input.readGradients && out.gradEntropy ? rec.readF32(out.gradEntropy, count) : undefined;
    await rec.submit();
    const s = await scalars;
    const value = (name: (typeof POLICY_LOSS_SCALARS)[number]) => s[POLICY_LOSS_SCALARS.indexOf(name)];
    return {
      loss: value('loss'),
      policyLoss: value('policyLoss'),
      clipRatioLow: value('clipRatioLow'),
      clipRatioHigh: value('clipRatioHigh'),
      clipRatioRegion: value('clipRatioRegion'),
      ratioMean: value('ratioMean'),
      klMean: input.refLogprobs ? value('klMean') : null,
      entropyMean: input.entropy ? value('entropyMean') : null,
      dualClipRatio: value('dualClipRatio'),
      maskSum: value('maskSum'),
      ...(gradLogprobs ? { gradLogprobs: await gradLogprobs } : {}),
      ...(gradEntropy ? { gradEntropy: await gradEntropy } : {}),
    };
  } finally {
    rt.release(...owned);
  }
}
