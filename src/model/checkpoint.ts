// Checkpoints in the Hugging Face layout plus the training state: config.json and
// model.safetensors load in transformers as they are; optimizer.safetensors holds AdamW's
// moments and trainer_state.json the step and the RNG state, so a run resumes exactly.
// Sampling and Rubric Dropout draw from counter-based generators keyed by (seed, step), so
// the RNG state is the seed and the step count.
import type { GpuRuntime } from '../gpu/runtime';
import { configFromHf, configToHf, type ModelConfig } from './config';
import { ParameterStore } from './parameters';
import { readSafetensors, writeSafetensors, type Tensor } from './safetensors';
import { Transformer } from './transformer';
import { fromHfTensors, toHfTensors } from './weights';

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
}

const FORMAT = 'rubric-playground-checkpoint-1';

export async function saveCheckpoint(model: Transformer, state: TrainerState): Promise<CheckpointFiles> {
  const values = await model.params.read('value');
  const files: CheckpointFiles = {
    'config.json': JSON.stringify(configToHf(model.config), null, 2),
    'model.safetensors': writeSafetensors(toHfTensors(model.config, values), { metadata: { format: 'pt' } }),
    'trainer_state.json': JSON.stringify({ format: FORMAT, ...state }, null, 2),
  };
  if (model.params.list.every((p) => p.m && p.v)) {
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
  let state: TrainerState;
  try {
    state = JSON.parse(files['trainer_state.json']);
  } catch (err) {
    throw new Error(`trainer_state.json is not valid JSON (${(err as Error).message})`);
  }
  if (!Number.isInteger(state.global_step) || state.global_step < 0) throw new Error('trainer_state.json: global_step must be an integer >= 0');
  const config = configFromHf(JSON.parse(files['config.json']));
  const weights = readSafetensors(files['model.safetensors'], 'model.safetensors');
  const params = ParameterStore.create(rt, config, fromHfTensors(config, weights.tensors));
  if (files['optimizer.safetensors']) {
    const moments = readSafetensors(files['optimizer.safetensors'], 'optimizer.safetensors').tensors;
    for (const p of params.list) {
      const m = moments.get(`exp_avg.${p.name}`);
      const v = moments.get(`exp_avg_sq.${p.name}`);
      if (!m || !v || m.data.length !== p.count || v.data.length !== p.count) {
        params.destroy();
        throw new Error(`optimizer.safetensors: missing or misshapen moments for ${p.name}`);
      }
      p.m = rt.upload(m.data, `${p.name}.exp_avg`);
      p.v = rt.upload(v.data, `${p.name}.exp_avg_sq`);
    }
  }
  return { config, model: new Transformer(rt, config, params), state };
}
