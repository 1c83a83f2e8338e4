// GKD's lmbda (issue 11): a step that is not on-policy (schedule.ts onPolicyBatch) trains on the
// teacher's own samples instead of the student's. The teacher generates with the student's
// sampler settings (temperature, top_p, top_k, min_p, repetition penalty, max_completion_length;
// row r draws from (seed, step, r) as the student's rows would): the model teacher from the
// student's prompt in its own template, the self_rubric teacher from its privileged prompt (the
// prompt plus the rubric's criteria) with its weights (frozen, live or ema). The student then
// trains under its own plain prompt, as TRL GKDTrainer trains on the teacher's outputs (seq_kd).
// A teacher-sampled batch is drawn plainly: no scaffolds, no dynamic sampling.
import { NO_TOKEN } from '../../ops/sample';
import { generate } from '../../model/generate';
import type { Transformer } from '../../model/transformer';
import type { SampledBatch } from '../explore';
import type { GrpoContext, RolloutRecord } from '../grpoStep';
import type { ProgressHook } from '../progress';
import { selfTeacherWeights } from './ema';
import { privilegedPrompt } from './teacher';

/** The teacher that samples, and each prompt's sampling ids (its own prompt). */
export function samplingTeacher(ctx: GrpoContext, prompts: readonly string[]): { model: Transformer; ids: number[][] } {
  const d = ctx.config.distillation;
  if (d.teacher === 'model') {
    const t = ctx.distillModel;
    if (!t) throw new Error(`the teacher model ${d.teacher_model ?? ''} was not loaded: start the run again`);
    return { model: t.model, ids: prompts.map((p) => t.formatPrompt(p)) };
  }
  if (d.teacher === 'self_rubric') {
    const model = selfTeacherWeights({ model: ctx.model, reference: ctx.reference, ema: ctx.emaTeacher }, d.teacher_weights);
    if (!model) throw new Error('the frozen self_rubric teacher needs the starting model, which was not loaded: start the run again');
    return { model, ids: prompts.map((p) => ctx.formatPrompt(privilegedPrompt(p, ctx.rubric.criteria))) };
  }
  throw new RangeError(`distillation.lmbda below 1: the ${d.teacher} teacher cannot sample a batch (only the self_rubric and model teachers can)`);
}

/** Stage 1 of a teacher-sampled step: G samples of the teacher per prompt, trained under the student's own prompt. */
export async function teacherSamples(ctx: GrpoContext, step: number, prompts: readonly string[], hooks: { onProgress?: ProgressHook } = {}): Promise<SampledBatch> {
  const { config: cfg, tokenizer } = ctx;
  const G = cfg.num_generations;
  const teacher = samplingTeacher(ctx, prompts);
  const onProgress = hooks.onProgress;
  const gen = await generate(
    teacher.model,
    teacher.ids.flatMap((ids) => Array.from({ length: G }, () => ids)),
    {
      max_completion_length: cfg.max_completion_length,
      temperature: cfg.temperature,
      top_k: cfg.top_k,
      top_p: cfg.top_p,
      repetition_penalty: cfg.repetition_penalty,
      min_p: cfg.min_p,
      seed: (cfg.seed + step * 0x9e3779b9) >>> 0,
    },
    { eosTokenId: tokenizer.eosTokenId, onChunk: onProgress && ((done, total, partial) => onProgress({ stage: 'sampling', done, total, partial })) },
  );
  const broken = gen.completions.findIndex((ids) => ids.includes(NO_TOKEN));
  if (broken >= 0) throw new Error(`step ${step}: the distillation teacher's output is not finite (NaN or Inf logits while sampling row ${broken}): its weights are corrupt`);
  const promptIds = prompts.map((p) => ctx.formatPrompt(p));
  const rollouts: RolloutRecord[] = gen.completions.map((ids, r) => ({
    step,
    group: Math.floor(r / G),
    index: r % G,
    prompt: prompts[Math.floor(r / G)],
    completion: tokenizer.decode(ids),
    completion_ids: ids,
    logprobs: gen.logprobs[r],
    tokens: ids.map((id) => tokenizer.decode([id])),
    truncated: gen.truncated[r],
    results: [],
    scores: [],
    reward: null,
    advantage: 0,
  }));
  return {
    prompts: [...prompts],
    rollouts,
    trainPromptIds: rollouts.map((r) => promptIds[r.group]),
    completions: gen.completions.map((c) => [...c]),
    truncated: [...gen.truncated],
    importance: rollouts.map(() => null),
    results: null,
    tokensPerSecond: gen.tokensPerSecond,
    metrics: null,
  };
}
