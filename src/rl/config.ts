// GRPO settings: TRL GRPOConfig names and defaults (research/anchors-grpo-trainers.md §3.1),
// validated by one zod schema that also fills the defaults. Where a TRL default does not suit
// a tiny in-browser model the schema keeps TRL's value and presets override it (a preset for
// the embedded model sets learning_rate and max_completion_length, for instance).
import { z } from 'zod';
import { AGGREGATIONS } from '../rubric';
import { explainIssue, primaryIssues } from '../rubric/zodIssue';
import { ROLLOUT_AGGREGATION_NAMES } from '../rubric/aggregations';
import { MAX_TEACHER_RESPONSES, teacherResponseSchema } from './distill/teacherResponses';
import { distillModeIssues } from './distill/schedule';
import { RUBRIC_EVOLUTION_STRATEGIES } from '../rubric/evolve';
import { judgeChoiceSchema } from './judgeChoice';
import { EVOLUTION_WRITERS } from '../rubric/evolvePropose';

const probability = z.number().gt(0).lte(1);

/** On-policy distillation settings (src/rl/distill/); teacher "off" leaves plain GRPO. */
export const distillationSchema = z
  .object({
    /**
     * off; self_rubric: the same weights with the rubric in the prompt teach the rubric-free student (RGSD / OPSD); model: another model (teacher_model) with the student's tokenizer;
     * criterion_injection (CriPO): the same weights told the criteria no rollout of a group met teach that group's rollouts (forward KL, mode mixed);
     * black_box (ROPD): a teacher's text answers only (teacher_responses or teacher_endpoint), no logits: a rubric induced from teacher-vs-student contrasts by the judge model scores the student (mode mixed).
     */
    teacher: z.enum(['off', 'self_rubric', 'model', 'criterion_injection', 'black_box']).default('off'),
    /** The model teacher's id, as an experiment names its model (embedded, Hub or local); inference passes only. */
    teacher_model: z.string().min(1).max(500).nullable().default(null),
    /** self_rubric's and criterion_injection's weights: frozen = the starting model (the KL reference's weights), live = the policy being trained, ema = an exponential moving average of the policy (A117; ema_decay). */
    teacher_weights: z.enum(['frozen', 'live', 'ema']).default('frozen'),
    /** The ema teacher: after every applied step, teacher ← ema_decay · teacher + (1 − ema_decay) · policy (src/rl/distill/ema.ts). */
    ema_decay: z.number().min(0).lt(1).default(0.99),
    /** GKDConfig.lmbda: the probability that a step's batch is the student's own samples; otherwise the teacher samples it (src/rl/distill/schedule.ts). TRL's default is 0.5; 1 here keeps on-policy distillation on-policy. */
    lmbda: z.number().min(0).max(1).default(1),
    /** Which phase each step is in (src/rl/distill/schedule.ts): none; distill_then_rl: distill_steps of pure distillation, then GRPO on the rubric; ruft: sft_steps of rejection-sampling SFT on rollouts whose reward is at least min_reward, then GRPO. */
    schedule: z
      .object({
        kind: z.enum(['none', 'distill_then_rl', 'ruft']).default('none'),
        /** distill_then_rl: steps of pure distillation before GRPO. */
        distill_steps: z.number().int().min(1).max(100000).default(10),
        /** ruft: steps of rejection-sampling SFT before GRPO. */
        sft_steps: z.number().int().min(1).max(100000).default(10),
        /** ruft: a rollout is kept (trained on as SFT data) when its rubric reward is at least this. */
        min_reward: z.number().min(-1000).max(1000).default(1),
      })
      .strict()
      .default({ kind: 'none', distill_steps: 10, sft_steps: 10, min_reward: 1 }),
    /** Distil only the student's highest-entropy tokens: this top fraction of each micro-batch's completion tokens (TRL's top_entropy_quantile, for the divergence); null = the policy loss's top_entropy_quantile mask. */
    top_entropy_quantile: z.number().gt(0).max(1).nullable().default(null),
    /** With top_k: the tokenizer's special tokens (BOS, EOS, PAD) are never in the teacher's top-K support. */
    mask_special_tokens: z.boolean().default(false),
    /** pure: distillation alone (no judge, no reward); mixed: GRPO's loss plus weight × the mean divergence. */
    mode: z.enum(['pure', 'mixed']).default('mixed'),
    /** Coefficient of the mean per-token divergence in the loss. */
    weight: z.number().min(0).max(100).default(1),
    /** GKDConfig.beta: 0 = KL(teacher‖student) (forward), 1 = KL(student‖teacher) (reverse), between = generalized JSD. */
    beta: z.number().min(0).max(1).default(0.5),
    /** GKDConfig.temperature: both logits are divided by it before the divergence. */
    temperature: z.number().gt(0).max(10).default(0.9),
    /** Divergence on the teacher's top K tokens only, both distributions renormalised there (null = the whole vocabulary). */
    top_k: z.number().int().min(1).nullable().default(null),
    /** black_box: the teacher's stored responses (a JSON/JSONL file read by src/rl/distill/teacherResponses.ts), carried with the run; null = ask teacher_endpoint. */
    teacher_responses: z.array(teacherResponseSchema).min(1).max(MAX_TEACHER_RESPONSES).nullable().default(null),
    /** black_box: an OpenAI-compatible endpoint asked once per prompt. Never a key: the page keeps it, bound to the endpoint's site. */
    teacher_endpoint: z
      .strictObject({ url: z.string().max(2000).regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL'), model: z.string().min(1).max(200) })
      .nullable()
      .default(null),
    /** black_box: induce the rubric again every this many steps (null = once, after a run's first step). */
    induce_every: z.number().int().min(1).max(100000).nullable().default(null),
    /** black_box: criteria the judge model may induce per prompt (src/rubric/induce.ts). */
    induce_max_criteria: z.number().int().min(1).max(20).default(6),
  })
  .strict()
  .default({
    teacher: 'off',
    teacher_model: null,
    teacher_weights: 'frozen',
    ema_decay: 0.99,
    lmbda: 1,
    schedule: { kind: 'none', distill_steps: 10, sft_steps: 10, min_reward: 1 },
    mode: 'mixed',
    weight: 1,
    beta: 0.5,
    temperature: 0.9,
    top_k: null,
    top_entropy_quantile: null,
    mask_special_tokens: false,
    teacher_responses: null,
    teacher_endpoint: null,
    induce_every: null,
    induce_max_criteria: 6,
  });

export const grpoConfigSchema = z
  .object({
    // Generation
    num_generations: z.number().int().min(2).default(8),
    generation_batch_size: z.number().int().min(2).default(32),
    max_completion_length: z.number().int().min(1).max(4096).default(256),
    temperature: z.number().min(0).max(10).default(1.0),
    top_p: probability.default(1.0),
    top_k: z.number().int().min(0).default(0),
    // Hugging Face sampling options TRL passes to generation (issue 16; src/ops/sample.reference.ts):
    // a seen id's logit / penalty if > 0, else × penalty (1 = off); keep p >= min_p × p_max (null = off).
    repetition_penalty: z.number().gt(0).default(1.0),
    min_p: z.number().min(0).max(1).nullable().default(null),
    // Objective
    loss_type: z.enum(['grpo', 'bnpo', 'dapo', 'dr_grpo', 'cispo', 'sapo']).default('dapo'),
    beta: z.number().min(0).default(0.0),
    kl_estimator: z.enum(['k1', 'k2', 'k3']).default('k3'),
    epsilon: z.number().min(0).max(10).default(0.2),
    epsilon_high: z.number().min(0).max(10).nullable().default(null),
    dual_clip: z.number().gt(1).nullable().default(null),
    // TRL loss variants (issue 16): INTELLECT-2's two-sided clip, sapo's gate temperatures and
    // DeepSeek-V3.2's unbiased KL; src/ops/policyLoss.reference.ts has the formulas.
    delta: z.number().gt(1).nullable().default(null),
    sapo_temperature_pos: z.number().gt(0).default(1.0),
    sapo_temperature_neg: z.number().gt(0).default(1.05),
    use_bias_correction_kl: z.boolean().default(false),
    // TR-DPO reference sync (issue 16; src/rl/refSync.ts): every ref_model_sync_steps optimizer
    // steps, π_ref ← α π_θ + (1 − α) π_ref. Needs a separate reference copy (beta > 0, no LoRA).
    sync_ref_model: z.boolean().default(false),
    ref_model_mixup_alpha: z.number().gt(0).max(1).default(0.6),
    ref_model_sync_steps: z.number().int().min(1).default(512),
    num_iterations: z.number().int().min(1).max(16).default(1),
    // Optimizer steps per generation batch (src/rl/generationSlices.ts): the batch is split into
    // this many slices, one optimizer step each. TRL counts accumulation steps; 1 is its default behaviour.
    steps_per_generation: z.number().int().min(1).max(64).default(1),
    importance_sampling_level: z.enum(['token', 'sequence']).default('token'),
    scale_rewards: z.enum(['group', 'batch', 'none']).default('group'),
    multi_objective_aggregation: z.enum(['sum_then_normalize', 'normalize_then_sum']).default('sum_then_normalize'),
    advantage_estimator: z.enum(['grpo', 'rank', 'rloo']).default('grpo'),
    mask_truncated_completions: z.boolean().default(false),
    top_entropy_quantile: z.number().min(0).max(1).default(1.0),
    entropy_coef: z.number().default(0.0),
    // Optimizer (Hugging Face TrainingArguments names; learning_rate is GRPOConfig's)
    learning_rate: z.number().gt(0).max(1).default(1e-6),
    weight_decay: z.number().min(0).default(0.0),
    max_grad_norm: z.number().min(0).nullable().default(1.0),
    adam_beta1: z.number().min(0).lt(1).default(0.9),
    adam_beta2: z.number().min(0).lt(1).default(0.999),
    adam_epsilon: z.number().gt(0).default(1e-8),
    lr_scheduler_type: z.enum(['constant', 'constant_with_warmup', 'linear', 'cosine']).default('linear'),
    warmup_ratio: z.number().min(0).max(1).default(0.0),
    max_steps: z.number().int().min(1).default(100),
    /**
     * Sequences per update submission; gradients accumulate over the generation batch and one
     * optimizer step follows it (TRL's per_device_train_batch_size with gradient accumulation).
     * null: the whole generation batch in one submission (fastest; TRL's default is 8).
     */
    per_device_train_batch_size: z.number().int().min(1).nullable().default(null),
    seed: z.number().int().min(0).max(0xffffffff).default(42),
    // Rubric reward: how per-criterion scores become one reward (see src/rubric/aggregations.ts)
    reward_aggregation: z
      .object({
        method: z.enum(AGGREGATIONS).default('weighted_mean'),
        pass_threshold: z.number().min(0).max(1).optional(),
        gate_cap: z.number().optional(),
        /** essential_gated: the reward capped when an essential criterion fails (default weighted_mean). */
        gate_base: z.enum(['weighted_mean', 'healthbench_points']).optional(),
        dropout_p: z.number().min(0).lt(1).optional(),
        /** rubric_dropout: the aggregation of the kept criteria (default weighted_mean). */
        dropout_aggregation: z.enum(ROLLOUT_AGGREGATION_NAMES).optional(),
        adaptive_floor: z.number().min(0).max(1).optional(),
        /** adaptive_weights: rescale each tier (and the pitfalls) back to its human total weight (default true). */
        adaptive_tier_balance: z.boolean().optional(),
        /** fork_precision_recall: β of the F_β of precision and recall (default 1). */
        fork_beta: z.number().gt(0).max(10).optional(),
        /** irt_ability: judge questions asked per completion, the most informative at its ability (src/rubric/irtSelect.ts); absent/null = all. */
        irt_judge_budget: z.number().int().min(0).max(1000).nullable().optional(),
      })
      .strict()
      .default({ method: 'weighted_mean' }),
    // What a NaN/Inf loss or gradient does after the update is skipped: go on, or stop the run.
    on_nonfinite: z.enum(['skip_step', 'stop']).default('skip_step'),
    // Judge failures: a step whose fraction of rollouts with no reward is above this is flagged
    // (a warning with the first reason); on_unscorable "stop" then ends the run as failed.
    max_unscorable_fraction: z.number().min(0).max(1).default(0.5),
    on_unscorable: z.enum(['warn', 'stop']).default('warn'),
    // Evidence-required credit (src/rubric/evidenceCredit.ts; issue 13): a model judge's pass
    // counts only with a quote found in the response; the probe re-judges with the quote deleted.
    // Not GRPOConfig options (TRL's reward functions return one float).
    judge_evidence_required: z.boolean().default(false),
    /** The vacuous-credit probe: every quoted pass is judged again without its quote; passes that survive are flagged. */
    vacuous_credit_probe: z.boolean().default(false),
    // Judge designs (src/rubric/judgeDesign.ts; issue 13): how a model judge gives its verdict —
    // logprob_margin: P(yes) from one next-token distribution; generative: a written verdict line
    // (answer, quote, short reason) — and whether one judge call sees one criterion or the whole
    // checklist of a response. Not GRPOConfig options (TRL has no rubric judge).
    // pairwise: two rollouts of a group in one prompt, both orders; a rollout scores its share of
    // wins, and the judge meta panel's position bias is the model's own (src/rubric/pairwiseJudge.ts).
    judge_verdict: z.enum(['logprob_margin', 'generative', 'pairwise']).default('logprob_margin'),
    judge_scope: z.enum(['per_criterion', 'checklist']).default('per_criterion'),
    // Self-judging with an externally graded fraction (src/rl/externalGrading.ts; issue 13, seed
    // 000 #76): this share of each step's groups is also judged by judge_external (a remote
    // endpoint, another model or a zero-shot classifier, never a key), whose verdicts replace the
    // run's judge's there; the judge meta panel shows their agreement and the run judge's leniency.
    // 0 = off. Not GRPOConfig options (TRL has no rubric judge).
    judge_external_fraction: z.number().min(0).max(1).default(0),
    judge_external: judgeChoiceSchema.nullable().default(null),
    // Online rubric evolution (src/rubric/evolve.ts; issue 12): every rubric_evolution_every steps a
    // strategy may propose a new rubric version from the last rubric_evolution_window steps'
    // verdicts, applied from the next step only after a guarded check on those steps' rollouts.
    // Not GRPOConfig options (TRL's reward functions are fixed for a run).
    rubric_evolution: z.enum(RUBRIC_EVOLUTION_STRATEGIES).default('off'),
    rubric_evolution_every: z.number().int().min(1).max(10_000).default(5),
    rubric_evolution_window: z.number().int().min(1).max(100).default(3),
    // Who writes rare's flaw checks: the judge's model (a remote endpoint or an engine judge), or
    // the rule catalogue (src/rubric/flawCatalogue.ts: no model; its checks are rules, not model-written).
    rubric_evolution_writer: z.enum(EVOLUTION_WRITERS).default('judge'),
    // Checkpoint every N steps (and on pause); 0 = only on pause/stop; null = auto (the default):
    // every step while a checkpoint is small, else every 10 (rl/checkpointPolicy.ts).
    save_steps: z.number().int().min(0).nullable().default(null),
    // LoRA (TRL ModelConfig names): train low-rank adapters on a frozen base instead of every weight.
    use_peft: z.boolean().default(false),
    lora_r: z.number().int().min(1).max(1024).default(16),
    lora_alpha: z.number().gt(0).default(32),
    lora_dropout: z.number().min(0).lt(1).default(0.05),
    /** null: PEFT's default modules for the architecture; "all-linear": every projection. */
    lora_target_modules: z.union([z.array(z.string().min(1).max(100)).min(1).max(32), z.literal('all-linear')]).nullable().default(null),
    use_rslora: z.boolean().default(false),
    // Guided exploration (src/rl/explore/). Not GRPOConfig options: names follow DAPO/verl and
    // RuscaRL; the settings help names the papers.
    /** DAPO dynamic sampling: a group whose rewards have no variance is resampled with another prompt. */
    dynamic_sampling: z.boolean().default(false),
    /** verl's name: generation rounds per step at most (the first included) before zero-variance groups are kept. */
    max_num_gen_batches: z.number().int().min(1).max(16).default(3),
    /** RuscaRL: the fraction of each group whose sampling prompt may carry rubric criteria (0 = off). */
    scaffold_fraction: z.number().min(0).max(1).default(0),
    /** Probability at step 0 that such a rollout is scaffolded; it decays linearly to 0. */
    scaffold_prob_start: z.number().min(0).max(1).default(1),
    /** Steps over which the probability decays to 0; null = max_steps. */
    scaffold_decay_steps: z.number().int().min(1).nullable().default(null),
    /** Fraction of the rubric's criteria (a random subset per rollout, at least one) in a scaffold. */
    scaffold_criteria_fraction: probability.default(0.5),
    /** Truncated importance weight min(π(y_t|prompt) / π(y_t|prompt + scaffold), cap) on scaffolded tokens; null = none (RuscaRL as published). */
    scaffold_is_cap: z.number().gt(0).max(100).nullable().default(2),
    /** HeRL hindsight revision: up to ⌊herl_fraction · num_generations⌋ failed rollouts per group get a revised rollout from prompt + failed answer + unmet criteria (0 = off). */
    herl_fraction: z.number().min(0).max(1).default(0),
    /** HeRL's improvement bonus: a revision trains on r' + herl_bonus · max(0, r' − r) (r: the failed answer's reward). */
    herl_bonus: z.number().min(0).max(10).default(0.5),
    /** RISE-RL / guidance on demand: a group whose rewards are all at or below guidance_fail_threshold gets guided rollouts. */
    guidance_on_demand: z.boolean().default(false),
    guidance_fail_threshold: z.number().min(-1000).max(1000).default(0),
    /** Guided rollouts sampled for each failed group (at most num_generations). */
    guidance_num_generations: z.number().int().min(1).max(64).default(2),
    /** Coefficient of the auxiliary term the kept guided rollouts train in, at step 0; it decays linearly to 0. */
    rise_aux_coef: z.number().min(0).max(10).default(1),
    /** Steps over which rise_aux_coef decays to 0; null = max_steps. */
    rise_aux_decay_steps: z.number().int().min(1).nullable().default(null),
    /** Truncated importance weight of hindsight and on-demand rollouts' tokens (as scaffold_is_cap); null = none. */
    guided_is_cap: z.number().gt(0).max(100).nullable().default(2),
    // Token credit (src/rl/credit/): how a rollout's advantage is spread over its tokens. Not
    // GRPOConfig options (TRL broadcasts one advantage to every token); the help names the papers.
    /** RCCA / DRACO: the fraction of the advantage redistributed onto criteria's evidence spans (0 = off). */
    span_credit: z.number().min(0).max(1).default(0),
    /** CriPO: in negative-advantage rollouts, flip the advantage of the spans of criteria they meet. */
    cripo_flip: z.boolean().default(false),
    /** ERPO / DGPO entropy pivots: the top fraction of each completion's tokens by entropy (0 = off). */
    entropy_pivot_quantile: z.number().min(0).max(1).default(0),
    /** The weight of a pivot token relative to the others, before the mean-1 normalisation. */
    entropy_pivot_boost: z.number().min(1).max(100).default(2),
    /** Mix from targeted credit (step 0) to uniform credit: constant keeps it targeted. */
    credit_schedule: z.enum(['constant', 'linear', 'cosine']).default('constant'),
    /** Steps over which the schedule reaches uniform credit; null = max_steps. */
    credit_schedule_steps: z.number().int().min(1).nullable().default(null),
    /** CoRT: weight tokens by how much the rubric in the prompt changes their log-prob (src/rl/credit/cort.ts). */
    cort_credit: z.boolean().default(false),
    /** Bounds of the CoRT weights (mean 1 over each completion). */
    cort_weight_min: z.number().min(0).max(1).default(0.5),
    cort_weight_max: z.number().min(1).max(100).default(2),
    // On-policy distillation (issue 11; src/rl/distill/): a teacher's next-token distributions on
    // the student's own samples. Inside the namespace, TRL GKDConfig's names and defaults (beta,
    // temperature); GRPOConfig's beta above stays the KL coefficient.
    distillation: distillationSchema,
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.num_generations > c.generation_batch_size) {
      // A group larger than the batch is the group size's fault: say so on num_generations.
      ctx.addIssue({
        code: 'custom',
        path: ['num_generations'],
        message: `must be at most generation_batch_size (${c.generation_batch_size}), got ${c.num_generations}`,
      });
    } else if (c.generation_batch_size % c.num_generations !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['generation_batch_size'],
        message: `must be a multiple of num_generations (${c.num_generations}), got ${c.generation_batch_size}`,
      });
    }
    for (const issue of sliceIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    if (c.advantage_estimator !== 'grpo' && c.multi_objective_aggregation === 'normalize_then_sum') {
      ctx.addIssue({ code: 'custom', path: ['advantage_estimator'], message: `"${c.advantage_estimator}" cannot be combined with multi_objective_aggregation "normalize_then_sum"` });
    }
    // delta and dual_clip bound the PPO clipped surrogate; cispo and sapo have none (TRL ignores delta there).
    if (c.loss_type === 'cispo' || c.loss_type === 'sapo') {
      for (const key of ['delta', 'dual_clip'] as const) {
        if (c[key] !== null) ctx.addIssue({ code: 'custom', path: [key], message: `applies only to loss_type grpo, bnpo, dapo or dr_grpo, not ${c.loss_type}: leave it empty` });
      }
    }
    for (const issue of refSyncIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    const gdpoIssue = gdpoAggregationIssue(c.multi_objective_aggregation, c.reward_aggregation);
    if (gdpoIssue) ctx.addIssue({ code: 'custom', path: ['multi_objective_aggregation'], message: gdpoIssue });
    if (c.top_entropy_quantile === 0) {
      ctx.addIssue({ code: 'custom', path: ['top_entropy_quantile'], message: 'must be > 0 (0 would train on no token)' });
    }
    if (c.scaffold_fraction > 0 && Math.floor(c.scaffold_fraction * c.num_generations + 1e-9) === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['scaffold_fraction'],
        message: `${c.scaffold_fraction} of a group of ${c.num_generations} is no rollout: use at least ${1 / c.num_generations} (or 0 for off)`,
      });
    }
    for (const issue of tokenCreditIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    if (c.vacuous_credit_probe && !c.judge_evidence_required) {
      ctx.addIssue({ code: 'custom', path: ['vacuous_credit_probe'], message: 'needs judge_evidence_required: the probe deletes the words the judge quoted, and only then is a judge asked to quote' });
    }
    for (const issue of guidedRolloutIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of distillationIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of distillModeIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of externalFractionIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    if (c.rubric_evolution_writer === 'catalogue' && c.rubric_evolution === 'online_rubrics') {
      // The catalogue holds flaw checks for a saturated criterion; eliciting new criteria from current-vs-start responses needs a model.
      ctx.addIssue({ code: 'custom', path: ['rubric_evolution_writer'], message: 'the catalogue writes only rare\'s flaw checks: online_rubrics needs a judge that writes text (use the writer "judge", or rubric_evolution "rare")' });
    }
    if (c.rubric_evolution !== 'off' && c.reward_aggregation.method === 'irt_ability') {
      // The IRT item table is fitted per criterion of one rubric version: a new version would start it over.
      ctx.addIssue({ code: 'custom', path: ['rubric_evolution'], message: 'cannot be combined with reward_aggregation "irt_ability" (its item table belongs to one rubric version): use "off", or another aggregation' });
    }
    if (c.entropy_coef !== 0 && !Number.isFinite(c.entropy_coef)) {
      ctx.addIssue({ code: 'custom', path: ['entropy_coef'], message: 'must be finite' });
    }
  });

/**
 * normalize_then_sum (GDPO) z-scores each criterion's score within the group and sums them with
 * the rubric's weights (src/rubric/kernelInputs.ts), so what it trains on is a weighted sum of
 * criterion scores: defined for weighted_mean, and for rubric_dropout over weighted_mean (the
 * dropped criteria are left out of the sum). The other aggregations are not weighted sums (a gate,
 * points clipped to [0, 1], all-or-nothing, per-group weights), so GDPO would train on a reward
 * other than the one shown: refused, with the reason.
 */
export function gdpoAggregationIssue(
  multiObjective: string,
  aggregation: { method: string; dropout_aggregation?: string },
): string | null {
  if (multiObjective !== 'normalize_then_sum') return null;
  const base = aggregation.method === 'rubric_dropout' ? (aggregation.dropout_aggregation ?? 'weighted_mean') : aggregation.method;
  if (base === 'weighted_mean') return null;
  const what = aggregation.method === 'rubric_dropout' ? `rubric_dropout over "${base}"` : `"${base}"`;
  return `"normalize_then_sum" (GDPO) normalises each criterion's score within its group and sums them with the rubric weights, so it trains on a weighted sum of criterion scores; reward_aggregation ${what} is not one (the reward shown would not be the reward trained). Use reward_aggregation "weighted_mean" (or rubric_dropout over it) with GDPO, or multi_objective_aggregation "sum_then_normalize" with ${what}`;
}

/**
 * steps_per_generation splits the generation batch into equal slices of whole groups, and each
 * slice's optimizer step into micro-batches of per_device_train_batch_size.
 */
function sliceIssues(c: { generation_batch_size: number; num_generations: number; steps_per_generation: number; per_device_train_batch_size: number | null }): { path: string[]; message: string }[] {
  const S = c.steps_per_generation;
  if (c.generation_batch_size % S !== 0) {
    return [{ path: ['steps_per_generation'], message: `must divide generation_batch_size (${c.generation_batch_size}) into equal slices, one per optimizer step, got ${S}` }];
  }
  const slice = c.generation_batch_size / S;
  if (S > 1 && c.generation_batch_size % c.num_generations === 0 && slice % c.num_generations !== 0) {
    return [{ path: ['steps_per_generation'], message: `each slice (generation_batch_size / steps_per_generation = ${slice}) must hold whole groups of num_generations (${c.num_generations}), got ${S}` }];
  }
  const B = c.per_device_train_batch_size;
  if (B !== null && slice % B !== 0) {
    const of = S === 1 ? `generation_batch_size (${c.generation_batch_size})` : `generation_batch_size / steps_per_generation (${slice}, the sequences of one optimizer step)`;
    return [{ path: ['per_device_train_batch_size'], message: `must divide ${of}, got ${B}` }];
  }
  return [];
}

/**
 * sync_ref_model mixes the policy into a reference copy: TRL's SyncRefModelCallback is a no-op
 * without a reference (beta 0 loads none) and TRL refuses it with PEFT, whose reference is the
 * base with the adapters off, not a copy. A page step is num_iterations optimizer steps and the
 * mix runs after a page step, so the TRL sync points (multiples of ref_model_sync_steps) must
 * fall on page-step ends: ref_model_sync_steps a multiple of num_iterations.
 */
function refSyncIssues(c: { sync_ref_model: boolean; beta: number; use_peft: boolean; num_iterations: number; steps_per_generation: number; ref_model_sync_steps: number }): { path: string[]; message: string }[] {
  if (!c.sync_ref_model) return [];
  if (c.beta === 0) return [{ path: ['sync_ref_model'], message: 'needs beta > 0: with beta 0 there is no reference model to sync (TRL loads none)' }];
  if (c.use_peft) {
    return [{ path: ['sync_ref_model'], message: 'cannot be used with use_peft (as in TRL): under LoRA the reference is the base model with the adapters off, not a separate copy to mix the policy into' }];
  }
  const perStep = c.num_iterations * c.steps_per_generation;
  if (c.ref_model_sync_steps % perStep !== 0) {
    const what = c.steps_per_generation === 1 ? `num_iterations (${perStep})` : `num_iterations × steps_per_generation (${perStep})`;
    return [{ path: ['ref_model_sync_steps'], message: `must be a multiple of ${what}: a step here is that many optimizer steps, and the reference is mixed after a step` }];
  }
  return [];
}

/** Whether any token-credit option is on (then grpoStep computes per-token weights). */
export function tokenCreditOn(c: { span_credit: number; cripo_flip: boolean; entropy_pivot_quantile: number; cort_credit: boolean }): boolean {
  return c.span_credit > 0 || c.cripo_flip || c.entropy_pivot_quantile > 0 || c.cort_credit;
}

/** Token-credit options that cannot work with the rest of the config, with the reason. */
function tokenCreditIssues(c: {
  span_credit: number;
  cripo_flip: boolean;
  entropy_pivot_quantile: number;
  cort_credit: boolean;
  num_iterations: number;
  steps_per_generation: number;
  importance_sampling_level: string;
}): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  const on = tokenCreditOn(c);
  if (on && c.importance_sampling_level === 'sequence') {
    const which = c.span_credit > 0 ? 'span_credit' : c.cripo_flip ? 'cripo_flip' : c.cort_credit ? 'cort_credit' : 'entropy_pivot_quantile';
    issues.push({
      path: [which],
      message: 'token credit needs importance_sampling_level "token": with "sequence" (GSPO) every token of a completion gets the same gradient, so per-token weights would only rescale the sequence',
    });
  }
  if (c.cripo_flip && c.num_iterations > 1) {
    issues.push({
      path: ['cripo_flip'],
      message: `needs num_iterations = 1, got ${c.num_iterations}: the flip is a negative token weight on the clipped loss, which equals a flipped advantage only while π_θ = π_old (the first pass); later passes would lose the clip on those tokens`,
    });
  }
  if (c.cripo_flip && c.steps_per_generation > 1) {
    issues.push({
      path: ['cripo_flip'],
      message: `needs steps_per_generation = 1, got ${c.steps_per_generation}: the flip equals a flipped advantage only while π_θ = π_old, and every slice after the first is trained after an optimizer step`,
    });
  }
  return issues;
}

/** Hindsight (HeRL) and on-demand (RISE-RL) options that cannot work with the rest of the config. */
function guidedRolloutIssues(c: {
  herl_fraction: number;
  guidance_on_demand: boolean;
  guidance_num_generations: number;
  num_generations: number;
  per_device_train_batch_size: number | null;
  steps_per_generation: number;
}): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  const on = c.herl_fraction > 0 ? 'herl_fraction' : c.guidance_on_demand ? 'guidance_on_demand' : null;
  // The extra rows vary in number from step to step, so they cannot be split into fixed slices or micro-batches.
  if (on && c.steps_per_generation > 1) {
    issues.push({ path: [on], message: `needs steps_per_generation = 1, got ${c.steps_per_generation}: the extra guided rollouts vary in number from step to step, so the batch cannot be split into equal slices` });
  }
  if (on && c.per_device_train_batch_size !== null) {
    issues.push({ path: [on], message: `needs per_device_train_batch_size empty (the whole batch in one submission), got ${c.per_device_train_batch_size}: the extra guided rollouts vary in number from step to step, so the batch cannot be split into equal micro-batches` });
  }
  if (c.herl_fraction > 0 && Math.floor(c.herl_fraction * c.num_generations + 1e-9) === 0) {
    issues.push({ path: ['herl_fraction'], message: `${c.herl_fraction} of a group of ${c.num_generations} is no rollout: use at least ${1 / c.num_generations} (or 0 for off)` });
  }
  if (c.guidance_on_demand && c.guidance_num_generations > c.num_generations) {
    issues.push({ path: ['guidance_num_generations'], message: `must be at most num_generations (${c.num_generations}), got ${c.guidance_num_generations}` });
  }
  return issues;
}

/** judge_external_fraction: an external judge named, of a kind that is another judge, and at least one group per step. */
function externalFractionIssues(c: { judge_external_fraction: number; judge_external: { kind: string } | null; generation_batch_size: number; num_generations: number }): { path: string[]; message: string }[] {
  const f = c.judge_external_fraction;
  const external = c.judge_external;
  if (external !== null && !['remote', 'model', 'zero_shot'].includes(external.kind)) {
    return [{ path: ['judge_external'], message: `must be a remote endpoint, another model or a zero-shot classifier, got "${external.kind}": ${external.kind === 'rules' ? 'the rules answer no judge question' : external.kind === 'self' ? 'the policy itself is the judge being checked' : 'the probe is trained only for the run\'s own judge'}` }];
  }
  if (f === 0) return [];
  if (external === null) {
    return [{ path: ['judge_external'], message: `is required when judge_external_fraction is above 0 (${f}): name the external judge (a remote endpoint, another model or a zero-shot classifier) under Judge → External grading, or set the fraction to 0` }];
  }
  const groups = Math.floor(c.generation_batch_size / c.num_generations);
  if (groups > 0 && Math.round(f * groups + 1e-9) === 0) {
    return [{ path: ['judge_external_fraction'], message: `${f} of a step's ${groups} group${groups === 1 ? '' : 's'} is no group (whole groups are graded): use at least ${Number((0.5 / groups).toFixed(4))}, or 0 for off` }];
  }
  return [];
}

/** Pure distillation trains on no reward: the options that only act through rewards or advantages are refused, with the reason. */
function distillationIssues(c: {
  distillation: { teacher: string; teacher_model: string | null; mode: string; teacher_responses: unknown[] | null; teacher_endpoint: unknown };
  dynamic_sampling: boolean;
  herl_fraction: number;
  guidance_on_demand: boolean;
  span_credit: number;
  cripo_flip: boolean;
  entropy_pivot_quantile: number;
  cort_credit: boolean;
  rubric_evolution: string;
}): { path: string[]; message: string }[] {
  if (c.distillation.teacher === 'model' && c.distillation.teacher_model === null) {
    return [{ path: ['distillation', 'teacher_model'], message: 'the "model" teacher needs a model id (as the experiment names its model): which model teaches' }];
  }
  if (c.distillation.teacher === 'black_box' && (c.distillation.teacher_responses === null) === (c.distillation.teacher_endpoint === null)) {
    return [{ path: ['distillation', 'teacher_responses'], message: 'the black_box teacher needs exactly one source of answers: teacher_responses (a stored file) or teacher_endpoint (a remote model)' }];
  }
  if (c.distillation.teacher === 'black_box' && c.rubric_evolution !== 'off') {
    // Both replace the run's rubric after a step: the induction starts from the experiment's rubric and would undo an evolved version.
    return [{ path: ['rubric_evolution'], message: `cannot be combined with the black_box distillation teacher (both change the run's rubric after a step): use "off", or another teacher` }];
  }
  if ((c.distillation.teacher === 'criterion_injection' || c.distillation.teacher === 'black_box') && c.distillation.mode === 'pure') {
    const why = c.distillation.teacher === 'black_box' ? 'it teaches through the rubric it induces, which the judge scores' : 'it distils only where the judged verdicts show a criterion no rollout of a group met';
    return [{ path: ['distillation', 'mode'], message: `the ${c.distillation.teacher} teacher needs the judge (${why}): use distillation mode "mixed"` }];
  }
  if (c.distillation.teacher === 'off' || c.distillation.mode !== 'pure') return [];
  const byReward: [string, boolean][] = [
    ['dynamic_sampling', c.dynamic_sampling],
    ['herl_fraction', c.herl_fraction > 0],
    ['guidance_on_demand', c.guidance_on_demand],
    ['span_credit', c.span_credit > 0],
    ['cripo_flip', c.cripo_flip],
    ['entropy_pivot_quantile', c.entropy_pivot_quantile > 0],
    ['cort_credit', c.cort_credit],
  ];
  return byReward
    .filter(([, on]) => on)
    .map(([key]) => ({
      path: [key],
      message: `has no effect with distillation mode "pure": pure distillation judges nothing and trains on no reward or advantage. Turn ${key} off, or use distillation mode "mixed"`,
    }));
}

export type GrpoConfig = z.output<typeof grpoConfigSchema>;
export type GrpoConfigInput = z.input<typeof grpoConfigSchema>;

export class GrpoConfigError extends Error {
  constructor(readonly issues: { path: string; message: string }[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
    this.name = 'GrpoConfigError';
  }
}

/** Fills TRL defaults and checks every option; errors name the option. */
export function parseGrpoConfig(input: unknown): GrpoConfig {
  const result = grpoConfigSchema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new GrpoConfigError(
    primaryIssues(result.error.issues).map((i) => ({
      path: i.path.length ? i.path.join('.') : 'config',
      message: i.code === 'unrecognized_keys' ? `unknown option(s) ${i.keys.join(', ')}` : explainIssue(i, input ?? {}),
    })),
  );
}

export const GRPO_DEFAULTS: GrpoConfig = parseGrpoConfig({});

/**
 * Where the page's default deliberately differs from TRL's (GRPOConfig, and TrainingArguments for
 * save_steps and max_steps; research/anchors-grpo-trainers.md §3.1): TRL's default and why. The
 * settings help and the exported train_grpo.py both say so.
 */
export const TRL_DEFAULT_DIFFERENCES = {
  max_completion_length: {
    trl: '512 (256 through TRL v1.9.0)',
    why: 'sampling time and memory in the browser grow with every token, and small models rarely need more',
  },
  generation_batch_size: {
    trl: 'per_device_train_batch_size × processes × steps_per_generation: 8 on one GPU',
    why: 'one optimizer step per generation batch, and a step needs several groups (4 prompts × 8 completions) for a steadier gradient',
  },
  save_steps: {
    trl: '500',
    here: 'auto',
    why: 'a browser tab can close at any time: auto checkpoints every step while a checkpoint is at most 16 MB (cheap in the browser\'s storage, and a reload redoes nothing), else every 10 steps',
  },
  max_steps: {
    trl: '-1 (run num_train_epochs = 3 over the dataset)',
    why: 'the page cycles a short prompt list, so a run is sized in steps',
  },
} as const satisfies Partial<Record<keyof GrpoConfig, { trl: string; why: string; here?: string }>>;

/** The page's default of an option as the notes write it ("auto" for save_steps' null). */
export function pageDefaultText(key: string): string {
  const d = (TRL_DEFAULT_DIFFERENCES as Record<string, { here?: string }>)[key];
  return d?.here ?? String(GRPO_DEFAULTS[key as keyof GrpoConfig]);
}

/** "TRL default: X; here: Y because …" for an option whose default differs from TRL's, else null. */
export function trlDefaultNote(key: string): string | null {
  const d = (TRL_DEFAULT_DIFFERENCES as Record<string, { trl: string; why: string }>)[key];
  if (!d) return null;
  return `TRL default: ${d.trl}; here: ${pageDefaultText(key)} because ${d.why}`;
}
