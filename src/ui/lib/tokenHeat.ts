// The token heatmap's data: one value per completion token for the quantity chosen (sampling
// log-prob, entropy, the ratio π_θ/π_old, advantage × token weight, and each token-credit source:
// evidence-span credit, entropy-pivot weight, CoRT contrast; and distillation's teacher–student
// divergence), a colour scale fitted to
// the rollouts on show, and the words that describe each value for the tooltip and screen readers.
import type { RolloutRecord } from '../../rl/grpoStep';
import { parseHex, type Rgb } from './contrast';
import { formatNumber } from './series';

/** A rollout with the per-token fields the trainer records (absent in runs saved before them). */
export type TokenRollout = RolloutRecord & {
  tokens?: string[];
  token_entropy?: number[];
  token_ratio?: number[];
  token_weight?: number[];
  token_span_credit?: number[];
  token_entropy_pivot?: number[];
  token_cort_contrast?: number[];
};

export type TokenQuantity = 'logprob' | 'entropy' | 'ratio' | 'advantage' | 'span' | 'pivot' | 'cort' | 'divergence';

export interface QuantitySpec {
  id: TokenQuantity;
  label: string;
  /** One sentence for the legend: what the colour means. */
  help: string;
}

export const TOKEN_QUANTITIES: readonly QuantitySpec[] = [
  { id: 'logprob', label: 'sampling log-prob', help: 'How likely the policy found each token when it sampled it: the deeper the colour, the more surprising the token.' },
  { id: 'entropy', label: 'entropy', help: 'How unsure the policy was at each position (entropy of its next-token distribution, in nats): the deeper, the more unsure.' },
  { id: 'ratio', label: 'ratio π_θ / π_old', help: 'How much the last update pass changed each token\'s probability: blue became more likely, orange less.' },
  { id: 'advantage', label: 'advantage × weight', help: 'The push each token got from the loss (its final weight, token credit included, times the advantage): blue pushed up, orange pushed down; tokens out of the loss get none.' },
  { id: 'span', label: 'span credit', help: 'Evidence-span credit (span_credit): each token\'s share of its completion\'s advantage, 1 = an even share. Blue tokens carry a criterion\'s evidence and get more, orange ones less.' },
  { id: 'cort', label: 'CoRT contrast', help: 'Counterfactual rubric context (cort_credit): how much more likely each token was with the rubric\'s criteria in the prompt (log-prob with − without). Blue tokens depend on the rubric and get more of the advantage, orange ones less.' },
  { id: 'divergence', label: 'distillation divergence', help: 'On-policy distillation: how far the policy\'s next-token distribution was from the teacher\'s at each token (first update pass, in nats): the deeper, the more the teacher disagreed.' },
  { id: 'pivot', label: 'entropy pivot weight', help: 'Entropy pivots (entropy_pivot_quantile): blue tokens were the most uncertain of their completion and get more of its advantage, orange ones less; 1 = an even share.' },
];

/** Quantities that are multipliers around 1 (token-credit sources): diverging around 1. */
const AROUND_ONE: readonly TokenQuantity[] = ['span', 'pivot'];
/** Token-credit sources: a missing value means the option was off. */
const CREDIT_SOURCES: readonly TokenQuantity[] = ['span', 'pivot', 'cort', 'divergence'];

export function quantitySpec(q: TokenQuantity): QuantitySpec {
  const spec = TOKEN_QUANTITIES.find((s) => s.id === q);
  if (!spec) throw new Error(`unknown token quantity "${q}"`);
  return spec;
}

/** The completion's tokens as text, or null for a rollout saved before token data was recorded. */
export function tokensOf(r: TokenRollout): string[] | null {
  return Array.isArray(r.tokens) ? r.tokens : null;
}

const finite = (x: number | undefined): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** One value per token (null: not recorded, not computed yet at this stage, or not finite). */
export function tokenValues(r: TokenRollout, q: TokenQuantity): (number | null)[] {
  const tokens = tokensOf(r) ?? [];
  return tokens.map((_, i) => {
    switch (q) {
      case 'logprob':
        return finite(r.logprobs[i]);
      case 'entropy':
        return finite(r.token_entropy?.[i]);
      case 'ratio':
        return finite(r.token_ratio?.[i]);
      case 'advantage': {
        const w = finite(r.token_weight?.[i]);
        return w === null ? null : finite(r.advantage * w);
      }
      case 'span':
        return finite(r.token_span_credit?.[i]);
      case 'pivot':
        return finite(r.token_entropy_pivot?.[i]);
      case 'cort':
        return finite(r.token_cort_contrast?.[i]);
      case 'divergence':
        return finite(r.token_divergence?.[i] ?? undefined);
    }
  });
}

/** Whether token i's advantage sign was flipped (a negative weight: CriPO's suppressed-criterion fix). */
export function flippedCredit(r: TokenRollout, i: number): boolean {
  const w = r.token_weight?.[i];
  return typeof w === 'number' && w < 0;
}

/** Whether token i is out of the loss (weight 0: masked truncated completion or below the entropy quantile). */
export function outOfLoss(r: TokenRollout, i: number): boolean {
  return r.token_weight?.[i] === 0;
}

export interface HeatScale {
  quantity: TokenQuantity;
  /** Sequential: no tint at the neutral end, full tint at `extent`. Diverging: orange below, blue above the centre. */
  kind: 'sequential' | 'diverging';
  /** The largest distance from the neutral point among the values (for the ratio: of ln ratio); 0 when none. */
  extent: number;
  /** Legend labels from the left end to the right end of the colour bar. */
  labels: string[];
}

/** A colour scale fitted to `values` (the rollouts on show), so small differences stay visible. */
export function heatScale(q: TokenQuantity, values: Iterable<number | null>): HeatScale {
  let extent = 0;
  for (const v of values) {
    if (v === null) continue;
    const d = q === 'logprob' ? -v : q === 'entropy' || q === 'divergence' ? v : q === 'ratio' ? Math.abs(Math.log(v)) : AROUND_ONE.includes(q) ? Math.abs(v - 1) : Math.abs(v);
    if (Number.isFinite(d) && d > extent) extent = d;
  }
  const f = formatNumber;
  switch (q) {
    case 'logprob':
      return { quantity: q, kind: 'sequential', extent, labels: ['0 (certain)', `${f(-extent)} (most surprising)`] };
    case 'entropy':
      return { quantity: q, kind: 'sequential', extent, labels: ['0 nats (sure)', `${f(extent)} nats (most unsure)`] };
    case 'divergence':
      return { quantity: q, kind: 'sequential', extent, labels: ['0 nats (as the teacher)', `${f(extent)} nats (furthest from it)`] };
    case 'ratio':
      return { quantity: q, kind: 'diverging', extent, labels: [f(Math.exp(-extent)), '1', f(Math.exp(extent))] };
    case 'advantage':
    case 'cort':
      return { quantity: q, kind: 'diverging', extent, labels: [f(-extent), '0', f(extent)] };
    case 'span':
    case 'pivot':
      return { quantity: q, kind: 'diverging', extent, labels: [f(1 - extent), '1', f(1 + extent)] };
  }
}

/** Where a value sits on the scale: [0, 1] for sequential, [−1, 1] for diverging; null for no value. */
export function heatPosition(scale: HeatScale, v: number | null): number | null {
  if (v === null) return null;
  if (scale.extent === 0) return 0;
  const clamp = (x: number, lo: number) => Math.min(1, Math.max(lo, x));
  switch (scale.quantity) {
    case 'logprob':
      return clamp(-v / scale.extent, 0);
    case 'entropy':
    case 'divergence':
      return clamp(v / scale.extent, 0);
    case 'ratio':
      return v > 0 ? clamp(Math.log(v) / scale.extent, -1) : -1;
    case 'advantage':
    case 'cort':
      return clamp(v / scale.extent, -1);
    case 'span':
    case 'pivot':
      return clamp((v - 1) / scale.extent, -1);
  }
}

// Full-strength tints, light enough that the page's ink (#1b1f24) keeps at least 4.5:1 contrast
// on every shade between white and them (checked by the tests). Blue/orange is colour-blind safe.
export const HEAT_COLORS = { neutral: '#ffffff', sequential: '#b78ad6', positive: '#4f94d4', negative: '#e8833a' } as const;

function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * t)) as unknown as Rgb;
}

/** The background of a token at scale position `p` (heatPosition), as [r, g, b]; null for no value. */
export function heatRgb(scale: HeatScale, p: number | null): Rgb | null {
  if (p === null) return null;
  const white = parseHex(HEAT_COLORS.neutral);
  if (scale.kind === 'sequential') return mix(white, parseHex(HEAT_COLORS.sequential), p);
  return mix(white, parseHex(p >= 0 ? HEAT_COLORS.positive : HEAT_COLORS.negative), Math.abs(p));
}

export function heatColor(scale: HeatScale, v: number | null): string | null {
  const rgb = heatRgb(scale, heatPosition(scale, v));
  return rgb === null ? null : `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
}

/** A CSS gradient for the legend's colour bar, from its left end to its right end. */
export function legendGradient(scale: HeatScale): string {
  const stops = scale.kind === 'sequential' ? [HEAT_COLORS.neutral, HEAT_COLORS.sequential] : [HEAT_COLORS.negative, HEAT_COLORS.neutral, HEAT_COLORS.positive];
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

/** The token as the tooltip quotes it: JSON-escaped, so spaces and line breaks are visible. */
export function quoteToken(token: string): string {
  return JSON.stringify(token);
}

/** "log-prob −2.31 (p 0.099)", "entropy 1.2 nats", "ratio 1.03", "advantage × weight 0.7 (out of the loss)". */
export function describeValue(q: TokenQuantity, v: number | null, out: boolean): string {
  const note = out ? ' (out of the loss)' : '';
  if (v === null) {
    const why = q === 'logprob' ? '' : CREDIT_SOURCES.includes(q) ? ' (its option is off, or not computed at this stage)' : ' (not computed at this stage, or not saved with this run)';
    return `${quantitySpec(q).label}: not recorded${why}${note}`;
  }
  switch (q) {
    case 'logprob':
      return `log-prob ${formatNumber(v)} (p ${formatNumber(Math.exp(v))})${note}`;
    case 'entropy':
      return `entropy ${formatNumber(v)} nats${note}`;
    case 'ratio':
      return `ratio ${formatNumber(v)}${note}`;
    case 'advantage':
      return `advantage × weight ${formatNumber(v)}${note}`;
    case 'span':
      return `span credit ×${formatNumber(v)}${note}`;
    case 'pivot':
      return `entropy pivot ×${formatNumber(v)}${note}`;
    case 'cort':
      return `CoRT contrast ${formatNumber(v)} nats${note}`;
    case 'divergence':
      return `distillation divergence ${formatNumber(v)} nats${note}`;
  }
}

/** What the page shows for a token: line breaks marked with ↵ (and kept), tabs with →. */
export function visibleToken(token: string): string {
  return token.replace(/\r?\n/g, '↵\n').replace(/\t/g, '→\t');
}
