// Page side of test/browser/distillStep.test.ts: on-policy distillation steps (src/rl/distill/)
// on a fresh tiny byte-level GPT-2, the self_rubric teacher (the same weights with the rubric in
// the prompt), and the divergence of a fixed set of completions measured before and after.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import type { CriterionResult, JudgeRequest } from '../../../src/rubric/judge';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { fetchModelFiles } from '../../../src/model/load';
import { buildGrpoContext, releaseGrpoContext } from '../../../src/rl/context';
import { distillMetrics, distillTeacher, distillTokenWeights, needsFrozenTeacher, recordDistillTerm } from '../../../src/rl/distill';
import { grpoStep, type GrpoContext } from '../../../src/rl/grpoStep';
import { privilegedPrompt } from '../../../src/rl/distill/teacher';
import { generate } from '../../../src/model/generate';
import { buildRolloutBatch } from '../../../src/rl/rolloutBatch';
import { GrpoTrainer } from '../../../src/rl/trainer';
import type { CheckpointFiles } from '../../../src/model/checkpoint';
import { readSafetensors, writeSafetensors } from '../../../src/model/safetensors';

const tok = new ByteTokenizer();

const RUBRIC = {
  name: 'vowels',
  criteria: [
    { id: 'has_a', text: 'Has a', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['a'], case_sensitive: true } },
    { id: 'terse', text: 'Terse', weight: -1, tier: 'important', rule: { kind: 'length', unit: 'characters', min: 7 } },
  ],
};

/** `teacherSeed`: a second model of the same shape and tokenizer, initialised from that seed, is the "model" teacher; `rubricInput`: another rubric than RUBRIC. */
async function context(rt: GpuRuntime, options: GrpoConfigInput, teacherSeed?: number, rubricInput: unknown = RUBRIC): Promise<GrpoContext> {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 128 });
  // A larger init than the GRPO cases' so the teacher's privileged prompt changes its next-token
  // distributions by more than rounding noise.
  const weights = initialWeights(config, 11, 0.4);
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, weights));
  const grpo = parseGrpoConfig(options);
  const reference = grpo.beta > 0 || needsFrozenTeacher(grpo) ? new Transformer(rt, config, ParameterStore.create(rt, config, weights)) : null;
  const rubric = parseRubric(rubricInput);
  const formatPrompt = (text: string) => [tok.bosTokenId, ...tok.encode(`Q: ${text}\nA: `)];
  const distillModel =
    teacherSeed === undefined ? null : { model: new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, teacherSeed, 0.4), { frozen: true })), formatPrompt };
  return {
    rt,
    model,
    reference,
    distillModel,
    tokenizer: tok,
    formatPrompt,
    rubric,
    rubricVersion: await rubricVersion(rubric),
    config: grpo,
  };
}

/** The mean per-token divergence of the given completions under the current policy (no update). */
async function divergenceOf(ctx: GrpoContext, prompts: string[], completions: number[][]): Promise<number | null> {
  const { rt, model, tokenizer } = ctx;
  const batch = buildRolloutBatch(prompts.map(ctx.formatPrompt), completions, completions.map(() => false), { padTokenId: tokenizer.padTokenId, maskTruncatedCompletions: false });
  const teacher = distillTeacher({ model, reference: ctx.reference, teacherModel: ctx.distillModel, formatPrompt: ctx.formatPrompt, criteria: ctx.rubric.criteria, padTokenId: tokenizer.padTokenId, config: ctx.config }, prompts, completions)!;
  const rec = rt.recorder('distill.eval');
  const logits = model.prefill(rec, batch.tokens, { logits: 'all' });
  const weights = distillTokenWeights(batch.mask, null);
  const d = recordDistillTerm(rt, rec, teacher, {
    start: 0,
    n: completions.length,
    studentLogits: logits,
    student: { seqLen: batch.tokens.seqLen, completionStart: batch.completionStart },
    weights,
    coefficient: 0,
    readBack: true,
  });
  rec.releaseAfterSubmit(logits, ...d.buffers);
  await rec.submit();
  const read = await d.read!;
  return distillMetrics({ ...read, weights, mask: batch.mask, weight: 1 }).divergence;
}

export async function steps(rt: GpuRuntime, input: { options: GrpoConfigInput; steps: number; teacherSeed?: number; rubric?: unknown }) {
  const ctx = await context(rt, input.options, input.teacherSeed, input.rubric);
  const prompts = Array.from({ length: ctx.config.generation_batch_size / ctx.config.num_generations }, (_, i) => `Word ${i}?`);
  const out = [];
  let evalSet: { prompts: string[]; completions: number[][] } | null = null;
  for (let s = 0; s < input.steps; s++) {
    const r = await grpoStep(ctx, s, prompts);
    evalSet ??= { prompts: r.rollouts.map((x) => x.prompt), completions: r.rollouts.map((x) => x.completion_ids) };
    out.push({
      metrics: r.metrics,
      rollouts: r.rollouts.map((x) => ({ reward: x.reward, advantage: x.advantage, results: x.results, completion_ids: x.completion_ids, token_divergence: x.token_divergence })),
    });
  }
  // The fixed set's divergence under the starting weights is the first step's own first-pass
  // measurement (before any update); after the steps, measured with the same kernel.
  const before = out[0].metrics.distillation?.divergence ?? null;
  // No teacher (RuFT alone): nothing to measure.
  const after = ctx.config.distillation.teacher !== 'off' && evalSet && evalSet.completions.some((c) => c.length > 0) ? await divergenceOf(ctx, evalSet.prompts, evalSet.completions) : null;
  ctx.model.params.destroy();
  ctx.reference?.params.destroy();
  ctx.distillModel?.model.params.destroy();
  return { steps: out, before, after };
}

/**
 * The alignment on the GPU: a teacher that is the student itself with its prompts padded further
 * to the left (a third, longer prompt widens the teacher's batch) must give divergence ~0 and full
 * top-1 agreement at every completion token, wherever the rows land.
 */
export async function selfAlignment(rt: GpuRuntime) {
  const ctx = await context(rt, { ...BASE_LIKE, distillation: { teacher: 'self_rubric', teacher_weights: 'live' } });
  const { model, tokenizer } = ctx;
  const prompts = ['Hi?', 'Word 1?'].map(ctx.formatPrompt);
  const completions = [[97, 98, 99], [100, 101]];
  const pad = { padTokenId: tokenizer.padTokenId, maskTruncatedCompletions: false };
  const batch = buildRolloutBatch(prompts, completions, [false, false], pad);
  // The same two rows in a batch whose longest prompt is longer: more left padding, later completions.
  const wide = buildRolloutBatch([...prompts, ctx.formatPrompt('A much longer prompt than the others?')], [...completions, [102]], [false, false, false], pad);
  const teacher = { kind: 'self_rubric' as const, weights: 'live' as const, model, batch: wide, options: ctx.config.distillation };
  const rec = rt.recorder('distill.align');
  const logits = model.prefill(rec, batch.tokens, { logits: 'all' });
  const weights = distillTokenWeights(batch.mask, null);
  const d = recordDistillTerm(rt, rec, teacher, {
    start: 0,
    n: 2,
    studentLogits: logits,
    student: { seqLen: batch.tokens.seqLen, completionStart: batch.completionStart },
    weights,
    coefficient: 1,
    readBack: true,
  });
  const grad = rec.readF32(d.grad, 2 * batch.tokens.seqLen * model.config.vocabSize);
  rec.releaseAfterSubmit(logits, ...d.buffers);
  await rec.submit();
  const read = await d.read!;
  const g = await grad;
  ctx.model.params.destroy();
  ctx.reference?.params.destroy();
  return {
    layouts: [batch.tokens.seqLen, wide.tokens.seqLen],
    metrics: distillMetrics({ ...read, weights, mask: batch.mask, weight: 1 }),
    maxGrad: g.reduce((m, x) => Math.max(m, Math.abs(x)), 0),
  };
}

const BASE_LIKE = { num_generations: 2, generation_batch_size: 4, max_completion_length: 6 };

const FIXTURE = '/test/fixtures/tiny-byte-gpt2/';

/**
 * The context's loading path for a "model" teacher: its files are fetched and checked against the
 * student's tokenizer before loading. The fixture as its own teacher (same weights, same prompt)
 * passes and diverges by ~0; a teacher whose config names another vocabulary is refused.
 */
export async function teacherModelContext(rt: GpuRuntime) {
  const experiment = {
    model: FIXTURE,
    prompts: ['Say hi.', 'Be kind.'],
    rubric: { name: 'a', criteria: [{ id: 'has_a', text: 'Has a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }] },
    config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 3, learning_rate: 0.01, seed: 3, distillation: { teacher: 'model', teacher_model: FIXTURE, mode: 'pure' } },
  };
  const files = await fetchModelFiles(FIXTURE);
  const ctx = await buildGrpoContext(rt, experiment, files);
  const loaded = ctx.distillModel !== null && ctx.distillModel !== undefined && ctx.distillModel.model !== ctx.model;
  const result = await grpoStep(ctx, 0, experiment.prompts);
  releaseGrpoContext(ctx);
  let refusal: string | null = null;
  try {
    const other = async () => {
      const f = await fetchModelFiles(FIXTURE);
      return { ...f, config: { ...f.config, vocab_size: 300 } };
    };
    const bad = await buildGrpoContext(rt, experiment, files, { fetchModel: other });
    releaseGrpoContext(bad);
  } catch (e) {
    refusal = (e as Error).message;
  }
  return { loaded, divergence: result.metrics.distillation?.divergence ?? null, agreement: result.metrics.distillation?.top1_agreement ?? null, refusal };
}

/**
 * The criterion_injection teacher (CriPO) on the fixture model, one step: a judge that says "yes"
 * to the criterion only on "Say hi." rollouts leaves it unexplored in the other prompt's group,
 * whose rollouts alone get the teacher (told that criterion) and a divergence.
 */
export async function criterionInjection(rt: GpuRuntime) {
  const experiment = {
    model: FIXTURE,
    prompts: ['Say hi.', 'Be kind.'],
    rubric: {
      name: 'greets',
      criteria: [
        { id: 'greets', text: 'Greets the reader', weight: 2, tier: 'important', judge_question: 'Does the response greet the reader?' },
        { id: 'long', text: 'Rambles', weight: -1, tier: 'optional', rule: { kind: 'length', unit: 'characters', min: 50 } },
      ],
    },
    config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 4, learning_rate: 0.01, seed: 3, distillation: { teacher: 'criterion_injection', teacher_weights: 'live', mode: 'mixed', beta: 0.5 } },
  };
  const judge = {
    name: 'fake:greets-on-say-hi',
    judge: async (requests: readonly JudgeRequest[]): Promise<CriterionResult[]> =>
      requests.map((r) => ({ criterion_id: r.criterion.id, status: 'ok' as const, score: r.prompt === 'Say hi.' ? 1 : 0, reason: 'fake' })),
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(FIXTURE), { modelJudge: judge });
  const result = await grpoStep(ctx, 0, experiment.prompts);
  releaseGrpoContext(ctx);
  return {
    metrics: result.metrics.distillation,
    rollouts: result.rollouts.map((x) => ({ prompt: x.prompt, unexplored: x.unexplored_criteria ?? [], length: x.completion_ids.length, token_divergence: x.token_divergence })),
  };
}

/**
 * Distillation's training modes on the fixture model, one step through buildGrpoContext: the EMA
 * self_rubric teacher (loaded by the context), lmbda 0 (the teacher samples the batch from its
 * privileged prompt with the student's sampler), its own entropy selection (top half) and the
 * special tokens masked out of a top-4 support. Returns what the page must show and whether the
 * batch is exactly the EMA teacher's own draw, and the EMA weights after the step against the
 * float64 formula decay · before + (1 − decay) · policy.
 */
export async function trainingModes(rt: GpuRuntime) {
  const decay = 0.5;
  const experiment = {
    model: FIXTURE,
    prompts: ['Say hi.', 'Be kind.'],
    rubric: { name: 'a', criteria: [{ id: 'has_a', text: 'Has a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }] },
    config: {
      num_generations: 2,
      generation_batch_size: 4,
      max_completion_length: 4,
      learning_rate: 0.05,
      seed: 3,
      distillation: { teacher: 'self_rubric', teacher_weights: 'ema', ema_decay: decay, lmbda: 0, mode: 'pure', top_k: 4, mask_special_tokens: true, top_entropy_quantile: 0.5 },
    },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(FIXTURE));
  const ema = ctx.emaTeacher!;
  const cfg = ctx.config;
  // The EMA teacher's own draw from its privileged prompts, as the step should make it (row r from (seed, step 0, r)).
  const ids = experiment.prompts.flatMap((p) => Array.from({ length: cfg.num_generations }, () => ctx.formatPrompt(privilegedPrompt(p, ctx.rubric.criteria))));
  const sampler = { max_completion_length: cfg.max_completion_length, temperature: cfg.temperature, top_k: cfg.top_k, top_p: cfg.top_p, repetition_penalty: cfg.repetition_penalty, min_p: cfg.min_p, seed: cfg.seed >>> 0 };
  const own = await generate(ema, ids, sampler, { eosTokenId: ctx.tokenizer.eosTokenId });
  const before = await ema.params.read('value');
  const result = await grpoStep(ctx, 0, experiment.prompts);
  const policy = await ctx.model.params.read('value');
  const after = await ema.params.read('value');
  let emaError = 0;
  let emaMoved = 0;
  for (const [name, t] of after) {
    const b = before.get(name)!.data;
    const p = policy.get(name)!.data;
    t.data.forEach((x, i) => {
      emaError = Math.max(emaError, Math.abs(x - (decay * b[i] + (1 - decay) * p[i])));
      emaMoved = Math.max(emaMoved, Math.abs(x - b[i]));
    });
  }
  releaseGrpoContext(ctx);
  return {
    schedule: result.metrics.schedule,
    distillation: result.metrics.distillation,
    gradNorm: result.metrics.grad_norm,
    teacherDraw: result.rollouts.map((x) => x.completion_ids).every((c, i) => c.length === own.completions[i].length && c.every((id, j) => id === own.completions[i][j])),
    completions: result.rollouts.map((x) => x.completion_ids),
    emaError,
    emaMoved,
    emaSeparate: ema !== ctx.model && ema.params !== ctx.model.params,
  };
}

/**
 * The ema teacher across a checkpoint: one trainer step with teacher_weights "ema" on the fixture
 * model, a checkpoint, then a context resumed from it. Returns the largest difference between the
 * restored teacher and the saved one (and a few values of each, read back), how far the teacher is
 * from the policy (so equality is not the policy's weights), and what a checkpoint whose teacher
 * has a misshapen tensor, or none, is told.
 */
export async function emaResume(rt: GpuRuntime) {
  const t0 = performance.now();
  const experiment = {
    model: FIXTURE,
    prompts: ['Say hi.', 'Be kind.'],
    rubric: { name: 'a', criteria: [{ id: 'has_a', text: 'Has a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }] },
    config: {
      num_generations: 2,
      generation_batch_size: 4,
      max_completion_length: 4,
      learning_rate: 0.05,
      seed: 3,
      save_steps: 0,
      max_steps: 1,
      distillation: { teacher: 'self_rubric', teacher_weights: 'ema', ema_decay: 0.5, mode: 'pure' },
    },
  };
  const files = await fetchModelFiles(FIXTURE);
  const ctx = await buildGrpoContext(rt, experiment, files);
  const trainer = new GrpoTrainer(ctx, { prompts: experiment.prompts });
  const start = await ctx.emaTeacher!.params.read('value');
  await trainer.singleStep();
  const saved = await ctx.emaTeacher!.params.read('value');
  const checkpoint = await trainer.checkpoint();
  releaseGrpoContext(ctx);
  const resumed = await buildGrpoContext(rt, experiment, files, { resume: checkpoint });
  const restored = await resumed.emaTeacher!.params.read('value');
  const policy = await resumed.model.params.read('value');
  releaseGrpoContext(resumed);
  let restoreError = 0;
  let fromPolicy = 0;
  let moved = 0;
  for (const [name, t] of saved) {
    const r = restored.get(name)!.data;
    t.data.forEach((x, i) => {
      restoreError = Math.max(restoreError, Math.abs(r[i] - x));
      fromPolicy = Math.max(fromPolicy, Math.abs(r[i] - policy.get(name)!.data[i]));
      moved = Math.max(moved, Math.abs(x - start.get(name)!.data[i]));
    });
  }
  const probe = 'transformer.h.0.mlp.c_fc.weight';
  const refusal = async (files2: CheckpointFiles) => {
    try {
      releaseGrpoContext(await buildGrpoContext(rt, experiment, files, { resume: files2 }));
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };
  // A teacher with one misshapen tensor (the final norm cut to half), and none at all.
  const tensors = readSafetensors(checkpoint['ema_model.safetensors']!).tensors;
  const norm = tensors.get('transformer.ln_f.weight')!;
  tensors.set('transformer.ln_f.weight', { shape: [norm.shape[0] / 2], data: norm.data.slice(0, norm.shape[0] / 2) });
  const misshapen = await refusal({ ...checkpoint, 'ema_model.safetensors': writeSafetensors(tensors) });
  const stripped: CheckpointFiles = { ...checkpoint };
  delete stripped['ema_model.safetensors'];
  const missing = await refusal(stripped);
  return {
    hasEmaFile: checkpoint['ema_model.safetensors'] !== undefined,
    restoreError,
    fromPolicy,
    moved,
    savedValues: Array.from(saved.get(probe)!.data.slice(0, 4)),
    restoredValues: Array.from(restored.get(probe)!.data.slice(0, 4)),
    misshapen,
    missing,
    seconds: (performance.now() - t0) / 1000,
  };
}
