// The judge worker's engine judge: one model on this worker's own GPU runtime (created on first
// use), loaded through the same code as the trainer's (fetchModelById, loadModel, the judge
// prompts of judgeFactory). A replaced model's weights are freed once the calls still using it
// are done, so reconfiguring never pulls weights from under a running batch.
import { WebGpuUnavailableError } from '../gpu/device';
import { GpuRuntime } from '../gpu/runtime';
import type { DownloadProgress } from '../model/hub';
import { fetchModelById } from '../model/source';
import type { Judge } from '../rubric/judge';
import { engineJudge, modelJudgeName } from '../rl/judgeFactory';
import { loadModel, type LoadedModel } from '../model/load';
import { engineComplete, type CompletionMessages, type EngineCompleteOptions, type EngineCompletion } from '../rl/engineComplete';
import { completionParts, sampleOne } from '../rl/engineWriter';

export interface JudgeModelConfig {
  /** Any id the engine loads: "hf:owner/name[@rev]", an embedded id, or a path the page serves. */
  modelId: string;
  /** A Hub mirror for "hf:" ids (default https://huggingface.co). */
  hubEndpoint?: string;
  /** The picked files of a "local:" model (File objects cross postMessage by structured clone). */
  localFiles?: File[];
}

export interface JudgeModelDescription {
  modelId: string;
  hubEndpoint: string | null;
  /** The judge's name in results ("model:<id>", as the in-process judge). */
  name: string;
}

export interface LoadedJudgeModel {
  config: JudgeModelConfig;
  judge: Judge;
  /** Free-text completion by the same model (drafting a rubric with it). */
  complete(messages: CompletionMessages, options?: EngineCompleteOptions): Promise<EngineCompletion>;
  release(): void;
  users: number;
  retired: boolean;
}

/** The config, checked: a bad one gets a message naming the field. */
export function checkModelConfig(config: unknown): JudgeModelConfig {
  if (typeof config !== 'object' || config === null) throw new TypeError('configure: model must be {modelId, hubEndpoint?} or null');
  const { modelId, hubEndpoint, localFiles } = config as Record<string, unknown>;
  if (typeof modelId !== 'string' || modelId.trim() === '') throw new TypeError('configure: model.modelId must be a non-empty model id');
  if (hubEndpoint !== undefined && typeof hubEndpoint !== 'string') throw new TypeError('configure: model.hubEndpoint must be a URL string');
  if (localFiles !== undefined && !Array.isArray(localFiles)) throw new TypeError('configure: model.localFiles must be an array of files');
  return { modelId, ...(hubEndpoint !== undefined ? { hubEndpoint } : {}), ...(localFiles ? { localFiles: localFiles as File[] } : {}) };
}

const sameConfig = (a: JudgeModelConfig, b: JudgeModelConfig) => a.modelId === b.modelId && (a.hubEndpoint ?? null) === (b.hubEndpoint ?? null);

export class EngineJudgeSlot {
  private runtime: Promise<GpuRuntime> | null = null;
  private current: LoadedJudgeModel | null = null;

  /** The loaded model, or null. */
  describe(): JudgeModelDescription | null {
    if (!this.current) return null;
    const { modelId, hubEndpoint } = this.current.config;
    return { modelId, hubEndpoint: hubEndpoint ?? null, name: this.current.judge.name };
  }

  /** True when `config` names the model already loaded (or both are none). */
  holds(config: JudgeModelConfig | null): boolean {
    return config === null ? this.current === null : this.current !== null && sameConfig(this.current.config, config);
  }

  /**
   * Loads `config`'s model without touching the current one; commit() swaps it in. Rejects with a
   * message naming the model when it cannot be fetched or loaded.
   */
  async prepare(config: JudgeModelConfig, onProgress?: (progress: DownloadProgress) => void): Promise<LoadedJudgeModel> {
    const rt = await this.getRuntime();
    const name = modelJudgeName(config.modelId);
    try {
      const files = await fetchModelById(config.modelId, { hubEndpoint: config.hubEndpoint, localFiles: config.localFiles, onProgress });
      const loaded = await loadModel(rt, files, { frozen: true });
      return {
        config,
        judge: engineJudge(loaded, name),
        complete: (messages, options) => engineComplete(completionParts(loaded), sampleOne(loaded), messages, options),
        release: () => loaded.model.params.destroy(),
        users: 0,
        retired: false,
      };
    } catch (err) {
      throw new Error(`could not load the judge model "${config.modelId}": ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** Makes `next` (or none) the model; the previous one is freed once no call uses it. */
  commit(next: LoadedJudgeModel | null): void {
    const previous = this.current;
    this.current = next;
    if (previous) this.retire(previous);
  }

  /** Runs `use` with the current judge (null when none), keeping its weights alive until it settles. */
  with<T>(use: (judge: Judge | null) => Promise<T>): Promise<T> {
    return this.withModel((held) => use(held?.judge ?? null));
  }

  /** Runs `use` with the loaded model (null when none), keeping its weights alive until it settles. */
  async withModel<T>(use: (held: LoadedJudgeModel | null) => Promise<T>): Promise<T> {
    const held = this.current;
    if (!held) return use(null);
    held.users++;
    try {
      return await use(held);
    } finally {
      held.users--;
      if (held.retired && held.users === 0) held.release();
    }
  }

  private retire(loaded: LoadedJudgeModel): void {
    loaded.retired = true;
    if (loaded.users === 0) loaded.release();
  }

  /** The worker's runtime, made on first use, and again after a device loss. */
  private async getRuntime(): Promise<GpuRuntime> {
    if (this.runtime) {
      const rt = await this.runtime.catch(() => null);
      if (rt && rt.lostMessage === null) return rt;
    }
    this.runtime = GpuRuntime.create();
    try {
      return await this.runtime;
    } catch (err) {
      this.runtime = null;
      throw new Error(`the judge worker has no GPU: ${err instanceof WebGpuUnavailableError ? err.reason : (err as Error).message}`);
    }
  }
}
