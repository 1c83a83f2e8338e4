// An experiment: which model, which prompts, which rubric, which GRPO settings. This is what a
// run stores and what a share link carries (never weights or keys).
import { z } from 'zod';
import type { GpuRuntime } from '../gpu/runtime';
import { checkpointModelFiles, type CheckpointFiles } from '../model/checkpoint';
import { loadModel, type ModelFiles } from '../model/load';
import { JudgeCache, parseRubric, rubricVersion, type Judge } from '../rubric';
import { parseGrpoConfig } from './config';
import type { GrpoContext } from './grpoStep';

export const experimentSchema = z
  .object({
    model: z.string().min(1).max(200),
    prompts: z.array(z.string().min(1).max(4000)).min(1).max(10000),
    rubric: z.unknown(),
    /** Optional clean rubric scored alongside (never trained on), e.g. to expose reward hacking. */
    held_out_rubric: z.unknown().optional(),
    config: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type Experiment = z.output<typeof experimentSchema>;

export class ExperimentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExperimentError';
  }
}

/** Validates every part (rubric and config too) before anything is loaded or trained. */
export function parseExperiment(input: unknown) {
  const parsed = experimentSchema.safeParse(input);
  if (!parsed.success) {
    throw new ExperimentError(parsed.error.issues.map((i) => `${i.path.join('.') || 'experiment'}: ${i.message}`).join('\n'));
  }
  const rubric = parseRubric(parsed.data.rubric);
  const heldOutRubric = parsed.data.held_out_rubric === undefined ? null : parseRubric(parsed.data.held_out_rubric);
  const config = parseGrpoConfig(parsed.data.config);
  return { experiment: parsed.data, rubric, heldOutRubric, config };
}

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
