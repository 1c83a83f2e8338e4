import { describe, expect, it } from 'vitest';
import { entropyBonusGradient, entropyBonusMean, topEntropyMask } from '../../../src/rl/entropyBonus';

// Two sequences of L = 4: sequence 0 has 3 completion tokens, sequence 1 has 1.
const mask = [1, 1, 1, 0, 1, 0, 0, 0];
const H = [0.2, 1.0, 0.6, 9, 0.4, 9, 9, 9];

describe('TRL entropy bonus: a token mean over the trained tokens, whatever loss_type', () => {
  it('H̄ is the mean over completion tokens, not a per-sequence mean', () => {
    // Token mean: (0.2 + 1.0 + 0.6 + 0.4) / 4 = 0.55. (A per-sequence mean, grpo's policy
    // normaliser, would give (0.6 + 0.4) / 2 = 0.5; dr_grpo's Σ / (N L) 2.2 / 8 = 0.275.)
    expect(entropyBonusMean(H, mask, null)).toBeCloseTo(0.55, 12);
  });

  it('with the entropy mask, H̄ covers only the kept tokens', () => {
    const kept = [0, 1, 1, 0, 0, 0, 0, 0];
    expect(entropyBonusMean(H, mask, kept)).toBeCloseTo(0.8, 12);
  });

  it('the gradient is −coef · m e / (max(Σ m e, 1) · K)', () => {
    const g = entropyBonusGradient(mask, null, 0.01, 1);
    expect(Array.from(g)).toEqual(Array.from(Float32Array.from([-0.0025, -0.0025, -0.0025, 0, -0.0025, 0, 0, 0])));
    const kept = [0, 1, 1, 0, 0, 0, 0, 0];
    // Two kept tokens, two micro-batches: −0.01 / (2 · 2) = −0.0025 on each kept token.
    expect(Array.from(entropyBonusGradient(mask, kept, 0.01, 2))).toEqual(Array.from(Float32Array.from([0, -0.0025, -0.0025, 0, 0, 0, 0, 0])));
  });

  it('the gradient is that of the mean (finite differences)', () => {
    const coef = 0.3;
    const g = entropyBonusGradient(mask, null, coef, 1);
    const loss = (h: number[]) => -coef * entropyBonusMean(h, mask, null);
    for (let t = 0; t < H.length; t++) {
      const up = [...H];
      up[t] += 1e-4;
      expect(g[t]).toBeCloseTo((loss(up) - loss(H)) / 1e-4, 6);
    }
  });

  it('an empty micro-batch gives 0, never NaN', () => {
    expect(entropyBonusMean([1, 2], [0, 0], null)).toBe(0);
    expect(Array.from(entropyBonusGradient([0, 0], null, 0.1, 1))).toEqual([0, 0]);
  });

  it('refuses a non-finite coefficient and a bad micro-batch count', () => {
    expect(() => entropyBonusGradient(mask, null, NaN, 1)).toThrow(/entropy_coef/);
    expect(() => entropyBonusGradient(mask, null, 0.1, 0)).toThrow(/micro-batches/);
  });
});

describe('top-entropy mask', () => {
  it('keeps tokens at or above the (1 − ρ) quantile of the completion tokens only', () => {
    // Masked entropies sorted: 0.2, 0.4, 0.6, 1.0. ρ = 0.5 → quantile 0.5 at 1.5 → 0.5: keeps 0.6 and 1.0.
    expect(Array.from(topEntropyMask(H, mask, 0.5))).toEqual([0, 1, 1, 0, 0, 0, 0, 0]);
    // ρ = 1 keeps every completion token (and never a padding one, whatever its entropy).
    expect(Array.from(topEntropyMask(H, mask, 1))).toEqual([1, 1, 1, 0, 1, 0, 0, 0]);
    // ρ small keeps only the maximum.
    expect(Array.from(topEntropyMask(H, mask, 0.01))).toEqual([0, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('follows the entropies it is given (a new pass, a new mask)', () => {
    const later = [0.9, 0.1, 0.6, 9, 0.4, 9, 9, 9];
    expect(Array.from(topEntropyMask(later, mask, 0.5))).toEqual([1, 0, 1, 0, 0, 0, 0, 0]);
  });

  it('refuses ρ outside (0, 1]', () => {
    expect(() => topEntropyMask(H, mask, 0)).toThrow(/top_entropy_quantile/);
  });
});
