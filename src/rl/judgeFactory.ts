// Turns an experiment's judge choice into a Judge for judge-question criteria: the frozen
// starting policy (self), another model on our engine (loaded here, or by the caller's
// remoteModelJudge in a judge worker), a transformers.js zero-shot pipeline, or a remote
// OpenAI-compatible endpoint. The remote judge's key comes from the caller (memory or
// the user's local storage), never from the experiment.
import type { GpuRuntime } from '../gpu/runtime';
import { loadModel, type LoadedModel, type ModelFiles } from '../model/load';
import type { Judge } from '../rubric';
import { compactJudgePromptText, judgePromptText } from '../rubric/judges/modelJudgePrompt';
import { remoteJudge } from '../rubric/judges/remote';
import type { JudgeChoice } from './judgeChoice';
import { modelJudge, zeroShotJudge } from './modelJudge';

export interface JudgeSources {
  /** The policy's starting files: the self-judge is a frozen copy of them… */
  policyFiles: ModelFiles;
  /** …unless the starting policy is already on the GPU, frozen (LoRA: the base with adapters off). */
  startingPolicy?: Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>;
  /** Files of another model (choice kind 'model'), fetched by the caller. */
  fetchModel: (modelId: string) => Promise<ModelFiles>;
  /** The remote judge's key (kept in memory by the judge object only). */
  apiKey?: string;
  /** The origin the key was entered for: the judge never sends it to an endpoint elsewhere. */
  apiKeyOrigin?: string;
  /**
   * Runs a 'model' judge somewhere else (the trainer worker: in a judge worker with its own GPU
   * runtime); absent, the model is loaded here, on `rt`. Never used for 'self', which shares the
   * policy's weights.
   */
  remoteModelJudge?: (modelId: string) => Promise<{ judge: Judge; release(): void }>;
}

export interface BuiltJudge {
  judge: Judge | undefined;
  /** Frees the judge's GPU weights (self and model judges). */
  release: () => void;
}

/** Contexts shorter than this get the compact judge prompt (tiny models, e.g. the embedded default). */
const SHORT_CONTEXT = 1024;

/** A model on our engine as a yes/no judge, with the judge prompt its context length allows. */
export function engineJudge(loaded: Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>, name: string): Judge {
  return modelJudge(loaded.model, loaded.tokenizer, {
    name,
    formatPrompt: loaded.formatPrompt,
    buildPrompt: loaded.model.config.maxPositions < SHORT_CONTEXT ? compactJudgePromptText : judgePromptText,
  });
}

/** The name a 'model' judge goes by in results and reasons, wherever it runs. */
export const modelJudgeName = (modelId: string): string => `model:${modelId}`;

/** Loads a model's files onto `rt` as an engine judge; release() frees its weights. */
export async function loadEngineJudge(rt: GpuRuntime, files: ModelFiles, name: string): Promise<{ judge: Judge; release(): void }> {
  const loaded = await loadModel(rt, files, { frozen: true });
  return { judge: engineJudge(loaded, name), release: () => loaded.model.params.destroy() };
}

export async function buildJudge(rt: GpuRuntime, choice: JudgeChoice, sources: JudgeSources): Promise<BuiltJudge> {
  switch (choice.kind) {
    case 'rules':
      return { judge: undefined, release: () => {} };
    case 'self':
    case 'model': {
      if (choice.kind === 'self' && sources.startingPolicy) return { judge: engineJudge(sources.startingPolicy, 'self'), release: () => {} };
      if (choice.kind === 'model' && sources.remoteModelJudge) {
        const remote = await sources.remoteModelJudge(choice.model);
        return { judge: remote.judge, release: () => remote.release() };
      }
      // The self-judge is the starting policy, frozen: training must not move the judge, and its
      // cached verdicts stay valid for the whole run.
      const files = choice.kind === 'self' ? sources.policyFiles : await sources.fetchModel(choice.model);
      return loadEngineJudge(rt, files, choice.kind === 'self' ? 'self' : modelJudgeName(choice.model));
    }
    case 'zero_shot':
      return { judge: zeroShotJudge({ model: choice.model }), release: () => {} };
    case 'remote':
      return {
        judge: remoteJudge({
          url: choice.url,
          model: choice.model,
          ...(sources.apiKey ? { apiKey: sources.apiKey } : {}),
          ...(sources.apiKey && sources.apiKeyOrigin !== undefined ? { apiKeyOrigin: sources.apiKeyOrigin } : {}),
          ...(choice.concurrency !== undefined ? { concurrency: choice.concurrency } : {}),
          ...(choice.max_attempts !== undefined ? { maxAttempts: choice.max_attempts } : {}),
          ...(choice.timeout_ms !== undefined ? { timeoutMs: choice.timeout_ms } : {}),
          ...(choice.temperature !== undefined ? { temperature: choice.temperature } : {}),
          ...(choice.max_tokens !== undefined ? { maxTokens: choice.max_tokens } : {}),
        }),
        release: () => {},
      };
  }
}
