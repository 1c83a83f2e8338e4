// Checkpoints in the Hugging Face layout plus the training state: config.json and
// model.safetensors load in transformers as they are; optimizer.safetensors holds AdamW's
// moments and trainer_state.json the step and the RNG state, so a run resumes exactly.
// Sampling and Rubric Dropout draw from counter-based generators keyed by (seed, step), so
// the RNG state is the seed and the step count. A LoRA model's checkpoint keeps the frozen base
// in model.safetensors and adds the adapter in PEFT's files; its moments are the adapter's.
// A run whose KL reference has drifted from the starting model (sync_ref_model) also saves the
// reference, in the same layout, as ref_model.safetensors: resuming must mix into it, not the start.
// A run with the ema distillation teacher (src/rl/distill/ema.ts) saves the teacher's averaged
// weights as ema_model.safetensors: resuming goes on averaging from them, not from the policy.
import type { GpuRuntime } from '../gpu/runtime';
import { configFromHf, configToHf, type ModelConfig } from './config';
import { loadModel, type ModelFiles } from './load';
import { adapterFiles, loadLoraAdapter } from './loraExport';
import { readSafetensors, readSafetensorsHeader, writeSafetensors, type Tensor } from './safetensors';
import type { Transformer } from './transformer';
import { hfParameterShapes, parameterSpecs, toHfTensors } from './weights';

export interface TrainerState {
  /** Optimizer steps taken (Hugging Face's global_step). */
  global_step: number;
  seed: number;
  /** Free-form run settings saved alongside (e.g. the GRPO config). */
  [key: string]: unknown;
}

export interface CheckpointFiles {
  'config.json': string;
  'model.safetensors': ArrayBuffer;
  /** Absent before the first optimizer step. */
  'optimizer.safetensors'?: ArrayBuffer;
  'trainer_state.json': string;
  /** LoRA runs: the adapter (PEFT format); model.safetensors then holds the frozen base. */
  'adapter_model.safetensors'?: ArrayBuffer;
  'adapter_config.json'?: string;
  /** sync_ref_model runs, once the reference was mixed: its weights (Hugging Face layout, same config). */
  'ref_model.safetensors'?: ArrayBuffer;
  /** teacher_weights "ema" runs: the ema teacher's weights (Hugging Face layout, same config). */
  'ema_model.safetensors'?: ArrayBuffer;
}

const FORMAT = 'rubric-playground-checkpoint-1';

export interface SaveOptions {
  /**
   * LoRA only: false leaves the frozen base out (model.safetensors then holds no tensor), for
   * a trainer whose base is the run's starting model anyway: a 135M base is 540 MB per
   * checkpoint, its adapter a few MB. Default true (a self-contained folder).
   */
  includeBase?: boolean;
  /** A KL reference that is no longer the starting model (sync_ref_model): saved as ref_model.safetensors. */
  reference?: Transformer;
  /** The ema distillation teacher (a separate full copy of the weights): saved as ema_model.safetensors. */
  ema?: Transformer;
}

export async function saveCheckpoint(model: Transformer, state: TrainerState, options: SaveOptions = {}): Promise<CheckpointFiles> {
  const withBase = !model.lora || options.includeBase !== false;
  const values = withBase ? await model.params.read('value', parameterSpecs(model.config).map((p) => p.name)) : new Map<string, Tensor>();
  const files: CheckpointFiles = {
    'config.json': JSON.stringify(configToHf(model.config), null, 2),
    'model.safetensors': writeSafetensors(withBase ? toHfTensors(model.config, values) : new Map(), { metadata: { format: 'pt', ...(withBase ? {} : { base: 'left out: the run\'s starting model' }) } }),
    'trainer_state.json': JSON.stringify({ format: FORMAT, ...state }, null, 2),
  };
  if (model.lora) Object.assign(files, await adapterFiles(model));
  if (options.reference) {
    const ref = options.reference;
    const refValues = await ref.params.read('value', parameterSpecs(ref.config).map((p) => p.name));
    files['ref_model.safetensors'] = writeSafetensors(toHfTensors(ref.config, refValues), { metadata: { format: 'pt', role: 'sync_ref_model reference' } });
  }
  if (options.ema) {
    const ema = options.ema;
    const emaValues = await ema.params.read('value', parameterSpecs(ema.config).map((p) => p.name));
    files['ema_model.safetensors'] = writeSafetensors(toHfTensors(ema.config, emaValues), { metadata: { format: 'pt', role: 'ema distillation teacher' } });
  }
  const trainable = model.params.trainable;
  if (trainable.length > 0 && trainable.every((p) => p.m && p.v)) {
    const m = await model.params.read('m');
    const v = await model.params.read('v');
    const moments = new Map<string, Tensor>();
    for (const [name, t] of m) moments.set(`exp_avg.${name}`, t);
    for (const [name, t] of v) moments.set(`exp_avg_sq.${name}`, t);
    files['optimizer.safetensors'] = writeSafetensors(moments, { metadata: { format: FORMAT } });
  }
  return files;
}

export interface LoadedCheckpoint {
  config: ModelConfig;
  model: Transformer;
  state: TrainerState;
}

export async function loadCheckpoint(rt: GpuRuntime, files: CheckpointFiles): Promise<LoadedCheckpoint> {
  const state = parseTrainerState(files['trainer_state.json']);
  const loaded = await loadModel(rt, checkpointModelFiles(files));
  try {
    await restoreLoraCheckpoint(loaded.model, files);
  } catch (err) {
    loaded.model.params.destroy();
    throw err;
  }
  return { config: loaded.config, model: loaded.model, state };
}

/**
 * The model files inside a checkpoint, weights and AdamW moments included. For a LoRA
 * checkpoint the moments are the adapter's: restoreLoraCheckpoint loads them with the adapter.
 */
export function checkpointModelFiles(files: CheckpointFiles): ModelFiles {
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(files['config.json']);
  } catch (err) {
    throw new Error(`config.json is not valid JSON (${(err as Error).message})`);
  }
  const lora = files['adapter_model.safetensors'] !== undefined;
  return { config, weights: files['model.safetensors'], optimizer: lora ? undefined : files['optimizer.safetensors'] };
}

/** The drifted KL reference saved in a checkpoint (sync_ref_model), as model files; null when it has none. */
export function checkpointReferenceFiles(files: CheckpointFiles): ModelFiles | null {
  const weights = files['ref_model.safetensors'];
  if (weights === undefined) return null;
  return { ...checkpointModelFiles(files), weights, optimizer: undefined };
}

/**
 * The ema teacher's weights saved in a checkpoint, as model files; null when it has none. Every
 * tensor's shape in the file's header is checked against the model's config first (nothing is
 * read or uploaded yet): a missing or misshapen tensor is refused, naming it.
 */
export function checkpointEmaFiles(files: CheckpointFiles): ModelFiles | null {
  const weights = files['ema_model.safetensors'];
  if (weights === undefined) return null;
  const base = checkpointModelFiles(files);
  const what = "the checkpoint's ema teacher (ema_model.safetensors)";
  let header: Record<string, unknown>;
  try {
    header = readSafetensorsHeader(weights, 'ema_model.safetensors').header;
  } catch (err) {
    throw new Error(`the checkpoint's ema teacher is damaged: ${(err as Error).message}`);
  }
  for (const [name, want] of hfParameterShapes(configFromHf(base.config))) {
    const got = (header[name] as { shape?: unknown } | undefined)?.shape;
    if (got === undefined) throw new Error(`${what} has no tensor ${name}: it was not saved from this model`);
    if (!Array.isArray(got) || got.length !== want.length || got.some((d, i) => d !== want[i])) {
      throw new Error(`${what} does not match the model: ${name} has shape ${JSON.stringify(got)}, the model's is ${JSON.stringify(want)}`);
    }
  }
  return { ...base, weights, optimizer: undefined };
}

/** LoRA checkpoints: attaches the saved adapter to `model` (its base) and restores its AdamW moments. No-op otherwise. */
export async function restoreLoraCheckpoint(model: Transformer, files: CheckpointFiles): Promise<void> {
  const weights = files['adapter_model.safetensors'];
  const config = files['adapter_config.json'];
  if (weights === undefined && config === undefined) return;
  if (weights === undefined || config === undefined) {
    throw new Error(`the checkpoint has ${weights ? 'adapter_model.safetensors without adapter_config.json' : 'adapter_config.json without adapter_model.safetensors'}`);
  }
  await loadLoraAdapter(model, { 'adapter_model.safetensors': weights, 'adapter_config.json': config });
  if (files['optimizer.safetensors']) model.params.loadMoments(readSafetensors(files['optimizer.safetensors'], 'optimizer.safetensors').tensors);
}

export function parseTrainerState(text: string): TrainerState {
  let state: TrainerState;
  try {
    state = JSON.parse(text);
  } catch (err) {
    throw new Error(`trainer_state.json is not valid JSON (${(err as Error).message})`);
  }
  if (!Number.isInteger(state.global_step) || state.global_step < 0) throw new Error('trainer_state.json: global_step must be an integer >= 0');
  return state;
}
