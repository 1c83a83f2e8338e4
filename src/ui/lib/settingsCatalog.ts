// The algorithm settings the builder shows: grouped, explained, each with its TRL GRPOConfig
// name (or a note where TRL has no such option; LoRA options carry TRL ModelConfig's and PEFT
// LoraConfig's names) and its default from parseGrpoConfig({}).
// Keys are config paths ("reward_aggregation.method" for the nested aggregation settings).
import { GRPO_DEFAULTS, trlDefaultNote } from '../../rl/config';
import { AGGREGATIONS } from '../../rubric';
import { ROLLOUT_AGGREGATION_NAMES } from '../../rubric/aggregations';
import { RUBRIC_EVOLUTION_STRATEGIES } from '../../rubric/evolve';
import { EVOLUTION_WRITERS } from '../../rubric/evolvePropose';

/** 'modules': LoRA target modules, typed as a comma-separated list, "all-linear", or empty for PEFT's default; 'text': a string as typed (a model id). */
export type OptionKind = 'int' | 'number' | 'enum' | 'bool' | 'modules' | 'text';

export interface OptionSpec {
  key: string;
  kind: OptionKind;
  /** Allowed values of an enum. */
  values?: readonly string[];
  /** null is a valid value (shown as an empty field, "off"). */
  nullable?: boolean;
  /** The TRL GRPOConfig / TrainingArguments / ModelConfig name, or null when TRL has no such option. */
  trl: string | null;
  /** The PEFT LoraConfig name, for LoRA options. */
  peft?: string;
  /** How the default reads where its value alone says too little (null target modules). */
  defaultText?: string;
  help: string;
  /** Only shown when this returns true for the effective config. */
  when?: (config: Record<string, unknown>) => boolean;
  /** Edited in another panel (its id, e.g. 'judge': the judge picker), so the settings list leaves it out; its help and TRL note still live here. */
  elsewhere?: 'judge';
  step?: number;
}

export interface OptionGroup {
  id: string;
  title: string;
  intro: string;
  options: OptionSpec[];
}

const peft = (c: Record<string, unknown>) => c.use_peft === true;
const distilling = (c: Record<string, unknown>) => ((c.distillation as { teacher?: string } | undefined)?.teacher ?? 'off') !== 'off';
const distillField = (c: Record<string, unknown>, key: string) => (c.distillation as Record<string, unknown> | undefined)?.[key];
/** A teacher whose next-token distributions are distilled: every teacher but black_box (text answers only, through the rubric). */
const logitTeacher = (c: Record<string, unknown>) => distilling(c) && distillField(c, 'teacher') !== 'black_box';
const scheduleKind = (c: Record<string, unknown>) => ((distillField(c, 'schedule') as { kind?: string } | undefined)?.kind ?? 'none');
const method = (c: Record<string, unknown>) => (c.reward_aggregation as { method?: string } | undefined)?.method ?? 'weighted_mean';
/** essential_gated, directly or as the aggregation of rubric_dropout's kept criteria. */
const gated = (c: Record<string, unknown>) =>
  method(c) === 'essential_gated' || (method(c) === 'rubric_dropout' && (c.reward_aggregation as { dropout_aggregation?: string }).dropout_aggregation === 'essential_gated');

export const SETTING_GROUPS: OptionGroup[] = [
  {
    id: 'generation',
    title: 'Sampling',
    intro: 'How each step samples a group of completions per prompt.',
    options: [
      { key: 'num_generations', kind: 'int', trl: 'num_generations', help: 'Completions per prompt (the group). Advantages compare completions within a group, so at least 2.' },
      { key: 'generation_batch_size', kind: 'int', trl: 'generation_batch_size', help: 'Completions per step; a multiple of num_generations. Prompts per step = generation_batch_size / num_generations.' },
      { key: 'max_completion_length', kind: 'int', trl: 'max_completion_length', help: 'Tokens per completion at most; longer ones are cut (truncated).' },
      {
        key: 'per_device_train_batch_size',
        kind: 'int',
        nullable: true,
        trl: 'per_device_train_batch_size',
        help: 'Sequences per GPU submission in the update; gradients accumulate over an optimizer step\'s sequences (the generation batch, or its slice with steps_per_generation > 1). Empty = a whole step at once (fastest). Smaller saves memory; it must divide generation_batch_size / steps_per_generation.',
      },
      { key: 'temperature', kind: 'number', step: 0.1, trl: 'temperature', help: 'Sampling temperature; 0 is greedy (every completion of a group the same: no signal).' },
      { key: 'top_p', kind: 'number', step: 0.05, trl: 'top_p', help: 'Nucleus sampling: keep the smallest set of tokens with this much probability.' },
      { key: 'top_k', kind: 'int', trl: 'top_k', help: 'Keep only the k most likely tokens; 0 = all.' },
      {
        key: 'min_p',
        kind: 'number',
        step: 0.01,
        nullable: true,
        trl: 'min_p',
        help: 'Keep only tokens at least this fraction as likely as the most likely one (applied after top_k and top_p, as in Hugging Face generate); empty = off.',
      },
      {
        key: 'repetition_penalty',
        kind: 'number',
        step: 0.05,
        trl: 'repetition_penalty',
        help: 'Discourage tokens already in the prompt or the completion so far: their logit is divided by this if positive, multiplied if not (Hugging Face semantics); 1 = off, above 1 repeats less. It shapes sampling only: the log-probs trained on stay the model\'s own, as TRL recomputes them with transformers generation, so the ratio of a penalised draw starts at 1 (TRL with vLLM also reweights tokens by its importance-sampling correction, which the page does not).',
      },
    ],
  },
  {
    id: 'objective',
    title: 'Objective',
    intro: 'The clipped policy loss, its normalisation and the advantages.',
    options: [
      {
        key: 'loss_type',
        kind: 'enum',
        values: ['grpo', 'bnpo', 'dapo', 'dr_grpo', 'cispo', 'sapo'],
        trl: 'loss_type',
        help: 'How token losses are averaged: per sequence (grpo), per batch token (bnpo, dapo) or by a constant (dr_grpo). Two change the loss itself, as in TRL: cispo (MiniMax-M1, arXiv:2506.13585) weights each token\'s log-probability by its importance ratio capped at epsilon_high, with no gradient through the weight, averaged per batch token like dapo; sapo (arXiv:2511.20347) replaces the hard clip by a smooth sigmoid gate, averaged per sequence like grpo.',
      },
      { key: 'scale_rewards', kind: 'enum', values: ['group', 'batch', 'none'], trl: 'scale_rewards', help: 'Divide advantages by the reward std of the group, of the batch, or not at all (Dr. GRPO).' },
      { key: 'epsilon', kind: 'number', step: 0.01, trl: 'epsilon', help: 'Clip range: the probability ratio is clipped to [1 − ε, 1 + ε_high].' },
      { key: 'epsilon_high', kind: 'number', step: 0.01, nullable: true, trl: 'epsilon_high', help: 'Upper clip (DAPO uses 0.28); empty = same as epsilon. With cispo it is the cap on the importance weight itself, not 1 + epsilon_high (ScaleRL, arXiv:2510.13786, uses 5): left empty, TRL caps the weight at epsilon, 0.2.' },
      { key: 'dual_clip', kind: 'number', step: 0.5, nullable: true, trl: null, help: 'Dual-clip bound c > 1 for negative advantages (verl clip_ratio_c, OpenRLHF dual_clip); empty = off.' },
      {
        key: 'delta',
        kind: 'number',
        step: 0.5,
        nullable: true,
        trl: 'delta',
        help: 'Two-sided clip (INTELLECT-2, arXiv:2505.07291): the unclipped ratio is also capped at delta, so a token whose probability grew a lot cannot make a negative advantage\'s loss unbounded. Must be > 1; TRL recommends > 1 + epsilon (the paper used 4). Empty = off. Not for cispo or sapo.',
        when: (c) => c.loss_type !== 'cispo' && c.loss_type !== 'sapo',
      },
      {
        key: 'sapo_temperature_pos',
        kind: 'number',
        step: 0.05,
        trl: 'sapo_temperature_pos',
        help: 'sapo gate temperature τ for positive advantages: the token loss is −σ(τ(ratio − 1))·4/τ·A, so a higher τ shuts off tokens whose ratio moved away from 1 sooner (the SAPO paper, arXiv:2511.20347: 1.0).',
        when: (c) => c.loss_type === 'sapo',
      },
      {
        key: 'sapo_temperature_neg',
        kind: 'number',
        step: 0.05,
        trl: 'sapo_temperature_neg',
        help: 'sapo gate temperature τ for zero or negative advantages (the paper: 1.05, a little higher than for positive ones, which it found more stable).',
        when: (c) => c.loss_type === 'sapo',
      },
      { key: 'num_iterations', kind: 'int', trl: 'num_iterations', help: 'Updates per batch of rollouts (μ). Above 1 the ratio moves away from 1 and clipping starts to act.' },
      {
        key: 'steps_per_generation',
        kind: 'int',
        trl: 'steps_per_generation',
        help: 'Optimizer steps per generation batch: the batch is split into this many equal slices of whole groups (advantages are computed over the whole batch first), and each slice is one optimizer step, so the policy is updated several times per sampling; with num_iterations μ the buffered batch is replayed μ times, slices in the same order: μ × steps_per_generation optimizer steps per step here (max_steps counts generation batches). Slices after the first are trained on rollouts an earlier policy sampled, so their ratio moves away from 1. It must divide generation_batch_size into whole groups. TRL counts this in gradient-accumulation steps and defaults it to gradient_accumulation_steps, which is one optimizer step per generation: the default 1 here; the TRL export writes the equivalent. Unlike TRL the slices are not shuffled.',
      },
      { key: 'importance_sampling_level', kind: 'enum', values: ['token', 'sequence'], trl: 'importance_sampling_level', help: 'Ratio per token (GRPO) or one per sequence (GSPO).' },
      { key: 'beta', kind: 'number', step: 0.01, trl: 'beta', help: 'KL penalty weight against the starting policy; 0 loads no reference model.' },
      { key: 'kl_estimator', kind: 'enum', values: ['k1', 'k2', 'k3'], trl: null, help: 'KL estimator (TRL always uses k3; verl kl_loss_type, OpenRLHF kl_estimator).', when: (c) => Number(c.beta) > 0 },
      {
        key: 'use_bias_correction_kl',
        kind: 'bool',
        trl: 'use_bias_correction_kl',
        help: 'Unbiased KL estimate (DeepSeek-V3.2, arXiv:2512.02556): the KL term is multiplied by the importance ratio π_θ / π_old, which corrects for the tokens having been sampled from π_old. As in TRL the ratio is not detached, so even on the first pass (ratio 1) the KL gradient changes.',
        when: (c) => Number(c.beta) > 0,
      },
      {
        key: 'sync_ref_model',
        kind: 'bool',
        trl: 'sync_ref_model',
        help: 'TR-DPO (arXiv:2404.09656): every ref_model_sync_steps optimizer steps the KL reference becomes ref_model_mixup_alpha × policy + (1 − alpha) × reference, so the KL anchors to a recent policy instead of the starting one. Needs a separate reference copy: beta > 0 and no LoRA (as in TRL, where PEFT runs cannot use it). Checkpoints then also save the reference, so resuming continues from it.',
        when: (c) => Number(c.beta) > 0,
      },
      {
        key: 'ref_model_mixup_alpha',
        kind: 'number',
        step: 0.05,
        trl: 'ref_model_mixup_alpha',
        help: 'How much of the policy goes into the reference at each sync (TR-DPO\'s α): 1 copies the policy, small values move the reference slowly.',
        when: (c) => c.sync_ref_model === true,
      },
      {
        key: 'ref_model_sync_steps',
        kind: 'int',
        trl: 'ref_model_sync_steps',
        help: 'Optimizer steps between syncs (TR-DPO\'s τ). A step here is num_iterations × steps_per_generation optimizer steps, so it must be a multiple of that.',
        when: (c) => c.sync_ref_model === true,
      },
      {
        key: 'advantage_estimator',
        kind: 'enum',
        values: ['grpo', 'rank', 'rloo'],
        trl: null,
        help: 'Group mean/std advantages (grpo), centred ranks within the group (rank), or RLOO (arXiv:2402.14740, TRL\'s separate RLOOTrainer): each reward minus the mean of the other rewards of its group, not divided by a std. rank and rloo ignore scale_rewards.',
      },
      { key: 'multi_objective_aggregation', kind: 'enum', values: ['sum_then_normalize', 'normalize_then_sum'], trl: 'multi_objective_aggregation', help: 'Normalise the total reward (GRPO) or each criterion first, then sum (GDPO). GDPO sums criterion scores with the rubric weights, so it works with the weighted_mean reward (or rubric_dropout over it) only.' },
      { key: 'mask_truncated_completions', kind: 'bool', trl: 'mask_truncated_completions', help: 'Leave completions cut by max_completion_length out of the loss.' },
      { key: 'top_entropy_quantile', kind: 'number', step: 0.05, trl: 'top_entropy_quantile', help: 'Train only on the highest-entropy fraction of tokens (the 80/20 paper: 0.2); 1 = all. As in TRL, the threshold is taken over each micro-batch\'s completion tokens and recomputed at every pass of num_iterations.' },
      { key: 'entropy_coef', kind: 'number', step: 0.001, trl: 'entropy_coef', help: 'Entropy bonus weight: the loss gets −entropy_coef × the mean entropy of the trained tokens (completion tokens kept by top_entropy_quantile), a token mean whatever loss_type, divided by the micro-batches, as in TRL. 0 = entropy only logged.' },
    ],
  },
  {
    id: 'reward',
    title: 'Reward from the rubric',
    intro: 'How the per-criterion scores of one completion become one reward.',
    options: [
      {
        key: 'reward_aggregation.method',
        kind: 'enum',
        values: AGGREGATIONS,
        trl: null,
        help: 'weighted_mean: Σ wₖsₖ / Σ positive w. healthbench_points: points of met criteria, clipped to [0, 1]. essential_gated: capped when an essential criterion fails. strict_all_required: 1 only when every required criterion passes. rubric_dropout: a random subset each step. adaptive_weights: up-weight criteria that separate the group. holistic_likert: RaR\'s implicit judge (arXiv 2507.17746) as a baseline: the judge (self, a model or a remote one; not the rules) reads the whole rubric with its weights and the response and gives one score from 1 to 5, normalised to [0, 1] as (k − 1) / 4 (RaR asks 1–10; 1–5 keeps every answer one digit, which the in-page judges read as one token). The checklist is still judged and shown next to it. An answer that is not a whole number from 1 to 5 leaves the completion without a reward (counted as unscorable), never 0. correlation_weights (after RRD, seed #97, which gives no formula; this one is ours): the weighted mean with each weight wₖ divided by cₖ = 1 + Σ over the other scored criteria j of max(0, sign(wⱼ)·sign(wₖ)·rⱼₖ), where rⱼₖ is the Pearson correlation of the two criteria\'s scores over the verdicts seen so far (every completion of the step, on the completions scoring both; 0 when fewer than 2 or either is constant). m criteria that always agree share one weight; independent ones keep theirs; a pitfall counts as avoided, so one met exactly when a positive criterion is not is discounted too. Deterministic. fork_precision_recall (after FORK, seed #39): recall = the weighted mean of the criteria marked as recall items (what the answer must cover); precision = the weighted share of the other criteria passed (pitfalls avoided, checks such as "every sentence is needed and correct"); the reward is their F_β = (1 + β²)·P·R / (β²·P + R). FORK scores precision per sentence with its own grader; here the rubric\'s criteria stand in for it. Needs at least one recall item and one other criterion. irt_ability (after RRT, seed #63; the fitting is ours): a two-parameter item response model over the criteria, P(pass) = σ(aₖ(θ − bₖ)) with a discrimination aₖ and a difficulty bₖ per criterion, fitted during the run by online EM from every verdict so far (3 EM iterations a step, warm-started; pass = score ≥ pass_threshold, a pitfall passes when not met; unscorable verdicts are skipped); the reward is Φ(θ̂), the normal CDF of the completion\'s posterior-mean ability θ̂, so a criterion that separates completions well counts more than one that does not, whatever its points. A completion with no scored criterion gets no reward (null). The fit starts afresh when a run resumes, and the TRL export refuses it (its Python module cannot carry the fit across batches).',
      },
      { key: 'reward_aggregation.pass_threshold', kind: 'number', step: 0.05, trl: null, help: 'A criterion is met when its score is at least this (default 0.5).' },
      { key: 'reward_aggregation.gate_cap', kind: 'number', step: 0.1, trl: null, help: 'The reward of a completion failing an essential criterion is at most this (default 0).', when: (c) => gated(c) },
      {
        key: 'reward_aggregation.gate_base',
        kind: 'enum',
        values: ['weighted_mean', 'healthbench_points'],
        trl: null,
        help: 'The reward essential gating caps: the weighted mean of the scores, or HealthBench points of the met criteria.',
        when: (c) => gated(c),
      },
      { key: 'reward_aggregation.dropout_p', kind: 'number', step: 0.05, trl: null, help: 'Probability of dropping each criterion per step (default 0.3).', when: (c) => method(c) === 'rubric_dropout' },
      {
        key: 'reward_aggregation.dropout_aggregation',
        kind: 'enum',
        values: ROLLOUT_AGGREGATION_NAMES,
        trl: null,
        help: 'How the kept criteria become the reward (the methods above). With normalize_then_sum only weighted_mean.',
        when: (c) => method(c) === 'rubric_dropout',
      },
      { key: 'reward_aggregation.adaptive_floor', kind: 'number', step: 0.05, trl: null, help: 'Weight multiplier of a criterion that does not separate the group (default 0.1).', when: (c) => method(c) === 'adaptive_weights' },
      {
        key: 'reward_aggregation.adaptive_tier_balance',
        kind: 'bool',
        trl: null,
        help: 'Rescale each tier (and the pitfalls together) back to its total human weight, so the adapted weights only move weight within a tier.',
        when: (c) => method(c) === 'adaptive_weights',
      },
      {
        key: 'reward_aggregation.fork_beta',
        kind: 'number',
        step: 0.1,
        trl: null,
        help: 'β of the F_β score of precision and recall (default 1, the F1 score): above 1 recall (coverage) counts more, below 1 precision.',
        when: (c) => method(c) === 'fork_precision_recall',
      },
      {
        key: 'reward_aggregation.irt_judge_budget',
        kind: 'int',
        nullable: true,
        trl: null,
        help: 'Judge questions asked per completion (after RRT\'s adaptive Fisher selection, seed #63). Rules are free and always checked; then, one round at a time, each completion is asked the unasked judge question that is most informative at its current ability estimate (a²·p·(1 − p) under the run\'s item table); the others are not asked and count as unscored. Half the questions = half the judge calls (the judge panel\'s requests per step show it). The first step, and steps whose groups dynamic sampling already judged, ask everything. Empty = ask every question.',
        when: (c) => method(c) === 'irt_ability',
      },
      {
        key: 'rubric_evolution',
        kind: 'enum',
        values: RUBRIC_EVOLUTION_STRATEGIES,
        trl: null,
        help: 'Online rubric evolution (each change a new rubric version with its parent and a reason, used from the next step; markers on the reward chart). prune: drop criteria with zero within-group variance over the window (they move no advantage). rare (RARE): replace a criterion every rollout already meets with flaw checks a model proposes from those rollouts. online_rubrics (OnlineRubrics): add criteria a model elicits by comparing current responses with the starting policy\'s responses (the run\'s first step) to the same prompt. rare and online_rubrics need a judge that writes the criteria: a remote endpoint, or self/model (the judge model replies greedily; a small model\'s reply is usually malformed); malformed output changes nothing and says why. Every proposal is first scored on the window\'s stored rollouts and applied only if each new criterion is discriminative there (within-group variance > 0, not saturated) and no group loses its reward variance; otherwise it is recorded as rejected.',
      },
      { key: 'rubric_evolution_every', kind: 'int', trl: null, help: 'Take an evolution decision after every N steps.', when: (c) => (c.rubric_evolution ?? 'off') !== 'off' },
      {
        key: 'rubric_evolution_window',
        kind: 'int',
        trl: null,
        help: 'Steps of verdicts a decision looks at, and whose stored rollouts the guarded check scores a proposal on. After a new version the window refills under it.',
        when: (c) => (c.rubric_evolution ?? 'off') !== 'off',
      },
      {
        key: 'rubric_evolution_writer',
        kind: 'enum',
        values: EVOLUTION_WRITERS,
        trl: null,
        help: 'Who writes rare\'s flaw checks. judge: the judge\'s model (a remote endpoint, or self/model). catalogue: no model: a fixed catalogue of rule-based flaw checks (unfinished last sentence, letter stutter, runs of symbols, repeated punctuation, letters run together, shouting, stray spacing, empty answer, running longer than the window\'s median or upper-quartile word count, repeating a word the window\'s rollouts repeat); the one with the largest within-group variance on the window that is neither saturated nor unreachable nor redundant with a kept criterion is proposed, as a rule (not model-written), and goes through the same guarded check. If none qualifies the rubric stays, with each check\'s reason. Restating the prompt is not in the catalogue: a rule sees only the response.',
        when: (c) => (c.rubric_evolution ?? 'off') === 'rare',
      },
    ],
  },
  {
    id: 'exploration',
    title: 'Exploration',
    intro: 'Guided sampling and dynamic sampling. Guided rollouts are labelled "guided" in the inspector and exports, and are always trained under the original prompt.',
    options: [
      {
        key: 'dynamic_sampling',
        kind: 'bool',
        trl: null,
        help: 'DAPO dynamic sampling (learnability filter): a group whose completions all get the same reward teaches nothing, so it is judged right away and sampled again with another prompt. The extra tokens and time show as explore/extra_sampled_tokens and explore/extra_seconds (verl algorithm.filter_groups).',
      },
      {
        key: 'max_num_gen_batches',
        kind: 'int',
        trl: null,
        help: 'Generation rounds per step at most, the first included (verl max_num_gen_batches). Groups still without reward variance after the last round are trained as they are.',
        when: (c) => c.dynamic_sampling === true,
      },
      {
        key: 'scaffold_fraction',
        kind: 'number',
        step: 0.125,
        trl: null,
        help: 'Rubric scaffolding (RuscaRL): this fraction of each group may sample from the prompt plus a random subset of the rubric\'s criteria; judged and trained under the original prompt. 0 = off.',
      },
      {
        key: 'scaffold_prob_start',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'Probability at step 0 that such a completion gets a scaffold; it falls linearly to 0 over scaffold_decay_steps, so the model learns to meet the criteria unaided.',
        when: (c) => Number(c.scaffold_fraction) > 0,
      },
      {
        key: 'scaffold_decay_steps',
        kind: 'int',
        nullable: true,
        trl: null,
        defaultText: 'max_steps',
        help: 'Steps over which the scaffolding probability decays to 0; empty = max_steps.',
        when: (c) => Number(c.scaffold_fraction) > 0,
      },
      {
        key: 'scaffold_criteria_fraction',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'Fraction of the weighted criteria named in each scaffold (a different random subset per completion, at least one).',
        when: (c) => Number(c.scaffold_fraction) > 0,
      },
      {
        key: 'scaffold_is_cap',
        kind: 'number',
        step: 0.5,
        nullable: true,
        trl: null,
        help: 'Importance correction: each scaffolded token is weighted by π(token | prompt) / π(token | prompt + scaffold), capped at this (verl rollout_is_threshold). Empty = no correction, as RuscaRL trains.',
        when: (c) => Number(c.scaffold_fraction) > 0,
      },
      {
        key: 'herl_fraction',
        kind: 'number',
        step: 0.125,
        trl: null,
        help: 'Hindsight revision (HeRL, seed #17): up to this fraction of each group\'s failed completions (lowest reward first) get an extra revised completion, sampled from the prompt plus the failed answer and the criteria it missed; judged, then trained under the original prompt. 0 = off.',
      },
      {
        key: 'herl_bonus',
        kind: 'number',
        step: 0.1,
        trl: null,
        help: 'HeRL\'s bonus for improving under guidance: a revision trains on its reward plus herl_bonus × how much it beat the answer it revises (never negative).',
        when: (c) => Number(c.herl_fraction) > 0,
      },
      {
        key: 'guidance_on_demand',
        kind: 'bool',
        trl: null,
        help: 'Guidance on demand with selective internalization (RISE-RL, seed #9; GHPO, AMPO): a group whose completions all fail gets extra completions sampled with the criteria it missed in the prompt; only those beating the group\'s mean reward are kept, trained under the original prompt in a separate auxiliary loss term that fades out.',
      },
      {
        key: 'guidance_fail_threshold',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'A group has failed when every completion\'s reward is at or below this (0: all at zero).',
        when: (c) => c.guidance_on_demand === true,
      },
      {
        key: 'guidance_num_generations',
        kind: 'int',
        trl: null,
        help: 'Guided completions sampled for each failed group (at most num_generations).',
        when: (c) => c.guidance_on_demand === true,
      },
      {
        key: 'rise_aux_coef',
        kind: 'number',
        step: 0.1,
        trl: null,
        help: 'Weight of the auxiliary term the kept guided completions train in, at step 0; it falls linearly to 0 over rise_aux_decay_steps, after which no guidance is sampled.',
        when: (c) => c.guidance_on_demand === true,
      },
      {
        key: 'rise_aux_decay_steps',
        kind: 'int',
        nullable: true,
        trl: null,
        defaultText: 'max_steps',
        help: 'Steps over which the auxiliary coefficient decays to 0; empty = max_steps.',
        when: (c) => c.guidance_on_demand === true,
      },
      {
        key: 'guided_is_cap',
        kind: 'number',
        step: 0.5,
        nullable: true,
        trl: null,
        help: 'Importance correction of revised and on-demand completions: each token is weighted by π(token | prompt) / π(token | prompt + guidance), capped at this. Empty = none.',
        when: (c) => Number(c.herl_fraction) > 0 || c.guidance_on_demand === true,
      },
    ],
  },
  {
    id: 'credit',
    title: 'Token credit',
    intro: 'How each completion\'s advantage is spread over its tokens. TRL gives every token the same advantage; these options move it onto the tokens that earned it (the total per completion is kept). The heatmap shows each source.',
    options: [
      {
        key: 'span_credit',
        kind: 'number',
        step: 0.1,
        trl: null,
        help: 'Evidence-span credit (RCCA, DRACO): this fraction of the advantage moves onto the characters each criterion points at (the matched term, the words past a limit, the last sentence…), each criterion by its share of the rubric weight; the rest stays on the other tokens. 0 = off, 1 = all of it.',
      },
      {
        key: 'cripo_flip',
        kind: 'bool',
        trl: null,
        help: 'CriPO\'s suppressed-criterion fix: in a completion with a negative advantage, the tokens of a criterion it meets are pushed up instead of down (their advantage sign flips). Needs num_iterations = 1.',
      },
      {
        key: 'cort_credit',
        kind: 'bool',
        trl: null,
        help: 'Counterfactual rubric-context credit (CoRT): after sampling, each completion is scored with and without the rubric\'s criteria added to its prompt (two extra inference passes); tokens the rubric made likelier get more of the advantage, within cort_weight_min–cort_weight_max, mean 1 per completion.',
      },
      {
        key: 'cort_weight_min',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'Smallest CoRT weight of a token (at most 1).',
        when: (c) => c.cort_credit === true,
      },
      {
        key: 'cort_weight_max',
        kind: 'number',
        step: 0.5,
        trl: null,
        help: 'Largest CoRT weight of a token (at least 1).',
        when: (c) => c.cort_credit === true,
      },
      {
        key: 'entropy_pivot_quantile',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'Entropy pivots (ERPO, DGPO): the most uncertain fraction of each completion\'s tokens gets entropy_pivot_boost times the weight of the others (then rescaled to mean 1). 0 = off. Works with top_entropy_quantile, which drops the other tokens instead.',
      },
      {
        key: 'entropy_pivot_boost',
        kind: 'number',
        step: 0.5,
        trl: null,
        help: 'How much more a pivot token weighs than the others (at least 1).',
        when: (c) => Number(c.entropy_pivot_quantile) > 0,
      },
      {
        key: 'credit_schedule',
        kind: 'enum',
        values: ['constant', 'linear', 'cosine'],
        trl: null,
        help: 'Temporal credit scheduling (seed #87): start with the targeted credit above and move to uniform credit over credit_schedule_steps. constant = stay targeted.',
        when: (c) => Number(c.span_credit) > 0 || Number(c.entropy_pivot_quantile) > 0 || c.cort_credit === true,
      },
      {
        key: 'credit_schedule_steps',
        kind: 'int',
        nullable: true,
        trl: null,
        help: 'Steps until the credit is uniform; empty = max_steps.',
        when: (c) => c.credit_schedule !== undefined && c.credit_schedule !== 'constant',
      },
    ],
  },
  {
    id: 'distillation',
    title: 'Distillation',
    intro: 'On-policy distillation: a teacher\'s next-token distributions on the student\'s own completions, token by token. Alone it needs no judge; mixed, it is added to the GRPO loss. Names inside follow TRL\'s GKDConfig (its beta is the divergence, not GRPO\'s KL coefficient). The KL anchor to the starting model is GRPO\'s own beta above: its reference is the starting model (unless sync_ref_model moves it), and its KL term trains in pure distillation too.',
    options: [
      {
        key: 'distillation.teacher',
        kind: 'enum',
        values: ['off', 'self_rubric', 'model', 'criterion_injection', 'black_box'],
        trl: null,
        help: 'self_rubric (RGSD, OPSD): the same model with the rubric\'s criteria added to its prompt is the teacher of the model without them, so the rubric is learned without a judge. model: another model with the student\'s tokenizer (teacher_model), inference passes only. criterion_injection (CriPO): only where no answer of a group met a criterion, the same model told that criterion teaches that group\'s answers (forward KL; needs the judge, mode mixed). black_box (ROPD): a teacher seen only through its text answers (a file of stored responses or a remote endpoint, set below); the judge model writes criteria that separate its answers from the model\'s, and that induced rubric scores the next steps (needs a judge that writes text, mode mixed). off = plain GRPO.',
      },
      {
        key: 'distillation.teacher_model',
        kind: 'text',
        nullable: true,
        trl: 'GKDConfig.teacher_model_name_or_path',
        defaultText: 'embedded/… or hf:org/name',
        help: 'The model teacher: a model id as the experiment names its model (an embedded model, or a Hub model). It must use the student\'s tokenizer (checked when the run opens: vocabulary, every token\'s id, special tokens; a difference is refused by name), runs inference passes only and counts in the memory plan.',
        when: (c) => distillField(c, 'teacher') === 'model',
      },
      {
        key: 'distillation.teacher_weights',
        kind: 'enum',
        values: ['frozen', 'live', 'ema'],
        trl: null,
        help: 'frozen: the starting model\'s weights (a second copy in memory, shared with beta\'s KL reference); live: the policy being trained, read without gradients; ema: an exponential moving average of the policy (a further full copy of the weights in memory, not under LoRA), a steadier teacher that still follows training.',
        when: (c) => distillField(c, 'teacher') === 'self_rubric' || distillField(c, 'teacher') === 'criterion_injection',
      },
      {
        key: 'distillation.ema_decay',
        kind: 'number',
        step: 0.01,
        trl: null,
        help: 'The ema teacher: after every applied step, teacher ← ema_decay × teacher + (1 − ema_decay) × policy. 0.99 follows the policy over about 100 steps; 0 is the live policy.',
        when: (c) => logitTeacher(c) && distillField(c, 'teacher_weights') === 'ema',
      },
      {
        key: 'distillation.mode',
        kind: 'enum',
        values: ['pure', 'mixed'],
        trl: null,
        help: 'pure: distillation alone (nothing is judged, no reward; every advantage is 0). mixed: the GRPO loss plus weight × the mean divergence.',
        when: distilling,
      },
      { key: 'distillation.weight', kind: 'number', step: 0.1, trl: null, help: 'Coefficient of the mean per-token divergence in the loss (averaged over the completion tokens of an optimizer step).', when: logitTeacher },
      {
        key: 'distillation.beta',
        kind: 'number',
        step: 0.1,
        trl: 'GKDConfig.beta',
        help: 'Which divergence: 0 = forward KL(teacher ‖ student), 1 = reverse KL(student ‖ teacher), between = the generalized Jensen–Shannon divergence with that interpolation.',
        when: logitTeacher,
      },
      { key: 'distillation.temperature', kind: 'number', step: 0.1, trl: 'GKDConfig.temperature', help: 'Both the teacher\'s and the student\'s logits are divided by it before the divergence.', when: logitTeacher },
      {
        key: 'distillation.top_k',
        kind: 'int',
        nullable: true,
        trl: null,
        help: 'Only the teacher\'s K most likely tokens count, both distributions renormalised there (truncated divergence). Empty = the whole vocabulary.',
        when: logitTeacher,
      },
      {
        key: 'distillation.mask_special_tokens',
        kind: 'bool',
        trl: null,
        help: 'With top_k: the tokenizer\'s special tokens (BOS, EOS, PAD) never enter the teacher\'s top-K support.',
        when: (c) => logitTeacher(c) && distillField(c, 'top_k') !== null && distillField(c, 'top_k') !== undefined,
      },
      {
        key: 'distillation.top_entropy_quantile',
        kind: 'number',
        step: 0.05,
        nullable: true,
        trl: null,
        help: 'Distil only the student\'s highest-entropy tokens: this top fraction of each micro-batch\'s completion tokens (TRL\'s top_entropy_quantile rule, for the divergence). Empty = the policy loss\'s top_entropy_quantile. The distillation chart shows the retained share.',
        when: logitTeacher,
      },
      {
        key: 'distillation.lmbda',
        kind: 'number',
        step: 0.1,
        trl: 'GKDConfig.lmbda',
        help: 'The on-policy fraction: each step\'s batch is the student\'s own samples with this probability (seeded), otherwise the teacher\'s samples from its own prompt with the same sampler. Below 1 needs mode pure (or distill_then_rl). TRL\'s default is 0.5; 1 here keeps on-policy distillation on-policy.',
        when: logitTeacher,
      },
      {
        key: 'distillation.schedule.kind',
        kind: 'enum',
        values: ['none', 'distill_then_rl', 'ruft'],
        trl: null,
        help: 'distill_then_rl: the first distill_steps steps are pure distillation, then GRPO on the rubric with the teacher off. ruft (RuFT): the first sft_steps steps are rejection-sampling SFT on the rollouts whose rubric reward is at least min_reward (their completions trained as SFT data), then GRPO. The charts mark each step\'s phase.',
      },
      { key: 'distillation.schedule.distill_steps', kind: 'int', trl: null, help: 'Steps of pure distillation before GRPO starts.', when: (c) => scheduleKind(c) === 'distill_then_rl' },
      { key: 'distillation.schedule.sft_steps', kind: 'int', trl: null, help: 'Steps of rejection-sampling SFT before GRPO starts.', when: (c) => scheduleKind(c) === 'ruft' },
      { key: 'distillation.schedule.min_reward', kind: 'number', step: 0.1, trl: null, help: 'A rollout is kept as SFT data when its rubric reward is at least this (1 = every criterion met with weighted_mean).', when: (c) => scheduleKind(c) === 'ruft' },
      {
        key: 'distillation.induce_every',
        kind: 'int',
        nullable: true,
        trl: null,
        defaultText: 'once',
        help: 'The black_box teacher: induce the rubric again every this many steps, each time from the experiment\'s rubric with the newest contrasts (replacing the older induced criteria). Empty = once, after the run\'s first step (and again after a resume).',
        when: (c) => distillField(c, 'teacher') === 'black_box',
      },
      { key: 'distillation.induce_max_criteria', kind: 'int', trl: null, help: 'The black_box teacher: criteria the judge model may write per prompt from one contrast of the teacher\'s and the model\'s answers.', when: (c) => distillField(c, 'teacher') === 'black_box' },
    ],
  },
  {
    id: 'optimizer',
    title: 'Optimizer',
    intro: 'AdamW and the learning-rate schedule (Hugging Face TrainingArguments names).',
    options: [
      { key: 'learning_rate', kind: 'number', step: 0.0001, trl: 'learning_rate', help: 'Peak learning rate. TRL defaults to 1e-6 for large models; tiny models need far more.' },
      { key: 'lr_scheduler_type', kind: 'enum', values: ['constant', 'constant_with_warmup', 'linear', 'cosine'], trl: 'lr_scheduler_type', help: 'How the learning rate changes over max_steps.' },
      { key: 'warmup_ratio', kind: 'number', step: 0.05, trl: 'warmup_ratio', help: 'Fraction of max_steps spent warming up from 0.' },
      { key: 'weight_decay', kind: 'number', step: 0.01, trl: 'weight_decay', help: 'Decoupled weight decay of AdamW.' },
      { key: 'max_grad_norm', kind: 'number', step: 0.1, nullable: true, trl: 'max_grad_norm', help: 'Clip the global gradient norm to this; empty = no clipping.' },
      { key: 'adam_beta1', kind: 'number', step: 0.01, trl: 'adam_beta1', help: 'AdamW first-moment decay.' },
      { key: 'adam_beta2', kind: 'number', step: 0.001, trl: 'adam_beta2', help: 'AdamW second-moment decay.' },
      { key: 'adam_epsilon', kind: 'number', step: 1e-9, trl: 'adam_epsilon', help: 'AdamW denominator epsilon.' },
    ],
  },
  {
    id: 'lora',
    title: 'LoRA',
    intro: 'Train small low-rank adapters on a frozen model instead of every weight (TRL ModelConfig, PEFT LoraConfig).',
    options: [
      { key: 'use_peft', kind: 'bool', trl: 'use_peft', help: 'Train LoRA adapters (PEFT) instead of all weights: far less memory for gradients and AdamW, the way real Hub models are trained here.' },
      { key: 'lora_r', kind: 'int', trl: 'lora_r', peft: 'r', help: 'Adapter rank: the width of each low-rank update B·A. Higher learns more, costs more memory.', when: peft },
      { key: 'lora_alpha', kind: 'number', step: 1, trl: 'lora_alpha', peft: 'lora_alpha', help: 'Adapter scale: the update is multiplied by lora_alpha / r (or / √r with use_rslora).', when: peft },
      { key: 'lora_dropout', kind: 'number', step: 0.01, trl: 'lora_dropout', peft: 'lora_dropout', help: 'Dropout on the adapter input while training (never while sampling).', when: peft },
      {
        key: 'lora_target_modules',
        kind: 'modules',
        trl: 'lora_target_modules',
        peft: 'target_modules',
        defaultText: "PEFT's default for the architecture (GPT-2: c_attn; Llama, Qwen: q_proj, v_proj)",
        help: 'Which linear layers get adapters: names separated by commas (GPT-2: c_attn, c_proj, c_fc; Llama and Qwen: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj), "all-linear", or empty for the default.',
        when: peft,
      },
      { key: 'use_rslora', kind: 'bool', trl: 'use_rslora', peft: 'use_rslora', help: 'Rank-stabilised LoRA: scale by lora_alpha / √r, so a higher rank does not shrink the update.', when: peft },
    ],
  },
  {
    id: 'run',
    title: 'Run',
    intro: 'Length, seed and safety of the run.',
    options: [
      { key: 'max_steps', kind: 'int', trl: 'max_steps', help: 'Optimizer steps in the run.' },
      { key: 'seed', kind: 'int', trl: 'seed', help: 'Seeds sampling and prompt order: the same seed reproduces the same first rollouts on the same device.' },
      {
        key: 'save_steps',
        kind: 'int',
        nullable: true,
        trl: 'save_steps',
        defaultText: 'auto',
        help: 'Checkpoint every N steps (and on pause); 0 = only on pause or stop. Empty = auto: every step while a checkpoint is at most 16 MB (a small model: a reload or a closed tab redoes nothing), else every 10 steps. The run view says which and how big.',
      },
      { key: 'on_nonfinite', kind: 'enum', values: ['skip_step', 'stop'], trl: null, help: 'When the loss or a gradient is NaN/Inf the update is skipped; then go on, or stop the run.' },
      {
        key: 'max_unscorable_fraction',
        kind: 'number',
        step: 0.05,
        trl: null,
        help: 'A step where more than this fraction of rollouts got no reward (the judge failed or could not answer) shows a warning with the first reason; 1 = never.',
      },
      {
        key: 'on_unscorable',
        kind: 'enum',
        values: ['warn', 'stop'],
        trl: null,
        help: 'When a step passes max_unscorable_fraction: warn and train on, or stop the run as failed with the reason (after saving that step).',
      },
      {
        key: 'judge_evidence_required',
        kind: 'bool',
        trl: null,
        help: 'Evidence-required credit: the model judge must quote the words of the response that meet each criterion; a pass whose quote is not found in the response (whitespace, case and quotation-mark differences allowed) scores 0 and is counted as withheld. Needs a judge that writes text (a remote endpoint, or self/model with judge_verdict "generative"): P(yes) judges cannot quote. Pitfalls are left alone.',
      },
      {
        key: 'vacuous_credit_probe',
        kind: 'bool',
        trl: null,
        help: 'The vacuous-credit probe: every quoted pass is judged again with the quoted words deleted; a pass that survives is flagged (counted per criterion per step), not changed. One more judge request per quoted pass.',
        when: (c) => c.judge_evidence_required === true,
      },
      {
        key: 'judge_verdict',
        kind: 'enum',
        values: ['logprob_margin', 'generative', 'pairwise'],
        trl: null,
        help: 'How a judge on this page (self, model) gives its verdict. logprob_margin: P("yes") read from one next-token distribution after the judge prompt (no text, no quote; one forward pass). generative: the judge writes one line, answer | quote: "…" | reason: …, greedy, parsed strictly: a line not in that form is unscorable with the reason, never a pass. Its quote feeds evidence-required credit. A remote endpoint always writes text; generative makes it use this line too. Costs a few dozen decoded tokens per verdict. pairwise: the judge reads two answers of a group in one prompt (Response A, Response B) and says which meets the criterion better — on this page the margin of P("A") vs P("B"), from a remote endpoint the one letter (anything else is unscorable) — every pair asked in both orders; an answer scores its share of wins in its group, and the judge meta panel\'s position bias is then the judge model\'s own. n·(n − 1) prompts per group and criterion (12 for 4 answers); no judge cache; self, model or remote only.',
      },
      {
        key: 'judge_scope',
        kind: 'enum',
        values: ['per_criterion', 'checklist'],
        trl: null,
        help: 'per_criterion: one judge call per response and criterion. checklist: one call per response sees all its judge questions and writes one numbered verdict line per criterion (a missing or doubled line is unscorable for that criterion). Fewer calls (the judge panel counts them), longer prompts. Needs a judge that writes text: judge_verdict "generative" on self/model, or a remote endpoint; the P(yes) margin answers one question per pass and is refused.',
      },
      {
        key: 'judge_external_fraction',
        kind: 'number',
        step: 0.05,
        trl: null,
        elsewhere: 'judge',
        help: 'Self-judging with an externally graded fraction (Self-Rewarding Rubric-Based RL): this share of each step\'s groups (whole groups, drawn from the seed and the step) is also judged by judge_external, whose verdicts replace the run\'s judge\'s on them. The judge meta panel shows, per step, their agreement per criterion, the run judge\'s leniency (its pass rate minus the external one\'s) and the external calls. 0 = off. Set in the Judge section.',
      },
      {
        key: 'judge_external',
        kind: 'enum',
        values: ['remote', 'model', 'zero_shot'],
        nullable: true,
        trl: null,
        elsewhere: 'judge',
        help: 'The external judge of judge_external_fraction: a remote OpenAI-compatible endpoint (its key is entered for its site, never stored in the experiment), another model on this page\'s engine, or a zero-shot classifier; not the policy itself, the rules or a probe. Set in the Judge section.',
      },
    ],
  },
];

export const ALL_OPTIONS: OptionSpec[] = SETTING_GROUPS.flatMap((g) => g.options);

/** Defaults of the nested aggregation settings that GRPO_DEFAULTS leaves undefined. */
const AGGREGATION_DEFAULTS: Record<string, unknown> = {
  pass_threshold: 0.5,
  gate_cap: 0,
  gate_base: 'weighted_mean',
  dropout_p: 0.3,
  dropout_aggregation: 'weighted_mean',
  adaptive_floor: 0.1,
  adaptive_tier_balance: true,
  fork_beta: 1,
  irt_judge_budget: null,
};

/** "a.b.c" → ["a", "b.c"]; a key without a dot → [key, undefined]. Nested keys go any depth (distillation.schedule.kind). */
function splitKey(key: string): [string, string | undefined] {
  const i = key.indexOf('.');
  return i < 0 ? [key, undefined] : [key.slice(0, i), key.slice(i + 1)];
}

export function getPath(obj: Record<string, unknown>, key: string): unknown {
  const [head, tail] = splitKey(key);
  if (tail === undefined) return obj[head];
  const inner = obj[head];
  return inner !== null && typeof inner === 'object' ? getPath(inner as Record<string, unknown>, tail) : undefined;
}

/** A copy of `obj` with `key` set; `undefined` removes it (and an emptied nested object, except reward_aggregation.method). */
export function setPath(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const [head, tail] = splitKey(key);
  const out = { ...obj };
  if (tail === undefined) {
    if (value === undefined) delete out[head];
    else out[head] = value;
    return out;
  }
  const inner = setPath((out[head] as Record<string, unknown> | undefined) ?? {}, tail, value);
  if (Object.keys(inner).length === 0) delete out[head];
  else out[head] = head === 'reward_aggregation' && inner.method === undefined ? { method: GRPO_DEFAULTS.reward_aggregation.method, ...inner } : inner;
  return out;
}

export function defaultOf(key: string): unknown {
  const value = getPath(GRPO_DEFAULTS as unknown as Record<string, unknown>, key);
  if (value !== undefined) return value;
  const [head, tail] = key.split('.', 2);
  return head === 'reward_aggregation' ? AGGREGATION_DEFAULTS[tail] : undefined;
}

export function formatValue(value: unknown): string {
  if (value === null) return 'none';
  if (typeof value === 'number') return String(value);
  return String(value);
}

/** The tooltip line: TRL name (and PEFT's), default, and TRL's default where the page's differs on purpose. */
export function trlNote(spec: OptionSpec): string {
  const name = spec.trl ? `TRL: ${spec.trl}` : 'not a TRL GRPOConfig option';
  const peftName = spec.peft ? ` · PEFT: ${spec.peft}` : '';
  const differs = trlDefaultNote(spec.key);
  return `${name}${peftName} · default ${spec.defaultText ?? formatValue(defaultOf(spec.key))}${differs ? ` · ${differs}` : ''}`;
}

/** How a target-modules value reads in its text field: names joined by ", ", "all-linear", or empty (default). */
export function modulesToText(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : '';
}

/**
 * A target-modules field's text as a config value: empty → undefined (PEFT's default),
 * "all-linear" as is, otherwise the names split on commas and spaces.
 */
export function modulesFromText(text: string): string[] | 'all-linear' | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (trimmed === 'all-linear') return 'all-linear';
  return trimmed.split(/[\s,]+/).filter((n) => n !== '');
}
