// How long a GRPO step of an experiment should take on this adapter, before Train is pressed:
// the per-token costs a short calibration measured (src/rl/calibration.ts, in the trainer
// worker) applied to the experiment's shape (rollouts, completion length, prompt length,
// micro-batches, num_iterations, a KL reference). Pure arithmetic, so the page can update the
// estimate on every edit without touching the GPU again; and the "smaller setting" a software
// adapter is offered is searched here with the same arithmetic.

/** What the calibration measured (seconds), already scaled to the experiment's model. */
export interface StepCosts {
  /** One decode step of the sampler: decodeOverhead + decodePerRow × rollouts. */
  decodeOverhead: number;
  decodePerRow: number;
  /** One training pass (forward + backward) of a micro-batch: trainOverhead + trainPerToken × tokens. */
  trainOverhead: number;
  trainPerToken: number;
  /** One optimizer step (gradient norm and AdamW over every trainable tensor); 0 when not known. */
  optimizerStep?: number;
}

/** The settings a step's time depends on (GRPOConfig names). */
export interface StepShape {
  generation_batch_size: number;
  num_generations: number;
  max_completion_length: number;
  num_iterations: number;
  per_device_train_batch_size: number | null;
  beta: number;
  max_steps: number;
}

export interface StepTimeEstimate {
  sampling: number;
  update: number;
  /** Seconds per step (sampling + update; a rules judge costs next to nothing). */
  step: number;
  /** Seconds for max_steps steps. */
  run: number;
}

/** A forward pass alone is about a third of forward + backward (prefill, the KL reference). */
const FORWARD_SHARE = 1 / 3;

/**
 * The step time of `shape` with prompts of about `promptTokens` tokens. Sampling assumes every
 * rollout runs to max_completion_length (an EOS can end it sooner), so the estimate is an upper
 * bound for that stage.
 */
export function estimateStepTime(costs: StepCosts, shape: StepShape, promptTokens: number): StepTimeEstimate {
  const rows = shape.generation_batch_size;
  const T = shape.max_completion_length;
  const seqLen = promptTokens + T;
  // Prefill: one forward over every prompt; then a decode step per further token.
  const prefill = FORWARD_SHARE * (costs.trainOverhead + costs.trainPerToken * rows * promptTokens);
  const decodeSteps = Math.max(0, T - 1);
  // The measured decode overhead is per step of a 16-step submission, as generate() submits them.
  const sampling = prefill + decodeSteps * (costs.decodeOverhead + costs.decodePerRow * rows);
  const micro = shape.per_device_train_batch_size ?? rows;
  const passes = Math.ceil(rows / Math.max(1, Math.min(micro, rows)));
  const perPass = costs.trainOverhead + costs.trainPerToken * Math.min(micro, rows) * seqLen;
  // beta > 0: the first iteration also runs the reference model forward on each micro-batch.
  const reference = shape.beta > 0 ? passes * FORWARD_SHARE * perPass : 0;
  // One optimizer step per iteration over the batch (steps_per_generation 1).
  const update = shape.num_iterations * (passes * perPass + (costs.optimizerStep ?? 0)) + reference;
  const step = sampling + update;
  return { sampling, update, step, run: step * shape.max_steps };
}

/** A setting change the page offers (and shows) for a slow adapter. */
export interface SettingChange {
  key: 'generation_batch_size' | 'num_generations' | 'max_completion_length' | 'per_device_train_batch_size';
  from: number | null;
  to: number | null;
}

/** A first step on a slow adapter should arrive within about this many seconds. */
export const FIRST_STEP_TARGET_S = 30;

/**
 * Fewer rollouts and shorter completions until a step fits `targetSeconds` (or nothing smaller
 * is sensible): first fewer prompts per step (down to one group), then shorter completions (down
 * to 16 tokens), then smaller groups (down to 4 rollouts, still a group to compare). Returns the
 * changes in the order the builder should show them; empty when the experiment already fits or
 * cannot be made smaller.
 */
export function smallerSetting(costs: StepCosts, shape: StepShape, promptTokens: number, targetSeconds = FIRST_STEP_TARGET_S): SettingChange[] {
  const s = { ...shape };
  const fits = () => estimateStepTime(costs, s, promptTokens).step <= targetSeconds;
  if (fits()) return [];
  while (!fits()) {
    const groups = s.generation_batch_size / s.num_generations;
    if (groups > 1) s.generation_batch_size = Math.max(1, Math.floor(groups / 2)) * s.num_generations;
    else if (s.max_completion_length > 16) s.max_completion_length = Math.max(16, Math.floor(s.max_completion_length / 2));
    else if (s.num_generations > 4) {
      s.num_generations = Math.max(4, Math.floor(s.num_generations / 2));
      s.generation_batch_size = s.num_generations;
    } else break;
  }
  // A micro-batch size must still divide the (smaller) generation batch: else one pass takes it all.
  if (s.per_device_train_batch_size !== null && s.generation_batch_size % s.per_device_train_batch_size !== 0) s.per_device_train_batch_size = null;
  const keys: SettingChange['key'][] = ['generation_batch_size', 'num_generations', 'max_completion_length', 'per_device_train_batch_size'];
  return keys.filter((k) => s[k] !== shape[k]).map((k) => ({ key: k, from: shape[k], to: s[k] }));
}

/** The step counts a lesson's text gives ("Train for 50 steps" → [50]), each once, in order. */
export function stepCountsIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/\b(\d{1,5})\s+(?:more\s+)?steps?\b/gi)) {
    const n = Number(m[1]);
    if (n > 0 && !out.includes(n)) out.push(n);
  }
  return out;
}

/** The settings of a parsed config that a step's time depends on. */
export function stepShapeOf(config: StepShape): StepShape {
  const { generation_batch_size, num_generations, max_completion_length, num_iterations, per_device_train_batch_size, beta, max_steps } = config;
  return { generation_batch_size, num_generations, max_completion_length, num_iterations, per_device_train_batch_size, beta, max_steps };
}
