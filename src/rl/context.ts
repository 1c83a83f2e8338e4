// Builds everything one GRPO step needs from an experiment and model files: the policy (or a
// checkpoint of it), the frozen KL reference, the rubric and its version, the judges.
import type { GpuRuntime } from '../gpu/runtime';
import { checkpointModelFiles, type CheckpointFiles } from '../model/checkpoint';
import { loadModel, type ModelFiles } from '../model/load';
import { JudgeCache, rubricVersion, type Judge } from '../rubric';
import { parseExperiment } from './experiment';
import type { GrpoContext } from './grpoStep';

export interface ContextOptions {
  modelJudge?: Judge;
  judgeCache?: JudgeCache;
  /** Resume: the policy (and its AdamW moments) come from this checkpoint instead of `files`. */
  resume?: CheckpointFiles;
}

/** Loads the policy (and, when beta > 0, a frozen copy as the KL reference) and builds the step context. */
export async function buildGrpoContext(rt: GpuRuntime, input: unknown, files: ModelFiles, options: ContextOptions = {}): Promise<GrpoContext> {
  const { rubric, heldOutRubric, config } = parseExperiment(input);
  const loaded = await loadModel(rt, options.resume ? checkpointModelFiles(options.resume) : files);
  // The KL reference is always the starting model, also when resuming from a checkpoint.
  const reference = config.beta > 0 ? (await loadModel(rt, files)).model : null;
  return {
    rt,
    model: loaded.model,
    reference,
    tokenizer: loaded.tokenizer,
    formatPrompt: loaded.formatPrompt,
    rubric,
    rubricVersion: await rubricVersion(rubric),
    heldOut: heldOutRubric ? { rubric: heldOutRubric, version: await rubricVersion(heldOutRubric) } : null,
    modelJudge: options.modelJudge,
    judgeCache: options.judgeCache ?? new JudgeCache(),
    config,
  };
}
