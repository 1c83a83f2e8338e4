// Builds everything one GRPO step needs from an experiment and model files: the policy (or a
// checkpoint of it), the frozen KL reference, the rubric and its version, the judges.
import type { GpuRuntime } from '../gpu/runtime';
import { checkpointModelFiles, type CheckpointFiles } from '../model/checkpoint';
import { fetchModelFiles, loadModel, modelUrl, type ModelFiles } from '../model/load';
import { JudgeCache, rubricVersion, type Judge } from '../rubric';
import { parseExperiment } from './experiment';
import type { GrpoContext } from './grpoStep';
import { buildJudge } from './judgeFactory';

export interface ContextOptions {
  /** Overrides the experiment's judge choice (tests inject judges here). */
  modelJudge?: Judge;
  judgeCache?: JudgeCache;
  /** Resume: the policy (and its AdamW moments) come from this checkpoint instead of `files`. */
  resume?: CheckpointFiles;
  /** The remote judge's API key: held in memory, never stored with the run. */
  judgeApiKey?: string;
  /** Fetches another model's files for a 'model' judge (default: by the model registry's URL). */
  fetchModel?: (modelId: string) => Promise<ModelFiles>;
}

/** Loads the policy (and, when beta > 0, a frozen copy as the KL reference) and builds the step context. */
export async function buildGrpoContext(rt: GpuRuntime, input: unknown, files: ModelFiles, options: ContextOptions = {}): Promise<GrpoContext> {
  const { rubric, heldOutRubric, config, judge: judgeChoice } = parseExperiment(input);
  const loaded = await loadModel(rt, options.resume ? checkpointModelFiles(options.resume) : files);
  const owned: { params: { destroy(): void } }[] = [loaded.model];
  let releaseJudge = () => {};
  try {
    // The KL reference is always the starting model, also when resuming from a checkpoint.
    const reference = config.beta > 0 ? (await loadModel(rt, files)).model : null;
    if (reference) owned.push(reference);
    let judge = options.modelJudge;
    if (!judge) {
      const built = await buildJudge(rt, judgeChoice, {
        policyFiles: files,
        fetchModel: options.fetchModel ?? ((id) => fetchModelFiles(modelUrl(id))),
        apiKey: options.judgeApiKey,
      });
      judge = built.judge;
      releaseJudge = built.release;
    }
    return {
      rt,
      model: loaded.model,
      reference,
      tokenizer: loaded.tokenizer,
      formatPrompt: loaded.formatPrompt,
      rubric,
      rubricVersion: await rubricVersion(rubric),
      heldOut: heldOutRubric ? { rubric: heldOutRubric, version: await rubricVersion(heldOutRubric) } : null,
      modelJudge: judge,
      judgeCache: options.judgeCache ?? new JudgeCache(),
      config,
      releaseJudge,
    };
  } catch (err) {
    for (const m of owned) m.params.destroy();
    releaseJudge();
    throw err;
  }
}

/** Frees the context's GPU weights: the policy, the KL reference and an engine judge. */
export function releaseGrpoContext(ctx: GrpoContext): void {
  ctx.model.params.destroy();
  ctx.reference?.params.destroy();
  ctx.releaseJudge?.();
}
