// Export to TRL, for users who outgrow the browser: the same experiment as
//  - train_grpo.py    TRL's GRPOTrainer with the same settings (GRPOConfig names are ours too);
//                     options TRL lacks become comments that say so;
//  - prompts.jsonl    the dataset, {"prompt": "..."} per line ({"prompt": [{"role": "user", ...}]}
//                     with `conversational`);
//  - rubric_reward.py the rubric and its aggregation as TRL reward functions: rule criteria in
//                     plain Python (no packages), judge_question criteria through an
//                     OpenAI-compatible endpoint whose key comes from an environment variable;
//  - README.md        how to run it, and what differs.
// User text (prompts, rubric, model id) reaches Python only inside string literals written by
// pyString, never in comments or code, so nothing in an experiment can inject Python.
import { describeExternalJudge } from '../rl/externalGrading';
import { strToU8, zipSync } from 'fflate';
import { AUTO_SAVE_STEPS_LARGE } from '../rl/checkpointPolicy';
import { trlDefaultNote, type GrpoConfig } from '../rl/config';
import { optimizerStepsPerGeneration } from '../rl/generationSlices';
import { parseExperiment } from '../rl/experiment';
import { rubricVersion, type QuestionCriterion, type Rubric, type Rule, type RuleCriterion } from '../rubric';
import { DEFAULT_DROPOUT_P } from '../rubric/aggregations';
import type { RubricEvolutionEvent } from '../rubric/evolve';
import { isHolistic, judgedRubric } from '../rubric/holistic';
import { DEFAULT_ADAPTIVE_FLOOR } from '../rubric/adaptive';
import { DEFAULT_FORK_BETA } from '../rubric/fork';
import { DEFAULT_GATE_CAP, DEFAULT_PASS_THRESHOLD } from '../rubric/aggregate';
import { toPythonRegex, type PythonRegex } from './python/pyRegex';
import template from './python/rubric_reward.py?raw';
import { cjkRanges } from './python/unicodeRanges';

export const REWARD_SPEC_FORMAT = 'rubric-playground-reward-spec';
export const REWARD_SPEC_VERSION = 1;

/** Environment variables the reward module reads for judge_question criteria. */
export const JUDGE_ENV = { url: 'RUBRIC_JUDGE_URL', model: 'RUBRIC_JUDGE_MODEL', apiKey: 'RUBRIC_JUDGE_API_KEY' } as const;

export interface TrlExportOptions {
  /** Default judge endpoint and model written into rubric_reward.py (the environment overrides them; a key is never written). */
  judgeUrl?: string;
  judgeModel?: string;
  /** The model TRL trains, when not the experiment's (the embedded model is not on the Hub). */
  modelId?: string;
  /** prompts.jsonl as chat messages, for chat models (the page applies their chat template). */
  conversational?: boolean;
  /** A run's evolution decisions, one per step (StepMetrics.rubric_evolution): the export writes the final accepted version and says the rubric evolved. */
  rubricEvolution?: readonly (RubricEvolutionEvent | undefined)[];
}

/** rare's writer, when it is the rule catalogue: its flaw checks are rules (exported as such), not model-written. */
const writerNote = (config: GrpoConfig) =>
  config.rubric_evolution === 'rare' && config.rubric_evolution_writer === 'catalogue' ? ', flaw checks from the rule catalogue (rubric_evolution_writer "catalogue": rules, not model-written)' : '';

/**
 * Online rubric evolution and TRL: TRL trains on one fixed reward, so the export writes one
 * rubric: the run's final accepted version when its rubric evolved, else the experiment's (the
 * pinned) one. The experiment with that rubric, and the README note saying which and why.
 */
export function finalRubricExperiment(experiment: unknown, config: GrpoConfig, events: readonly (RubricEvolutionEvent | undefined)[] = []): { experiment: unknown; note: string | null } {
  const accepted = events.filter((e): e is RubricEvolutionEvent => e?.outcome === 'accepted' && e.rubric !== undefined);
  const last = accepted[accepted.length - 1];
  if (!last) {
    if (config.rubric_evolution === 'off') return { experiment, note: null };
    return { experiment, note: `rubric_evolution "${config.rubric_evolution}"${writerNote(config)} (every ${config.rubric_evolution_every} steps, window ${config.rubric_evolution_window}): TRL trains on one fixed reward; the run's rubric did not evolve, so rubric_reward.py holds the experiment's rubric; evolution not applied` };
  }
  // The context's rubric carries holistic_likert's criterion; the export adds it again from the checklist.
  const rubric = { ...last.rubric!, criteria: last.rubric!.criteria.filter((c) => !isHolistic(c)) };
  const steps = accepted.map((e) => `step ${e.step + 1} (${e.strategy}: ${e.version!.slice(0, 12)}… from ${e.parent.slice(0, 12)}…)`).join(', ');
  return {
    experiment: { ...(experiment as Record<string, unknown>), rubric },
    note: `the run's rubric evolved (rubric_evolution "${config.rubric_evolution}"${writerNote(config)}): ${accepted.length} new version(s), from ${steps}; rubric_reward.py holds the final version ${last.version!.slice(0, 12)}…, and TRL trains on it from the first step (TRL has no rubric evolution)`,
  };
}

/** A parsed criterion; a regex rule also carries `python`, its Python translation; the holistic judge's (holistic_likert) is marked. */
export type SpecCriterion = (QuestionCriterion & { holistic?: true }) | (Omit<RuleCriterion, 'rule'> & { rule: Rule & { python?: PythonRegex } });

export interface RewardSpecRubric {
  name: string;
  version: string;
  criteria: SpecCriterion[];
  aggregation: {
    method: string;
    pass_threshold: number;
    gate_cap: number;
    gate_base: string;
    dropout_p: number;
    dropout_aggregation: string;
    adaptive_floor: number;
    adaptive_tier_balance: boolean;
    fork_beta: number;
  };
}

/** What rubric_reward.py embeds (SPEC_JSON). */
export interface RewardSpec {
  format: typeof REWARD_SPEC_FORMAT;
  version: typeof REWARD_SPEC_VERSION;
  num_generations: number;
  seed: number;
  reward: RewardSpecRubric;
  held_out?: RewardSpecRubric;
  judge: {
    url_env: string;
    model_env: string;
    api_key_env: string;
    url?: string;
    model?: string;
    temperature: number | null;
    max_tokens: number | null;
    timeout_s: number;
    max_attempts: number;
    backoff_s: number;
    max_backoff_s: number;
    concurrency: number;
  };
}

export interface TrlExport {
  /** File name → content. */
  files: Record<string, string>;
  /** Settings that do not carry over exactly (also written as comments in train_grpo.py). */
  notes: string[];
}

// ---- Python literals ----

/**
 * A Python string literal with the same value: ASCII only, every other character escaped
 * (\xHH, \uHHHH, \UHHHHHHHH; lone surrogates as \uDxxx), so any text is safe inside code.
 */
export function pyString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp === 0x0a) out += '\\n';
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0d) out += '\\r';
    else if (cp < 0x100) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** JSON text with every non-ASCII UTF-16 unit escaped (json.loads joins surrogate pairs back). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A Python literal for a JSON-like value (numbers, booleans, None, strings). */
function pyValue(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`${value} has no Python literal here`);
    return String(value);
  }
  if (typeof value === 'string') return pyString(value);
  throw new RangeError(`no Python literal for a ${typeof value}`);
}

// ---- the reward spec and module ----

function specRubric(rubric: Rubric, version: string, aggregation: RewardSpecRubric['aggregation']): RewardSpecRubric {
  return {
    name: rubric.name,
    version,
    criteria: rubric.criteria.map((c): SpecCriterion => {
      if (!('rule' in c)) return isHolistic(c) ? { ...structuredClone(c), holistic: true } : structuredClone(c);
      if (c.rule.kind !== 'regex') return structuredClone(c);
      return { ...structuredClone(c), rule: { ...c.rule, python: toPythonRegex(c.rule.pattern, c.rule.flags) } };
    }),
    aggregation,
  };
}

/**
 * irt_ability's reward depends on the item table the page fits over the whole run (online EM over
 * every verdict so far, src/rubric/irtOnline.ts); rubric_reward.py is called per batch with no
 * memory of earlier ones, so it could not give the same reward: the export is refused, saying so.
 */
export const IRT_EXPORT_REFUSAL =
  'reward_aggregation "irt_ability" cannot be exported to TRL: its reward depends on item parameters the page fits over the whole run by online EM (from every verdict so far), and rubric_reward.py, called once per batch with no memory of earlier batches, cannot reproduce them. Export with another reward aggregation, e.g. "weighted_mean"';

/** The spec rubric_reward.py embeds for an experiment (validated with parseExperiment). */
export async function rubricRewardSpec(experiment: unknown, options: TrlExportOptions = {}): Promise<RewardSpec> {
  const { rubric: checklist, heldOutRubric, config } = parseExperiment(experiment);
  const a = config.reward_aggregation;
  if (a.method === 'irt_ability') throw new Error(IRT_EXPORT_REFUSAL);
  // holistic_likert: rubric_reward.py asks the holistic criterion too, as the page's judges do.
  const rubric = judgedRubric(checklist, a.method);
  const spec: RewardSpec = {
    format: REWARD_SPEC_FORMAT,
    version: REWARD_SPEC_VERSION,
    num_generations: config.num_generations,
    seed: config.seed,
    reward: specRubric(rubric, await rubricVersion(rubric), {
      method: a.method,
      pass_threshold: a.pass_threshold ?? DEFAULT_PASS_THRESHOLD,
      gate_cap: a.gate_cap ?? DEFAULT_GATE_CAP,
      gate_base: a.gate_base ?? 'weighted_mean',
      dropout_p: a.dropout_p ?? DEFAULT_DROPOUT_P,
      dropout_aggregation: a.dropout_aggregation ?? 'weighted_mean',
      adaptive_floor: a.adaptive_floor ?? DEFAULT_ADAPTIVE_FLOOR,
      adaptive_tier_balance: a.adaptive_tier_balance ?? true,
      fork_beta: a.fork_beta ?? DEFAULT_FORK_BETA,
    }),
    judge: {
      url_env: JUDGE_ENV.url,
      model_env: JUDGE_ENV.model,
      api_key_env: JUDGE_ENV.apiKey,
      ...(options.judgeUrl ? { url: options.judgeUrl } : {}),
      ...(options.judgeModel ? { model: options.judgeModel } : {}),
      temperature: 0,
      max_tokens: 16,
      timeout_s: 30,
      max_attempts: 4,
      backoff_s: 0.5,
      max_backoff_s: 10,
      concurrency: 4,
    },
  };
  if (heldOutRubric) {
    // The trainer scores the held-out rubric with the plain weighted mean (src/rl/grpoStep.ts).
    spec.held_out = specRubric(heldOutRubric, await rubricVersion(heldOutRubric), {
      method: 'weighted_mean',
      pass_threshold: a.pass_threshold ?? DEFAULT_PASS_THRESHOLD,
      gate_cap: DEFAULT_GATE_CAP,
      gate_base: 'weighted_mean',
      dropout_p: DEFAULT_DROPOUT_P,
      dropout_aggregation: 'weighted_mean',
      adaptive_floor: DEFAULT_ADAPTIVE_FLOOR,
      adaptive_tier_balance: true,
      fork_beta: DEFAULT_FORK_BETA,
    });
  }
  return spec;
}

/** rubric_reward.py with the spec (and this engine's CJK script ranges) filled in. */
export function rubricRewardModule(spec: RewardSpec): string {
  const specMarker = '"@@RUBRIC_SPEC_JSON@@"';
  const cjkMarker = '"@@CJK_RANGES_JSON@@"';
  if (!template.includes(specMarker) || !template.includes(cjkMarker)) throw new Error('rubric_reward.py template lost its markers');
  return template.replace(specMarker, () => pyString(asciiJson(spec))).replace(cjkMarker, () => pyString(JSON.stringify(cjkRanges())));
}

// ---- train_grpo.py ----

interface Line {
  /** `name=value,` in the GRPOConfig call, or null for a comment-only line. */
  code: string | null;
  comment?: string;
}

const option = (name: string, value: unknown, comment?: string): Line => ({ code: `${name}=${pyValue(value)},`, comment });
const note = (comment: string): Line => ({ code: null, comment });
/** The comment on an option whose page default differs from TRL's on purpose. */
const pageDefault = (name: string): string | undefined => trlDefaultNote(name)?.replace('; here: ', "; the page's default: ") ?? undefined;

function unsupportedText(text: string, notes: string[]): string {
  notes.push(text);
  return text;
}

/**
 * The generation batch's lines. One optimizer step per batch: generation_batch_size, from which
 * TRL derives steps_per_generation = gradient_accumulation_steps. With the page's
 * steps_per_generation S > 1 (optimizer steps per batch; src/rl/generationSlices.ts): TRL's
 * steps_per_generation in accumulation steps, S × GRAD_ACCUM, and TRL derives the same
 * generation_batch_size from it (it refuses both at once).
 */
function generationBatchLines(c: GrpoConfig): Line[] {
  if (c.steps_per_generation === 1) {
    return [
      option('generation_batch_size', c.generation_batch_size, pageDefault('generation_batch_size')),
      { code: 'per_device_train_batch_size=PER_DEVICE_BATCH,', comment: 'one optimizer step per generation batch, as in the page' },
    ];
  }
  return [
    note(`generation_batch_size ${c.generation_batch_size}: TRL derives it as PER_DEVICE_BATCH x processes x steps_per_generation (it takes one of the two)`),
    { code: 'per_device_train_batch_size=PER_DEVICE_BATCH,', comment: `${c.steps_per_generation} optimizer steps per generation batch, as in the page` },
  ];
}

/** "… here: N steps = N × k optimizer steps" when a page step is several optimizer steps, else ''. */
function perGeneration(c: GrpoConfig, what: string): string {
  const k = optimizerStepsPerGeneration(c);
  if (k === 1) return '';
  const parts = [c.num_iterations > 1 ? `num_iterations ${c.num_iterations}` : '', c.steps_per_generation > 1 ? `steps_per_generation ${c.steps_per_generation}` : ''].filter(Boolean).join(' x ');
  return `the page's ${what} count generation batches, each ${k} optimizer steps (${parts}); TRL counts optimizer steps`;
}

/** GRPOConfig arguments for our options, and notes on what does not carry over. */
function configLines(c: GrpoConfig, notes: string[]): Line[] {
  const unsupported = (text: string) => note(unsupportedText(text, notes));
  const lines: Line[] = [
    note('Generation'),
    option('num_generations', c.num_generations),
    ...generationBatchLines(c),
    { code: 'gradient_accumulation_steps=GRAD_ACCUM,', comment: c.per_device_train_batch_size === null ? undefined : 'the page accumulated micro-batches the same way' },
    option('max_completion_length', c.max_completion_length, pageDefault('max_completion_length')),
    c.temperature > 0
      ? option('temperature', c.temperature)
      : option('temperature', 1e-3, unsupportedText('temperature 0 (greedy): TRL divides the logits by the temperature, so the export uses 0.001', notes)),
    option('top_p', c.top_p),
    option('top_k', c.top_k),
    note('Objective'),
    option('loss_type', c.loss_type),
    option('beta', c.beta),
    option('epsilon', c.epsilon),
    option('epsilon_high', c.epsilon_high, c.epsilon_high === null ? 'None: the same as epsilon' : undefined),
    option('num_iterations', c.num_iterations),
    ...(c.steps_per_generation > 1
      ? [{ code: 'steps_per_generation=TRL_STEPS_PER_GENERATION,', comment: `the page's steps_per_generation ${c.steps_per_generation} optimizer steps per generation batch; TRL counts accumulation steps` }]
      : []),
    option('scale_rewards', c.scale_rewards),
    option('mask_truncated_completions', c.mask_truncated_completions),
  ];
  // Options newer TRL releases added: written only when they differ from TRL's default.
  const newer: [keyof GrpoConfig, unknown][] = [
    ['importance_sampling_level', 'token'],
    ['multi_objective_aggregation', 'sum_then_normalize'],
    ['top_entropy_quantile', 1.0],
    ['entropy_coef', 0.0],
    ['delta', null],
    ['sapo_temperature_pos', 1.0],
    ['sapo_temperature_neg', 1.05],
    ['use_bias_correction_kl', false],
    ['repetition_penalty', 1.0],
    ['min_p', null],
    ['sync_ref_model', false],
    ['ref_model_mixup_alpha', 0.6],
    ['ref_model_sync_steps', 512],
  ];
  for (const [name, trlDefault] of newer) {
    if (c[name] !== trlDefault) lines.push(option(name, c[name], 'needs a recent TRL'));
  }
  if (c.kl_estimator !== 'k3') lines.push(unsupported(`kl_estimator "${c.kl_estimator}": TRL has no such option; its KL term is always k3`));
  if (c.dual_clip !== null) {
    lines.push(unsupported(`dual_clip ${c.dual_clip}: TRL has no dual-clip (its \`delta\` is a different, two-sided bound); not applied`));
  }
  // Guided exploration (src/rl/explore/): TRL's GRPOConfig can express none of it.
  if (c.dynamic_sampling) {
    lines.push(unsupported(`dynamic_sampling (max_num_gen_batches ${c.max_num_gen_batches}): TRL's GRPOConfig has no DAPO dynamic sampling (it only logs frac_reward_zero_std); zero-variance groups are trained as sampled`));
  }
  if (c.scaffold_fraction > 0) {
    lines.push(unsupported(`scaffold_fraction ${c.scaffold_fraction} (RuscaRL rubric scaffolding): TRL samples only from the dataset prompt; not applied`));
  }
  if (c.herl_fraction > 0) {
    lines.push(unsupported(`herl_fraction ${c.herl_fraction} (HeRL hindsight revision, herl_bonus ${c.herl_bonus}): TRL samples once per prompt and cannot add revised rollouts from failed ones and their unmet criteria; not applied`));
  }
  if (c.guidance_on_demand) {
    lines.push(unsupported(`guidance_on_demand (RISE-RL selective internalization: guidance_num_generations ${c.guidance_num_generations}, rise_aux_coef ${c.rise_aux_coef}): TRL has no guided rollouts for failed groups nor an auxiliary loss term; not applied`));
  }
  if (c.advantage_estimator === 'rank') lines.push(unsupported(`advantage_estimator "rank": TRL has no rank-based advantages; it uses "grpo"`));
  if (c.advantage_estimator === 'rloo') {
    lines.push(
      unsupported(
        `advantage_estimator "rloo": TRL's GRPOTrainer has no leave-one-out baseline (RLOO is its separate RLOOTrainer); it uses "grpo" with scale_rewards as set (scale_rewards="none" gives the RLOO advantages times (num_generations - 1) / num_generations)`,
      ),
    );
  }
  // Token credit (src/rl/credit/): TRL broadcasts one advantage to every completion token.
  if (c.span_credit > 0) {
    lines.push(unsupported(`span_credit ${c.span_credit} (RCCA/DRACO evidence-span credit): TRL gives every token the rollout's advantage and its reward functions return one float (no spans); not applied`));
  }
  if (c.cripo_flip) lines.push(unsupported('cripo_flip (CriPO suppressed-criterion flip): TRL has no per-token advantages; not applied'));
  if (c.entropy_pivot_quantile > 0) {
    lines.push(unsupported(`entropy_pivot_quantile ${c.entropy_pivot_quantile} (entropy-pivot credit, boost ${c.entropy_pivot_boost}): TRL has no entropy-weighted credit (top_entropy_quantile, which it has, masks tokens instead); not applied`));
  }
  if (c.cort_credit) {
    lines.push(unsupported(`cort_credit (CoRT counterfactual rubric-context weights, ${c.cort_weight_min}–${c.cort_weight_max}): TRL has no per-token advantage weights nor the extra scoring passes; not applied`));
  }
  if (c.credit_schedule !== 'constant' && (c.span_credit > 0 || c.entropy_pivot_quantile > 0 || c.cort_credit)) {
    lines.push(unsupported(`credit_schedule "${c.credit_schedule}": schedules the token credit above, which TRL cannot express; not applied`));
  }
  lines.push(...distillationLines(c, unsupported));
  lines.push(
    note('Optimizer'),
    option('learning_rate', c.learning_rate),
    option('weight_decay', c.weight_decay),
    option('max_grad_norm', c.max_grad_norm ?? 0.0, c.max_grad_norm === null ? 'no clipping' : undefined),
    option('adam_beta1', c.adam_beta1),
    option('adam_beta2', c.adam_beta2),
    option('adam_epsilon', c.adam_epsilon),
    option('lr_scheduler_type', c.lr_scheduler_type),
    option('warmup_ratio', c.warmup_ratio),
    option('max_steps', c.max_steps * optimizerStepsPerGeneration(c), [pageDefault('max_steps'), perGeneration(c, `max_steps ${c.max_steps}`)].filter(Boolean).join('; ') || undefined),
    option('seed', c.seed, 'TRL samples with its own generator: the same seed does not give the page\'s rollouts'),
  );
  // auto (null): TRL's checkpoints are whole models on disk, so the export keeps the page's interval for large checkpoints.
  const perGen = optimizerStepsPerGeneration(c);
  const saveNote = (n: number) => [pageDefault('save_steps'), perGeneration(c, `every ${n} steps`)].filter(Boolean).join('; ');
  if (c.save_steps === null) lines.push(option('save_steps', AUTO_SAVE_STEPS_LARGE * perGen, saveNote(AUTO_SAVE_STEPS_LARGE)));
  else if (c.save_steps > 0) lines.push(option('save_steps', c.save_steps * perGen, saveNote(c.save_steps)));
  else lines.push(option('save_strategy', 'no', 'save_steps 0: the page saved only on pause/stop; the model is saved at the end below'));
  if (c.on_nonfinite !== 'skip_step') {
    lines.push(unsupported(`on_nonfinite "${c.on_nonfinite}": TRL has no such option (the page stopped on a NaN/Inf loss)`));
  }
  if (c.on_unscorable !== 'warn' || c.max_unscorable_fraction !== 0.5) {
    lines.push(
      unsupported(
        `max_unscorable_fraction ${c.max_unscorable_fraction}, on_unscorable "${c.on_unscorable}": TRL has no such options: a rollout rubric_reward.py cannot score gets reward None, which TRL leaves out of its group without a warning or a stop`,
      ),
    );
  }
  if (c.judge_evidence_required) {
    lines.push(
      unsupported(
        `judge_evidence_required${c.vacuous_credit_probe ? ' with vacuous_credit_probe' : ''} (a judge pass counts only with a quote found in the response${c.vacuous_credit_probe ? '; quoted passes re-judged without the quote and flagged when they survive' : ''}): rubric_reward.py asks for the verdict only; not applied`,
      ),
    );
  }
  if (c.judge_verdict !== 'logprob_margin' || c.judge_scope !== 'per_criterion') {
    lines.push(
      unsupported(
        `judge_verdict "${c.judge_verdict}", judge_scope "${c.judge_scope}" (the page's judge ${c.judge_verdict === 'generative' ? 'writes a verdict line with a quote and a reason' : c.judge_verdict === 'pairwise' ? 'compares two completions of a group in one prompt, both orders, and scores each by its share of wins' : 'reads P(yes)'}${c.judge_scope === 'checklist' ? ', one call per completion for all its criteria' : ''}): rubric_reward.py asks its endpoint one criterion at a time for the answer only; not applied`,
      ),
    );
  }
  lines.push(
    note(`reward_aggregation ${JSON.stringify(c.reward_aggregation)}: implemented in rubric_reward.py`),
    ...(c.reward_aggregation.method === 'holistic_likert'
      ? [note('holistic_likert (RaR\'s implicit judge): TRL has no rubric judge; rubric_reward.py asks the RUBRIC_JUDGE_* endpoint for one 1-5 score per completion, (k - 1) / 4, and an answer that is not 1-5 gives reward None')]
      : []),
    ...(c.reward_aggregation.method === 'correlation_weights'
      ? [note('correlation_weights: rubric_reward.py estimates the criterion correlations from each call\'s completions, as the page does from each step\'s batch; with several processes each estimates from its own share')]
      : []),
    note('Logging'),
    option('logging_steps', 1),
    option('report_to', 'none'),
  );
  return lines;
}

/**
 * On-policy distillation (src/rl/distill/): GRPOTrainer has no distillation term. TRL's GKDTrainer
 * is its on-policy distillation (lmbda 1 = student samples only), but its teacher is a separate
 * model fed the student's own input ids: it has no privileged-context self-teacher. The lines say
 * so and give the GKDConfig settings that match, for a run that distils a separate teacher.
 */
function distillationLines(c: GrpoConfig, unsupported: (text: string) => Line): Line[] {
  const d = c.distillation;
  const modes = distillModeLines(c, unsupported);
  if (d.teacher === 'off') return modes;
  const topK = d.top_k === null ? '' : ` (it has no top_k: the page used the teacher's top ${d.top_k})`;
  const lmbda = Number.isInteger(d.lmbda) ? d.lmbda.toFixed(1) : String(d.lmbda);
  if (d.teacher === 'model') {
    // A separate teacher on the student's own prompt is what GKDTrainer does.
    const gkd = `GKDConfig(lmbda=${lmbda}, beta=${d.beta}, temperature=${d.temperature}, max_new_tokens=${c.max_completion_length}, teacher_model_name_or_path=${JSON.stringify((d.teacher_model ?? '').replace(/^hf:/, '').split('@')[0])})`;
    return [
      unsupported(`distillation teacher model ${JSON.stringify(d.teacher_model)}, mode "${d.mode}", weight ${d.weight}: GRPOTrainer has no distillation term; not applied`),
      note(`TRL's on-policy distillation with this teacher is GKDTrainer with ${gkd}${topK}${d.mode === 'mixed' ? '; it has no rubric reward to mix in' : ''}`),
      ...modes,
    ];
  }
  if (d.teacher === 'black_box') {
    // ROPD has no logits to distil: its effect is the rubric it induced, which only the run holds.
    const source = d.teacher_endpoint ? `the endpoint model ${JSON.stringify(d.teacher_endpoint.model)}` : `${d.teacher_responses?.length ?? 0} stored responses`;
    return [
      unsupported(
        `distillation teacher "black_box" (${source}; induced ${d.induce_every === null ? 'once, after the first step' : `every ${d.induce_every} steps`}, at most ${d.induce_max_criteria} criteria per prompt): TRL has no rubric induction from teacher-vs-student contrasts, and rubric_reward.py holds the experiment's rubric, not the induced version; to train on it, export the run's induced rubric version from the page and use it as the rubric; not applied`,
      ),
      ...modes,
    ];
  }
  if (d.teacher === 'criterion_injection') {
    return [
      unsupported(
        `distillation teacher "criterion_injection" (${d.teacher_weights} weights, weight ${d.weight}): each step, the rollouts of a group that met none of a criterion were distilled with forward KL toward the same model told that criterion (CriPO); GRPOTrainer has no distillation term, and GKDTrainer no per-group privileged prompt; not applied`,
      ),
      ...modes,
    ];
  }
  const what = `distillation teacher "${d.teacher}" (${d.teacher_weights} weights, the rubric's criteria in its prompt), mode "${d.mode}", weight ${d.weight}`;
  const gkd = `GKDConfig(lmbda=${lmbda}, beta=${d.beta}, temperature=${d.temperature}, max_new_tokens=${c.max_completion_length})`;
  return [
    unsupported(
      `${what}: GRPOTrainer has no distillation term${d.mode === 'pure' ? ' (this run trained on no reward at all: the GRPO script below trains on the rubric instead)' : ''}; not applied`,
    ),
    note(
      `TRL's on-policy distillation is GKDTrainer with ${gkd}${topK}, but its teacher_model sees the student's own prompt: the self_rubric teacher's privileged prompt (the prompt plus the rubric's criteria) needs a custom compute_loss`,
    ),
    ...modes,
  ];
}

/** Distillation's training modes (src/rl/distill/schedule.ts, selection.ts, ema.ts): what TRL lacks of them. */
function distillModeLines(c: GrpoConfig, unsupported: (text: string) => Line): Line[] {
  const d = c.distillation;
  const lines: Line[] = [];
  const s = d.schedule;
  if (s.kind === 'distill_then_rl') {
    lines.push(note(`schedule distill_then_rl: the page distilled for the first ${s.distill_steps} steps, then trained GRPO on the rubric with the teacher off. In TRL: GKDTrainer for ${s.distill_steps} steps, then this GRPO script from its checkpoint (MODEL_ID)`));
  }
  if (s.kind === 'ruft') {
    lines.push(
      unsupported(
        `schedule ruft (sft_steps ${s.sft_steps}, min_reward ${s.min_reward}): the page's first ${s.sft_steps} steps were rejection-sampling SFT on its own rollouts whose rubric reward was at least ${s.min_reward}; TRL has no such step (generate, score with rubric_reward.py, keep the passing ones, SFTTrainer on them, then this script); not applied`,
      ),
    );
  }
  if (d.teacher === 'off') return lines;
  if (d.top_entropy_quantile !== null && d.top_entropy_quantile < 1) lines.push(unsupported(`distillation top_entropy_quantile ${d.top_entropy_quantile}: GKDTrainer distils every completion token; not applied`));
  if (d.mask_special_tokens) lines.push(unsupported('distillation mask_special_tokens: GKDTrainer has no top-K support to mask; not applied'));
  if (d.teacher_weights === 'ema' && d.teacher !== 'model') lines.push(unsupported(`distillation teacher_weights "ema" (ema_decay ${d.ema_decay}): GKDTrainer's teacher is a fixed model; not applied`));
  return lines;
}

function render(lines: Line[], indent: string): string {
  return lines
    .map((l) => (l.code === null ? `${indent}# ${l.comment}` : `${indent}${l.code}${l.comment ? `  # ${l.comment}` : ''}`))
    .join('\n');
}

/** The page's model id as TRL's model argument: Hub ids lose "hf:" (and name their revision). */
function trlModelId(modelId: string, notes: string[]): string {
  if (!modelId.startsWith('hf:')) return modelId;
  const [id, revision] = modelId.slice(3).split('@');
  if (revision && revision !== 'main') notes.push(`the page trained revision "${revision}" of ${id}: pass model_init_kwargs={"revision": "${revision}"} in GRPOConfig to pin it`);
  return id;
}

function trainScript(pageModelId: string, config: GrpoConfig, hasHeldOut: boolean, notes: string[]): string {
  const gdpo = config.multi_objective_aggregation === 'normalize_then_sum';
  const modelId = trlModelId(pageModelId, notes);
  const embedded = modelId.startsWith('embedded/') || modelId.startsWith('/') || modelId.startsWith('local:');
  if (embedded) notes.push('the model is the page\'s own, not on the Hugging Face Hub: set MODEL_ID to a Hub model or to an exported checkpoint folder');
  if (gdpo && hasHeldOut) notes.push('the held-out rubric is not exported as a reward with normalize_then_sum (it would be normalised with the others)');
  const rewards = gdpo
    ? [
        'from rubric_reward import criterion_reward_funcs, criterion_reward_weights',
        '',
        '# normalize_then_sum (GDPO): one reward per criterion, weighted w_k / (sum of positive weights),',
        '# exactly as the page feeds its advantage kernel.',
        'REWARD_FUNCS = criterion_reward_funcs()',
        'REWARD_WEIGHTS = criterion_reward_weights()',
      ]
    : hasHeldOut
      ? [
          'from rubric_reward import held_out_reward, rubric_reward',
          '',
          '# The held-out rubric is logged only (weight 0: rewards/held_out_reward/mean). TRL sums rewards',
          '# with nansum, so a completion the trained rubric cannot score gets reward 0 while the held-out',
          '# one scores it, where the page leaves it out; remove held_out_reward to match the page exactly.',
          'REWARD_FUNCS = [rubric_reward, held_out_reward]',
          'REWARD_WEIGHTS = [1.0, 0.0]',
        ]
      : ['from rubric_reward import rubric_reward', '', 'REWARD_FUNCS = [rubric_reward]', 'REWARD_WEIGHTS = [1.0]'];
  return `"""Train with TRL's GRPOTrainer: an experiment exported by Rubric Playground.

Needs: pip install trl datasets   (written for TRL 1.x: GRPOConfig's option names and defaults)
Run:   python train_grpo.py       (several GPUs: accelerate launch train_grpo.py)
Files: prompts.jsonl (the prompts), rubric_reward.py (the rubric, as reward functions).
Judge criteria, if the rubric has any, need RUBRIC_JUDGE_URL, RUBRIC_JUDGE_MODEL and
RUBRIC_JUDGE_API_KEY in the environment (see rubric_reward.py).
"""

import os

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

${rewards.join('\n')}

MODEL_ID = ${pyString(modelId)}${embedded ? `
# This is the page's own model, not on the Hugging Face Hub: set MODEL_ID to a Hub model, or to
# a checkpoint folder exported with the run (config.json + model.safetensors; its tokenizer files too).` : ''}

${batchBlock(config)}

dataset = load_dataset("json", data_files="prompts.jsonl", split="train")

config = GRPOConfig(
    output_dir="grpo-output",
${render(configLines(config, notes), '    ')}
    reward_weights=REWARD_WEIGHTS,
)

${peftBlock(config)}trainer = GRPOTrainer(model=MODEL_ID, reward_funcs=REWARD_FUNCS, args=config, train_dataset=dataset${config.use_peft ? ', peft_config=peft_config' : ''})
trainer.train()
trainer.save_model(config.output_dir)
`;
}

/** PER_DEVICE_BATCH and GRAD_ACCUM (and TRL_STEPS_PER_GENERATION) in train_grpo.py. */
function batchBlock(config: GrpoConfig): string {
  const G = config.generation_batch_size;
  const S = config.steps_per_generation;
  if (S === 1) {
    return `# One optimizer step per generation batch, as in the page: the batch is split over the processes.
NUM_PROCESSES = int(os.environ.get("WORLD_SIZE", "1"))
if ${G} % NUM_PROCESSES != 0:
    raise SystemExit("generation_batch_size ${G} must be a multiple of the number of processes")
${config.per_device_train_batch_size === null
    ? `PER_DEVICE_BATCH = ${G} // NUM_PROCESSES
GRAD_ACCUM = 1`
    : `PER_DEVICE_BATCH = ${config.per_device_train_batch_size}  # per_device_train_batch_size, as in the page
if ${G} % (PER_DEVICE_BATCH * NUM_PROCESSES) != 0:
    raise SystemExit("generation_batch_size ${G} must be a multiple of ${config.per_device_train_batch_size} x the number of processes")
GRAD_ACCUM = ${G} // (PER_DEVICE_BATCH * NUM_PROCESSES)`}`;
  }
  const B = config.per_device_train_batch_size;
  return `# ${S} optimizer steps per generation batch of ${G}, as in the page (its steps_per_generation): an
# optimizer step is ${G / S} sequences split over the processes and accumulated over GRAD_ACCUM micro-batches.
# TRL counts steps_per_generation in those accumulation steps: ${S} x GRAD_ACCUM, from which it derives
# generation_batch_size = PER_DEVICE_BATCH x processes x steps_per_generation = ${G}.
NUM_PROCESSES = int(os.environ.get("WORLD_SIZE", "1"))
${B === null
    ? `if ${G / S} % NUM_PROCESSES != 0:
    raise SystemExit("an optimizer step's ${G / S} sequences must be a multiple of the number of processes")
PER_DEVICE_BATCH = ${G / S} // NUM_PROCESSES`
    : `PER_DEVICE_BATCH = ${B}  # per_device_train_batch_size, as in the page
if ${G / S} % (PER_DEVICE_BATCH * NUM_PROCESSES) != 0:
    raise SystemExit("an optimizer step's ${G / S} sequences must be a multiple of ${B} x the number of processes")`}
GRAD_ACCUM = ${G / S} // (PER_DEVICE_BATCH * NUM_PROCESSES)
TRL_STEPS_PER_GENERATION = ${S} * GRAD_ACCUM`;
}

/** LoRA (use_peft) as PEFT's LoraConfig, with TRL ModelConfig's option names in comments. */
function peftBlock(c: GrpoConfig): string {
  if (!c.use_peft) return '';
  const targets = c.lora_target_modules === null ? 'None  # PEFT\'s default modules for the architecture' : c.lora_target_modules === 'all-linear' ? '"all-linear"' : `[${c.lora_target_modules.map(pyString).join(', ')}]`;
  return `# LoRA, as the page trained it (TRL ModelConfig: use_peft, lora_r, lora_alpha, lora_dropout,
# lora_target_modules, use_rslora). Needs: pip install peft
from peft import LoraConfig

peft_config = LoraConfig(
    task_type="CAUSAL_LM",
    r=${c.lora_r},
    lora_alpha=${c.lora_alpha},
    lora_dropout=${c.lora_dropout},
    target_modules=${targets},
    use_rslora=${c.use_rslora ? 'True' : 'False'},
)

`;
}

function readme(notes: string[], hasJudge: boolean): string {
  return `# Rubric Playground experiment for TRL

- \`train_grpo.py\`: TRL's \`GRPOTrainer\` with the experiment's settings (\`python train_grpo.py\`).
- \`prompts.jsonl\`: the prompts, one JSON object per line.
- \`rubric_reward.py\`: the rubric and its aggregation as TRL reward functions. The rule criteria
  run with plain \`python3\`, no packages: \`python3 rubric_reward.py < rollouts.jsonl\` scores lines
  of \`{"prompt": ..., "completion": ...}\`.
${hasJudge ? `- Judge criteria are asked to an OpenAI-compatible endpoint: set \`${JUDGE_ENV.url}\`, \`${JUDGE_ENV.model}\`
  and \`${JUDGE_ENV.apiKey}\`. The key is read from the environment only; it is not in these files.
` : ''}
What does not carry over exactly:
${notes.length ? notes.map((n) => `- ${n}`).join('\n') : '- nothing beyond sampling: TRL draws its own random numbers, so rollouts differ from the page\'s.'}
`;
}

/** The TRL export of an experiment (validated first: throws the parsers' errors). */
export async function exportToTrl(experiment: unknown, options: TrlExportOptions = {}): Promise<TrlExport> {
  // rubric_evolution: the run's final (or pinned) rubric, and a note saying which.
  const final = finalRubricExperiment(experiment, parseExperiment(experiment).config, options.rubricEvolution);
  experiment = final.experiment;
  const { experiment: e, rubric, heldOutRubric, config } = parseExperiment(experiment);
  const spec = await rubricRewardSpec(experiment, options);
  const notes: string[] = final.note ? [final.note] : [];
  // The bias sandbox is a teaching device for reproducing reward hacking: the export trains on the clean rubric.
  // The probe judge's weights stay in the page (fitted to labels that never leave it).
  if (e.judge?.kind === 'probe') notes.push('judge "probe" (a linear probe on a judge model\'s hidden states, trained in the page from your labels) is not exported: rubric_reward.py asks its judge endpoint each judge question instead');
  if (e.judge_bias) notes.push(`judge_bias (the page's bias sandbox, ${e.judge_bias.kind} ×${e.judge_bias.strength}) is not exported: the exported reward is the unbiased rubric`);
  // Externally graded fraction (src/rl/externalGrading.ts): rubric_reward.py has one judge endpoint for every completion.
  if (config.judge_external_fraction > 0 && config.judge_external) {
    notes.push(`judge_external_fraction ${config.judge_external_fraction} (the page sent that share of each step's groups to the external judge, ${describeExternalJudge(config.judge_external)}, whose verdicts replaced the run's judge's there) is not exported: rubric_reward.py asks its one RUBRIC_JUDGE_* endpoint for every completion; point it at the external judge to grade everything with it`);
  }
  const files: Record<string, string> = {};
  files['train_grpo.py'] = trainScript(options.modelId ?? e.model, config, heldOutRubric !== null, notes);
  files['prompts.jsonl'] = e.prompts.map((p) => JSON.stringify({ prompt: options.conversational ? [{ role: 'user', content: p }] : p })).join('\n') + '\n';
  files['rubric_reward.py'] = rubricRewardModule(spec);
  const hasJudge = [rubric, heldOutRubric].some((r) => r?.criteria.some((c) => 'judge_question' in c));
  files['README.md'] = readme(notes, hasJudge);
  return { files, notes };
}

/** The TRL export as one zip (folder `trl-export/`). */
export async function exportToTrlZip(experiment: unknown, options: TrlExportOptions = {}): Promise<Uint8Array> {
  const { files } = await exportToTrl(experiment, options);
  return zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [`trl-export/${name}`, strToU8(text)])));
}
