// The trainer worker: owns the GPU runtime, the policy and the GRPO loop for one run. Every
// finished step is committed to IndexedDB in one transaction (metrics, rollouts and, every
// save_steps and on pause, a checkpoint), so a reload or a crash resumes from the last
// checkpoint with nothing committed lost. The run's Web Lock keeps a second tab from
// training it at the same time. The UI receives events; weights never cross postMessage.
import * as Comlink from 'comlink';
import { WebGpuUnavailableError } from '../gpu/device';
import { GpuRuntime } from '../gpu/runtime';
import { parseTrainerState } from '../model/checkpoint';
import { fetchModelFiles, modelUrl } from '../model/load';
import { buildGrpoContext, releaseGrpoContext } from '../rl/context';
import { parseExperiment, type Experiment } from '../rl/experiment';
import type { GrpoContext } from '../rl/grpoStep';
import { GrpoTrainer, type TrainerEvent } from '../rl/trainer';
import { RunStore, withRunLock } from '../store';
import { toHfTensors } from '../model/weights';
import { weightsDigest } from './digest';

/** Events as the UI receives them: checkpoints are announced (with a digest), not shipped. */
export type UiEvent = Exclude<TrainerEvent, { type: 'checkpoint' }> | { type: 'checkpoint'; step: number; digest: string };

export interface OpenRequest {
  /** A new run from this experiment… */
  experiment?: unknown;
  name?: string;
  /** …or an existing run, resumed from its newest checkpoint. */
  runId?: string;
  /** IndexedDB database name (tests use their own). */
  database?: string;
  /** The remote judge's API key: kept in this worker's memory only, never stored or sent on. */
  judgeApiKey?: string;
}

export interface OpenResult {
  runId: string;
  /** Optimizer steps already taken (0 for a new run). */
  step: number;
  parameters: number;
  gpuBytes: number;
  adapter: string;
  /** Digest of the loaded weights (compare with a checkpoint event's digest). */
  digest: string;
}

/** What load() returns (an alias kept for callers written against the first API). */
export type LoadResult = OpenResult;

let runtime: GpuRuntime | null = null;
let store: RunStore | null = null;
let trainer: GrpoTrainer | null = null;
let context: GrpoContext | null = null;
let runId: string | null = null;
let releaseLock: (() => void) | null = null;
let listener: ((event: UiEvent) => void) | null = null;

async function getRuntime(): Promise<GpuRuntime> {
  try {
    runtime ??= await GpuRuntime.create();
    return runtime;
  } catch (err) {
    throw new Error(err instanceof WebGpuUnavailableError ? err.reason : (err as Error).message);
  }
}

/** Holds the run's lock until close(): resolves once held, throws RunLockedError if taken. */
async function holdRunLock(id: string): Promise<void> {
  await new Promise<void>((held, refused) => {
    withRunLock(id, () => new Promise<void>((release) => {
      releaseLock = release;
      held();
    })).catch(refused);
  });
}

async function close(): Promise<void> {
  await trainer?.stop();
  trainer = null;
  if (context) releaseGrpoContext(context);
  context = null;
  releaseLock?.();
  releaseLock = null;
  runId = null;
}

function forward(event: TrainerEvent): void {
  if (event.type === 'checkpoint') {
    void weightsDigest(event.files['model.safetensors']).then((digest) => listener?.({ type: 'checkpoint', step: event.step, digest }));
    return;
  }
  if (event.type === 'status' && runId && store) {
    const status = event.status === 'idle' ? 'paused' : event.status;
    void store.setStatus(runId, status, event.message).catch(() => {});
  }
  listener?.(event);
}

const api = {
  /** Opens a new or stored run: validates, locks, loads (or resumes) the model, prepares the loop. */
  async open(request: OpenRequest): Promise<OpenResult> {
    await close();
    store ??= await RunStore.open({ name: request.database });
    const rt = await getRuntime();
    let experiment: Experiment;
    let id: string;
    let resume;
    let startStep = 0;
    if (request.runId) {
      const run = await store.getRun(request.runId);
      if (!run) throw new Error(`there is no saved run "${request.runId}"`);
      const rubric = await store.rubric(run.experiment.rubricVersion);
      if (!rubric) throw new Error(`run "${run.name}" refers to a rubric version that is not stored`);
      const heldOut = run.experiment.heldOutRubricVersion ? await store.rubric(run.experiment.heldOutRubricVersion) : null;
      experiment = {
        model: run.experiment.modelId,
        prompts: run.experiment.prompts,
        rubric,
        ...(heldOut ? { held_out_rubric: heldOut } : {}),
        ...(run.experiment.judge ? { judge: run.experiment.judge } : {}),
        config: run.experiment.config as unknown as Record<string, unknown>,
      };
      id = run.id;
      await holdRunLock(id);
      const checkpoint = await store.latestCheckpoint(id);
      if (checkpoint) {
        resume = checkpoint.files;
        startStep = parseTrainerState(checkpoint.files['trainer_state.json']).global_step;
      }
    } else {
      const parsed = parseExperiment(request.experiment);
      experiment = parsed.experiment;
      const run = await store.createRun({
        name: request.name ?? `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
        modelId: parsed.experiment.model,
        prompts: parsed.experiment.prompts,
        rubric: parsed.rubric,
        ...(parsed.heldOutRubric ? { heldOutRubric: parsed.heldOutRubric } : {}),
        ...(parsed.experiment.judge ? { judge: parsed.experiment.judge } : {}),
        config: parsed.config,
      });
      id = run.id;
      await holdRunLock(id);
    }
    try {
      const files = await fetchModelFiles(modelUrl(experiment.model));
      context = await buildGrpoContext(rt, experiment, files, { resume, judgeApiKey: request.judgeApiKey });
    } catch (err) {
      await close();
      throw err;
    }
    runId = id;
    const runStore = store;
    trainer = new GrpoTrainer(context, {
      prompts: experiment.prompts,
      startStep,
      onEvent: forward,
      sink: { commitStep: (step, metrics, rollouts, checkpoint) => runStore.commitStep(id, step, metrics, rollouts, checkpoint).then(() => {}) },
    });
    void store.requestPersistence().catch(() => null);
    const values = await context.model.params.read('value');
    return {
      runId: id,
      step: startStep,
      parameters: context.model.params.size,
      gpuBytes: rt.pool.snapshot().bytesInUse,
      adapter: `${rt.info.vendor} ${rt.info.architecture}`,
      digest: await weightsDigest(toHfTensors(context.model.config, values)),
    };
  },
  /** A new run from an experiment (shorthand for open({experiment})). */
  load(experiment: unknown): Promise<OpenResult> {
    return api.open({ experiment });
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
  /** Slow motion: hold each sub-stage until advance(), or for stageDelayMs then go on by itself. */
  setSlowMotion(on: boolean, stageDelayMs: number | null = null): void {
    if (stageDelayMs !== null && !(Number.isFinite(stageDelayMs) && stageDelayMs >= 0 && stageDelayMs <= 600_000)) {
      throw new RangeError(`stageDelayMs must be null or a number of milliseconds in [0, 600000], got ${String(stageDelayMs)}`);
    }
    requireTrainer().setSlowMotion(on, stageDelayMs);
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
  close,
  status() {
    return { runId, status: trainer?.status ?? 'idle', step: trainer?.step ?? 0 };
  },
};

function requireTrainer(): GrpoTrainer {
  if (!trainer) throw new Error('no run is open: call open() first');
  return trainer;
}

export type TrainerApi = typeof api;
Comlink.expose(api);
