// The float64 twins' NaN / Inf semantics (what the WGSL kernels are held to in the browser
// tests): non-finite inputs reach the outputs, nothing turns them into plausible numbers.
import { describe, expect, it } from 'vitest';
import { attentionDecodeRef, attentionForwardRef } from '../../src/ops/attention.reference';
import { embeddingForwardRef } from '../../src/ops/embedding.reference';
import { groupAdvantageRef } from '../../src/ops/groupAdvantage.reference';
import { logprobsForwardRef } from '../../src/ops/logprobs.reference';
import { policyLossRef, policyTerm, resolvePolicyLossOptions } from '../../src/ops/policyLoss.reference';
import { NO_TOKEN, sampleRowRef } from '../../src/ops/sample.reference';

describe('attention twin', () => {
  const base = { batch: 1, seqLen: 2, numHeads: 1, numKvHeads: 1, headDim: 1, pad: [0], scale: 1 };

  it('a visible key with probability 0 still passes a NaN value on (0 * NaN), as torch does', () => {
    // Row 1 sees keys 0 and 1; key 0 scores -inf, so p = 0, and its value is NaN.
    const r = attentionForwardRef({ ...base, q: [1, 1], k: [-Infinity, 0], v: [NaN, 2] });
    expect(r.out[0]).toBeNaN(); // row 0: only key 0, every score -inf
    expect(r.out[1]).toBeNaN();
  });

  it('a NaN in a key the row cannot see (the future) leaves the row alone', () => {
    const r = attentionForwardRef({ ...base, q: [1, 1], k: [0.5, NaN], v: [3, 4] });
    expect(r.out[0]).toBe(3);
    expect(r.out[1]).toBeNaN();
  });

  it('decode: a NaN key gives NaN, a cache of padding only gives 0', () => {
    const d = { batch: 2, numHeads: 1, numKvHeads: 1, headDim: 1, maxSeqLen: 2, length: 2, pad: [0, 2], q: [1, 1], vcache: [1, 2, 3, 4] };
    expect(Array.from(attentionDecodeRef({ ...d, kcache: [0, NaN, 0, 0] }))).toEqual([NaN, 0]);
  });
});

describe('log-prob twin', () => {
  it('a NaN or +inf logit makes the row NaN; a masked chosen token stays -inf', () => {
    const r = logprobsForwardRef({ logits: [0, NaN, 1, /* */ 0, Infinity, 1, /* */ -Infinity, NaN, 1], tokens: [0, 0, 0], rows: 3, vocab: 3, temperature: 1 });
    expect(Array.from(r.logprobs)).toEqual([NaN, NaN, -Infinity]);
    expect(Array.from(r.entropy)).toEqual([NaN, NaN, NaN]);
  });
});

describe('sampler twin', () => {
  const o = { temperature: 1, topK: 0, topP: 1, seed: 1, step: 0 };
  it('NaN or +inf logits, or nothing unmasked, give NO_TOKEN with a NaN log-prob, greedy or not', () => {
    for (const temperature of [0, 1]) {
      for (const row of [[0, NaN, 1], [0, Infinity, 1], [-Infinity, -Infinity]]) {
        const r = sampleRowRef(row, 0, { ...o, temperature });
        expect(r.token).toBe(NO_TOKEN);
        expect(r.logprob).toBeNaN();
      }
    }
    expect(sampleRowRef([-Infinity, 0, -Infinity], 0, o)).toMatchObject({ token: 1, logprob: 0 });
  });
});

describe('policy-loss twin', () => {
  it('a NaN ratio or advantage has no clip branch: loss and slope are NaN', () => {
    const o = (extra: object) => resolvePolicyLossOptions({ epsilon: 0.2, ...extra }, 1);
    for (const [rho, a] of [[NaN, 1], [1.1, NaN], [Infinity, 0]]) {
      const t = policyTerm(rho, a, -1, o({ dualClip: 3 }));
      expect(t.loss).toBeNaN();
      expect(t.dLossDRatio).toBeNaN();
    }
    expect(policyTerm(2, 1, -1, o({})).loss).toBeCloseTo(-1.2, 12);
    expect(policyTerm(2, 1, -1, o({})).dLossDRatio).toBe(0);
    // cispo's capped weight and sapo's gate keep a NaN ratio or advantage NaN too.
    for (const [rho, a] of [[NaN, 1], [1.1, NaN]]) {
      const c = policyTerm(rho, a, -1, o({ lossType: 'cispo', epsilonHigh: 5 }));
      expect([c.loss, c.dLossDLogp].every(Number.isNaN)).toBe(true);
      const s = policyTerm(rho, a, -1, o({ lossType: 'sapo' }));
      expect([s.loss, s.dLossDRatio].every(Number.isNaN)).toBe(true);
    }
  });

  it('without old log-probs, logp - logp.detach() is NaN for a non-finite logp (masked tokens still skipped)', () => {
    const r = policyLossRef({ n: 1, l: 4, logprobs: [-1, NaN, -Infinity, NaN], mask: [1, 1, 1, 0], advantages: [1] });
    expect(Array.from(r.ratio)).toEqual([1, NaN, NaN, 0]);
    expect(r.loss).toBeNaN();
    expect(Array.from(r.gradLogprobs).map(Number.isNaN)).toEqual([false, true, true, false]);
  });
});

describe('group-advantage twin', () => {
  const options = { numGenerations: 2, scaleRewards: 'group' as const, eps: 1e-4, multiObjectiveAggregation: 'sum_then_normalize' as const, advantageEstimator: 'grpo' as const };
  it('an inf reward poisons its group only; NaN stays "missing" (advantage 0)', () => {
    const r = groupAdvantageRef({ ...options, rewards: [1, Infinity, 1, 3, NaN, 2], numCriteria: 1 });
    expect(Array.from(r.advantages).map((a) => (Number.isNaN(a) ? 'nan' : Math.sign(a)))).toEqual(['nan', 'nan', -1, 1, 0, 0]);
    expect(Array.from(r.groupMean)).toEqual([NaN, 2, 2]);
    expect([r.unscorable, r.zeroStdGroups]).toEqual([1, 1]);
  });

  it('batch scaling poisons every scored group that uses the batch std', () => {
    const r = groupAdvantageRef({ ...options, scaleRewards: 'batch', rewards: [1, Infinity, 1, 3, 2, 2], numCriteria: 1 });
    expect(Array.from(r.advantages).map((a) => (Number.isNaN(a) ? 'nan' : a))).toEqual(['nan', 'nan', 'nan', 'nan', 0, 0]);
  });
});

describe('embedding twin', () => {
  it('ids past the table read as NaN', () => {
    expect(Array.from(embeddingForwardRef({ ids: [0, 2], table: [1, 2, 3, 4], dim: 2 }))).toEqual([1, 2, NaN, NaN]);
  });
});
