// The float64 twin of the policy-loss kernel: hand-computed cases (clipping, dual clip, each
// loss_type's normaliser, k1/k2/k3, GSPO), option checks, and finite-difference gradients.
// Tolerances: hand cases are exact up to float64 rounding (toBeCloseTo 12 digits); central
// differences with h = 1e-6 in float64 are accurate to ~1e-10 here, so gradients must agree
// within 1e-8 + 1e-6 |g|. FD points are moved away from the clip / dual-clip kinks first.
import { describe, expect, it } from 'vitest';
import {
  CLIPPED_LOSS_TYPES,
  IMPORTANCE_SAMPLING_LEVELS,
  KL_ESTIMATORS,
  LOSS_TYPES,
  policyLossRef,
  resolvePolicyLossOptions,
  type PolicyLossOptions,
  type PolicyLossProblem,
} from '../../src/ops/policyLoss.reference';
import { normal, rng, uniform } from '../helpers/random';

const DIGITS = 12;

/** N sequences of one token each, with ratio rho_i = exp(logp - old) and advantage A_i. */
function singleTokens(cases: [a: number, rho: number][], options: Partial<PolicyLossOptions>): PolicyLossProblem {
  return {
    n: cases.length,
    l: 1,
    logprobs: cases.map(() => -1),
    oldLogprobs: cases.map(([, rho]) => -1 - Math.log(rho)),
    mask: cases.map(() => 1),
    advantages: cases.map(([a]) => a),
    options,
  };
}

describe('policy loss twin: hand-computed cases', () => {
  it('clips low and high, with the pessimistic branch winning for the other sign of A', () => {
    // eps = 0.2, eps_high = 0.28: clip range [0.8, 1.28]. dapo over 4 tokens: c = 1/4.
    //   A=+1 rho=1.5: -min(1.5, 1.28)  = -1.28, clipped high, grad 0
    //   A=-1 rho=0.5: -min(-0.5, -0.8) =  0.8,  clipped low,  grad 0
    //   A=+1 rho=0.5: -min(0.5, 0.8)   = -0.5,  unclipped,    grad c * (-A) * rho = -0.125
    //   A=-1 rho=1.5: -min(-1.5,-1.28) =  1.5,  unclipped,    grad c * (-A) * rho =  0.375
    const out = policyLossRef(singleTokens([[1, 1.5], [-1, 0.5], [1, 0.5], [-1, 1.5]], { epsilon: 0.2, epsilonHigh: 0.28 }));
    expect(out.loss).toBeCloseTo((-1.28 + 0.8 - 0.5 + 1.5) / 4, DIGITS);
    expect(out.policyLoss).toBeCloseTo(out.loss, DIGITS);
    const expected = [0, 0, -0.125, 0.375];
    expected.forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
    expect(out.clipRatioLow).toBeCloseTo(0.25, DIGITS);
    expect(out.clipRatioHigh).toBeCloseTo(0.25, DIGITS);
    expect(out.clipRatioRegion).toBeCloseTo(0.5, DIGITS);
    expect(out.ratioMean).toBeCloseTo(1, DIGITS);
    expect(out.dualClipRatio).toBe(0);
    expect(out.klMean).toBeNull();
    expect(out.entropyMean).toBeNull();
    expect(out.gradEntropy).toBeNull();
  });

  it('epsilon_high defaults to epsilon', () => {
    // rho = 1.25 with A = +1: inside [0.8, 1.28] but above 1.2 when eps_high = eps = 0.2.
    const asym = policyLossRef(singleTokens([[1, 1.25]], { epsilon: 0.2, epsilonHigh: 0.28 }));
    const sym = policyLossRef(singleTokens([[1, 1.25]], { epsilon: 0.2 }));
    expect(asym.loss).toBeCloseTo(-1.25, DIGITS);
    expect(asym.gradLogprobs[0]).toBeCloseTo(-1.25, DIGITS);
    expect(sym.loss).toBeCloseTo(-1.2, DIGITS);
    expect(sym.gradLogprobs[0]).toBe(0);
    expect(sym.clipRatioHigh).toBe(1);
  });

  it('dual clip caps the loss of negative advantages at -c A', () => {
    // c = 3. A=-1 rho=4: PPO loss 4 > 3 -> 3, grad 0, dual active.
    //        A=-1 rho=2: PPO loss 2 < 3 -> unchanged, grad c * 1 * 2.
    //        A=+1 rho=4: never dual-clipped: -1.2 (clip high), grad 0.
    //        A=-2 rho=1.5: PPO loss 3 < -cA = 6, unchanged, grad c * 2 * 1.5.
    const cases: [number, number][] = [[-1, 4], [-1, 2], [1, 4], [-2, 1.5]];
    const out = policyLossRef(singleTokens(cases, { dualClip: 3 }));
    const c = 1 / 4;
    expect(out.loss).toBeCloseTo(c * (3 + 2 - 1.2 + 3), DIGITS);
    [0, c * 2, 0, c * 2 * 1.5].forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
    expect(out.dualClipRatio).toBeCloseTo(0.25, DIGITS);
    expect(out.clipRatioHigh).toBeCloseTo(0.25, DIGITS);
    const off = policyLossRef(singleTokens(cases, {}));
    expect(off.loss).toBeCloseTo(c * (4 + 2 - 1.2 + 3), DIGITS);
    expect(off.gradLogprobs[0]).toBeCloseTo(c * 4, DIGITS);
    expect(off.dualClipRatio).toBe(0);
  });

  it('a tie with the dual-clip cap is not counted as dual-clipped', () => {
    const out = policyLossRef(singleTokens([[-1, 3]], { dualClip: 3 }));
    expect(out.loss).toBeCloseTo(3, DIGITS);
    expect(out.dualClipRatio).toBe(0);
    expect(out.gradLogprobs[0]).toBeCloseTo(3, DIGITS);
  });

  describe('normalisers', () => {
    // Ratio 1 (no old log-probs), so each token's l = -A. Sequence 0: A = 1, two tokens;
    // sequence 1: A = -3, one token. Token sums: -2 and +3.
    const base: PolicyLossProblem = {
      n: 2,
      l: 3,
      logprobs: [-1, -2, -3, -0.5, -0.7, -0.9],
      mask: [1, 1, 0, 1, 0, 0],
      advantages: [1, -3],
    };
    const cases: [Partial<PolicyLossOptions>, number, number[]][] = [
      // grpo: (1/N) sum_i (sum_t l / |o_i|) = (1/2)(-2/2 + 3/1) = 1; c = 1/(|o_i| N)
      [{ lossType: 'grpo' }, 1, [-1 / 4, -1 / 4, 0, 3 / 2, 0, 0]],
      // bnpo: sum l / sum m = 1/3
      [{ lossType: 'bnpo' }, 1 / 3, [-1 / 3, -1 / 3, 0, 1, 0, 0]],
      // dapo (default): same as bnpo with num_items_in_batch = sum m
      [{}, 1 / 3, [-1 / 3, -1 / 3, 0, 1, 0, 0]],
      [{ lossType: 'dapo', numItemsInBatch: 10 }, 1 / 10, [-1 / 10, -1 / 10, 0, 3 / 10, 0, 0]],
      // dr_grpo: sum l / (N * max_completion_length), default L = 3
      [{ lossType: 'dr_grpo' }, 1 / 6, [-1 / 6, -1 / 6, 0, 3 / 6, 0, 0]],
      [{ lossType: 'dr_grpo', maxCompletionLength: 5 }, 1 / 10, [-1 / 10, -1 / 10, 0, 3 / 10, 0, 0]],
    ];
    for (const [options, loss, grad] of cases) {
      it(JSON.stringify(options), () => {
        const out = policyLossRef({ ...base, options });
        expect(out.loss).toBeCloseTo(loss, DIGITS);
        grad.forEach((g, k) => expect(out.gradLogprobs[k], `grad[${k}]`).toBeCloseTo(g, DIGITS));
        expect(out.ratioMean).toBeCloseTo(1, DIGITS);
        expect(out.maskSum).toBe(3);
      });
    }

    it('grpo gives an all-zero-mask row no weight and no gradient', () => {
      const out = policyLossRef({ n: 2, l: 2, logprobs: [-1, -1, -1, -1], mask: [1, 1, 0, 0], advantages: [2, 5], options: { lossType: 'grpo' } });
      // (1/2)(-2 * 2 / 2) = -1
      expect(out.loss).toBeCloseTo(-1, DIGITS);
      expect(Array.from(out.gradLogprobs)).toEqual([-0.5, -0.5, 0, 0]);
    });
  });

  describe('KL estimators (logp = -1, ref = -1.5, Delta = -0.5, beta = 0.1, A = 0)', () => {
    const e = Math.exp(-0.5);
    const cases: [PolicyLossOptions['klEstimator'], number, number][] = [
      ['k1', 0.5, 1],
      ['k2', 0.125, 0.5],
      ['k3', e + 0.5 - 1, 1 - e],
    ];
    for (const [klEstimator, d, dd] of cases) {
      it(klEstimator, () => {
        const out = policyLossRef({
          n: 1,
          l: 1,
          logprobs: [-1],
          refLogprobs: [-1.5],
          mask: [1],
          advantages: [0],
          options: { beta: 0.1, klEstimator },
        });
        expect(out.klMean).toBeCloseTo(d, DIGITS);
        expect(out.loss).toBeCloseTo(0.1 * d, DIGITS);
        expect(out.policyLoss).toBeCloseTo(0, DIGITS);
        expect(out.gradLogprobs[0]).toBeCloseTo(0.1 * dd, DIGITS);
      });
    }

    it('k3 defaults; with beta = 0 ref_logprobs only feeds kl_mean', () => {
      const p: PolicyLossProblem = { n: 1, l: 1, logprobs: [-1], refLogprobs: [-1.5], mask: [1], advantages: [1] };
      const out = policyLossRef(p);
      expect(out.klMean).toBeCloseTo(e - 0.5, DIGITS);
      expect(out.loss).toBeCloseTo(-1, DIGITS);
      expect(out.gradLogprobs[0]).toBeCloseTo(-1, DIGITS);
    });
  });

  describe('GSPO sequence ratio', () => {
    // log r = [0.1, 0.3, 5 (masked)] -> s = exp(0.2) = 1.2214, inside [0.8, 1.28].
    const p: PolicyLossProblem = {
      n: 1,
      l: 3,
      logprobs: [-1, -1, -1],
      oldLogprobs: [-1.1, -1.3, -6],
      mask: [1, 1, 0],
      advantages: [1],
      options: { importanceSamplingLevel: 'sequence', epsilonHigh: 0.28 },
    };
    const s = Math.exp(0.2);

    it('uses one ratio per sequence and spreads the gradient over the mean', () => {
      const out = policyLossRef(p);
      // dapo, two tokens, each l = -s: loss = -s; d loss/d logp_t = -s / 2 for the active tokens.
      expect(out.loss).toBeCloseTo(-s, DIGITS);
      expect(out.ratioMean).toBeCloseTo(s, DIGITS);
      [-s / 2, -s / 2, 0].forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
      // The token-level loss of the same inputs differs: -(e^0.1 + 1.28 clipped) / 2.
      const tok = policyLossRef({ ...p, options: { epsilonHigh: 0.28 } });
      expect(tok.loss).toBeCloseTo(-(Math.exp(0.1) + 1.28) / 2, DIGITS);
    });

    it('clips the sequence ratio as a whole', () => {
      const out = policyLossRef({ ...p, options: { importanceSamplingLevel: 'sequence', epsilon: 0.2 } });
      expect(out.loss).toBeCloseTo(-1.2, DIGITS);
      expect(Array.from(out.gradLogprobs)).toEqual([0, 0, 0]);
      expect(out.clipRatioHigh).toBe(1);
    });
  });

  it('token weights scale only the policy term; the entropy bonus has gradient -coef c', () => {
    const out = policyLossRef({
      n: 1,
      l: 2,
      logprobs: [-1, -2],
      refLogprobs: [-1, -2.5], // k1: D = [0, 0.5]
      mask: [1, 1],
      advantages: [2],
      tokenWeights: [0.5, 3],
      entropy: [1.5, 0.25],
      options: { beta: 0.2, klEstimator: 'k1', entropyCoef: 0.1 },
    });
    // c = 1/2; L = w(-2) + 0.2 D - 0.1 H
    const l0 = 0.5 * -2 + 0 - 0.1 * 1.5;
    const l1 = 3 * -2 + 0.2 * 0.5 - 0.1 * 0.25;
    expect(out.loss).toBeCloseTo((l0 + l1) / 2, DIGITS);
    expect(out.policyLoss).toBeCloseTo((0.5 * -2 + 3 * -2) / 2, DIGITS);
    expect(out.gradLogprobs[0]).toBeCloseTo(0.5 * (0.5 * -2 + 0.2), DIGITS);
    expect(out.gradLogprobs[1]).toBeCloseTo(0.5 * (3 * -2 + 0.2), DIGITS);
    expect(Array.from(out.gradEntropy!)).toEqual([-0.05, -0.05]);
    expect(out.entropyMean).toBeCloseTo(0.875, DIGITS);
    expect(out.klMean).toBeCloseTo(0.25, DIGITS);
  });

  it('weighs fractional masks into sums, normalisers and metric means', () => {
    const out = policyLossRef({ n: 1, l: 2, logprobs: [-1, -1], oldLogprobs: [-1, -1 - Math.log(1.1)], mask: [0.5, 1], advantages: [1] });
    // dapo: c = m / 1.5. l = [-1, -1.1]. ratio_mean = (0.5 + 1.1) / 1.5.
    expect(out.loss).toBeCloseTo((0.5 * -1 + 1 * -1.1) / 1.5, DIGITS);
    expect(out.ratioMean).toBeCloseTo(1.6 / 1.5, DIGITS);
  });

  it('skips masked tokens completely, even when they hold -inf or NaN', () => {
    const clean = policyLossRef({
      n: 1,
      l: 3,
      logprobs: [-1, -2, -3],
      oldLogprobs: [-1.1, -2, -3],
      refLogprobs: [-1.2, -2, -3],
      mask: [1, 1, 0],
      advantages: [1],
      entropy: [1, 1, 1],
      options: { beta: 0.1, entropyCoef: 0.01 },
    });
    const dirty = policyLossRef({
      n: 1,
      l: 3,
      logprobs: [-1, -2, -Infinity],
      oldLogprobs: [-1.1, -2, NaN],
      refLogprobs: [-1.2, -2, NaN],
      mask: [1, 1, 0],
      advantages: [1],
      entropy: [1, 1, NaN],
      options: { beta: 0.1, entropyCoef: 0.01 },
    });
    expect(dirty.loss).toBe(clean.loss);
    expect(Array.from(dirty.gradLogprobs)).toEqual(Array.from(clean.gradLogprobs));
    expect(dirty.gradLogprobs[2]).toBe(0);
    expect(dirty.klMean).toBe(clean.klMean);
  });

  it('an empty batch (all-zero mask) has loss 0 and metrics 0', () => {
    const out = policyLossRef({ n: 2, l: 2, logprobs: [-1, -1, -1, -1], mask: [0, 0, 0, 0], advantages: [1, -1] });
    expect(out.loss).toBe(0);
    expect(out.ratioMean).toBe(0);
    expect(out.clipRatioRegion).toBe(0);
  });

  it('without old_logprobs equals old = a detached copy of logprobs', () => {
    const p: PolicyLossProblem = { n: 1, l: 2, logprobs: [-1, -2], mask: [1, 1], advantages: [0.7] };
    const a = policyLossRef(p);
    const b = policyLossRef({ ...p, oldLogprobs: [-1, -2] });
    expect(a.loss).toBe(b.loss);
    expect(Array.from(a.gradLogprobs)).toEqual(Array.from(b.gradLogprobs));
    expect(a.gradLogprobs[0]).toBeCloseTo(-0.7 / 2, DIGITS);
  });
});

describe('policy loss twin: TRL loss types and options (hand-computed)', () => {
  it('delta caps the unclipped ratio (two-sided clip), and clip metrics use the capped ratio', () => {
    // eps = 0.2, delta = 1.5, dapo over 4 tokens: c = 1/4.
    //   A=-1 rho=3:   -min(-1.5, -1.2) = 1.5 (3 without delta), grad 0 (beyond delta)
    //   A=-1 rho=1.4: -min(-1.4, -1.2) = 1.4, grad c * 1 * 1.4
    //   A=+1 rho=3:   -min(1.5, 1.2) = -1.2, clipped high, grad 0
    //   A=-1 rho=0.5: -min(-0.5, -0.8) = 0.8, clipped low, grad 0
    const cases: [number, number][] = [[-1, 3], [-1, 1.4], [1, 3], [-1, 0.5]];
    const out = policyLossRef(singleTokens(cases, { delta: 1.5 }));
    expect(out.loss).toBeCloseTo((1.5 + 1.4 - 1.2 + 0.8) / 4, DIGITS);
    [0, 1.4 / 4, 0, 0].forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
    expect(out.clipRatioLow).toBeCloseTo(0.25, DIGITS);
    expect(out.clipRatioHigh).toBeCloseTo(0.25, DIGITS);
    const off = policyLossRef(singleTokens(cases, {}));
    expect(off.loss).toBeCloseTo((3 + 1.4 - 1.2 + 0.8) / 4, DIGITS);
    expect(off.gradLogprobs[0]).toBeCloseTo(3 / 4, DIGITS);
    // delta = 1.1 below 1 + eps_high = 1.2: A=+1 rho=1.3 gives -min(1.1, 1.2) = -1.1, grad 0, and
    // TRL's high-clip test on the capped ratio (1.1 > 1.2) is false.
    const low = policyLossRef(singleTokens([[1, 1.3]], { delta: 1.1 }));
    expect(low.loss).toBeCloseTo(-1.1, DIGITS);
    expect(low.gradLogprobs[0]).toBe(0);
    expect(low.clipRatioHigh).toBe(0);
  });

  it('cispo: -sg(min(rho, eps_high)) A logp, token-mean as dapo, cispo_clip_ratio in clip_ratio_high', () => {
    // logp = -1 everywhere; eps_high = 5. c = 1/3 (dapo: 3 tokens).
    //   A=+1 rho=6:   w = 5 (capped):  l = -5 * 1 * -1 = 5,    grad c * -5
    //   A=-2 rho=0.5: w = 0.5:         l = -0.5 * -2 * -1 = -1, grad c * 1
    //   A=-1 rho=7:   w = 5 (A < 0: not counted as clipped): l = -5, grad c * 5
    const out = policyLossRef(singleTokens([[1, 6], [-2, 0.5], [-1, 7]], { lossType: 'cispo', epsilonHigh: 5 }));
    expect(out.loss).toBeCloseTo((5 - 1 - 5) / 3, DIGITS);
    [-5 / 3, 1 / 3, 5 / 3].forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
    expect(out.clipRatioHigh).toBeCloseTo(1 / 3, DIGITS);
    expect(out.clipRatioRegion).toBeCloseTo(1 / 3, DIGITS);
    expect(out.clipRatioLow).toBe(0);
    // As TRL, epsilon_high defaults to epsilon, so the cap is 0.2 (not 1.2): on-policy weight 0.2.
    const dflt = policyLossRef({ n: 1, l: 1, logprobs: [-2], mask: [1], advantages: [1], options: { lossType: 'cispo' } });
    expect(dflt.loss).toBeCloseTo(-0.2 * 1 * -2, DIGITS);
    expect(dflt.gradLogprobs[0]).toBeCloseTo(-0.2, DIGITS);
    expect(dflt.clipRatioHigh).toBe(1);
  });

  it('sapo: -sigmoid(tau (rho - 1)) 4 / tau A with tau by the sign of A, per-sequence mean as grpo', () => {
    // rho = 1: sigmoid = 1/2, f = 2 / tau, df/drho = 4 sigma (1 - sigma) = 1. Two one-token
    // sequences: c = 1 / (1 * 2). A = +1 (tau_pos = 1): l = -2, grad c * -1 * 1.
    // A = -1 (tau_neg = 1.05): l = 2 / 1.05, grad c * 1.
    const out = policyLossRef(singleTokens([[1, 1], [-1, 1]], { lossType: 'sapo' }));
    expect(out.loss).toBeCloseTo((-2 + 2 / 1.05) / 2, DIGITS);
    [-0.5, 0.5].forEach((g, k) => expect(out.gradLogprobs[k]).toBeCloseTo(g, DIGITS));
    // rho = 2, A = 1, tau_pos = 3: sigma = s(3), l = -s(3) 4/3, grad = -4 s(1-s) * rho.
    const s3 = 1 / (1 + Math.exp(-3));
    const hot = policyLossRef(singleTokens([[1, 2]], { lossType: 'sapo', sapoTemperaturePos: 3 }));
    expect(hot.loss).toBeCloseTo((-s3 * 4) / 3, DIGITS);
    expect(hot.gradLogprobs[0]).toBeCloseTo(-4 * s3 * (1 - s3) * 2, DIGITS);
    expect([hot.clipRatioLow, hot.clipRatioHigh, hot.clipRatioRegion]).toEqual([0, 0, 0]);
  });

  it('use_bias_correction_kl multiplies D by rho, with rho not detached', () => {
    // logp = -1, ref = -1.5, rho = 2, A = 0, beta = 0.1, k3: D = e^-0.5 + 0.5 - 1, dD/dlogp = 1 - e^-0.5.
    const d = Math.exp(-0.5) - 0.5;
    const problem = (useBiasCorrectionKl: boolean): PolicyLossProblem => ({
      ...singleTokens([[0, 2]], { beta: 0.1, useBiasCorrectionKl }),
      refLogprobs: [-1.5],
    });
    const on = policyLossRef(problem(true));
    expect(on.loss).toBeCloseTo(0.1 * d * 2, DIGITS);
    expect(on.klMean).toBeCloseTo(d * 2, DIGITS);
    expect(on.gradLogprobs[0]).toBeCloseTo(0.1 * (1 - Math.exp(-0.5) + d) * 2, DIGITS);
    const off = policyLossRef(problem(false));
    expect(off.loss).toBeCloseTo(0.1 * d, DIGITS);
    expect(off.gradLogprobs[0]).toBeCloseTo(0.1 * (1 - Math.exp(-0.5)), DIGITS);
  });
});

describe('policy loss options', () => {
  it('applies TRL defaults', () => {
    expect(resolvePolicyLossOptions({}, 7)).toEqual({
      epsilon: 0.2,
      epsilonHigh: 0.2,
      dualClip: null,
      delta: null,
      sapoTemperaturePos: 1.0,
      sapoTemperatureNeg: 1.05,
      useBiasCorrectionKl: false,
      beta: 0,
      klEstimator: 'k3',
      entropyCoef: 0,
      lossType: 'dapo',
      importanceSamplingLevel: 'token',
      maxCompletionLength: 7,
      numItemsInBatch: null,
    });
  });

  it('rejects bad values naming the option', () => {
    expect(() => resolvePolicyLossOptions({ epsilon: -0.1 }, 1)).toThrow(/^epsilon:/);
    expect(() => resolvePolicyLossOptions({ epsilonHigh: -1 }, 1)).toThrow(/^epsilon_high:/);
    expect(() => resolvePolicyLossOptions({ dualClip: 1 }, 1)).toThrow(/^dual_clip:/);
    expect(() => resolvePolicyLossOptions({ beta: -1 }, 1)).toThrow(/^beta:/);
    expect(() => resolvePolicyLossOptions({ maxCompletionLength: 2.5 }, 1)).toThrow(/^max_completion_length:/);
    expect(() => resolvePolicyLossOptions({ numItemsInBatch: 0 }, 1)).toThrow(/^num_items_in_batch:/);
    expect(() => resolvePolicyLossOptions({ lossType: 'ppo' as never }, 1)).toThrow(/^loss_type:/);
    expect(() => resolvePolicyLossOptions({ delta: 1 }, 1)).toThrow(/^delta: must be null \(off\) or a finite number > 1/);
    expect(() => resolvePolicyLossOptions({ delta: Infinity }, 1)).toThrow(/^delta:/);
    expect(() => resolvePolicyLossOptions({ lossType: 'cispo', delta: 4 }, 1)).toThrow(/^delta: applies only to loss_type grpo, bnpo, dapo, dr_grpo, not cispo/);
    expect(() => resolvePolicyLossOptions({ lossType: 'sapo', dualClip: 3 }, 1)).toThrow(/^dual_clip: applies only to loss_type .* not sapo/);
    expect(() => resolvePolicyLossOptions({ sapoTemperaturePos: 0 }, 1)).toThrow(/^sapo_temperature_pos:/);
    expect(() => resolvePolicyLossOptions({ sapoTemperatureNeg: NaN }, 1)).toThrow(/^sapo_temperature_neg:/);
    expect(() => resolvePolicyLossOptions({ useBiasCorrectionKl: 1 as never }, 1)).toThrow(/^use_bias_correction_kl:/);
    expect(() => policyLossRef({ n: 1, l: 1, logprobs: [0], mask: [1], advantages: [1], options: { beta: 0.1 } })).toThrow(/^ref_logprobs:/);
    expect(() => policyLossRef({ n: 1, l: 1, logprobs: [0], mask: [1], advantages: [1], options: { entropyCoef: 0.1 } })).toThrow(/^entropy:/);
    expect(() => policyLossRef({ n: 1, l: 2, logprobs: [0], mask: [1, 1], advantages: [1] })).toThrow(/^logprobs:/);
  });
});

/**
 * A random problem with ragged (partly fractional) masks, an all-zero row, token weights and
 * entropies; old log-probs are nudged so every ratio sits >= 1e-3 away from a kink.
 */
function randomProblem(seed: number, n: number, l: number, options: Partial<PolicyLossOptions>): PolicyLossProblem {
  const rand = rng(seed);
  const logprobs = uniform(rand, n * l, -3, -0.1);
  const noise = normal(rand, n * l, 0.3);
  const old = logprobs.map((x, k) => x + noise[k]);
  const refNoise = normal(rand, n * l, 0.3);
  const mask = new Array<number>(n * l).fill(0);
  for (let i = 0; i < n; i++) {
    const len = i === 1 ? 0 : Math.ceil(l / 2) + Math.floor(rand() * (l / 2));
    for (let t = 0; t < len; t++) mask[i * l + t] = t === 0 && i === 2 ? 0.5 : 1;
  }
  const p: PolicyLossProblem = {
    n,
    l,
    logprobs,
    oldLogprobs: old,
    refLogprobs: logprobs.map((x, k) => x + refNoise[k]),
    mask,
    // Both signs, so both clip sides can trigger.
    advantages: normal(rand, n).map((a, i) => (i % 2 === 0 ? 1 : -1) * (0.2 + Math.abs(a))),
    tokenWeights: uniform(rand, n * l, 0.5, 1.5),
    entropy: uniform(rand, n * l, 0, 3),
    options,
  };
  nudgeAwayFromKinks(p);
  return p;
}

function nudgeAwayFromKinks(p: PolicyLossProblem, gap = 1e-3): void {
  const o = resolvePolicyLossOptions(p.options ?? {}, p.l);
  const kinks =
    o.lossType === 'sapo'
      ? []
      : o.lossType === 'cispo'
        ? [o.epsilonHigh]
        : [1 - o.epsilon, 1 + o.epsilonHigh, ...(o.dualClip !== null ? [o.dualClip] : []), ...(o.delta !== null ? [o.delta] : [])];
  const near = (rho: number) => kinks.some((k) => Math.abs(rho - k) < gap);
  const old = p.oldLogprobs as number[];
  for (let guard = 0; guard < 100; guard++) {
    const ratio = policyLossRef(p).ratio;
    let moved = false;
    for (let i = 0; i < p.n; i++) {
      for (let t = 0; t < p.l; t++) {
        const k = i * p.l + t;
        if (p.mask[k] === 0 || !near(ratio[k])) continue;
        // Shift the whole row at sequence level (moves s_i), one token otherwise.
        if (o.importanceSamplingLevel === 'sequence') for (let u = 0; u < p.l; u++) old[i * p.l + u] -= 10 * gap;
        else old[k] -= 10 * gap;
        moved = true;
        break;
      }
    }
    if (!moved) return;
  }
  throw new Error('could not move the ratios away from the kinks');
}

function centralDifference(f: (x: number[]) => number, x: ArrayLike<number>, h = 1e-6): Float64Array {
  const base = Array.from(x);
  const out = new Float64Array(base.length);
  for (let k = 0; k < base.length; k++) {
    const plus = base.slice();
    const minus = base.slice();
    plus[k] += h;
    minus[k] -= h;
    out[k] = (f(plus) - f(minus)) / (2 * h);
  }
  return out;
}

function expectGradientsClose(numeric: Float64Array, analytic: ArrayLike<number>, label: string): void {
  for (let k = 0; k < numeric.length; k++) {
    expect(Math.abs(numeric[k] - analytic[k]), `${label} [${k}]: fd ${numeric[k]} vs ${analytic[k]}`).toBeLessThan(
      1e-8 + 1e-6 * Math.abs(analytic[k]),
    );
  }
}

/**
 * cispo's weight min(rho, eps_high) is stop-gradient, so the gradient is not the derivative of
 * the loss value. By linearity it is that of the policy term at frozen ratios (old log-probs
 * moved with logp, beta = 0), plus that of the rest (A = 0 removes the policy term; the
 * bias-corrected KL keeps its rho path there).
 */
function cispoDifference(p: PolicyLossProblem): Float64Array {
  const base = Array.from(p.logprobs);
  const old = Array.from(p.oldLogprobs!);
  const frozen = centralDifference(
    (x) => policyLossRef({ ...p, logprobs: x, oldLogprobs: old.map((o, k) => o + x[k] - base[k]), options: { ...p.options, beta: 0 } }).loss,
    base,
  );
  const rest = centralDifference((x) => policyLossRef({ ...p, logprobs: x, advantages: Array.from(p.advantages, () => 0) }).loss, base);
  return frozen.map((g, k) => g + rest[k]);
}

describe('policy loss twin: finite-difference gradients', () => {
  let seed = 100;
  for (const lossType of LOSS_TYPES) {
    for (const importanceSamplingLevel of IMPORTANCE_SAMPLING_LEVELS) {
      for (const klEstimator of KL_ESTIMATORS) {
        const s = seed++;
        const clippedType = CLIPPED_LOSS_TYPES.includes(lossType);
        // Half the clipped cases also use the dual clip and clip-higher, a third TRL's delta; cispo
        // caps at 1.1 (so the cap is hit) or 5; sapo gets other temperatures on even seeds; half the
        // cases use the bias-corrected KL.
        const options: Partial<PolicyLossOptions> = {
          lossType,
          importanceSamplingLevel,
          klEstimator,
          beta: 0.05,
          entropyCoef: 0.01,
          ...(clippedType && s % 2 === 0 ? { dualClip: 1.5, epsilonHigh: 0.28 } : {}),
          ...(clippedType && s % 3 === 0 ? { delta: 1.35 } : {}),
          ...(lossType === 'cispo' ? { epsilonHigh: s % 2 === 0 ? 1.1 : 5 } : {}),
          ...(lossType === 'sapo' && s % 2 === 0 ? { sapoTemperaturePos: 1.7, sapoTemperatureNeg: 0.6 } : {}),
          ...(s % 2 === 1 ? { useBiasCorrectionKl: true } : {}),
        };
        const label = Object.entries(options)
          .filter(([k]) => !['lossType', 'importanceSamplingLevel', 'klEstimator', 'beta', 'entropyCoef'].includes(k))
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ');
        it(`${lossType} / ${importanceSamplingLevel} / ${klEstimator} ${label}`, () => {
          const p = randomProblem(s, 6, 7, options);
          const out = policyLossRef(p);
          // The problem must exercise both gradient branches to mean anything.
          if (importanceSamplingLevel === 'token' && (clippedType || options.epsilonHigh === 1.1)) expect(out.clipRatioRegion).toBeGreaterThan(0);
          const gl =
            lossType === 'cispo'
              ? cispoDifference(p)
              : centralDifference((logprobs) => policyLossRef({ ...p, logprobs }).loss, p.logprobs);
          expectGradientsClose(gl, out.gradLogprobs, 'grad_logprobs');
          const ge = centralDifference((entropy) => policyLossRef({ ...p, entropy }).loss, p.entropy!);
          expectGradientsClose(ge, out.gradEntropy!, 'grad_entropy');
          // Masked tokens get no gradient.
          for (let k = 0; k < p.mask.length; k++) if (p.mask[k] === 0) expect(out.gradLogprobs[k]).toBe(0);
        });
      }
    }
  }

  it('without token weights, entropy or ref (the TRL default configuration)', () => {
    const p = randomProblem(7, 3, 5, {});
    const bare: PolicyLossProblem = { ...p, tokenWeights: null, entropy: null, refLogprobs: null };
    const out = policyLossRef(bare);
    const gl = centralDifference((logprobs) => policyLossRef({ ...bare, logprobs }).loss, p.logprobs);
    expectGradientsClose(gl, out.gradLogprobs, 'grad_logprobs');
  });
});
