// In-page side of scripts/experiments/distill.mjs (issue 11): a teacher checkpoint trained with GRPO
// on the "Open with The" preset's rubric, then distilled as a `model` teacher into the embedded
// start model in pure on-policy distillation (no judge: the rubric is a held-out rubric, measured,
// never trained on). The teacher lives in this page between the two calls (module state), as the
// F16 safetensors shipped as the lesson's teacher (public/models/tiny-gpt2-byte-the/), so what is
// distilled is exactly what ships.
import type { GpuRuntime } from '../../src/gpu/runtime';
import { generate } from '../../src/model/generate';
import { fetchModelFiles, modelUrl, type ModelFiles } from '../../src/model/load';
import { writeSafetensors } from '../../src/model/safetensors';
import { parameterSpecs, toHfTensors } from '../../src/model/weights';
import { buildGrpoContext, releaseGrpoContext } from '../../src/rl/context';
import type { GrpoContext, StepMetrics } from '../../src/rl/grpoStep';
import { GrpoTrainer } from '../../src/rl/trainer';
import { aggregateGroup, judgeRollouts, scoresOf } from '../../src/rubric';
import { lessonById } from '../../src/share/lessons';
import { OPEN_WITH_THE } from '../../src/share/presets';
import { keepStep } from '../experiments/keepStep.mjs';

/** The lesson whose experiment is distilled: its teacher_model is the shipped copy of this experiment's teacher. */
const LESSON_ID = 'distill-teacher';

let teacherFiles: ModelFiles | null = null;

export interface EvalRequest {
  /** Samples per prompt of the held-out evaluation (fixed seed, the same for every model). */
  evalSamplesPerPrompt: number;
  evalSeed: number;
}

/** Mean reward under the preset's rubric (weighted mean) of the context's policy over fresh samples of every prompt. */
async function evaluate(ctx: GrpoContext, prompts: readonly string[], req: EvalRequest) {
  const rubric = ctx.rubric;
  const ids = prompts.flatMap((p) => Array.from({ length: req.evalSamplesPerPrompt }, () => ctx.formatPrompt(p)));
  const c = ctx.config;
  const gen = await generate(ctx.model, ids, { max_completion_length: c.max_completion_length, temperature: c.temperature, top_k: 0, top_p: 1, seed: req.evalSeed }, { eosTokenId: ctx.tokenizer.eosTokenId });
  const rollouts = gen.completions.map((t, i) => ({ prompt: prompts[Math.floor(i / req.evalSamplesPerPrompt)], completion: ctx.tokenizer.decode(t) }));
  const results = await judgeRollouts(rubric, ctx.rubricVersion, rollouts);
  const rewards = results.map((r) => aggregateGroup(rubric, [scoresOf(rubric, r)], { method: 'weighted_mean' }).rewards[0] ?? 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const se = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / (rewards.length - 1) / rewards.length);
  return { reward: mean, se, n: rewards.length, samples: rollouts.slice(0, 8).map((r) => r.completion) };
}


/** A trainer whose steps go on with `run(n)`; `result()` is every step so far. */
function trainer(ctx: GrpoContext, prompts: readonly string[]) {
  const metrics: StepMetrics[] = [];
  const errors: string[] = [];
  const t = new GrpoTrainer(ctx, {
    prompts: [...prompts],
    onEvent: (e) => {
      if (e.type === 'step') metrics.push(e.metrics);
      else if (e.type === 'error') errors.push(e.message);
    },
  });
  return {
    async run(steps: number) {
      for (let i = 0; i < steps && t.status !== 'failed' && t.status !== 'finished'; i++) await t.singleStep();
    },
    result: () => ({ status: t.status, metrics: metrics.map(keepStep), errors }),
  };
}

const base64 = (buf: ArrayBuffer) => {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};

/**
 * GRPO on the preset (its own seed and learning rate) for `steps` steps; the trained weights are
 * kept as F16 safetensors (returned in base64 for a shipped copy) and evaluated as reloaded.
 */
export async function trainTeacher(rt: GpuRuntime, req: EvalRequest & { steps: number }) {
  const experiment = structuredClone(OPEN_WITH_THE.experiment);
  const files = await fetchModelFiles(modelUrl(experiment.model));
  const ctx = await buildGrpoContext(rt, experiment, files);
  const before = await evaluate(ctx, experiment.prompts, req);
  const t = trainer(ctx, experiment.prompts);
  await t.run(req.steps);
  const run = t.result();
  const values = await ctx.model.params.read('value', parameterSpecs(ctx.model.config).map((p) => p.name));
  const weights = writeSafetensors(toHfTensors(ctx.model.config, values), { dtype: 'F16', metadata: { format: 'pt' } });
  releaseGrpoContext(ctx);
  teacherFiles = { ...files, weights };
  // The teacher as it would ship (F16), on the same evaluation.
  const reloaded = await buildGrpoContext(rt, experiment, teacherFiles);
  const after = await evaluate(reloaded, experiment.prompts, req);
  releaseGrpoContext(reloaded);
  return { experiment, ...run, before, after, weights_f16_base64: base64(weights) };
}

export interface DistillRequest extends EvalRequest {
  seed: number;
  /** Distillation updates; one more step follows the final evaluation, for the divergence after them (measured before its own update). */
  steps: number;
  /** Overrides of the distillation options and the config (learning rate, beta, …). */
  distillation?: Record<string, unknown>;
  config?: Record<string, unknown>;
}

/**
 * Pure on-policy distillation of the kept teacher into the embedded start model, with the
 * "Learn from a teacher" lesson's experiment (the preset's prompts, rubric and sizes; pure mode;
 * the rubric also held out, so its reward is measured every step and never trained on): the
 * student samples, the teacher scores the student's own tokens, nothing is judged for training.
 * The lesson's teacher_model is served from this page's memory: the teacher just trained.
 */
export async function distill(rt: GpuRuntime, req: DistillRequest) {
  if (!teacherFiles) throw new Error('no teacher in this page: call trainTeacher first');
  const teacher = teacherFiles;
  const lesson = lessonById(LESSON_ID)!.shared.experiment;
  const cfg = lesson.config as { distillation: { teacher_model: string } };
  const teacherId = cfg.distillation.teacher_model;
  const experiment = {
    ...structuredClone(lesson),
    config: { ...cfg, ...req.config, seed: req.seed, distillation: { ...cfg.distillation, ...req.distillation } },
  };
  const files = await fetchModelFiles(modelUrl(lesson.model));
  const ctx = await buildGrpoContext(rt, experiment, files, { fetchModel: async (id) => (id === teacherId ? teacher : fetchModelFiles(modelUrl(id))) });
  const before = await evaluate(ctx, lesson.prompts, req);
  const t = trainer(ctx, lesson.prompts);
  await t.run(req.steps);
  const after = await evaluate(ctx, lesson.prompts, req);
  // Step `steps` samples from the policy after `steps` updates; its first update pass measures
  // the divergence there (its own update changes nothing that is reported).
  await t.run(1);
  releaseGrpoContext(ctx);
  return { config: experiment.config, ...t.result(), before, after };
}
