// When the trainer checkpoints. save_steps N checkpoints every N optimizer steps (TRL's meaning);
// 0 only on pause and stop; null is "auto", the page's default: every step while a checkpoint is
// small (so a closed tab or a reload redoes nothing), else every AUTO_SAVE_STEPS_LARGE steps (a
// large checkpoint written every step would slow training and fill the browser's storage).
// A pause always checkpoints. Pure: the trainer decides with it and the run view shows it.

/** "auto" checkpoints every step while a checkpoint is at most this big. */
export const AUTO_EVERY_STEP_MAX_BYTES = 16 * 1024 * 1024;
/** "auto" checkpoints every this many steps when a checkpoint is bigger. */
export const AUTO_SAVE_STEPS_LARGE = 10;

export interface CheckpointSizeInput {
  /** Every weight (a LoRA model's frozen base included). */
  parameters: number;
  /** The weights training updates (the adapters under LoRA). */
  trainableParameters: number;
  /** LoRA: the frozen base is left out of the run's checkpoints (it is the starting model). */
  lora: boolean;
  /** teacher_weights "ema": the checkpoint also holds the ema teacher, a full float32 copy of the weights. */
  ema?: boolean;
}

/**
 * About how many bytes one checkpoint takes: float32 weights (only the adapter under LoRA) and
 * AdamW's two float32 moments per trained weight, plus the ema teacher's full float32 copy when
 * the run has one; the JSON files are a few kB more.
 */
export function estimateCheckpointBytes({ parameters, trainableParameters, lora, ema = false }: CheckpointSizeInput): number {
  return (lora ? trainableParameters : parameters) * 4 + trainableParameters * 8 + (ema ? parameters * 4 : 0);
}

/** The effective interval in steps: save_steps itself, or auto's choice for this size; 0 = only on pause/stop. */
export function resolveSaveSteps(saveSteps: number | null, checkpointBytes: number): number {
  if (saveSteps !== null) return saveSteps;
  return checkpointBytes <= AUTO_EVERY_STEP_MAX_BYTES ? 1 : AUTO_SAVE_STEPS_LARGE;
}

/** Whether a checkpoint is due after the optimizer step that brought the count to `globalStep`. */
export function checkpointDue(saveSteps: number | null, globalStep: number, checkpointBytes: () => number): boolean {
  const every = saveSteps === null ? resolveSaveSteps(null, checkpointBytes()) : saveSteps;
  return every > 0 && globalStep % every === 0;
}

export function formatBytes(bytes: number): string {
  if (bytes < 100 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} kB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(bytes < 10 * 1024 ** 2 ? 1 : 0)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/** "every step (0.4 MB each)", "every 10 steps (54 MB each)", "only on pause and stop (…)": what the run view shows. */
export function describeCheckpoints(saveSteps: number | null, checkpointBytes: number): string {
  const every = resolveSaveSteps(saveSteps, checkpointBytes);
  const size = `about ${formatBytes(checkpointBytes)} each`;
  const why = saveSteps === null ? (every === 1 ? `; auto: at most ${formatBytes(AUTO_EVERY_STEP_MAX_BYTES)}` : `; auto: over ${formatBytes(AUTO_EVERY_STEP_MAX_BYTES)}`) : '';
  if (every === 0) return `only on pause and stop (${size})`;
  return `${every === 1 ? 'every step' : `every ${every} steps`} and on pause (${size}${why})`;
}

/**
 * What resuming from a checkpoint redoes. A checkpoint of global_step K holds steps 0..K-1 (step
 * numbers count from 0, as in the charts and the status line), so stored steps K and later are
 * trained again and replace theirs. null when nothing is redone.
 */
export function redoneSteps(checkpointStep: number, storedSteps: readonly number[]): { from: number; through: number; count: number } | null {
  const redo = storedSteps.filter((s) => s >= checkpointStep);
  if (redo.length === 0) return null;
  return { from: checkpointStep, through: Math.max(...redo), count: new Set(redo).size };
}

/** Where a checkpoint of global_step K stands in step numbers (from 0): "after step K-1", or "before step 0". */
export function checkpointPlace(globalStep: number): string {
  return globalStep <= 0 ? 'before step 0 (the starting weights)' : `after step ${globalStep - 1}`;
}
