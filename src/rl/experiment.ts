// An experiment: which model, which prompts, which rubric, which GRPO settings. This is what a
// run stores and what a share link carries (never weights or keys). Pure: no GPU imports, so
// the UI and share links can validate experiments without loading the engine.
import { z } from 'zod';
import { parseRubric } from '../rubric';
import { parseGrpoConfig } from './config';
import { DEFAULT_JUDGE, judgeChoiceSchema, keyFieldIn } from './judgeChoice';

export const experimentSchema = z
  .object({
    model: z.string().min(1).max(200),
    prompts: z.array(z.string().min(1).max(4000)).min(1).max(10000),
    rubric: z.unknown(),
    /** Optional clean rubric scored alongside (never trained on), e.g. to expose reward hacking. */
    held_out_rubric: z.unknown().optional(),
    config: z.record(z.string(), z.unknown()).default({}),
    /** Who answers judge-question criteria (default: rules only). Never carries an API key. */
    judge: judgeChoiceSchema.optional(),
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
  const judgeKey = typeof input === 'object' && input !== null ? keyFieldIn((input as { judge?: unknown }).judge) : null;
  if (judgeKey) throw new ExperimentError(`judge: ${judgeKey}`);
  const parsed = experimentSchema.safeParse(input);
  if (!parsed.success) {
    throw new ExperimentError(parsed.error.issues.map((i) => `${i.path.join('.') || 'experiment'}: ${i.message}`).join('\n'));
  }
  const rubric = parseRubric(parsed.data.rubric);
  const heldOutRubric = parsed.data.held_out_rubric === undefined ? null : parseRubric(parsed.data.held_out_rubric);
  const config = parseGrpoConfig(parsed.data.config);
  const judge = parsed.data.judge ?? DEFAULT_JUDGE;
  return { experiment: parsed.data, rubric, heldOutRubric, config, judge };
}

