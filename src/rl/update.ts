// The update half of a GRPO step: num_iterations passes over the generation batch; each pass
// trains its steps_per_generation slices in turn (generationSlices.ts), one optimizer step per
// slice: forward → log-probs → clipped loss → backward over the slice's micro-batches of
// per_device_train_batch_size sequences (TRL's name; null = the whole slice), then grad norm +
// AdamW. Each micro-batch is one queue submission; gradients accumulate across a slice's
// micro-batches and the optimizer step rides in its last one, so with one slice of one
// micro-batch a pass is exactly one submission, as before.
// Loss normalisation follows TRL under gradient accumulation, per optimizer step: dapo and cispo
// divide by the active tokens of the slice (num_items_in_batch); grpo, sapo and dr_grpo by the
// slice's sequences (each micro-batch's gradient is scaled by its share n_b / N_slice); bnpo
// divides each micro-batch by its own tokens and by the number of micro-batches, as TRL does.
// π_old: with one slice the first pass's log-probs (π_θ before any update, TRL's detached ones);
// with several, slices after the first are trained after an optimizer step, so π_old is computed
// for the whole batch before the first step, as TRL does when generation and steps are misaligned.
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';
import { recordOptimizerStep } from '../ops/adamw';
import { recordAccumulate, recordScale } from '../ops/elementwise';
import { readStepState } from '../ops/gradNorm';
import { recordLogprobsBackward, recordLogprobsForward } from '../ops/logprobs';
import { POLICY_LOSS_SCALARS, recordPolicyLoss } from '../ops/policyLoss';
import type { PolicyLossOptions } from '../ops/policyLoss.reference';
import type { TokenBatch, Transformer } from '../model/transformer';
import type { GrpoConfig } from './config';
import { entropyBonusGradient, entropyBonusMean, topEntropyMask } from './entropyBonus';
import { adamStep, generationPlan } from './generationSlices';
import { distillGradCoefficient, distillTokenWeights } from './distill/align';
import { withRowWeights } from './distill/injection';
import { recordDistillTerm, type DistillRead } from './distill/pass';
import { distillEntropyMask, ownEntropySelection } from './distill/selection';
import type { DistillTeacher } from './distill/teacher';
import type { RolloutBatch } from './rolloutBatch';

export type LossScalars = Record<(typeof POLICY_LOSS_SCALARS)[number], number>;

export interface UpdateInput {
  rt: GpuRuntime;
  model: Transformer;
  reference: Transformer | null;
  config: GrpoConfig;
  batch: RolloutBatch;
  /** [N] advantages on the GPU (the group-advantage kernel's output). */
  advantages: GPUBuffer;
  step: number;
  learningRate: number;
  /** Per-token loss weights from the token-credit stage (src/rl/credit); absent = 1 on every token. */
  tokenCredit?: TokenWeightSource | null;
  /** On-policy distillation's teacher (src/rl/distill/): its divergence's gradient joins the policy loss's at the logits; absent = off. */
  teacher?: DistillTeacher | null;
  /** Micro-batch passes done (one submission each), of num_iterations × micro-batches. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Per-token weights of the policy term (the kernel's token_weights), fixed for the batch at the
 * first pass. A negative weight flips the token's advantage sign (exact while π_θ = π_old).
 */
export interface TokenWeightSource {
  /** The weights depend on the first pass's entropies (the pass then reads them back before its loss). */
  readonly needsEntropy: boolean;
  /** [n * T] weights of sequences [start, start + n); `entropy` is their first-pass entropies when needsEntropy. */
  weightsFor(start: number, n: number, entropy: Float32Array | null): Float32Array;
}

/** One optimizer step of the update (steps_per_generation slices × num_iterations passes). */
export interface OptimizerStepRecord {
  iteration: number;
  slice: number;
  /** AdamW's t. */
  t: number;
  scalars: LossScalars;
  gradNorm: number;
  skipped: boolean;
}

export interface UpdateResult {
  /** The last pass's loss scalars over the whole batch: losses the mean of its optimizer steps', the rest token-weighted means. */
  scalars: LossScalars;
  /** The mean grad norm of the last pass's optimizer steps. */
  gradNorm: number;
  skipped: boolean;
  /** Every optimizer step, in order (stops at a skipped one). */
  steps: OptimizerStepRecord[];
  /** [N * T] entropies of the first pass, log-probs of the first and the last pass (when > 1 pass). */
  entropy: Float32Array;
  firstLogprobs: Float32Array | null;
  lastLogprobs: Float32Array | null;
  /** [N * T] 1/0 of the top_entropy_quantile mask of the first pass (each pass computes its own), or null when it is off. */
  entropyMask: Float32Array | null;
  /** [N * T] the token-credit weights (before the entropy mask), or null without tokenCredit. */
  creditWeights: Float32Array | null;
  /** [N * T] the first pass's distillation data (divergences, argmax ids) and which tokens were distilled; null without a teacher. */
  distillation: (DistillRead & { weights: Float32Array }) | null;
  microBatches: number;
}

interface MicroBatch {
  start: number;
  n: number;
  tokens: TokenBatch;
  mask: Float32Array;
  targets: GPUBuffer;
  maskBuf: GPUBuffer;
  advantages: GPUBuffer;
  old: GPUBuffer;
  ref: GPUBuffer | null;
  tokenWeights: GPUBuffer | null;
  /** [n * T] token-credit weights, fixed at the first pass (the entropy mask multiplies them each pass). */
  credit: Float32Array | null;
  /** d loss / d entropy of TRL's entropy bonus (entropyBonus.ts), when entropy_coef != 0. */
  bonusGrad: GPUBuffer | null;
}

/** Sequences [start, start + n) of a batch laid out [N, T]. */
function sliceTokens(tokens: TokenBatch, start: number, n: number): TokenBatch {
  const T = tokens.seqLen;
  return { batch: n, seqLen: T, ids: tokens.ids.slice(start * T, (start + n) * T), pads: Array.from(tokens.pads).slice(start, start + n) };
}

/** The factor a micro-batch's gradient gets so the sum over micro-batches is the whole batch's loss. */
export function microBatchScale(lossType: GrpoConfig['loss_type'], n: number, total: number, microBatches: number): number {
  if (microBatches === 1) return 1;
  if (lossType === 'dapo' || lossType === 'cispo') return 1; // normalised by num_items_in_batch instead
  if (lossType === 'bnpo') return 1 / microBatches;
  return n / total; // grpo, sapo, dr_grpo: 1/N over the whole batch
}

const ENTROPY_MEAN = POLICY_LOSS_SCALARS.indexOf('entropyMean');
const WEIGHTED = ['clipRatioLow', 'clipRatioHigh', 'clipRatioRegion', 'ratioMean', 'klMean', 'entropyMean', 'dualClipRatio'] as const;

/** One pass's slices as one set of scalars: losses averaged over the optimizer steps, the rest token-weighted. */
export function combineSlices(slices: readonly LossScalars[]): LossScalars {
  if (slices.length === 1) return slices[0];
  const out = { ...slices[0] };
  const tokens = slices.reduce((t, s) => t + s.maskSum, 0);
  out.maskSum = tokens;
  out.loss = slices.reduce((t, s) => t + s.loss, 0) / slices.length;
  out.policyLoss = slices.reduce((t, s) => t + s.policyLoss, 0) / slices.length;
  for (const k of WEIGHTED) out[k] = tokens > 0 ? slices.reduce((t, s) => t + s[k] * s.maskSum, 0) / tokens : 0;
  return out;
}

/** Combines micro-batch scalars: losses add up (already scaled), ratios and means weight by active tokens. */
export function combineScalars(parts: readonly { scalars: Float32Array; scale: number }[]): LossScalars {
  const named = (s: Float32Array) => Object.fromEntries(POLICY_LOSS_SCALARS.map((k, i) => [k, s[i]])) as LossScalars;
  if (parts.length === 1) return named(parts[0].scalars);
  const all = parts.map((p) => ({ s: named(p.scalars), scale: p.scale }));
  const out = named(new Float32Array(POLICY_LOSS_SCALARS.length));
  const tokens = all.reduce((t, p) => t + p.s.maskSum, 0);
  out.maskSum = tokens;
  out.loss = all.reduce((t, p) => t + p.scale * p.s.loss, 0);
  out.policyLoss = all.reduce((t, p) => t + p.scale * p.s.policyLoss, 0);
  for (const k of WEIGHTED) out[k] = tokens > 0 ? all.reduce((t, p) => t + p.s[k] * p.s.maskSum, 0) / tokens : 0;
  return out;
}

export async function runUpdate(input: UpdateInput): Promise<UpdateResult> {
  const { rt, model, reference, config: cfg, batch } = input;
  const N = batch.tokens.batch;
  const T = batch.tokens.seqLen;
  const V = model.config.vocabSize;
  const temperature = cfg.temperature > 0 ? cfg.temperature : 1;
  // The optimizer steps of this generation batch; the config makes the slices split evenly.
  const plan = generationPlan({ generation_batch_size: N, num_iterations: cfg.num_iterations, steps_per_generation: cfg.steps_per_generation });
  const S = cfg.steps_per_generation;
  const sliceN = N / S;
  const size = Math.min(cfg.per_device_train_batch_size ?? sliceN, sliceN);
  if (sliceN % size !== 0) throw new RangeError(`per_device_train_batch_size (${size}) must divide a slice of ${sliceN} sequences`);
  /** Micro-batches per optimizer step. */
  const K = sliceN / size;
  const activeTokensOf = (slice: number) => batch.mask.slice(slice * sliceN * T, (slice + 1) * sliceN * T).reduce((s, m) => s + m, 0);
  const baseLossOptions: Partial<PolicyLossOptions> = {
    epsilon: cfg.epsilon,
    epsilonHigh: cfg.epsilon_high ?? cfg.epsilon,
    dualClip: cfg.dual_clip,
    delta: cfg.delta,
    sapoTemperaturePos: cfg.sapo_temperature_pos,
    sapoTemperatureNeg: cfg.sapo_temperature_neg,
    useBiasCorrectionKl: cfg.use_bias_correction_kl,
    beta: cfg.beta,
    klEstimator: cfg.kl_estimator,
    // The entropy bonus is TRL's token mean over the trained tokens (entropyBonus.ts), not the loss
    // type's normaliser the kernel would use: its gradient goes to the backward directly.
    entropyCoef: 0,
    lossType: cfg.loss_type,
    importanceSamplingLevel: cfg.importance_sampling_level,
    maxCompletionLength: cfg.max_completion_length,
  };
  const lossOptionsFor = (slice: number): Partial<PolicyLossOptions> =>
    K > 1 && (cfg.loss_type === 'dapo' || cfg.loss_type === 'cispo') ? { ...baseLossOptions, numItemsInBatch: activeTokensOf(slice) } : baseLossOptions;
  const micro: MicroBatch[] = [];
  const entropy = new Float32Array(N * T);
  // The ratio view needs π_old and the last pass: with several passes, or with slices trained after an update.
  const ratios = cfg.num_iterations > 1 || S > 1;
  const firstLogprobs = ratios ? new Float32Array(N * T) : null;
  const lastLogprobs = ratios ? new Float32Array(N * T) : null;
  const entropyMask = cfg.top_entropy_quantile < 1 ? new Float32Array(N * T) : null;
  const credit = input.tokenCredit ?? null;
  const creditWeights = credit ? new Float32Array(N * T) : null;
  const steps: OptimizerStepRecord[] = [];
  const teacher = input.teacher ?? null;
  const distillation = teacher
    ? { divergence: new Float32Array(N * T), studentTop: new Uint32Array(N * T), teacherTop: new Uint32Array(N * T), weights: new Float32Array(N * T) }
    : null;
  let skipped = false;
  try {
    for (let start = 0; start < N; start += size) {
      const n = Math.min(size, N - start);
      const rows = n * T;
      const mask = batch.mask.slice(start * T, start * T + rows);
      micro.push({
        start,
        n,
        tokens: sliceTokens(batch.tokens, start, n),
        mask,
        targets: rt.upload(batch.targets.slice(start * T, start * T + rows), 'grpo.targets'),
        maskBuf: rt.upload(mask, 'grpo.mask'),
        advantages: rt.storage(n * 4, 'grpo.advantages'),
        old: rt.storage(rows * 4, 'grpo.old_logprobs'),
        ref: null,
        tokenWeights: null,
        credit: null,
        bonusGrad: null,
      });
    }
    const total = plan.length * K;
    input.onProgress?.(0, total);
    // Slices after the first are trained after an optimizer step: π_old (the sampling policy) first.
    const oldUpFront = S > 1;
    if (oldUpFront) {
      for (const mb of micro) {
        const rows = mb.n * T;
        const rec = rt.recorder('grpo.update.old_logprobs');
        const logits = model.prefill(rec, mb.tokens, { logits: 'all' });
        const lp = recordLogprobsForward(rt, rec, logits, mb.targets, { rows, vocab: V, temperature });
        rec.copy(lp.logprobs, mb.old, rows * 4);
        const read = rec.readF32(lp.logprobs, rows);
        rec.releaseAfterSubmit(lp.logprobs, lp.entropy, lp.rowStats, logits);
        await rec.submit();
        firstLogprobs!.set(await read, mb.start * T);
      }
    }
    for (let j = 0; j < plan.length && !skipped; j++) {
      const { iteration: it, slice } = plan[j];
      const lossOptions = lossOptionsFor(slice);
      const parts: { scalars: Float32Array; scale: number }[] = [];
      /** Σ over this step's micro-batches of H̄_b, the entropy the bonus rewards (entropyBonus.ts). */
      let bonusSum = 0;
      let gradNorm = 0;
      for (let k = 0; k < K; k++) {
        const mb = micro[slice * K + k];
        const rows = mb.n * T;
        let rec: Recorder = rt.recorder(`grpo.update.${it}.${slice}.${k}`);
        if (k === 0) model.params.recordZeroGrads(rec);
        if (j === 0 && k === 0) for (const m of micro) rec.copy(input.advantages, m.advantages, m.n * 4, m.start * 4, 0);
        // LoRA dropout: a fresh mask per (seed, step, pass, micro-batch), on the policy's training forward only.
        const dropout = model.lora && model.lora.config.lora_dropout > 0
          ? { dropoutSeed: (cfg.seed ^ Math.imul(input.step + 1, 0x9e3779b1) ^ Math.imul(it + 1, 0x85ebca6b) ^ Math.imul(slice * K + k + 1, 0xc2b2ae35)) >>> 0 }
          : {};
        const state = model.forward(rec, mb.tokens, dropout);
        const lp = recordLogprobsForward(rt, rec, state.logits, mb.targets, { rows, vocab: V, temperature });
        const reads: Promise<void>[] = [];
        const readInto = (buf: GPUBuffer, into: Float32Array) => reads.push(rec.readF32(buf, rows).then((x) => into.set(x, mb.start * T)));
        let firstEntropies: Promise<Float32Array> | null = null;
        if (it === 0) {
          // π_old = π_θ before the first update (TRL's detached log-probs), unless computed up front.
          if (!oldUpFront) {
            rec.copy(lp.logprobs, mb.old, rows * 4);
            if (firstLogprobs) readInto(lp.logprobs, firstLogprobs);
          }
          if (cfg.beta !== 0) {
            if (!reference) throw new Error('beta > 0 needs the reference model');
            // The inference pass: every position's logits, no activations kept for a backward.
            const refLogits = reference.prefill(rec, mb.tokens, { logits: 'all' });
            const refLp = recordLogprobsForward(rt, rec, refLogits, mb.targets, { rows, vocab: V, temperature });
            mb.ref = rt.storage(rows * 4, 'grpo.ref_logprobs');
            rec.copy(refLp.logprobs, mb.ref, rows * 4);
            rec.releaseAfterSubmit(refLp.logprobs, refLp.entropy, refLp.rowStats, refLogits);
          }
          firstEntropies = rec.readF32(lp.entropy, rows);
          reads.push(firstEntropies.then((e) => entropy.set(e, mb.start * T)));
        }
        // This pass's entropies on the host, for the entropy mask (every pass: TRL computes it in
        // compute_loss, from that pass's entropies, per micro-batch) and entropy-gated credit (first pass).
        let e: Float32Array | null = null;
        if (entropyMask || (it === 0 && credit?.needsEntropy) || (teacher && ownEntropySelection(teacher.options))) {
          const pending = firstEntropies ?? rec.readF32(lp.entropy, rows);
          await rec.submit();
          e = await pending;
          rec = rt.recorder(`grpo.update.${it}.${slice}.${k}b`);
        }
        // Token credit (src/rl/credit) is fixed for the batch at the first pass; TRL's entropy mask multiplies it.
        if (it === 0 && credit) {
          mb.credit = credit.weightsFor(mb.start, mb.n, e);
          creditWeights!.set(mb.credit, mb.start * T);
        }
        const m = entropyMask ? topEntropyMask(e!, mb.mask, cfg.top_entropy_quantile) : null;
        if (m && it === 0) entropyMask!.set(m, mb.start * T); // the inspector shows the first pass's mask, next to its entropies
        if (m || (it === 0 && mb.credit)) {
          const c = mb.credit;
          if (mb.tokenWeights) rec.releaseAfterSubmit(mb.tokenWeights); // the previous pass's
          mb.tokenWeights = rt.upload(c && m ? c.map((x, i) => x * m[i]) : (m ?? c!), 'grpo.token_weights');
        }
        if (cfg.entropy_coef !== 0 && (m || !mb.bonusGrad)) {
          if (mb.bonusGrad) rec.releaseAfterSubmit(mb.bonusGrad);
          mb.bonusGrad = rt.upload(entropyBonusGradient(mb.mask, m, cfg.entropy_coef, K), 'grpo.entropy_bonus_grad');
        }
        if (lastLogprobs && it === cfg.num_iterations - 1) readInto(lp.logprobs, lastLogprobs);
        const loss = recordPolicyLoss(
          rt,
          rec,
          { n: mb.n, l: T },
          { logprobs: lp.logprobs, oldLogprobs: mb.old, refLogprobs: mb.ref, mask: mb.maskBuf, advantages: mb.advantages, entropy: lp.entropy, tokenWeights: mb.tokenWeights },
          lossOptions,
        );
        const scale = microBatchScale(cfg.loss_type, mb.n, sliceN, K);
        const gradLogprobs = scale === 1 ? loss.gradLogprobs : recordScale(rt, rec, loss.gradLogprobs, rows, scale);
        // TRL's entropy bonus: already divided by the micro-batches, so never rescaled (entropyBonus.ts).
        const gradEntropy = mb.bonusGrad;
        const dLogits = recordLogprobsBackward(rt, rec, lp, gradLogprobs, gradEntropy);
        // On-policy distillation (src/rl/distill/): the teacher's divergence gradient is added to the
        // policy loss's at the logits, so one backward pass carries both. Normalised by the optimizer
        // step's completion tokens (TRL's batchmean), like dapo, so micro-batches need no rescale.
        if (teacher) {
          // criterion_injection distils only its injected rows (distill/injection.ts).
          // Token selection (distill/selection.ts): the divergence's own entropy fraction, else the policy's mask.
          const weights = withRowWeights(distillTokenWeights(mb.mask, distillEntropyMask(teacher.options, e, mb.mask, m)), teacher.rowWeights, mb.start, T);
          const d = recordDistillTerm(rt, rec, teacher, {
            start: mb.start,
            n: mb.n,
            studentLogits: state.logits,
            student: { seqLen: T, completionStart: batch.completionStart },
            weights,
            coefficient: distillGradCoefficient(teacher.options.weight, activeTokensOf(slice)),
            readBack: it === 0,
          });
          recordAccumulate(rt, rec, dLogits, d.grad, rows * V);
          rec.releaseAfterSubmit(...d.buffers);
          if (d.read) {
            const at = mb.start * T;
            reads.push(
              d.read.then((r) => {
                distillation!.divergence.set(r.divergence, at);
                distillation!.studentTop.set(r.studentTop, at);
                distillation!.teacherTop.set(r.teacherTop, at);
                distillation!.weights.set(weights, at);
              }),
            );
          }
        }
        model.backward(rec, state, dLogits);
        let stepState: Promise<{ gradNorm: number; finite: boolean }> | null = null;
        if (k === K - 1) {
          const opt = recordOptimizerStep(rt, rec, model.params.optimizerTensors(rec), {
            step: adamStep(cfg, input.step, j),
            learning_rate: input.learningRate,
            adam_beta1: cfg.adam_beta1,
            adam_beta2: cfg.adam_beta2,
            adam_epsilon: cfg.adam_epsilon,
            weight_decay: cfg.weight_decay,
            max_grad_norm: cfg.max_grad_norm,
          });
          stepState = readStepState(rec, opt.stepState);
          rec.releaseAfterSubmit(opt.stepState, opt.tensorStats);
        }
        const scalarRead = rec.readF32(loss.scalars, POLICY_LOSS_SCALARS.length);
        // The scaled copies (micro-batches only) are buffers of their own.
        const scaled = scale === 1 ? [] : [gradLogprobs];
        rec.releaseAfterSubmit(lp.logprobs, lp.entropy, lp.rowStats, loss.gradLogprobs, loss.scalars, dLogits, ...scaled, ...(loss.gradEntropy ? [loss.gradEntropy] : []));
        try {
          await rec.submit();
        } finally {
          model.release(state);
        }
        await Promise.all(reads);
        const scalars = await scalarRead;
        parts.push({ scalars, scale });
        input.onProgress?.(j * K + k + 1, total);
        if (cfg.entropy_coef !== 0) bonusSum += m ? entropyBonusMean(e!, mb.mask, m) : scalars[ENTROPY_MEAN];
        if (stepState) {
          const s = await stepState;
          gradNorm = s.gradNorm;
          skipped = !s.finite;
        }
      }
      const scalars = combineScalars(parts);
      // The kernel's loss has no entropy term (entropyCoef 0 above): TRL's −entropy_coef · Σ_b H̄_b / K.
      if (cfg.entropy_coef !== 0) scalars.loss -= (cfg.entropy_coef * bonusSum) / K;
      steps.push({ iteration: it, slice, t: adamStep(cfg, input.step, j), scalars, gradNorm, skipped });
    }
  } finally {
    for (const m of micro) rt.release(m.targets, m.maskBuf, m.advantages, m.old, ...(m.ref ? [m.ref] : []), ...(m.tokenWeights ? [m.tokenWeights] : []), ...(m.bonusGrad ? [m.bonusGrad] : []));
  }
  // The last pass reached (all of it, or up to a skipped step).
  const last = steps.filter((s) => s.iteration === steps[steps.length - 1].iteration);
  const scalars = combineSlices(last.map((s) => s.scalars));
  const gradNorm = last.reduce((t, s) => t + s.gradNorm, 0) / last.length;
  return { scalars, gradNorm, skipped, steps, entropy, firstLogprobs, lastLogprobs, entropyMask, creditWeights, distillation, microBatches: micro.length };
}
