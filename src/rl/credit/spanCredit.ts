// Evidence-span credit (RCCA, seed 000 #67; DRACO's closed-form redistribution, #94): each
// criterion's share of a rollout's advantage lands on the tokens of its evidence span, the rest is
// spread over the tokens in no span, so the total over the completion is conserved.
//
// For a rollout with n tokens and advantage A, active criteria K (weight != 0, scored) and, for
// criterion k with a span, its tokens T_k (non-empty):
//   share_k = |w_k| / Σ_{k' in K} |w_k'|                 (its part of the rubric, by weight)
//   d_j     = Σ_{k: j in T_k} share_k · n / |T_k|  +  r_j
//   r_j     = (1 − Σ_{k with a span} share_k) · n / |U|   for j in U = tokens in no span (else 0);
//             when U is empty, the rest goes to every token equally.
//   s_j     = (1 − λ) + λ d_j,   λ = span_credit in [0, 1]
// Σ_j d_j = n, so mean_j s_j = 1 and Σ_j s_j A = n A (the total advantage is conserved); s_j >= 0,
// so the sign of every token's advantage is the rollout's. A criterion without a span keeps its
// share spread over the unspanned tokens, as without span credit.

export interface SpanShare {
  /** |w_k| / Σ |w| over the rollout's active criteria. */
  share: number;
  /** Token indices of the criterion's evidence (may be empty: no localisation). */
  tokens: readonly number[];
}

/** The span-credit multipliers s_j of one completion of n tokens (mean 1; all 1 when λ = 0 or n = 0). */
export function spanCreditMultipliers(n: number, shares: readonly SpanShare[], lambda: number): Float64Array {
  const s = new Float64Array(n).fill(1);
  if (n === 0 || lambda === 0) return s;
  const spanned = shares.filter((x) => x.tokens.length > 0 && x.share > 0);
  if (spanned.length === 0) return s;
  const d = new Float64Array(n);
  const inSpan = new Uint8Array(n);
  let placed = 0;
  for (const { share, tokens } of spanned) {
    const unique = [...new Set(tokens)];
    for (const j of unique) {
      d[j] += (share * n) / unique.length;
      inSpan[j] = 1;
    }
    placed += share;
  }
  const rest = Math.max(0, 1 - placed);
  const free = n - inSpan.reduce((a, b) => a + b, 0);
  for (let j = 0; j < n; j++) {
    if (free > 0) d[j] += inSpan[j] ? 0 : (rest * n) / free;
    else d[j] += rest;
  }
  for (let j = 0; j < n; j++) s[j] = 1 - lambda + lambda * d[j];
  return s;
}
