// Stage 1 of a GRPO step, sampling, with the guided-exploration strategies composed in one place:
//   - rubric scaffolding (scaffold.ts): part of each group samples from the prompt plus some
//     criteria; those rollouts are labelled `guided`, judged and trained under the original prompt,
//     the sampling/training log-prob mismatch is measured (mismatch.ts) and, with scaffold_is_cap,
//     corrected by truncated importance weights on their tokens (importance.ts);
//   - dynamic sampling (dynamicSampling.ts): groups without reward variance are judged here and
//     resampled with other prompts, up to max_num_gen_batches rounds; the extra tokens and time
//     are reported.
// With every option off this is exactly one generate() call, as the step always made.
import { NO_TOKEN } from '../../ops/sample';
import { generate } from '../../model/generate';
import { aggregateGroup, judgeRollouts, scoresOf, type CriterionResult } from '../../rubric';
import { applyBias } from '../../rubric/bias';
import type { GrpoContext, RolloutRecord } from '../grpoStep';
import type { ProgressHook } from '../progress';
import { fillSlots, isLearnable, type SlotState } from './dynamicSampling';
import { importanceWeights } from './importance';
import { mismatchStats, scoreCompletions } from './mismatch';
import { planScaffolds, scaffoldProbability, type Scaffold } from './scaffold';
import { guidedOn, type GuidedMetrics } from './guided';

export { withImportanceWeights } from './importance';
export { guidedRollouts, type GuidedRows } from './guided';
export { rowScales, withRowScales } from './auxTerm';

/** How a rollout's sampling was guided (absent: sampled from the plain prompt, as GRPO does). */
export interface GuidedLabel {
  /** The strategy: 'scaffold' = RuscaRL rubric scaffolding, 'hindsight' = HeRL revision of a failed rollout, 'on_demand' = RISE-RL guidance for a failed group. */
  kind: 'scaffold' | 'hindsight' | 'on_demand';
  /** The text added to the sampling prompt (the rollout's `prompt` is the original one it is trained under). */
  guidance: string;
  /** Ids of the criteria the guidance named. */
  criteria: string[];
  /** Mean |log π(y_t|prompt) − log π(y_t|prompt + guidance)| over the tokens (absent when greedy). */
  logprob_gap?: number;
  /** exp(mean of that difference): the sequence's importance ratio original/guided (absent when greedy). */
  is_ratio?: number;
  /** hindsight: the index in its group of the failed rollout it revises, and its bonus herl_bonus · max(0, r' − r). */
  revises?: number;
  bonus?: number;
  /** on_demand: the group's natural mean reward it had to beat to be kept. */
  natural_mean?: number;
}

/** The hindsight / on-demand counts (guided.ts) are present when either option is on. */
export interface ExploreMetrics extends Partial<GuidedMetrics> {
  /** Generation rounds run (1 without dynamic sampling). */
  generation_rounds: number;
  /** Zero-variance groups sampled again with another prompt. */
  groups_resampled: number;
  /** Groups trained on with zero reward variance because max_num_gen_batches ran out (dynamic sampling only). */
  zero_std_groups_kept: number;
  /** Completion tokens sampled in all rounds (discarded groups included). */
  sampled_tokens: number;
  /** The part of sampled_tokens from rounds after the first: dynamic sampling's token cost. */
  extra_sampled_tokens: number;
  /** Seconds spent sampling and judging after the first round: dynamic sampling's time cost. */
  extra_seconds: number;
  /** The scaffolding probability of this step, p(step). */
  scaffold_prob: number;
  /** Rollouts trained on that were sampled with a scaffold. */
  scaffolded: number;
  /** Token mean |Δ log-prob| between the original and the scaffolded prompt; null without scaffolded rollouts or when greedy. */
  scaffold_logprob_gap: number | null;
  /** Token mean of the importance ratio π(y|prompt) / π(y|prompt + scaffold); null likewise. */
  scaffold_is_ratio_mean: number | null;
}

export interface ExploreHooks {
  signal?: AbortSignal;
  /** Prompts for dynamic sampling's round `round` (≥ 1); absent: the discarded groups' prompts again. */
  drawPrompts?: (count: number, round: number) => string[];
  /** Decode steps of each generate() call, with the rollouts' ids so far. */
  onProgress?: ProgressHook;
}

export interface SampledBatch {
  /** One prompt per group (dynamic sampling may have replaced some of the step's prompts). */
  prompts: string[];
  /** Sampled rollouts (reward, scores and advantage not yet filled in). */
  rollouts: RolloutRecord[];
  /** Per rollout, the prompt token ids the update trains under: always the original prompt. */
  trainPromptIds: number[][];
  completions: number[][];
  truncated: boolean[];
  /** Per rollout, the truncated importance weights of its completion tokens (scaffolded, scaffold_is_cap set), else null. */
  importance: (number[] | null)[];
  /** The judge's results per rollout when dynamic sampling has judged them already, else null. */
  results: CriterionResult[][] | null;
  tokensPerSecond: number;
  /** null when every exploration option is off (the step then has no exploration metrics). */
  metrics: ExploreMetrics | null;
}

interface Row {
  ids: number[];
  logprobs: number[];
  truncated: boolean;
  scaffold: Scaffold | null;
}

interface GroupDraw {
  prompt: string;
  promptIds: number[];
  rows: Row[];
  results: CriterionResult[][] | null;
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new DOMException('the step was stopped', 'AbortError');
}

/** One generate() call: G rollouts for each prompt, each row from its scaffolded or plain prompt. */
async function drawGroups(ctx: GrpoContext, step: number, round: number, prompts: readonly string[], slots: readonly number[], onProgress?: ProgressHook) {
  const cfg = ctx.config;
  const G = cfg.num_generations;
  const plans = prompts.map((_, i) => planScaffolds(ctx.rubric, cfg, { step, round, group: slots[i] }));
  const promptIds = prompts.map((p) => ctx.formatPrompt(p));
  const samplingIds = plans.flatMap((plan, g) => plan.map((s) => (s ? ctx.formatPrompt(prompts[g] + s.guidance) : promptIds[g])));
  // Row r draws from (seed, step, r); a later round mixes in its number, so it draws anew.
  const seed = (cfg.seed + step * 0x9e3779b9) >>> 0;
  const gen = await generate(
    ctx.model,
    samplingIds,
    { max_completion_length: cfg.max_completion_length, temperature: cfg.temperature, top_k: cfg.top_k, top_p: cfg.top_p, repetition_penalty: cfg.repetition_penalty, min_p: cfg.min_p, seed: round === 0 ? seed : (seed ^ Math.imul(round, 0x85ebca6b)) >>> 0 },
    { eosTokenId: ctx.tokenizer.eosTokenId, onChunk: onProgress && ((done, total, partial) => onProgress({ stage: 'sampling', done, total, partial })) },
  );
  // A row the sampler could not draw from (NaN/Inf logits) comes back as NO_TOKEN: the model's
  // weights or activations are not finite, and no rubric can score that.
  const broken = gen.completions.findIndex((ids) => ids.includes(NO_TOKEN));
  if (broken >= 0) {
    throw new Error(`step ${step}: the model's output is not finite (NaN or Inf logits while sampling rollout ${broken}): its weights are corrupt; reload the last good checkpoint or the starting model`);
  }
  const groups: GroupDraw[] = prompts.map((prompt, g) => ({
    prompt,
    promptIds: promptIds[g],
    rows: plans[g].map((scaffold, i) => ({ ids: gen.completions[g * G + i], logprobs: gen.logprobs[g * G + i], truncated: gen.truncated[g * G + i], scaffold })),
    results: null,
  }));
  const tokens = gen.completions.reduce((s, c) => s + c.length, 0);
  // generate()'s throughput counts batch × decode steps, padding included: keep that measure.
  return { groups, tokens, seconds: gen.seconds, decoded: gen.tokensPerSecond * gen.seconds };
}

/** Judges each drawn group (for the slot it would fill) and says which carry a learning signal. */
async function judgeForFilter(ctx: GrpoContext, step: number, groups: GroupDraw[], slots: readonly number[], signal?: AbortSignal): Promise<boolean[]> {
  const cfg = ctx.config;
  const rollouts = groups.flatMap((g) => g.rows.map((r) => ({ prompt: g.prompt, completion: ctx.tokenizer.decode(r.ids) })));
  const results = await judgeRollouts(ctx.rubric, ctx.rubricVersion, rollouts, { modelJudge: ctx.modelJudge, cache: ctx.judgeCache, signal });
  const G = cfg.num_generations;
  return groups.map((g, i) => {
    // The filter sees the reward the step trains on: with judge_bias, the biased one, drawn for the
    // slot the group fills (stage 2 applies the same draws again, which changes nothing).
    g.results = applyBias(ctx.rubric, results.slice(i * G, (i + 1) * G), rollouts.slice(i * G, (i + 1) * G).map((r) => r.completion), ctx.judgeBias, { seed: cfg.seed, step, offset: slots[i] * G });
    const scores = g.results.map((r) => scoresOf(ctx.rubric, r));
    // The same aggregation, with the same (seed, step, group), as stage 2 of the step.
    // irt_ability: under the item table as the previous step left it (stage 2 folds this step's verdicts in).
    const agg = aggregateGroup(ctx.rubric, scores, cfg.reward_aggregation, { seed: cfg.seed, step, group: slots[i], irt: ctx.irt ?? undefined });
    return isLearnable(agg.rewards, scores, { gdpo: cfg.multi_objective_aggregation === 'normalize_then_sum', keep: agg.keep });
  });
}

/** Stage 1 of grpoStep: the step's rollouts, guided and filtered as the config says. */
export async function sampleRollouts(ctx: GrpoContext, step: number, prompts: readonly string[], hooks: ExploreHooks = {}): Promise<SampledBatch> {
  const { config: cfg, tokenizer } = ctx;
  const G = cfg.num_generations;
  const rounds = cfg.dynamic_sampling ? cfg.max_num_gen_batches : 1;
  const slots: SlotState<GroupDraw>[] = prompts.map(() => ({ group: null, learnable: false }));
  let open = prompts.map((_, i) => i);
  let candidates = [...prompts];
  const m = { generation_rounds: 0, groups_resampled: 0, sampled_tokens: 0, extra_sampled_tokens: 0, extra_seconds: 0 };
  let genSeconds = 0;
  let decoded = 0;
  for (let round = 0; round < rounds && open.length > 0; round++) {
    if (round > 0) checkAbort(hooks.signal);
    const t = performance.now();
    const drawn = await drawGroups(ctx, step, round, candidates, open, hooks.onProgress);
    const learnable = cfg.dynamic_sampling ? await judgeForFilter(ctx, step, drawn.groups, open, hooks.signal) : drawn.groups.map(() => true);
    open = fillSlots(
      slots,
      open,
      drawn.groups.map((group, i) => ({ group, learnable: learnable[i] })),
    );
    m.generation_rounds++;
    m.sampled_tokens += drawn.tokens;
    genSeconds += drawn.seconds;
    decoded += drawn.decoded;
    if (round > 0) {
      m.extra_sampled_tokens += drawn.tokens;
      m.extra_seconds += (performance.now() - t) / 1000;
    }
    if (open.length > 0 && round + 1 < rounds) {
      m.groups_resampled += open.length;
      candidates = hooks.drawPrompts?.(open.length, round + 1) ?? open.map((s) => slots[s].group!.prompt);
      if (candidates.length !== open.length) throw new RangeError(`drawPrompts gave ${candidates.length} prompts for ${open.length} groups`);
    }
  }
  const groups = slots.map((s) => s.group!);

  const rows = groups.flatMap((g) => g.rows);
  const rollouts: RolloutRecord[] = rows.map((row, r) => {
    const g = groups[Math.floor(r / G)];
    return {
      step,
      group: Math.floor(r / G),
      index: r % G,
      prompt: g.prompt,
      completion: tokenizer.decode(row.ids),
      completion_ids: row.ids,
      logprobs: row.logprobs,
      tokens: row.ids.map((id) => tokenizer.decode([id])),
      truncated: row.truncated,
      ...(row.scaffold ? { guided: { kind: 'scaffold' as const, guidance: row.scaffold.guidance, criteria: row.scaffold.criteria.map((c) => c.id) } } : {}),
      results: [],
      scores: [],
      reward: null,
      advantage: 0,
    };
  });
  const trainPromptIds = groups.flatMap((g) => g.rows.map(() => g.promptIds));
  const completions = rows.map((r) => r.ids);

  // The scaffolded rows re-scored under the original prompt: the mismatch the update trains through.
  const scaffolded = rollouts.flatMap((r, i) => (r.guided ? [i] : []));
  let gap: number | null = null;
  let ratio: number | null = null;
  const importance: (number[] | null)[] = rollouts.map(() => null);
  if (scaffolded.length > 0 && cfg.temperature > 0) {
    checkAbort(hooks.signal);
    const original = await scoreCompletions(ctx.rt, ctx.model, scaffolded.map((i) => trainPromptIds[i]), scaffolded.map((i) => completions[i]), {
      padTokenId: tokenizer.padTokenId,
      temperature: cfg.temperature,
      maxSequences: cfg.per_device_train_batch_size ?? scaffolded.length,
    });
    const stats = mismatchStats(scaffolded.map((i) => rollouts[i].logprobs), original);
    scaffolded.forEach((i, j) => {
      Object.assign(rollouts[i].guided!, stats.per_rollout[j]);
      if (cfg.scaffold_is_cap !== null) importance[i] = importanceWeights(rollouts[i].logprobs, original[j], cfg.scaffold_is_cap);
    });
    gap = stats.logprob_gap;
    ratio = stats.is_ratio_mean;
  }

  const active = cfg.dynamic_sampling || cfg.scaffold_fraction > 0 || guidedOn(cfg);
  return {
    prompts: groups.map((g) => g.prompt),
    rollouts,
    trainPromptIds,
    completions,
    truncated: rows.map((r) => r.truncated),
    importance,
    results: cfg.dynamic_sampling ? groups.flatMap((g) => g.results!) : null,
    tokensPerSecond: genSeconds > 0 ? decoded / genSeconds : 0,
    metrics: active
      ? {
          ...m,
          zero_std_groups_kept: cfg.dynamic_sampling ? slots.filter((s) => !s.learnable).length : 0,
          scaffold_prob: scaffoldProbability(cfg, step),
          scaffolded: scaffolded.length,
          scaffold_logprob_gap: gap,
          scaffold_is_ratio_mean: ratio,
        }
      : null,
  };
}
