// steps_per_generation (TRL GRPOConfig): how one generation batch feeds several optimizer steps.
// TRL samples a generation batch, splits it into steps_per_generation slices and trains each
// slice in turn; with num_iterations μ the buffered batch is replayed μ times, slices in the same
// order (GRPOTrainer._prepare_inputs: `_buffered_inputs[_step % steps_per_generation]`, a new
// generation every steps_per_generation × μ steps). TRL counts those steps in gradient-accumulation
// (micro-batch) steps and defaults steps_per_generation to gradient_accumulation_steps, i.e. one
// optimizer step per generation. The page has no gradient_accumulation_steps (a step's micro-batches
// are per_device_train_batch_size), so here steps_per_generation counts optimizer steps: the
// default 1 is TRL's default behaviour, and S splits the batch into S optimizer steps.
// A page step stays one generation batch: it takes num_iterations × steps_per_generation optimizer steps.
// Unlike TRL the slices are contiguous groups (TRL shuffles the batch before splitting), so each
// optimizer step trains on whole groups and the inspector's rows stay in order.

export interface SliceConfig {
  generation_batch_size: number;
  num_iterations: number;
  steps_per_generation: number;
}

/** One optimizer step of a generation batch: which pass over the buffer and which slice. */
export interface PlannedStep {
  /** 0-based pass over the buffered generation (num_iterations). */
  iteration: number;
  /** 0-based slice of the generation batch. */
  slice: number;
  /** Rollouts [start, end) of the generation batch this step trains on. */
  start: number;
  end: number;
}

/** Optimizer steps per generation batch (per page step): num_iterations × steps_per_generation. */
export function optimizerStepsPerGeneration(cfg: Pick<SliceConfig, 'num_iterations' | 'steps_per_generation'>): number {
  return cfg.num_iterations * cfg.steps_per_generation;
}

/** Rollouts per slice; throws when steps_per_generation does not divide the batch. */
export function sliceSize(rollouts: number, stepsPerGeneration: number): number {
  if (!Number.isInteger(stepsPerGeneration) || stepsPerGeneration < 1 || rollouts % stepsPerGeneration !== 0) {
    throw new RangeError(`steps_per_generation (${stepsPerGeneration}) must divide the generation batch (${rollouts} rollouts)`);
  }
  return rollouts / stepsPerGeneration;
}

/** The optimizer steps of one generation batch, in TRL's order: slices inside, passes outside. */
export function generationPlan(cfg: SliceConfig): PlannedStep[] {
  const size = sliceSize(cfg.generation_batch_size, cfg.steps_per_generation);
  const plan: PlannedStep[] = [];
  for (let iteration = 0; iteration < cfg.num_iterations; iteration++) {
    for (let slice = 0; slice < cfg.steps_per_generation; slice++) plan.push({ iteration, slice, start: slice * size, end: (slice + 1) * size });
  }
  return plan;
}

/** AdamW's t (from 1) of step `j` (0-based, in generationPlan's order) of page step `pageStep`. */
export function adamStep(cfg: Pick<SliceConfig, 'num_iterations' | 'steps_per_generation'>, pageStep: number, j: number): number {
  return pageStep * optimizerStepsPerGeneration(cfg) + j + 1;
}

/** Generation batches sampled over the first `optimizerSteps` optimizer steps of a run. */
export function samplingsOver(cfg: Pick<SliceConfig, 'num_iterations' | 'steps_per_generation'>, optimizerSteps: number): number {
  return Math.ceil(optimizerSteps / optimizerStepsPerGeneration(cfg));
}

/**
 * The TRL equivalent for the export: with per-device batch B on P processes, an optimizer step of
 * G / S sequences is gradient_accumulation_steps = G / (S·B·P), and TRL derives its
 * steps_per_generation (in accumulation steps) as G / (B·P) = S × gradient_accumulation_steps.
 */
export function trlAccumulation(cfg: SliceConfig & { per_device_train_batch_size: number | null }, processes = 1): { perDeviceBatch: number; gradientAccumulationSteps: number; trlStepsPerGeneration: number } {
  const G = cfg.generation_batch_size;
  const S = cfg.steps_per_generation;
  const perDeviceBatch = cfg.per_device_train_batch_size ?? G / (S * processes);
  const gradientAccumulationSteps = G / (S * perDeviceBatch * processes);
  return { perDeviceBatch, gradientAccumulationSteps, trlStepsPerGeneration: S * gradientAccumulationSteps };
}

/** The update's scalars as a step reports them (its last pass) and as each optimizer step does. */
export interface UpdateScalarMetrics {
  loss: number;
  policy_loss: number;
  kl: number | null;
  entropy: number;
  clip_ratio_low: number;
  clip_ratio_high: number;
  clip_ratio_region: number;
  ratio_mean: number;
  grad_norm: number;
}

type UpdateScalars = { loss: number; policyLoss: number; klMean: number; entropyMean: number; clipRatioLow: number; clipRatioHigh: number; clipRatioRegion: number; ratioMean: number };

/** The update's scalars under their metric names; kl only when there is a KL term (beta ≠ 0). */
export function updateScalarMetrics(s: UpdateScalars, gradNorm: number, beta: number): UpdateScalarMetrics {
  return {
    loss: s.loss,
    policy_loss: s.policyLoss,
    kl: beta !== 0 ? s.klMean : null,
    entropy: s.entropyMean,
    clip_ratio_low: s.clipRatioLow,
    clip_ratio_high: s.clipRatioHigh,
    clip_ratio_region: s.clipRatioRegion,
    ratio_mean: s.ratioMean,
    grad_norm: gradNorm,
  };
}

/** A step's view of one of its optimizer steps (StepMetrics.optimizer_steps). */
export interface OptimizerStepMetrics extends UpdateScalarMetrics {
  iteration: number;
  slice: number;
  skipped: boolean;
}

/** The per-optimizer-step metrics of an update (update.ts's steps), or undefined when there was one step. */
export function optimizerStepMetrics(
  steps: readonly {
    iteration: number;
    slice: number;
    gradNorm: number;
    skipped: boolean;
    scalars: UpdateScalars;
  }[],
  beta: number,
): OptimizerStepMetrics[] | undefined {
  if (steps.length <= 1) return undefined;
  return steps.map(({ iteration, slice, gradNorm, skipped, scalars }) => ({ iteration, slice, ...updateScalarMetrics(scalars, gradNorm, beta), skipped }));
}
