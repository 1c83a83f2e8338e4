// The log-prob bench's fast float32 baseline (bench/logprobsF32.ts) must compute what the float64
// twin does, or its WGSL/JS f32 ratio compares against something else.
import { describe, expect, it } from 'vitest';
import { logprobsF32 } from '../../bench/logprobsF32';
import { logprobsBackwardRef, logprobsForwardRef } from '../../src/ops/logprobs.reference';

function logits(rows: number, vocab: number, seed: number): Float32Array {
  const out = new Float32Array(rows * vocab);
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296 - 0.5) * 8;
  }
  return out;
}

describe('bench logprobsF32 baseline', () => {
  for (const temperature of [1, 0.7]) {
    it(`matches the float64 twin (temperature ${temperature}, a masked logit)`, () => {
      const rows = 5;
      const vocab = 97;
      const x = logits(rows, vocab, 3);
      x[1 * vocab + 10] = -Infinity; // masked entry, not the chosen token
      const tokens = Uint32Array.from([0, 4, 96, 50, 7]);
      const gl = Float32Array.from([1, -0.5, 0.25, 2, 0]);
      const gh = Float32Array.from([0.1, 0, -0.3, 0.2, 1]);
      const fast = logprobsF32(x, tokens, rows, vocab, temperature, gl, gh);
      fast.run();
      fast.run(); // a second pass over the same buffers gives the same values (nothing accumulates)
      const problem = { logits: x, tokens: Array.from(tokens), rows, vocab, temperature };
      const ref = logprobsForwardRef(problem);
      const grad = logprobsBackwardRef(problem, gl, gh);
      for (let r = 0; r < rows; r++) {
        expect(fast.logprobs[r]).toBeCloseTo(ref.logprobs[r], 4);
        expect(fast.entropy[r]).toBeCloseTo(ref.entropy[r], 4);
      }
      let worst = 0;
      for (let i = 0; i < grad.length; i++) worst = Math.max(worst, Math.abs(fast.grad[i] - grad[i]));
      expect(worst).toBeLessThan(1e-5);
      expect(fast.grad[1 * vocab + 10]).toBe(0);
    });
  }
});
