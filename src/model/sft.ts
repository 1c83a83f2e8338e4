// Supervised fine-tuning (warm start): cross-entropy on completion tokens, backward, global
// grad-norm clipping and AdamW — one queue submission per step; only the loss and the
// optimizer's step state (grad norm, finite flag) are read back.
import type { GpuRuntime } from '../gpu/runtime';
import { recordLogprobsBackward, recordLogprobsForward } from '../ops/logprobs';
import { recordOptimizerStep } from '../ops/adamw';
import { readStepState } from '../ops/gradNorm';
import { learningRateAt, type LrSchedulerType } from '../ops/lrSchedule';
import { recordWeightedSum } from '../ops/reduce';
import { buildSftBatch, type SftExample } from './sftBatch';
import type { Transformer } from './transformer';

/** Hugging Face TrainingArguments names and defaults (learning_rate is SFTConfig's 2e-5). */
export interface SftConfig {
  learning_rate: number;
  weight_decay: number;
  max_grad_norm: number;
  adam_beta1: number;
  adam_beta2: number;
  adam_epsilon: number;
  lr_scheduler_type: LrSchedulerType;
  warmup_steps: number;
  num_training_steps: number;
}

export const SFT_DEFAULTS: SftConfig = {
  learning_rate: 2e-5,
  weight_decay: 0,
  max_grad_norm: 1,
  adam_beta1: 0.9,
  adam_beta2: 0.999,
  adam_epsilon: 1e-8,
  lr_scheduler_type: 'linear',
  warmup_steps: 0,
  num_training_steps: 1000,
};

export interface SftStepResult {
  step: number;
  loss: number;
  gradNorm: number;
  /** True when a NaN/Inf gradient made the optimizer skip the update (weights untouched). */
  skipped: boolean;
  learningRate: number;
  tokens: number;
  seconds: number;
  submits: number;
}

export class SftTrainer {
  /** Optimizer steps taken (AdamW's t of the next step is step + 1). */
  step = 0;
  readonly config: SftConfig;

  constructor(
    private readonly rt: GpuRuntime,
    private readonly model: Transformer,
    private readonly padTokenId: number,
    config: Partial<SftConfig> = {},
  ) {
    this.config = { ...SFT_DEFAULTS, ...config };
  }

  async trainStep(examples: readonly SftExample[]): Promise<SftStepResult> {
    const { rt, model, config: c } = this;
    const t0 = performance.now();
    const submitsBefore = rt.counters.submits;
    const batch = buildSftBatch(examples, this.padTokenId);
    const rows = batch.tokens.batch * batch.tokens.seqLen;
    const vocab = model.config.vocabSize;
    const learningRate = learningRateAt(this.step, {
      learning_rate: c.learning_rate,
      lr_scheduler_type: c.lr_scheduler_type,
      warmup_steps: c.warmup_steps,
      num_training_steps: c.num_training_steps,
    });

    const rec = rt.recorder('sft step');
    model.params.recordZeroGrads(rec);
    const state = model.forward(rec, batch.tokens);
    const targets = rt.upload(batch.targets, 'sft.targets');
    const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab, temperature: 1 });
    // d loss / d logprob = -mask / predicted: the loss is the mean negative log-likelihood.
    const weights = rt.upload(batch.mask.map((m) => -m / batch.predicted), 'sft.loss_weights');
    const scalars = rt.storage(16, 'sft.scalars');
    recordWeightedSum(rt, rec, lp.logprobs, weights, scalars, rows);
    const dLogits = recordLogprobsBackward(rt, rec, lp, weights, null);
    model.backward(rec, state, dLogits);
    const opt = recordOptimizerStep(rt, rec, model.params.optimizerTensors(rec), {
      step: this.step + 1,
      learning_rate: learningRate,
      adam_beta1: c.adam_beta1,
      adam_beta2: c.adam_beta2,
      adam_epsilon: c.adam_epsilon,
      weight_decay: c.weight_decay,
      max_grad_norm: c.max_grad_norm,
    });
    const lossRead = rec.readF32(scalars, 1);
    const stepState = readStepState(rec, opt.stepState);
    rec.releaseAfterSubmit(targets, weights, scalars, lp.logprobs, lp.entropy, lp.rowStats, dLogits, opt.stepState, opt.tensorStats);
    try {
      await rec.submit();
    } finally {
      model.release(state);
    }
    const s = await stepState;
    // A skipped update is not a step (as with GradScaler): AdamW's t does not advance.
    if (s.finite) this.step++;
    return {
      step: this.step,
      loss: (await lossRead)[0],
      gradNorm: s.gradNorm,
      skipped: !s.finite,
      learningRate,
      tokens: rows,
      seconds: (performance.now() - t0) / 1000,
      submits: rt.counters.submits - submitsBefore,
    };
  }
}
