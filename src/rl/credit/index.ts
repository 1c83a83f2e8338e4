// Token credit: how each rollout's advantage A_i is spread over its completion tokens. grpoStep
// calls tokenCredit() once, between the advantages and the update; the update multiplies the
// policy term of token j by the weight m_j (the loss kernel's token_weights), so the token's
// advantage is A_i m_j. Every source is an option here, composed in this order:
//   s_j  evidence-span credit (spanCredit.ts; span_credit)              mean 1, >= 0
//   k_j  counterfactual rubric-context credit (cort.ts; cort_credit)    mean 1, in [min, max]
//   g_j  entropy pivots (entropy.ts; entropy_pivot_quantile)             mean 1, >= 0
//   t_j  = s_j k_j g_j / mean(s k g)   (no rescaling when one source)    the targeted credit
//   m_j  = α(step) t_j + 1 − α(step)      (entropy.ts; credit_schedule)  mean 1
//   m_j  = −m_j on the suppressed criteria's spans when A_i < 0 (criteria.ts; cripo_flip)
//   m_j  = 0 for an unscorable rollout (no reward: its advantage is 0 and nothing is credited)
// Before the flip Σ_j A_i m_j = n A_i: the total advantage of a completion is conserved. TRL's
// top_entropy_quantile mask then multiplies m in the update (update.ts), as it multiplies 1.
// The criterion diagnostics (UC / SC) are computed on every step, with or without an option on.
import type { CriterionResult } from '../../rubric';
import { tokenCreditOn, type GrpoConfig } from '../config';
import type { TokenWeightSource } from '../update';
import { criterionDiagnostics, flipSuppressed, type CriterionDiagnostics } from './criteria';
import { cortWeights } from './cort';
import { creditScheduleAlpha, entropyPivotWeights, normaliseMean } from './entropy';
import { spanCreditMultipliers, type SpanShare } from './spanCredit';
import { tokenCharRanges, tokensInSpans, type Decode } from './tokenOffsets';

export { criterionDiagnostics, type CriterionDiagnostics } from './criteria';

export interface CreditRollout {
  group: number;
  completion: string;
  completion_ids: readonly number[];
  results: readonly CriterionResult[];
  scores: readonly (number | null)[];
  reward: number | null;
  advantage: number;
}

export interface TokenCreditInput {
  config: GrpoConfig;
  step: number;
  criteria: readonly { id: string; weight: number }[];
  rollouts: readonly CreditRollout[];
  groups: number;
  decode: Decode;
  /** The update batch's layout: positions per row, and the row position of completion token 0. */
  seqLen: number;
  completionStart: number;
  /** CoRT's scoring passes (cortPass.ts): per rollout, the per-token contrast; needed when cort_credit is on. */
  cortContrast?: (() => Promise<Float64Array[]>) | null;
}

/** What the inspector shows per rollout (one value per completion token). */
export interface CreditViews {
  /** s_j, or null when span credit is off. */
  span: number[] | null;
  /** g_j, or null when entropy pivots are off. */
  pivot: number[] | null;
  /** CoRT's contrast c_j (log-prob with the rubric − without), or null when cort_credit is off. */
  cortContrast: number[] | null;
  /** m_j, the final credit weight before the entropy mask. */
  weight: number[];
}

export interface TokenCreditResult {
  diagnostics: CriterionDiagnostics;
  /** The update's per-token weights; null when no credit option is on (every weight 1). */
  source: TokenWeightSource | null;
  /** Per rollout, after the update has asked for the weights (entropy pivots need its entropies). */
  views(): (CreditViews | null)[];
}

/** The pass threshold rollouts are judged against (the rubric aggregation's). */
export function passThreshold(config: GrpoConfig): number {
  return config.reward_aggregation.pass_threshold ?? 0.5;
}

interface Prepared {
  n: number;
  /** Span multipliers s (all 1 when span credit is off). */
  span: Float64Array;
  /** CoRT weights k and the contrasts behind them (null when cort_credit is off). */
  cort: Float64Array | null;
  contrast: Float64Array | null;
  /** Tokens whose sign flips (cripo_flip, negative advantage). */
  flip: number[];
  scorable: boolean;
}

function prepare(input: TokenCreditInput, r: CreditRollout, suppressed: readonly string[], contrast: Float64Array | null): Prepared {
  const cfg = input.config;
  const n = r.completion_ids.length;
  const scorable = r.reward !== null;
  const needSpans = scorable && n > 0 && (cfg.span_credit > 0 || (cfg.cripo_flip && suppressed.length > 0));
  const ranges = needSpans ? tokenCharRanges(input.decode, r.completion_ids, r.completion) : [];
  const byId = new Map(r.results.map((x) => [x.criterion_id, x]));
  const tokensOf = (id: string) => {
    const x = byId.get(id);
    return x && x.status === 'ok' && x.spans ? tokensInSpans(ranges, x.spans) : [];
  };
  let span: Float64Array = new Float64Array(n).fill(1);
  if (needSpans && cfg.span_credit > 0) {
    // Active: non-zero weight and judged (dropped criteria have no result).
    const active = input.criteria.filter((c, k) => c.weight !== 0 && r.scores[k] !== null && r.scores[k] !== undefined);
    const total = active.reduce((s, c) => s + Math.abs(c.weight), 0);
    const shares: SpanShare[] = total > 0 ? active.map((c) => ({ share: Math.abs(c.weight) / total, tokens: tokensOf(c.id) })) : [];
    span = spanCreditMultipliers(n, shares, cfg.span_credit);
  }
  const flip = cfg.cripo_flip && r.advantage < 0 && needSpans ? suppressed.flatMap(tokensOf) : [];
  const cort = contrast && n > 0 ? cortWeights(contrast, cfg.cort_weight_min, cfg.cort_weight_max) : null;
  return { n, span, cort, contrast, flip, scorable };
}

export async function tokenCredit(input: TokenCreditInput): Promise<TokenCreditResult> {
  const cfg = input.config;
  const diagnostics = criterionDiagnostics(input.criteria, input.rollouts, input.groups, passThreshold(cfg));
  if (!tokenCreditOn(cfg)) return { diagnostics, source: null, views: () => input.rollouts.map(() => null) };

  let contrasts: Float64Array[] | null = null;
  if (cfg.cort_credit) {
    if (!input.cortContrast) throw new Error('cort_credit is on but the step gave no scoring passes for it');
    contrasts = await input.cortContrast();
  }
  const prepared = input.rollouts.map((r, i) => prepare(input, r, diagnostics.suppressed[i], contrasts?.[i] ?? null));
  const alpha = creditScheduleAlpha(cfg.credit_schedule, input.step, cfg.credit_schedule_steps ?? cfg.max_steps);
  const pivotsOn = cfg.entropy_pivot_quantile > 0;
  const views: (CreditViews | null)[] = input.rollouts.map(() => null);
  const { seqLen: T, completionStart: at } = input;

  /** m of rollout b, from its completion tokens' entropies (pivots only). */
  const weightsOf = (b: number, entropy: ArrayLike<number> | null): Float64Array => {
    const p = prepared[b];
    const pivot = pivotsOn && entropy ? entropyPivotWeights(entropy, cfg.entropy_pivot_quantile, cfg.entropy_pivot_boost) : null;
    const sources = [cfg.span_credit > 0 ? p.span : null, p.cort, pivot].filter((x): x is Float64Array => x !== null);
    const product = Float64Array.from({ length: p.n }, (_, j) => sources.reduce((m, x) => m * x[j], 1));
    const targeted = sources.length > 1 ? normaliseMean(product) : product;
    const m = targeted.map((t) => alpha * t + 1 - alpha);
    flipSuppressed(m, p.flip);
    if (!p.scorable) m.fill(0);
    views[b] = {
      span: cfg.span_credit > 0 ? Array.from(p.span) : null,
      pivot: pivot ? Array.from(pivot) : null,
      cortContrast: p.contrast ? Array.from(p.contrast) : null,
      weight: Array.from(m),
    };
    return m;
  };

  const source: TokenWeightSource = {
    needsEntropy: pivotsOn,
    weightsFor(start, count, entropy) {
      const out = new Float32Array(count * T).fill(1);
      for (let b = start; b < start + count; b++) {
        const row = (b - start) * T + at;
        const n = prepared[b].n;
        const m = weightsOf(b, entropy ? entropy.subarray(row, row + n) : null);
        out.set(m, row);
      }
      return out;
    },
  };
  return { diagnostics, source, views: () => views };
}
