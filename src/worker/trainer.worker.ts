// The trainer worker: owns the GPU runtime, the policy and the GRPO loop. The UI drives it
// through comlink and receives events (metrics, rollouts, stages, status, errors); weights
// and checkpoints stay here (they go to IndexedDB, not through postMessage).
import * as Comlink from 'comlink';
import { WebGpuUnavailableError } from '../gpu/device';
import { GpuRuntime } from '../gpu/runtime';
import { fetchModelFiles, modelUrl } from '../model/load';
import { buildGrpoContext, parseExperiment } from '../rl/experiment';
import { GrpoTrainer, type StepSink, type TrainerEvent } from '../rl/trainer';

/** Events as the UI receives them: checkpoints are announced, not shipped. */
export type UiEvent = Exclude<TrainerEvent, { type: 'checkpoint' }> | { type: 'checkpoint'; step: number };

export interface LoadResult {
  parameters: number;
  gpuBytes: number;
  adapter: string;
}

let runtime: GpuRuntime | null = null;
let trainer: GrpoTrainer | null = null;
let listener: ((event: UiEvent) => void) | null = null;
let sink: StepSink | undefined;

function forward(event: TrainerEvent): void {
  if (!listener) return;
  listener(event.type === 'checkpoint' ? { type: 'checkpoint', step: event.step } : event);
}

const api = {
  /** Validates the experiment, acquires the GPU, loads the model and prepares the trainer. */
  async load(experiment: unknown): Promise<LoadResult> {
    const { experiment: parsed } = parseExperiment(experiment);
    try {
      runtime ??= await GpuRuntime.create();
    } catch (err) {
      throw new Error(err instanceof WebGpuUnavailableError ? err.reason : (err as Error).message);
    }
    await trainer?.stop();
    const files = await fetchModelFiles(modelUrl(parsed.model));
    const ctx = await buildGrpoContext(runtime, parsed, files);
    trainer = new GrpoTrainer(ctx, { prompts: parsed.prompts, onEvent: forward, sink });
    return { parameters: ctx.model.params.size, gpuBytes: runtime.pool.snapshot().bytesInUse, adapter: `${runtime.info.vendor} ${runtime.info.architecture}` };
  },
  subscribe(callback: (event: UiEvent) => void): void {
    listener = callback;
  },
  start(): void {
    void requireTrainer().start();
  },
  singleStep(): void {
    void requireTrainer().singleStep();
  },
  setSlowMotion(on: boolean): void {
    requireTrainer().slowMotion = on;
  },
  advance(): void {
    requireTrainer().advance();
  },
  pause(): void {
    requireTrainer().pause();
  },
  async stop(): Promise<void> {
    await trainer?.stop();
  },
  status() {
    return { status: trainer?.status ?? 'idle', step: trainer?.step ?? 0 };
  },
};

function requireTrainer(): GrpoTrainer {
  if (!trainer) throw new Error('no experiment is loaded: call load() first');
  return trainer;
}

export type TrainerApi = typeof api;
Comlink.expose(api);
