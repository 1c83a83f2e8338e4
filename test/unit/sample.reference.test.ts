// The sampler twin's repetition penalty and min-p against Hugging Face's definitions, computed
// here from scratch (exact distributions, no draws): RepetitionPenaltyLogitsProcessor then
// temperature, top-k, top-p, MinPLogitsWarper.
import { describe, expect, it } from 'vitest';
import { penalisedLogit, sampleRowRef } from '../../src/ops/sample.reference';
import { seenBitset, seenWords } from '../../src/ops/sample';

/** The kept, renormalised distribution HF samples from (probabilities over the vocabulary). */
function hfDistribution(logits: number[], seen: number[], o: { temperature: number; topK: number; topP: number; penalty: number; minP: number }): number[] {
  const s = new Set(seen);
  const scores = logits.map((x, i) => (s.has(i) ? (x < 0 ? x * o.penalty : x / o.penalty) : x / 1)).map((x) => x / o.temperature);
  const order = scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a]);
  const keep = new Set(o.topK > 0 ? order.slice(0, o.topK) : order);
  const soft = (idx: number[]) => {
    const m = Math.max(...idx.map((i) => scores[i]));
    const e = idx.map((i) => Math.exp(scores[i] - m));
    const z = e.reduce((a, b) => a + b, 0);
    return new Map(idx.map((i, j) => [i, e[j] / z]));
  };
  if (o.topP < 1) {
    const p = soft([...keep]);
    let acc = 0;
    const kept: number[] = [];
    for (const i of order.filter((i) => keep.has(i))) {
      kept.push(i);
      acc += p.get(i)!;
      if (acc >= o.topP) break;
    }
    keep.clear();
    kept.forEach((i) => keep.add(i));
  }
  if (o.minP > 0) {
    const p = soft([...keep]);
    const pmax = Math.max(...p.values());
    for (const [i, pi] of p) if (pi < o.minP * pmax) keep.delete(i);
  }
  const p = soft([...keep]);
  return logits.map((_, i) => p.get(i) ?? 0);
}

/** The twin's distribution: which token each of many draws (seeds) lands on. */
function twinFrequencies(logits: number[], seen: number[], o: { temperature: number; topK: number; topP: number; penalty: number; minP: number }, n: number) {
  const counts = new Array(logits.length).fill(0);
  for (let seed = 0; seed < n; seed++) {
    counts[sampleRowRef(logits, 0, { temperature: o.temperature, topK: o.topK, topP: o.topP, repetitionPenalty: o.penalty, minP: o.minP, seed, step: 0 }, seen).token]++;
  }
  return counts.map((c) => c / n);
}

describe('sampler twin: repetition_penalty and min_p', () => {
  const logits = [2.0, 1.5, -0.5, 0.75, -1.25, 0.25].map(Math.fround);

  it('penalises a seen positive logit by division and a non-positive one by multiplication', () => {
    expect(penalisedLogit(3, 2)).toBe(1.5);
    expect(penalisedLogit(-1, 2)).toBe(-2);
    expect(penalisedLogit(0, 2)).toBe(0);
    expect(penalisedLogit(3, 0.5)).toBe(6);
  });

  for (const o of [
    { temperature: 1, topK: 0, topP: 1, penalty: 1.5, minP: 0 },
    { temperature: 0.7, topK: 4, topP: 1, penalty: 2, minP: 0 },
    { temperature: 1, topK: 0, topP: 0.9, penalty: 1.2, minP: 0.2 },
    { temperature: 1.3, topK: 0, topP: 1, penalty: 0.8, minP: 0.3 },
  ]) {
    it(`draws from HF's distribution: ${JSON.stringify(o)}`, () => {
      const seen = [0, 2, 3];
      const want = hfDistribution(logits, seen, o);
      const got = twinFrequencies(logits, seen, o, 4000);
      want.forEach((p, i) => {
        if (p === 0) expect(got[i], `token ${i} should be cut`).toBe(0);
        else expect(Math.abs(got[i] - p), `token ${i}`).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / 4000) + 1e-3);
      });
      // And the penalty does change the distribution here (else the check above proves little).
      const unpenalised = hfDistribution(logits, [], o);
      expect(Math.max(...want.map((p, i) => Math.abs(p - unpenalised[i])))).toBeGreaterThan(0.02);
    });
  }

  it('returns the unpenalised log softmax(logits / T) of the drawn token', () => {
    const o = { temperature: 0.9, topK: 0, topP: 1, repetitionPenalty: 3, seed: 4, step: 1 };
    for (let seed = 0; seed < 20; seed++) {
      const r = sampleRowRef(logits, 0, { ...o, seed }, [0, 1]);
      const z = logits.map((x) => x / o.temperature);
      const m = Math.max(...z);
      const lse = m + Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
      expect(r.logprob).toBeCloseTo(z[r.token] - lse, 12);
    }
  });

  it('ignores the seen ids when the penalty is 1, and min_p 1 keeps only the max', () => {
    const o = { temperature: 1, topK: 0, topP: 1, seed: 9, step: 0 };
    expect(sampleRowRef(logits, 0, { ...o, repetitionPenalty: 1 }, [0, 1]).token).toBe(sampleRowRef(logits, 0, o).token);
    for (let seed = 0; seed < 10; seed++) expect(sampleRowRef(logits, 0, { ...o, seed, minP: 1 }).token).toBe(0);
  });

  it('seenBitset sets one bit per id, row by row, and names an out-of-vocabulary id', () => {
    const bits = seenBitset([[0, 33], [], [99]], 100);
    const w = seenWords(100);
    expect(w).toBe(4);
    expect(Array.from(bits)).toEqual([1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 << 3]);
    expect(() => seenBitset([[100]], 100)).toThrow(/token id 100 of row 0 is outside the vocabulary of 100/);
  });
});
