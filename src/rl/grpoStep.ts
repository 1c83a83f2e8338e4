// One GRPO step, as data: sample → decode → judge → aggregate → advantages (GPU kernel) →
// for num_iterations, for each of steps_per_generation slices: forward → log-probs → clipped
// policy loss → backward → AdamW (update.ts; one optimizer step per slice, generationSlices.ts).
// Each update iteration is one queue submission per micro-batch (one in all, by default) that
// reads back scalars and the per-token data the inspector shows; sampling reads back token ids,
// and the advantages are read back once for the rollout inspector.
import type { GpuRuntime } from '../gpu/runtime';
import { recordGroupAdvantage } from '../ops/groupAdvantage';
import { learningRateAt } from '../ops/lrSchedule';
import type { Tokenizer } from '../model/tokenizer';
import type { Transformer } from '../model/transformer';
import {
  aggregateGroup,
  judgeRollouts,
  kernelRewardInputs,
  scoresOf,
  type CriterionResult,
  type Judge,
  type JudgeCache,
  type Rubric,
  type Scores,
} from '../rubric';
import { irtRubricUpdate, type IrtOnlineState } from '../rubric/irtOnline';
import { judgeRolloutsByInformation } from '../rubric/irtSelect';
import { irtMetrics, type IrtMetrics } from '../rubric/irtState';
import type { JudgeRolloutsOptions, Rollout } from '../rubric/judge';
import { applyBias, type JudgeBias } from '../rubric/bias';
import { evidenceMetrics, type EvidenceMetrics } from '../rubric/evidenceCredit';
import type { EvolutionHistory, RubricEvolutionEvent } from '../rubric/evolve';
import type { Complete } from '../rubric/generate';
import type { GrpoConfig } from './config';
import { guidedRollouts, rowScales, sampleRollouts, withImportanceWeights, withRowScales, type ExploreMetrics, type GuidedLabel } from './explore';
import { completionMetrics, fracRewardZeroStd, rewardMetrics, type CompletionMetrics, type RewardMetrics } from './metrics';
import { judgeFailureMetrics, type JudgeFailureMetrics } from './judgeFailures';
import { gradeExternally, type ExternalGrader, type ExternalGradingMetrics } from './externalGrading';
import { tokenCredit } from './credit';
import { rubricConditionedPrompt } from './credit/cort';
import { cortContrasts } from './credit/cortPass';
import { buildRolloutBatch } from './rolloutBatch';
import { distillationOnly, distillMetrics, distillTeacher, injectionMetrics, type DistillMetrics, type DistillTeacher } from './distill';
import { phaseAdvantages, scheduleMetrics, stepMode, type ScheduleMetrics } from './distill/schedule';
import { teacherSamples } from './distill/teacherSampling';
import { withSpecialTokens } from './distill/selection';
import { updateEmaTeacher } from './distill/ema';
import { runUpdate, type UpdateResult } from './update';
import { optimizerStepMetrics, updateScalarMetrics, type OptimizerStepMetrics, type UpdateScalarMetrics } from './generationSlices';
import type { ProgressHook } from './progress';
import type { BlackBoxState, TeacherRubricEvent } from './distill/blackBox';

export type Stage = 'sampled' | 'judged' | 'advantages' | 'updated';
export const STAGES: readonly Stage[] = ['sampled', 'judged', 'advantages', 'updated'];

export interface GrpoContext {
  rt: GpuRuntime;
  model: Transformer;
  /** The frozen starting policy, needed when beta > 0 (KL reference) and by the frozen self_rubric distillation teacher. */
  reference: Transformer | null;
  /** The distillation teacher model (distillation.teacher "model"): inference passes only. */
  distillModel?: { model: Transformer; formatPrompt: (text: string) => number[] } | null;
  /** The ema distillation teacher's weights (teacher_weights "ema"; src/rl/distill/ema.ts): a separate copy, averaged after every applied step. */
  emaTeacher?: Transformer | null;
  tokenizer: Tokenizer;
  /** Prompt text → token ids, including BOS / chat template. */
  formatPrompt: (text: string) => number[];
  rubric: Rubric;
  rubricVersion: string;
  /** Scored on every rollout but never trained on: a clean judge to watch reward hacking. */
  heldOut?: { rubric: Rubric; version: string } | null;
  modelJudge?: Judge;
  /** The held-out rubric's judge when it differs from modelJudge (evidence-required credit wraps only the trained rubric's). */
  heldOutJudge?: Judge;
  judgeCache?: JudgeCache;
  /** The bias sandbox's declared bias over the trained rubric's verdicts (src/rubric/bias.ts); null/absent = off. */
  judgeBias?: JudgeBias | null;
  /** judge_external_fraction's external judge (src/rl/externalGrading.ts); null/absent = off. */
  externalGrader?: ExternalGrader | null;
  /** irt_ability: the run's IRT item table and stored verdicts, carried across steps (src/rubric/irtOnline.ts); absent = none yet. Saved with checkpoints (src/rl/irtResume.ts). */
  irt?: IrtOnlineState | null;
  /** irt_ability resumed without the checkpoint's item table: why (a fresh table is used); null/absent otherwise. */
  irtResumeNote?: string | null;
  /** rubric_evolution: the recent verdicts and the version in use (src/rl/rubricEvolution.ts); absent until the first step. */
  evolution?: EvolutionHistory | null;
  /** rubric_evolution rare / online_rubrics: the model that proposes criteria (a remote judge's text endpoint); absent = none. */
  rubricGenerator?: Complete | null;
  /** The black-box distillation teacher (distillation.teacher "black_box"; src/rl/distill/blackBox.ts): its answers and the rubric its inductions append to. */
  blackBox?: BlackBoxState | null;
  config: GrpoConfig;
  /** Frees the judge's own GPU weights (self and model judges). */
  releaseJudge?: () => void;
}

export interface RolloutRecord {
  step: number;
  group: number;
  /** Position within its group. */
  index: number;
  prompt: string;
  completion: string;
  completion_ids: number[];
  /** Sampling log-probs of the completion tokens (a guided rollout's: under its guided prompt). */
  logprobs: number[];
  /** Per completion token (for the inspector's heatmap; absent in runs saved before they existed): */
  /** each token's text; */
  tokens?: string[];
  /** the policy's entropy at that position (first update pass); */
  token_entropy?: number[];
  /** π_θ/π_old at the last update pass (exactly 1 when num_iterations = steps_per_generation = 1); */
  token_ratio?: number[];
  /** the token's weight in the loss: 0 when masked (truncated, or below top_entropy_quantile), else 1 times its token credit (src/rl/credit; negative = flipped advantage); */
  token_weight?: number[];
  /** the evidence-span credit multiplier (span_credit on) and the entropy-pivot weight (entropy_pivot_quantile on). */
  token_span_credit?: number[];
  token_entropy_pivot?: number[];
  /** CoRT's per-token contrast: log-prob under the rubric-conditioned prompt minus under the plain one (cort_credit on). */
  token_cort_contrast?: number[];
  /** On-policy distillation: the teacher–student divergence at each token (first update pass; null where the token was not distilled). */
  token_divergence?: (number | null)[];
  /** CriPO diagnostics: criteria this rollout meets with a negative advantage (Suppressed), and its group's criteria no rollout meets (Unexplored). */
  suppressed_criteria?: string[];
  unexplored_criteria?: string[];
  truncated: boolean;
  /** Sampled with guidance (e.g. a rubric scaffold) but trained under `prompt`; absent = plain sampling. */
  guided?: GuidedLabel;
  results: CriterionResult[];
  /** Scores aligned with rubric.criteria (null = not scored). */
  scores: (number | null)[];
  reward: number | null;
  advantage: number;
}

export interface StepMetrics extends UpdateScalarMetrics {
  step: number;
  rewards: RewardMetrics;
  /** The held-out rubric's view of the same rollouts (weighted mean), when the experiment has one. */
  held_out: RewardMetrics | null;
  completions: CompletionMetrics;
  /** Guided exploration and dynamic sampling this step (absent when both are off, and in runs saved before they existed). */
  exploration?: ExploreMetrics;
  frac_reward_zero_std: number;
  /** CriPO diagnostics (src/rl/credit/criteria.ts): Σ over groups of Unexplored / Suppressed positive criteria (absent in older runs). */
  unexplored_criteria?: number;
  suppressed_criteria?: number;
  /** Each optimizer step (num_iterations × steps_per_generation of them), in order; absent when there was one. The step's own update scalars (UpdateScalarMetrics) are its last pass's. */
  optimizer_steps?: OptimizerStepMetrics[];
  learning_rate: number;
  /** True when a NaN/Inf loss or gradient made the optimizer skip the update. */
  skipped: boolean;
  sampling_tokens_per_second: number;
  training_tokens_per_second: number;
  judge_seconds: number;
  /** The step's time split with judge_seconds: sampling (exploration's extra rounds included) and the update passes (absent in older runs). */
  sampling_seconds?: number;
  update_seconds?: number;
  step_seconds: number;
  /** Queue submissions of the update iterations (goal: one per iteration). */
  update_submits: number;
  /** Rollouts without a reward and failed criterion verdicts, with the first reason (absent in steps saved before it existed, and in pure distillation, which judges nothing). */
  judge_failures?: JudgeFailureMetrics;
  /** On-policy distillation (src/rl/distill/): the first update pass's divergence, agreement and retained tokens (absent when off). */
  distillation?: DistillMetrics;
  /** Distillation's training modes (src/rl/distill/schedule.ts): the schedule's phase, whether the student sampled the batch, RuFT's kept rollouts (absent with neither a teacher nor a schedule). */
  schedule?: ScheduleMetrics;
  /** Evidence-required credit: per criterion, passes quoted, withheld and flagged by the vacuous-credit probe (judge_evidence_required on). */
  evidence?: EvidenceMetrics;
  /** judge_external_fraction > 0: the externally graded groups, the external calls, and the run judge's agreement and leniency against the external judge (src/rl/externalGrading.ts). */
  external_grading?: ExternalGradingMetrics;
  /** irt_ability: the item table after the step's update, a and b per criterion id (src/rubric/irtState.ts); absent otherwise. */
  irt?: IrtMetrics;
  /** The black-box teacher's rubric induction after this step (src/rl/distill/blackBox.ts): the new version and its provenance, or why it failed; absent when none was due. */
  teacher_rubric?: TeacherRubricEvent;
  /** The rubric version this step was judged with when the run's rubric can change (rubric_evolution on, or the black_box teacher's induced versions); absent otherwise. rubric_evolution: the decision taken after the step (src/rl/rubricEvolution.ts). */
  rubric_version?: string;
  rubric_evolution?: RubricEvolutionEvent;
}

export interface StepResult {
  metrics: StepMetrics;
  rollouts: RolloutRecord[];
}

export interface StepHooks {
  /** Awaited after each stage: a UI can show the stage and hold the step (slow motion). */
  onStage?: (stage: Stage, rollouts: readonly RolloutRecord[]) => Promise<void> | void;
  signal?: AbortSignal;
  /** Replacement prompts for dynamic sampling's extra rounds (the trainer draws them from the prompt set). */
  drawPrompts?: (count: number, round: number) => string[];
  /** Progress inside the stage being worked on (tokens sampled, rollouts judged, update passes). */
  onProgress?: ProgressHook;
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new DOMException('the step was stopped', 'AbortError');
}

/**
 * Runs step number `step` (0-based: the optimizer's t is step + 1) on one prompt per group.
 * The caller advances its step counter when the result is not skipped.
 */
export async function grpoStep(ctx: GrpoContext, step: number, prompts: readonly string[], hooks: StepHooks = {}): Promise<StepResult> {
  const { rt, model, config: cfg, tokenizer, rubric } = ctx;
  const G = cfg.num_generations;
  if (prompts.length * G !== cfg.generation_batch_size) {
    throw new RangeError(`a step needs generation_batch_size / num_generations = ${cfg.generation_batch_size / G} prompts, got ${prompts.length}`);
  }
  const t0 = performance.now();

  // 1. Sample G completions per prompt. Row r draws from (seed, step, r): distinct per rollout.
  // Guided exploration (scaffolds, dynamic sampling) lives in one place: src/rl/explore/.
  const progress = hooks.onProgress;
  progress?.({ stage: 'sampling', done: 0, total: cfg.max_completion_length });
  // Distillation's training modes (src/rl/distill/schedule.ts): the schedule's phase, the step's
  // teacher settings, and GKD's lmbda (a pure distillation batch may be the teacher's samples).
  const mode = stepMode(cfg, step);
  const sampled = mode.onPolicy
    ? await sampleRollouts(ctx, step, prompts, { signal: hooks.signal, drawPrompts: hooks.drawPrompts, onProgress: progress })
    : await teacherSamples(ctx, step, prompts, { onProgress: progress });
  const { rollouts } = sampled;
  const samplingSeconds = (performance.now() - t0) / 1000;
  await hooks.onStage?.('sampled', rollouts);
  checkAbort(hooks.signal);

  // 2. Judge every criterion of every rollout, then aggregate one reward per rollout. Pure
  // distillation judges nothing: no reward, so every advantage is 0 and only the teacher trains.
  const pure = distillationOnly(mode);
  const tJudge = performance.now();
  // Dynamic sampling judged its groups already, to find the ones without reward variance.
  // The bias sandbox (judge_bias) lays its declared bias over the trained rubric's verdicts here,
  // and only here: the held-out (gold) rubric below is judged clean.
  const judged = pure ? rollouts.map((): CriterionResult[] => []) : applyBias(
    ctx.rubric,
    sampled.results ?? (await judgeStep(ctx, rollouts, { modelJudge: ctx.modelJudge, cache: ctx.judgeCache, signal: hooks.signal, onProgress: progress && ((done, total) => progress({ stage: 'judging', done, total })) })),
    rollouts.map((r) => r.completion),
    ctx.judgeBias,
    { seed: cfg.seed, step },
  );
  // judge_external_fraction (src/rl/externalGrading.ts): a seeded share of the groups also goes to the external judge, whose verdicts replace these there.
  const external = await gradeExternally(pure ? null : ctx.externalGrader, { rubric, rubricVersion: ctx.rubricVersion, seed: cfg.seed, step, numGenerations: G, threshold: cfg.reward_aggregation.pass_threshold, signal: hooks.signal }, rollouts, judged);
  const results = external.results;
  let heldOut: RewardMetrics | null = null;
  if (ctx.heldOut) {
    const h = ctx.heldOut;
    // A separate held-out judge (evidence-required credit) must not read the trained rubric's cached
    // verdicts: a gold copy of the rubric has the same version, so the same cache keys.
    const heldResults = await judgeRollouts(h.rubric, h.version, rollouts, { modelJudge: ctx.heldOutJudge ?? ctx.modelJudge, cache: ctx.heldOutJudge ? undefined : ctx.judgeCache, signal: hooks.signal });
    const heldScores = heldResults.map((r) => scoresOf(h.rubric, r));
    const heldRewards = heldScores.flatMap((_, i) => (i % G === 0 ? aggregateGroup(h.rubric, heldScores.slice(i, i + G), { method: 'weighted_mean' }).rewards : []));
    heldOut = rewardMetrics(h.rubric, heldScores, heldRewards, G, cfg.reward_aggregation.pass_threshold);
  }
  const judgeSeconds = (performance.now() - tJudge) / 1000;
  const scores: Scores[] = results.map((r) => scoresOf(rubric, r));
  const keep: (readonly boolean[])[] = [];
  // irt_ability: the run's item table takes the whole batch's verdicts once per step (online EM), then every group is scored under it.
  if (cfg.reward_aggregation.method === 'irt_ability' && !pure) ctx.irt = irtRubricUpdate(rubric, ctx.irt, scores, cfg.reward_aggregation.pass_threshold);
  for (let g = 0; g < prompts.length && !pure; g++) {
    // history: correlation_weights estimates its correlations from the whole batch's verdicts.
    const group = aggregateGroup(rubric, scores.slice(g * G, (g + 1) * G), cfg.reward_aggregation, { seed: cfg.seed, step, group: g, irt: ctx.irt ?? undefined }, scores);
    group.rewards.forEach((reward, i) => (rollouts[g * G + i].reward = reward));
    if (group.keep) keep.push(group.keep);
  }
  rollouts.forEach((r, i) => {
    r.results = results[i];
    r.scores = [...scores[i]];
  });
  await hooks.onStage?.('judged', rollouts);
  checkAbort(hooks.signal);

  // 2b. Extra guided rows from the judged groups (src/rl/explore/guided.ts): HeRL revisions of failed
  // rollouts and RISE-RL guidance for failed groups; judged, with float64 advantages, trained after
  // the natural rollouts under the original prompt. None with both options off.
  const extra = await guidedRollouts(ctx, step, rollouts, sampled.trainPromptIds, { signal: hooks.signal, onProgress: progress });
  const trained = [...rollouts, ...extra.rollouts];

  // 3. Group-relative advantages on the GPU.
  const gdpo = cfg.multi_objective_aggregation === 'normalize_then_sum';
  let rewardMatrix: Float32Array;
  let weights: Float32Array;
  let criteria = 1;
  if (gdpo) {
    const k = kernelRewardInputs(rubric, scores, { numGenerations: G, keep: keep.length ? keep : undefined });
    criteria = k.reward_weights.length;
    rewardMatrix = Float32Array.from(k.rewards_per_criterion.flat(), (x) => (x === null ? NaN : x));
    weights = Float32Array.from(k.reward_weights);
  } else {
    rewardMatrix = Float32Array.from(rollouts, (r) => (r.reward === null ? NaN : r.reward));
    weights = new Float32Array([1]);
  }
  progress?.({ stage: 'advantages', done: 0, total: prompts.length });
  let rec = rt.recorder('grpo.advantages');
  const rewardBuf = rt.upload(rewardMatrix, 'grpo.rewards');
  const weightBuf = rt.upload(weights, 'grpo.reward_weights');
  const adv = recordGroupAdvantage(rt, rec, rewardBuf, weightBuf, {
    rollouts: rollouts.length,
    criteria,
    numGenerations: G,
    scaleRewards: cfg.scale_rewards,
    eps: 1e-4,
    multiObjectiveAggregation: cfg.multi_objective_aggregation,
    advantageEstimator: cfg.advantage_estimator,
  });
  const advRead = rec.readF32(adv.advantages, rollouts.length);
  rec.releaseAfterSubmit(rewardBuf, weightBuf, adv.groupStats, adv.stats);
  await rec.submit();
  // RuFT's SFT phase trains on its rejection's 1/0 instead (schedule.ts).
  const advantages = phaseAdvantages(cfg.distillation, mode.phase, rollouts.map((r) => r.reward), await advRead);
  rollouts.forEach((r, i) => (r.advantage = advantages[i]));
  await hooks.onStage?.('advantages', trained);
  checkAbort(hooks.signal);

  // 4. num_iterations passes over the rollouts, steps_per_generation optimizer steps each.
  // Guided rollouts are trained under the original prompt (sampled.trainPromptIds), never their guidance.
  const batch = buildRolloutBatch([...sampled.trainPromptIds, ...extra.trainPromptIds], [...sampled.completions, ...extra.completions], [...sampled.truncated, ...extra.truncated], {
    padTokenId: tokenizer.padTokenId,
    maskTruncatedCompletions: cfg.mask_truncated_completions,
  });
  const N = batch.tokens.batch;
  const T = batch.tokens.seqLen;
  const rows = N * T;
  // Token credit (src/rl/credit/): how each advantage spreads over its tokens; off = uniform, as TRL.
  const credit = await tokenCredit({
    config: cfg,
    step,
    criteria: rubric.criteria,
    rollouts,
    groups: rollouts.length / G,
    decode: (ids) => tokenizer.decode(ids),
    seqLen: T,
    completionStart: batch.completionStart,
    // CoRT's scoring passes: each completion under its prompt with and without the rubric's criteria.
    cortContrast: () =>
      cortContrasts({
        rt,
        model,
        padTokenId: tokenizer.padTokenId,
        rubricPrompts: rollouts.map((r) => ctx.formatPrompt(rubricConditionedPrompt(r.prompt, rubric.criteria))),
        plainPrompts: sampled.trainPromptIds,
        completions: sampled.completions,
        temperature: cfg.temperature > 0 ? cfg.temperature : 1,
        microBatch: cfg.per_device_train_batch_size,
      }),
  });
  rollouts.forEach((r, i) => {
    const suppressed = credit.diagnostics.suppressed[i];
    const unexplored = credit.diagnostics.unexplored[r.group];
    if (suppressed.length) r.suppressed_criteria = suppressed;
    if (unexplored?.length) r.unexplored_criteria = unexplored;
  });
  const learningRate = learningRateAt(step, {
    learning_rate: cfg.learning_rate,
    lr_scheduler_type: cfg.lr_scheduler_type,
    warmup_ratio: cfg.warmup_ratio,
    num_training_steps: cfg.max_steps,
  });
  const tUpdate = performance.now();
  const submitsBefore = rt.counters.submits;
  // The extra rows: their advantages after the kernel's, their loss term's scale (auxTerm.ts) and importance weights on their tokens.
  const trainAdvantages = extra.rollouts.length || mode.phase === 'sft' ? rt.upload(Float32Array.from([...advantages, ...extra.advantages]), 'grpo.advantages_with_guided') : adv.advantages;
  const scales = rowScales(cfg.loss_type, batch.mask, T, [...rollouts.map(() => 'main' as const), ...extra.terms], extra.auxCoef);
  const tokenWeights = withImportanceWeights(withRowScales(credit.source, rollouts.length, scales, batch), [...sampled.importance, ...extra.importance], batch);
  let update: UpdateResult;
  let teacher: DistillTeacher | null = null;
  try {
    // On-policy distillation (src/rl/distill/): a teacher scores the trained rows' own completions
    // (inside the try: a teacher that cannot run still frees the advantages).
    teacher = withSpecialTokens(
      distillTeacher(
        { model, reference: ctx.reference, ema: ctx.emaTeacher, teacherModel: ctx.distillModel, formatPrompt: ctx.formatPrompt, criteria: rubric.criteria, rows: trained, padTokenId: tokenizer.padTokenId, config: { ...cfg, distillation: mode.distillation } },
        trained.map((r) => r.prompt),
        [...sampled.completions, ...extra.completions],
      ),
      tokenizer,
      model.config.vocabSize,
    );
    update = await runUpdate({ rt, model, reference: ctx.reference, config: cfg, batch, advantages: trainAdvantages, step, learningRate, tokenCredit: tokenWeights, teacher, onProgress: progress && ((done, total) => progress({ stage: 'updating', done, total })) });
  } finally {
    rt.release(adv.advantages);
    if (trainAdvantages !== adv.advantages) rt.release(trainAdvantages);
  }
  const { scalars: named, gradNorm, skipped } = update;
  // The ema teacher follows the policy after every applied step (src/rl/distill/ema.ts).
  if (!skipped && ctx.emaTeacher) await updateEmaTeacher(rt, model, ctx.emaTeacher, cfg.distillation.ema_decay);
  const creditViews = credit.views();
  const updateSeconds = (performance.now() - tUpdate) / 1000;
  trained.forEach((r, b) => {
    const at = (j: number) => b * T + batch.completionStart + j;
    const n = r.completion_ids.length;
    r.token_entropy = Array.from({ length: n }, (_, j) => update.entropy[at(j)]);
    const { firstLogprobs: first, lastLogprobs: last } = update;
    r.token_ratio = Array.from({ length: n }, (_, j) => (first && last ? Math.exp(last[at(j)] - first[at(j)]) : 1));
    const { entropyMask, creditWeights } = update;
    r.token_weight = Array.from({ length: n }, (_, j) => batch.mask[at(j)] * (entropyMask ? entropyMask[at(j)] : 1) * (creditWeights ? creditWeights[at(j)] : 1));
    const views = creditViews[b];
    if (views?.span) r.token_span_credit = views.span;
    if (views?.pivot) r.token_entropy_pivot = views.pivot;
    if (views?.cortContrast) r.token_cort_contrast = views.cortContrast;
    const d = update.distillation;
    if (d) r.token_divergence = Array.from({ length: n }, (_, j) => (d.weights[at(j)] > 0 ? d.divergence[at(j)] : null));
  });
  await hooks.onStage?.('updated', trained);

  const metrics: StepMetrics = {
    step,
    rewards: rewardMetrics(rubric, scores, rollouts.map((r) => r.reward), G, cfg.reward_aggregation.pass_threshold),
    held_out: heldOut,
    completions: completionMetrics(sampled.completions.map((c) => c.length), sampled.truncated),
    exploration: sampled.metrics ? { ...sampled.metrics, ...extra.metrics } : undefined,
    frac_reward_zero_std: fracRewardZeroStd(rollouts.map((r) => r.reward), G),
    unexplored_criteria: credit.diagnostics.unexploredCount,
    suppressed_criteria: credit.diagnostics.suppressedCount,
    ...updateScalarMetrics(named, gradNorm, cfg.beta),
    optimizer_steps: optimizerStepMetrics(update.steps, cfg.beta),
    learning_rate: learningRate,
    skipped,
    sampling_tokens_per_second: sampled.tokensPerSecond,
    training_tokens_per_second: (rows * cfg.num_iterations) / updateSeconds,
    judge_seconds: judgeSeconds,
    sampling_seconds: samplingSeconds,
    update_seconds: updateSeconds,
    step_seconds: (performance.now() - t0) / 1000,
    update_submits: rt.counters.submits - submitsBefore,
    judge_failures: pure ? undefined : judgeFailureMetrics(rollouts, cfg.max_unscorable_fraction),
    distillation: update.distillation ? { ...distillMetrics({ ...update.distillation, mask: batch.mask, weight: cfg.distillation.weight }), ...injectionMetrics(teacher) } : undefined,
    schedule: scheduleMetrics(cfg, mode, mode.phase === 'sft' ? advantages.reduce((n, a) => n + a, 0) : null),
    ...(cfg.judge_evidence_required ? { evidence: evidenceMetrics(rubric, results) } : {}),
    ...(external.metrics ? { external_grading: external.metrics } : {}),
    ...(cfg.reward_aggregation.method === 'irt_ability' && ctx.irt ? { irt: irtMetrics(rubric.criteria.map((c) => c.id), ctx.irt) } : {}),
  };
  return { metrics, rollouts: trained };
}

/**
 * Judges the step's rollouts: every criterion, or, with irt_ability's judge budget and an item
 * table from earlier steps, the rules plus the most informative judge questions per rollout
 * (src/rubric/irtSelect.ts). The first step judges everything: there is no table to choose by yet.
 */
async function judgeStep(ctx: GrpoContext, rollouts: readonly Rollout[], options: JudgeRolloutsOptions): Promise<CriterionResult[][]> {
  const a = ctx.config.reward_aggregation;
  if (a.method !== 'irt_ability' || a.irt_judge_budget === undefined || a.irt_judge_budget === null || !ctx.irt) {
    return judgeRollouts(ctx.rubric, ctx.rubricVersion, rollouts, options);
  }
  return (await judgeRolloutsByInformation(ctx.rubric, ctx.rubricVersion, rollouts, ctx.irt, a.irt_judge_budget, { ...options, threshold: a.pass_threshold })).results;
}
