// The trainer worker: owns the GPU runtime, the policy and the GRPO loop for one run. Every
// finished step is committed to IndexedDB in one transaction (metrics, rollouts and, every
// save_steps and on pause, a checkpoint), so a reload or a crash resumes from the last
// checkpoint with nothing committed lost. The run's Web Lock keeps a second tab from
// training it at the same time. The UI receives events; weights never cross postMessage.
// A lost GPU device fails the run within moments (the runtime races every GPU await against the
// loss) with a message that says so and where Resume starts; the next open() gets a new device.
import * as Comlink from 'comlink';
import { WebGpuUnavailableError } from '../gpu/device';
import type { GpuDeviceLostError } from '../gpu/deviceLoss';
import { GpuRuntime } from '../gpu/runtime';
import { parseTrainerState } from '../model/checkpoint';
import type { DownloadProgress, PickedFile } from '../model/hub';
import { saveCheckpoint } from '../model/checkpoint';
import type { ModelFiles } from '../model/load';
import { adapterFiles, mergedModelFiles } from '../model/loraExport';
import { fetchModelById, fetchModelConfig, type ModelSourceOptions } from '../model/source';
import type { GrpoConfig } from '../rl/config';
import { planMemory, type MemoryPlan } from '../rl/memoryPlan';
import { calibrate, isSoftwareAdapter, type Calibration } from '../rl/calibration';
import { configFromHf } from '../model/config';
import { buildGrpoContext, releaseGrpoContext } from '../rl/context';
import { parseExperiment, type Experiment } from '../rl/experiment';
import { samplingPromptsBound } from '../rl/explore/scaffold';
import type { GrpoContext } from '../rl/grpoStep';
import { GrpoTrainer, type TrainerEvent } from '../rl/trainer';
import { RunStore, withRunLock } from '../store';
import { StatusWriter } from '../store/statusWriter';
import { createLoadingRun, saveClosedUntrained, saveLoadFailure } from '../store/loadingRun';
import { deviceLostMessage } from './deviceLostMessage';
import { parameterSpecs, toHfTensors } from '../model/weights';
import { weightsDigest } from './digest';
import { outOfMemoryMessage } from './outOfMemoryMessage';
import { startWorkerModelJudge } from './workerJudge';
import { probeTrainingFromStore } from './probeTraining';
import { rubricVersion } from '../rubric/version';

/**
 * Events as the UI receives them: checkpoints are announced (with a digest), not shipped; while
 * open() fetches a Hub model, 'download' events report its progress.
 */
export type UiEvent =
  | Exclude<TrainerEvent, { type: 'checkpoint' }>
  | { type: 'checkpoint'; step: number; digest: string }
  | { type: 'download'; progress: DownloadProgress };

export interface OpenRequest {
  /** A new run from this experiment… */
  experiment?: unknown;
  name?: string;
  /** …or an existing run, resumed from its newest checkpoint. */
  runId?: string;
  /** IndexedDB database name (tests use their own). */
  database?: string;
  /** The remote judge's API key with the origin it was entered for: kept in memory only, never sent to another origin. */
  judgeApiKey?: { origin: string; key: string };
  /** The black-box distillation teacher endpoint's key, the same way (sent only to its origin). */
  teacherApiKey?: { origin: string; key: string };
  /** The files of a "local:" model, picked by the user (Files survive postMessage). */
  localFiles?: PickedFile[];
  /** A Hub mirror, or a server laid out like the Hub, for "hf:" models (default huggingface.co). */
  hubEndpoint?: string;
}

export interface EstimateRequest {
  experiment: unknown;
  localFiles?: PickedFile[];
  hubEndpoint?: string;
  /** GPU memory to plan for (default DEFAULT_GPU_BUDGET_BYTES: WebGPU does not report it). */
  budgetBytes?: number;
}

/** Files to save, by name (safetensors as bytes, JSON as text). */
export type ExportedFiles = Record<string, ArrayBuffer | string>;

export interface OpenResult {
  runId: string;
  /** Optimizer steps already taken (0 for a new run). */
  step: number;
  /** Every weight of the model (frozen base included). */
  parameters: number;
  /** The weights training updates (the adapters under LoRA; all of them otherwise). */
  trainableParameters: number;
  gpuBytes: number;
  adapter: string;
  /** Digest of the loaded weights (compare with a checkpoint event's digest). */
  digest: string;
  /** A Hub download that could not be cached (a full storage quota, explained), or null. */
  cacheError: string | null;
  /** irt_ability resumed without its saved item table: why (a fresh one is used), or null. */
  resumeNote: string | null;
}

export interface CalibrationRequest {
  model: string;
  localFiles?: PickedFile[];
  hubEndpoint?: string;
}

export interface CalibrationReply {
  adapter: { vendor: string; architecture: string; description: string; software: boolean };
  costs: Calibration;
}

/** Calibrations of this page, by adapter and model shape. */
const calibrations = new Map<string, Promise<Calibration>>();
/** Calibrations in progress: open() stops them (a run's first step should not share the GPU with one). */
const calibrating = new Set<AbortController>();

function stopCalibrations(): void {
  for (const c of calibrating) c.abort();
}

/** One runtime per worker: a promise, so an estimate() and an open() at once share it. */
let runtime: Promise<GpuRuntime> | null = null;
let store: RunStore | null = null;
let trainer: GrpoTrainer | null = null;
let context: GrpoContext | null = null;
/** The open run's starting model files (its config and tokenizer go into exports). */
let modelFiles: ModelFiles | null = null;
let openModelId: string | null = null;
let runId: string | null = null;
let releaseLock: (() => void) | null = null;
let listener: ((event: UiEvent) => void) | null = null;
/** Cancels the download of the open() in progress. */
let opening: AbortController | null = null;
/** While true, status events are not written to the store (see close()). */
let closing = false;
/** The runtime the open run trains on (its loss fails the run). */
let openRuntime: GpuRuntime | null = null;
/** The global step of the open run's newest stored checkpoint (Resume starts there); null: none. */
let checkpointStep: number | null = null;
/** The open run's status writes, in order; a failed one (a full disk) is retried before the lock goes. */
let statuses: StatusWriter | null = null;
/** The open run if this open created it (stored 'running' while its model loaded) and it has not trained yet: closing stores it paused. */
let untrained: string | null = null;

/** A new runtime, watched: once its device is lost, the next open() or estimate() gets a new one. */
function createRuntime(): Promise<GpuRuntime> {
  const made = GpuRuntime.create();
  void made.then(
    (rt) => rt.lost.then(() => onDeviceLost(made, rt)),
    () => {},
  );
  return made;
}

function onDeviceLost(made: Promise<GpuRuntime>, rt: GpuRuntime): void {
  if (runtime === made) runtime = null;
  if (!trainer || openRuntime !== rt || !rt.loss.lost) return;
  if (trainer.status === 'running') {
    // The GPU awaits of the step in progress fail now (see DeviceLossWatch); a step held at a
    // slow-motion stage must not wait for Advance to learn that.
    trainer.setSlowMotion(false);
  } else if (trainer.status === 'paused' || trainer.status === 'idle') {
    // Lost while open but not training: the weights on the GPU are gone, so this run cannot go on.
    forward({ type: 'status', status: 'failed', message: lostMessage(rt.loss.lost, null) });
  }
}

function lostMessage(loss: GpuDeviceLostError, step: number | null): string {
  return deviceLostMessage(loss, { step, checkpointStep });
}

async function getRuntime(): Promise<GpuRuntime> {
  runtime ??= createRuntime();
  try {
    const rt = await runtime;
    if (!rt.loss.lost) return rt;
    runtime = createRuntime(); // lost, and its loss not yet handled: ask for a new device now
    return await runtime;
  } catch (err) {
    runtime = null;
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
  // Closing a run that is not training (paused, finished, failed) must not record it as stopped.
  closing = trainer?.status !== 'running';
  try {
    await trainer?.stop();
  } finally {
    closing = false;
  }
  trainer = null;
  if (context) releaseGrpoContext(context);
  context = null;
  modelFiles = null;
  openRuntime = null;
  checkpointStep = null;
  // Created 'running' for its model load and closed before it trained: nothing was interrupted.
  if (untrained !== null && statuses) saveClosedUntrained(statuses, untrained);
  untrained = null;
  // Saved while the lock is still held: once it is free, a run still stored as 'running' reads as interrupted.
  await statuses?.flush();
  releaseLock?.();
  releaseLock = null;
  runId = null;
}

function forward(event: TrainerEvent): void {
  // Once the device is lost, whatever the step failed with is that loss: say so, and what to do.
  const loss = openRuntime?.loss.lost;
  if (loss && event.type === 'error') event = { ...event, message: lostMessage(loss, event.step) };
  if (loss && event.type === 'status' && event.status === 'failed' && trainer?.status === 'failed') {
    event = { ...event, message: lostMessage(loss, trainer.step) };
  }
  // An allocation that did not fit (the device still works): name the buffer, say what to do.
  const refused = loss ? null : openRuntime?.pool.outOfMemory;
  if (refused && (event.type === 'error' || (event.type === 'status' && event.status === 'failed'))) {
    event = { ...event, message: outOfMemoryMessage(refused, { step: event.type === 'error' ? event.step : (trainer?.step ?? null), checkpointStep }) };
  }
  if (event.type === 'checkpoint') {
    checkpointStep = event.step;
    // Under LoRA the base never changes: the adapter is what a digest must follow.
    void weightsDigest(event.files['adapter_model.safetensors'] ?? event.files['model.safetensors']).then((digest) => listener?.({ type: 'checkpoint', step: event.step, digest }));
    return;
  }
  // Any status the run reports is stored from now on: closing need not store 'paused' for it.
  if (event.type === 'status' && !closing) untrained = null;
  if (event.type === 'status' && runId && store && !closing) {
    statuses?.save(runId, event.status === 'idle' ? 'paused' : event.status, event.message);
  }
  listener?.(event);
}

const api = {
  /** Opens a new or stored run: validates, locks, loads (or resumes) the model, prepares the loop. */
  async open(request: OpenRequest): Promise<OpenResult> {
    stopCalibrations();
    await close();
    if (!store) {
      store = await RunStore.open({ name: request.database });
      statuses = new StatusWriter(store);
    }
    const rt = await getRuntime();
    rt.pool.takeOutOfMemory(); // a refusal before this open (the last run's) is not this run's
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
        ...(run.experiment.judgeBias ? { judge_bias: run.experiment.judgeBias } : {}),
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
      // Stored 'running' while the model loads, locked before it exists: a page killed meanwhile
      // leaves it interrupted (src/store/loadingRun.ts).
      let run;
      try {
        run = await createLoadingRun(
          store,
          {
            name: request.name ?? `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
            modelId: parsed.experiment.model,
            prompts: parsed.experiment.prompts,
            rubric: parsed.rubric,
            ...(parsed.heldOutRubric ? { heldOutRubric: parsed.heldOutRubric } : {}),
            ...(parsed.experiment.judge ? { judge: parsed.experiment.judge } : {}),
            ...(parsed.judgeBias ? { judgeBias: parsed.judgeBias } : {}),
            config: parsed.config,
          },
          holdRunLock,
        );
      } catch (err) {
        await close(); // lets go of the lock taken for a run that could not be stored
        throw err;
      }
      id = run.id;
    }
    opening = new AbortController();
    try {
      const sourceOptions = {
        signal: opening.signal,
        onProgress: (progress: DownloadProgress) => listener?.({ type: 'download', progress }),
        hubEndpoint: request.hubEndpoint,
        localFiles: request.localFiles,
      };
      const parsed = parseExperiment(experiment);
      const plan = planMemory(
        await fetchModelConfig(experiment.model, sourceOptions),
        samplingPromptsBound(parsed.experiment.prompts, parsed.rubric, parsed.config),
        parsed.config,
        rt.device.limits,
        undefined,
        parsed.rubric.criteria,
        await distillTeacherConfig(parsed.config, { ...sourceOptions, localFiles: undefined }),
      );
      if (!plan.fit.fits) throw new Error(plan.fit.message ?? 'the run does not fit this GPU');
      const files = await fetchModelById(experiment.model, sourceOptions);
      modelFiles = files;
      openModelId = experiment.model;
      context = await buildGrpoContext(rt, experiment, files, {
        resume,
        judgeApiKey: request.judgeApiKey,
        teacherApiKey: request.teacherApiKey,
        fetchModel: (id) => fetchModelById(id, { ...sourceOptions, localFiles: undefined }),
        // A 'model' judge runs in its own (nested) judge worker, on its own GPU runtime; close()
        // terminates it through releaseGrpoContext. 'self' stays here: it shares the policy's weights.
        remoteModelJudge: (id) => startWorkerModelJudge(id, sourceOptions),
        // The probe judge trains from the labels kept with the rubric version (src/worker/probeTraining.ts).
        ...(parsed.judge.kind === 'probe' ? { probe: await probeTrainingFromStore(store, await rubricVersion(parsed.rubric), parsed.rubric) } : {}),
      });
    } catch (err) {
      // A run this open created says why it never trained (the page says so too).
      if (!request.runId && statuses) saveLoadFailure(statuses, id, (err as Error).message, opening?.signal.aborted ?? false);
      await close();
      throw err;
    } finally {
      opening = null;
    }
    runId = id;
    untrained = request.runId ? null : id;
    openRuntime = rt;
    checkpointStep = resume ? startStep : null;
    const runStore = store;
    trainer = new GrpoTrainer(context, {
      prompts: experiment.prompts,
      startStep,
      onEvent: forward,
      sink: {
        commitStep: async (step, metrics, rollouts, checkpoint) => {
          await runStore.commitStep(id, step, metrics, rollouts, checkpoint);
          // The black-box teacher's induced version is stored with its provenance (src/rl/distill/blackBox.ts).
          const induced = metrics.teacher_rubric;
          if (induced?.rubric && induced.provenance) await runStore.saveRubric(induced.rubric, induced.provenance);
          // rubric_evolution: an accepted version is stored with the rubrics, as the run's starting one is (its lineage is in the step's metrics).
          const evolved = metrics.rubric_evolution?.rubric;
          if (evolved) await runStore.saveRubric(evolved);
        },
      },
    });
    void store.requestPersistence().catch(() => null);
    return {
      runId: id,
      step: startStep,
      parameters: context.model.params.totalSize,
      trainableParameters: context.model.params.size,
      gpuBytes: rt.pool.snapshot().bytesInUse,
      adapter: `${rt.info.vendor} ${rt.info.architecture}`,
      digest: await openDigest(context),
      cacheError: (modelFiles as { hub?: { cacheError: string | null } } | null)?.hub?.cacheError ?? null,
      resumeNote: context.irtResumeNote ?? null,
    };
  },
  /** GPU memory the experiment would need, from the model's config.json alone (and a distillation teacher model's), and whether it fits. */
  async estimate(request: EstimateRequest): Promise<MemoryPlan> {
    const { experiment, rubric, config } = parseExperiment(request.experiment);
    const rt = await getRuntime();
    const hfConfig = await fetchModelConfig(experiment.model, { localFiles: request.localFiles, hubEndpoint: request.hubEndpoint });
    // Scaffolded sampling prompts are longer than the experiment's (src/rl/explore/scaffold.ts).
    const teacherConfig = await distillTeacherConfig(config, { hubEndpoint: request.hubEndpoint });
    return planMemory(hfConfig, samplingPromptsBound(experiment.prompts, rubric, config), config, rt.device.limits, request.budgetBytes, rubric.criteria, teacherConfig);
  },

  /**
   * The per-token costs of the model's shape on this adapter (a short calibration, see
   * src/rl/calibration.ts), measured once per adapter and shape for this page. Refused while a
   * step runs: the two would slow each other down and the figures would be wrong.
   */
  async calibrate(request: CalibrationRequest): Promise<CalibrationReply> {
    const rt = await getRuntime();
    const model = configFromHf(await fetchModelConfig(request.model, { localFiles: request.localFiles, hubEndpoint: request.hubEndpoint }));
    const adapter = { vendor: rt.info.vendor, architecture: rt.info.architecture, description: rt.info.description, software: isSoftwareAdapter(rt.info) };
    const key = JSON.stringify([adapter, model]);
    let measured = calibrations.get(key);
    if (!measured) {
      if (trainer?.status === 'running') throw new Error('a run is training: the adapter is measured when it stops');
      // The page wants the newest model's figures only: one for another model stops.
      stopCalibrations();
      const stop = new AbortController();
      calibrating.add(stop);
      measured = calibrate(rt, model, stop.signal).finally(() => calibrating.delete(stop));
      calibrations.set(key, measured);
      measured.catch(() => calibrations.delete(key));
    }
    return { adapter, costs: await measured };
  },

  /** The trained LoRA adapter in PEFT's format (adapter_model.safetensors, adapter_config.json). */
  async exportAdapter(): Promise<ExportedFiles> {
    const ctx = requireContext();
    if (!ctx.model.lora) throw new Error('this run trains every weight (use_peft is off): there is no adapter to export; export the model instead');
    const files = await adapterFiles(ctx.model, { baseModel: baseModelName() });
    return { ...files };
  },

  /** The trained model as a plain Hugging Face model: LoRA merged into the weights, with config and tokenizer. */
  async exportMerged(): Promise<ExportedFiles> {
    const ctx = requireContext();
    const weights = ctx.model.lora
      ? (await mergedModelFiles(ctx.model))['model.safetensors']
      : (await saveCheckpoint(ctx.model, { global_step: trainer?.step ?? 0, seed: ctx.config.seed }))['model.safetensors'];
    const out: ExportedFiles = { 'config.json': JSON.stringify(modelFiles?.config ?? {}, null, 2), 'model.safetensors': weights };
    if (modelFiles?.tokenizerJson) out['tokenizer.json'] = JSON.stringify(modelFiles.tokenizerJson);
    if (modelFiles?.tokenizerConfig) out['tokenizer_config.json'] = JSON.stringify(modelFiles.tokenizerConfig, null, 2);
    return out;
  },

  /** Cancels the model download of an open() in progress (it rejects with "download cancelled"). */
  cancelOpen(): boolean {
    opening?.abort();
    return opening !== null;
  },
  subscribe(callback: (event: UiEvent) => void): void {
    listener = callback;
  },
  start(): void {
    stopCalibrations();
    void requireTrainer().start();
  },
  singleStep(): void {
    stopCalibrations();
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
  /**
   * TEST HOOK, not for the page: destroys this worker's GPU device, as a driver reset or a lost
   * GPU would. Used by the device-loss tests; false when no device was created yet.
   */
  async loseDeviceForTest(): Promise<boolean> {
    if (!runtime) return false;
    (await runtime).device.destroy();
    return true;
  },
  /**
   * TEST HOOK, not for the page: the next GPU buffer this worker's runtime allocates is refused
   * as out of memory (see BufferPool.failNextAllocation); false when no device was created yet.
   */
  async failNextAllocationForTest(): Promise<boolean> {
    if (!runtime) return false;
    (await runtime).pool.failNextAllocation();
    return true;
  },
  status() {
    return { runId, status: trainer?.status ?? 'idle', step: trainer?.step ?? 0 };
  },
};

/** The distillation teacher model's config.json, for the memory plan (null unless distillation.teacher is "model"). */
async function distillTeacherConfig(config: GrpoConfig, options: ModelSourceOptions): Promise<Record<string, unknown> | null> {
  const d = config.distillation;
  return d.teacher === 'model' && d.teacher_model ? fetchModelConfig(d.teacher_model, options) : null;
}

/** The digest a checkpoint event of this model would carry (the adapter's under LoRA). */
async function openDigest(ctx: GrpoContext): Promise<string> {
  if (ctx.model.lora) return weightsDigest((await adapterFiles(ctx.model))['adapter_model.safetensors']);
  const values = await ctx.model.params.read('value', parameterSpecs(ctx.model.config).map((p) => p.name));
  return weightsDigest(toHfTensors(ctx.model.config, values));
}

function requireContext(): GrpoContext {
  if (!context) throw new Error('no run is open: call open() first');
  return context;
}

/** The Hub id of the open run's base model, for adapter_config.json's base_model_name_or_path. */
function baseModelName(): string | undefined {
  const id = openModelId;
  return id?.startsWith('hf:') ? id.slice(3).split('@')[0] : id ?? undefined;
}

function requireTrainer(): GrpoTrainer {
  if (!trainer) throw new Error('no run is open: call open() first');
  return trainer;
}

export type TrainerApi = typeof api;
Comlink.expose(api);
