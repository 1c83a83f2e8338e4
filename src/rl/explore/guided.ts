// Stage 2b of a GRPO step: extra guided rollouts sampled from the judged groups, after the natural
// ones and in one generate() call:
//   - hindsight revision (HeRL, hindsight.ts): a failed rollout + its unmet criteria → a revision;
//   - guidance on demand (RISE-RL, onDemand.ts): a group that failed as a whole → rollouts guided
//     by the criteria it missed, kept only when they beat its natural mean.
// Every extra rollout is labelled `guided`, judged with the rubric (the same aggregation as its
// group), trained under the original prompt with truncated importance weights (guided_is_cap; the
// mismatch is measured as for scaffolds) and gets its advantage here, in float64. Revisions join
// the main term; kept on-demand rollouts form the auxiliary term (auxTerm.ts). With both options
// off this samples nothing and returns no rows.
import { NO_TOKEN } from '../../ops/sample';
import { generate } from '../../model/generate';
import { aggregateGroup, judgeRollouts, scoresOf, type Criterion, type Scores } from '../../rubric';
import { applyBias } from '../../rubric/bias';
import type { GrpoContext, RolloutRecord } from '../grpoStep';
import type { ProgressHook } from '../progress';
import type { Term } from './auxTerm';
import { fitGuidance } from './guidedBounds';
import { augmentedAdvantages, herlBonus, herlSlots, planRevisions } from './hindsight';
import { importanceWeights } from './importance';
import { mismatchStats, scoreCompletions } from './mismatch';
import { auxCoefficient, groupFailed, keepGuided, missedCriteria, naturalMean } from './onDemand';
import { scaffoldGuidance } from './scaffold';

export interface GuidedMetrics {
  /** HeRL revisions sampled and trained. */
  herl_revised: number;
  /** Revisions whose reward beat the failed answer's. */
  herl_improved: number;
  /** Mean HeRL bonus over the revisions; null without revisions. */
  herl_bonus_mean: number | null;
  /** Groups that failed as a whole and got guided rollouts (guidance on demand). */
  guidance_groups: number;
  /** On-demand rollouts kept (reward above the natural mean) and trained in the auxiliary term. */
  guidance_kept: number;
  /** On-demand rollouts dropped (reward at or below the natural mean): sampled, not trained. */
  guidance_dropped: number;
  /** The auxiliary term's coefficient c(step). */
  rise_aux_coef: number;
  /** Completion tokens sampled for hindsight and on-demand rollouts (kept or not): their cost. */
  guided_sampled_tokens: number;
  /** Token mean |Δ log-prob| between the original and the guided prompt over the trained extra rows; null without them or when greedy. */
  guided_logprob_gap: number | null;
  /** Planned guided rollouts not sampled: their prompt with one criterion still did not fit the context with max_completion_length. */
  guided_skipped: number;
}

export interface GuidedRows {
  /** Judged, with reward and advantage; index = num_generations + position among the group's extras. */
  rollouts: RolloutRecord[];
  /** The original prompt of each row, as token ids (what the update trains under). */
  trainPromptIds: number[][];
  completions: number[][];
  truncated: boolean[];
  advantages: number[];
  /** Truncated importance weights per row (null: guided_is_cap off, or greedy). */
  importance: (number[] | null)[];
  /** The loss term of each row: 'main' (revisions) or 'aux' (kept on-demand rollouts). */
  terms: Term[];
  /** c(step), the auxiliary term's coefficient. */
  auxCoef: number;
  /** null when both options are off. */
  metrics: GuidedMetrics | null;
}

interface Planned {
  group: number;
  kind: 'hindsight' | 'on_demand';
  guidance: string;
  criteria: Criterion[];
  /** HeRL: the index in its group of the failed rollout it revises. */
  source?: number;
}

export function guidedOn(cfg: GrpoContext['config']): boolean {
  return cfg.herl_fraction > 0 || cfg.guidance_on_demand;
}

/** The rubric aggregation's pass threshold, as the credit diagnostics use it. */
function passThreshold(cfg: GrpoContext['config']): number {
  return cfg.reward_aggregation.pass_threshold ?? 0.5;
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new DOMException('the step was stopped', 'AbortError');
}

/**
 * The step's extra guided rows from its judged natural rollouts (G per group, in group order,
 * with scores and rewards filled in). `trainPromptIds` are the natural rollouts' (original) prompts.
 */
export async function guidedRollouts(
  ctx: GrpoContext,
  step: number,
  natural: readonly RolloutRecord[],
  trainPromptIds: readonly number[][],
  hooks: { signal?: AbortSignal; onProgress?: ProgressHook } = {},
): Promise<GuidedRows> {
  const { config: cfg, tokenizer, rubric } = ctx;
  const G = cfg.num_generations;
  const groups = natural.length / G;
  const auxCoef = auxCoefficient(cfg, step);
  const empty: GuidedRows = { rollouts: [], trainPromptIds: [], completions: [], truncated: [], advantages: [], importance: [], terms: [], auxCoef, metrics: null };
  if (!guidedOn(cfg)) return empty;
  const threshold = passThreshold(cfg);
  const slots = herlSlots(cfg);
  const member = (g: number) => natural.slice(g * G, (g + 1) * G);

  // 1. Plan: revisions of each group's failed rollouts, and guided rollouts for failed groups.
  let planned: Planned[] = [];
  let helped = 0;
  for (let g = 0; g < groups; g++) {
    const rows = member(g);
    const rewards = rows.map((r) => r.reward);
    const scores = rows.map((r) => r.scores);
    if (slots > 0) {
      for (const rev of planRevisions(rubric.criteria, { rewards, scores, completions: rows.map((r) => r.completion) }, slots, threshold)) {
        planned.push({ group: g, kind: 'hindsight', guidance: rev.guidance, criteria: rev.unmet, source: rev.source });
      }
    }
    // Once c(step) has decayed to 0 the guidance is removed: nothing is sampled for it.
    if (cfg.guidance_on_demand && auxCoef > 0 && groupFailed(rewards, cfg.guidance_fail_threshold)) {
      helped++;
      const criteria = missedCriteria(rubric.criteria, scores, threshold);
      for (let i = 0; i < cfg.guidance_num_generations; i++) planned.push({ group: g, kind: 'on_demand', guidance: scaffoldGuidance(criteria), criteria });
    }
  }
  const metrics: GuidedMetrics = {
    herl_revised: 0,
    herl_improved: 0,
    herl_bonus_mean: null,
    guidance_groups: helped,
    guidance_kept: 0,
    guidance_dropped: 0,
    rise_aux_coef: auxCoef,
    guided_sampled_tokens: 0,
    guided_logprob_gap: null,
    guided_skipped: 0,
  };
  // Each guidance shortened to fit the context; what cannot fit even with one criterion is skipped.
  const room = ctx.model.config.maxPositions - cfg.max_completion_length;
  const fitted = planned.map((p) => fitGuidance(ctx.formatPrompt, room, natural[p.group * G].prompt, p, p.source === undefined ? null : member(p.group)[p.source].completion));
  metrics.guided_skipped = fitted.filter((ids) => ids === null).length;
  planned = planned.filter((_, j) => fitted[j] !== null);
  const samplingIds = fitted.filter((ids): ids is number[] => ids !== null);
  if (planned.length === 0) return { ...empty, metrics };
  checkAbort(hooks.signal);

  // 2. Sample them in one generate() call, each from its group's prompt plus its guidance.
  const seed = ((cfg.seed + step * 0x9e3779b9) ^ 0x5bd1e995) >>> 0;
  const gen = await generate(
    ctx.model,
    samplingIds,
    { max_completion_length: cfg.max_completion_length, temperature: cfg.temperature, top_k: cfg.top_k, top_p: cfg.top_p, repetition_penalty: cfg.repetition_penalty, min_p: cfg.min_p, seed },
    { eosTokenId: tokenizer.eosTokenId, onChunk: hooks.onProgress && ((done, total, partial) => hooks.onProgress!({ stage: 'sampling', done, total, partial })) },
  );
  if (gen.completions.some((ids) => ids.includes(NO_TOKEN))) {
    throw new Error(`step ${step}: the model's output is not finite (NaN or Inf logits while sampling guided rollouts): its weights are corrupt; reload the last good checkpoint or the starting model`);
  }
  metrics.guided_sampled_tokens = gen.completions.reduce((s, c) => s + c.length, 0);
  const records: RolloutRecord[] = planned.map((p, j) => {
    const ids = gen.completions[j];
    return {
      step,
      group: p.group,
      index: G, // renumbered once the kept rows are known
      prompt: natural[p.group * G].prompt,
      completion: tokenizer.decode(ids),
      completion_ids: ids,
      logprobs: gen.logprobs[j],
      tokens: ids.map((id) => tokenizer.decode([id])),
      truncated: gen.truncated[j],
      guided: { kind: p.kind, guidance: p.guidance, criteria: p.criteria.map((c) => c.id), ...(p.source !== undefined ? { revises: p.source } : {}) },
      results: [],
      scores: [],
      reward: null,
      advantage: 0,
    };
  });

  // 3. Judge them; each reward aggregated with its group's natural scores (same seed and group,
  //    so rubric_dropout drops the same criteria), the natural rewards left as they were.
  checkAbort(hooks.signal);
  const judged = await judgeRollouts(rubric, ctx.rubricVersion, records, { modelJudge: ctx.modelJudge, cache: ctx.judgeCache, signal: hooks.signal });
  const results = applyBias(rubric, judged, records.map((r) => r.completion), ctx.judgeBias, { seed: cfg.seed, step, offset: natural.length });
  records.forEach((r, j) => {
    r.results = results[j];
    r.scores = [...scoresOf(rubric, results[j])];
  });
  for (let g = 0; g < groups; g++) {
    const mine = records.filter((r) => r.group === g);
    if (mine.length === 0) continue;
    const all: Scores[] = [...member(g).map((r) => r.scores), ...mine.map((r) => r.scores)];
    // irt_ability: under the run's item table, this step's verdicts folded in (grpoStep's stage 2).
    const rewards = aggregateGroup(rubric, all, cfg.reward_aggregation, { seed: cfg.seed, step, group: g, irt: ctx.irt ?? undefined }).rewards.slice(G);
    mine.forEach((r, j) => (r.reward = rewards[j]));
  }

  // 4. Advantages (float64): revisions against their augmented group, with the bonus; on-demand
  //    rollouts kept above the natural mean, with A = r − μ_nat.
  const kept: { record: RolloutRecord; term: Term; advantage: number }[] = [];
  let bonusSum = 0;
  for (let g = 0; g < groups; g++) {
    const rows = member(g);
    const rewards = rows.map((r) => r.reward);
    const revisions = records.filter((r) => r.group === g && r.guided!.kind === 'hindsight');
    const trained = revisions.map((r) => {
      const original = rows[r.guided!.revises!].reward;
      const bonus = herlBonus(r.reward, original, cfg.herl_bonus);
      r.guided!.bonus = bonus;
      bonusSum += bonus;
      if (r.reward !== null && original !== null && r.reward > original) metrics.herl_improved++;
      return r.reward === null ? null : r.reward + bonus;
    });
    const adv = augmentedAdvantages(rewards, trained, cfg.scale_rewards);
    revisions.forEach((r, j) => kept.push({ record: r, term: 'main', advantage: adv[j] }));
    const mean = naturalMean(rewards);
    for (const r of records.filter((x) => x.group === g && x.guided!.kind === 'on_demand')) {
      r.guided!.natural_mean = mean;
      if (keepGuided(r.reward, mean)) {
        metrics.guidance_kept++;
        kept.push({ record: r, term: 'aux', advantage: r.reward! - mean });
      } else {
        metrics.guidance_dropped++;
      }
    }
  }
  metrics.herl_revised = records.filter((r) => r.guided!.kind === 'hindsight').length;
  metrics.herl_bonus_mean = metrics.herl_revised ? bonusSum / metrics.herl_revised : null;
  // Group order, and within a group after its G natural rollouts.
  kept.sort((a, b) => a.record.group - b.record.group);
  const next = new Map<number, number>();
  for (const k of kept) {
    const i = next.get(k.record.group) ?? G;
    k.record.index = i;
    k.record.advantage = k.advantage;
    next.set(k.record.group, i + 1);
  }
  const rollouts = kept.map((k) => k.record);
  const promptIds = rollouts.map((r) => trainPromptIds[r.group * G]);

  // 5. The mismatch under the original prompt, and the importance weights (guided_is_cap).
  const importance: (number[] | null)[] = rollouts.map(() => null);
  if (rollouts.length > 0 && cfg.temperature > 0) {
    checkAbort(hooks.signal);
    const original = await scoreCompletions(ctx.rt, ctx.model, promptIds, rollouts.map((r) => r.completion_ids), {
      padTokenId: tokenizer.padTokenId,
      temperature: cfg.temperature,
      maxSequences: cfg.per_device_train_batch_size ?? rollouts.length,
    });
    const stats = mismatchStats(rollouts.map((r) => r.logprobs), original);
    rollouts.forEach((r, j) => {
      Object.assign(r.guided!, stats.per_rollout[j]);
      if (cfg.guided_is_cap !== null) importance[j] = importanceWeights(r.logprobs, original[j], cfg.guided_is_cap);
    });
    metrics.guided_logprob_gap = stats.logprob_gap;
  }
  return {
    rollouts,
    trainPromptIds: promptIds,
    completions: rollouts.map((r) => r.completion_ids),
    truncated: rollouts.map((r) => r.truncated),
    advantages: kept.map((k) => k.advantage),
    importance,
    terms: kept.map((k) => k.term),
    auxCoef,
    metrics,
  };
}
