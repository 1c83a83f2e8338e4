// Learning-rate schedules of Hugging Face transformers' get_scheduler (optimization.py), with
// TrainingArguments' names. Pure TS: the trainer computes the rate on the host each step and
// passes it to the AdamW kernel in a uniform.
//
// `step` is the scheduler's current_step: the number of optimizer steps already taken. The
// Trainer calls optimizer.step() before lr_scheduler.step(), so AdamW update number t (1-based)
// uses learningRateAt(t - 1): with warmup, the very first update has rate 0, as in transformers.
//
//   warmup = warmup_steps when > 0, else ceil(warmup_ratio * num_training_steps)
//   constant:              1
//   constant_with_warmup:  step < warmup ? step / max(1, warmup) : 1
//   linear:                step < warmup ? step / max(1, warmup)
//                          : max(0, (num_training_steps - step) / max(1, num_training_steps - warmup))
//   cosine:                step < warmup ? step / max(1, warmup)
//                          : max(0, 0.5 * (1 + cos(pi * progress))),
//                          progress = (step - warmup) / max(1, num_training_steps - warmup)
// times learning_rate. Like transformers, nothing is clamped past num_training_steps (linear stays
// at 0; cosine rises again), and "constant" ignores warmup.

export const LR_SCHEDULER_TYPES = ['constant', 'constant_with_warmup', 'linear', 'cosine'] as const;
export type LrSchedulerType = (typeof LR_SCHEDULER_TYPES)[number];

export interface LrScheduleOptions {
  learning_rate: number;
  /** transformers' default is "linear". */
  lr_scheduler_type?: LrSchedulerType;
  /** Wins over warmup_ratio when > 0 (TrainingArguments.get_warmup_steps). Default 0. */
  warmup_steps?: number;
  /** Fraction of num_training_steps, rounded up. Default 0. */
  warmup_ratio?: number;
  num_training_steps: number;
}

/** Number of warmup steps: warmup_steps when > 0, else ceil(warmup_ratio * num_training_steps). */
export function warmupStepsOf(options: LrScheduleOptions): number {
  const { warmup_steps: steps = 0, warmup_ratio: ratio = 0, num_training_steps: total } = options;
  if (!Number.isInteger(total) || total < 1) {
    throw new RangeError(`num_training_steps must be a positive integer, got ${total}`);
  }
  if (!Number.isInteger(steps) || steps < 0) throw new RangeError(`warmup_steps must be an integer >= 0, got ${steps}`);
  if (!(ratio >= 0 && ratio <= 1)) throw new RangeError(`warmup_ratio must be in [0, 1], got ${ratio}`);
  return steps > 0 ? steps : Math.ceil(total * ratio);
}

/** The schedule's multiplier of learning_rate at `step` (0-based count of steps taken). */
export function lrLambdaAt(step: number, options: LrScheduleOptions): number {
  if (!Number.isInteger(step) || step < 0) throw new RangeError(`step must be an integer >= 0, got ${step}`);
  const type = options.lr_scheduler_type ?? 'linear';
  if (!LR_SCHEDULER_TYPES.includes(type)) {
    throw new RangeError(`lr_scheduler_type must be one of ${LR_SCHEDULER_TYPES.join(', ')}; got ${String(type)}`);
  }
  const warmup = warmupStepsOf(options);
  const total = options.num_training_steps;
  if (type === 'constant') return 1;
  if (step < warmup) return step / Math.max(1, warmup);
  if (type === 'constant_with_warmup') return 1;
  const span = Math.max(1, total - warmup);
  if (type === 'linear') return Math.max(0, (total - step) / span);
  const progress = (step - warmup) / span;
  return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)));
}

/** learning_rate times the schedule's multiplier at `step` (0-based count of steps taken). */
export function learningRateAt(step: number, options: LrScheduleOptions): number {
  const lr = options.learning_rate;
  if (!(Number.isFinite(lr) && lr >= 0)) throw new RangeError(`learning_rate must be a finite number >= 0, got ${lr}`);
  return lr * lrLambdaAt(step, options);
}
