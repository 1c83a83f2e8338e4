// The float64 twin of the log-prob kernel: hand-computed cases and finite-difference gradients.
import { describe, expect, it } from 'vitest';
import { logprobsBackwardRef, logprobsForwardRef, type LogprobsProblem } from '../../src/ops/logprobs.reference';
import { normal, randomInts, rng } from '../helpers/random';

function problem(seed: number, rows: number, vocab: number, temperature: number, scale = 2): LogprobsProblem {
  const rand = rng(seed);
  return { logits: normal(rand, rows * vocab, scale), tokens: randomInts(rand, rows, vocab), rows, vocab, temperature };
}

describe('logprobs reference twin', () => {
  it('matches a hand-computed two-token vocabulary', () => {
    // softmax([0, ln 3]) = [1/4, 3/4]; entropy = -(1/4 ln 1/4 + 3/4 ln 3/4)
    const out = logprobsForwardRef({ logits: [0, Math.log(3)], tokens: [1], rows: 1, vocab: 2, temperature: 1 });
    expect(out.logprobs[0]).toBeCloseTo(Math.log(0.75), 14);
    expect(out.entropy[0]).toBeCloseTo(-(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75)), 14);
  });

  it('divides logits by the temperature', () => {
    const hot = logprobsForwardRef({ logits: [0, 2], tokens: [0], rows: 1, vocab: 2, temperature: 2 });
    const cold = logprobsForwardRef({ logits: [0, 1], tokens: [0], rows: 1, vocab: 2, temperature: 1 });
    expect(hot.logprobs[0]).toBeCloseTo(cold.logprobs[0], 14);
  });

  it('gives masked (-inf) entries probability zero and a masked chosen token -inf', () => {
    const out = logprobsForwardRef({
      logits: [-Infinity, 1, 1, -Infinity, 5, -Infinity],
      tokens: [1, 0],
      rows: 2,
      vocab: 3,
      temperature: 1,
    });
    expect(out.logprobs[0]).toBeCloseTo(Math.log(0.5), 14);
    expect(out.entropy[0]).toBeCloseTo(Math.log(2), 14);
    expect(out.logprobs[1]).toBe(-Infinity);
    expect(out.entropy[1]).toBeCloseTo(0, 14);
  });

  it('stays exact for logits of +-1e4', () => {
    const out = logprobsForwardRef({ logits: [1e4, 1e4 - 1, -1e4], tokens: [1], rows: 1, vocab: 3, temperature: 1 });
    expect(out.logprobs[0]).toBeCloseTo(-1 - Math.log(1 + Math.exp(-1)), 12);
  });

  it('has the gradient finite differences give, for logprob and entropy terms', () => {
    for (const [seed, rows, vocab, temperature] of [
      [1, 3, 2, 1],
      [2, 2, 7, 0.7],
      [3, 4, 13, 1.5],
    ] as const) {
      const p = problem(seed, rows, vocab, temperature);
      const rand = rng(seed + 100);
      const gl = normal(rand, rows);
      const gh = normal(rand, rows);
      const objective = (logits: number[]) => {
        const o = logprobsForwardRef({ ...p, logits });
        let s = 0;
        for (let r = 0; r < rows; r++) s += gl[r] * o.logprobs[r] + gh[r] * o.entropy[r];
        return s;
      };
      const analytic = logprobsBackwardRef(p, gl, gh);
      const h = 1e-6;
      const base = Array.from(p.logits);
      for (let i = 0; i < base.length; i++) {
        const plus = base.slice();
        const minus = base.slice();
        plus[i] += h;
        minus[i] -= h;
        const numeric = (objective(plus) - objective(minus)) / (2 * h);
        expect(Math.abs(numeric - analytic[i]), `seed ${seed} logit ${i}`).toBeLessThan(1e-7);
      }
    }
  });

  it('has zero gradient on masked entries', () => {
    const p = { logits: [-Infinity, 0.5, 2], tokens: [2], rows: 1, vocab: 3, temperature: 1 };
    const g = logprobsBackwardRef(p, [1], [1]);
    expect(g[0]).toBe(0);
  });
});
