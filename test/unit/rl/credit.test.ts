// Token credit (src/rl/credit): every weight and diagnostic against hand-computed float64 values:
// conservation of the total advantage, bounds, spans at token boundaries, multi-byte characters,
// empty completions, unscorable rollouts.
import { describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { parseGrpoConfig } from '../../../src/rl/config';
import { tokenCredit, type CreditRollout } from '../../../src/rl/credit';
import { criterionDiagnostics, flipSuppressed } from '../../../src/rl/credit/criteria';
import { cortWeights, rubricConditionedPrompt } from '../../../src/rl/credit/cort';
import { creditScheduleAlpha, entropyPivotWeights } from '../../../src/rl/credit/entropy';
import { spanCreditMultipliers } from '../../../src/rl/credit/spanCredit';
import { tokenCharRanges, tokensInSpans } from '../../../src/rl/credit/tokenOffsets';
import { judgeWithRules, parseRubric } from '../../../src/rubric';

const tok = new ByteTokenizer();
const decode = (ids: readonly number[]) => tok.decode(ids);
const sum = (x: ArrayLike<number>) => Array.from(x).reduce((a, b) => a + b, 0);

describe('tokenCharRanges', () => {
  it('gives each byte token its characters; the bytes of a multi-byte character all cover it', () => {
    const text = 'aé🙂b';
    const ids = [...tok.encode(text), tok.eosTokenId];
    expect(ids).toHaveLength(1 + 2 + 4 + 1 + 1);
    const r = tokenCharRanges(decode, ids, text);
    expect(r[0]).toEqual({ start: 0, end: 1 });
    expect(r[1]).toEqual({ start: 1, end: 2 });
    expect(r[2]).toEqual({ start: 1, end: 2 });
    for (let j = 3; j < 7; j++) expect(r[j]).toEqual({ start: 2, end: 4 }); // the emoji: 4 bytes, 2 UTF-16 units
    expect(r[7]).toEqual({ start: 4, end: 5 });
    expect(r[8]).toEqual({ start: 5, end: 5 }); // EOS covers nothing
    // A span on "é" takes both its bytes; a span on "b" only its byte; nothing takes EOS.
    expect(tokensInSpans(r, [{ start: 1, end: 2 }])).toEqual([1, 2]);
    expect(tokensInSpans(r, [{ start: 4, end: 5 }])).toEqual([7]);
    expect(tokensInSpans(r, [{ start: 3, end: 4 }])).toEqual([3, 4, 5, 6]); // half the emoji's units: all its bytes
    expect(tokensInSpans(r, [{ start: 0, end: 5 }])).toHaveLength(8);
  });

  it('handles empty completions and decoders that drop a leading space (SentencePiece)', () => {
    expect(tokenCharRanges(decode, [], '')).toEqual([]);
    // Tokens "▁hello", "▁world": decoding a piece on its own loses its leading space.
    const vocab = [' hello', ' world'];
    const spDecode = (ids: readonly number[]) => ids.map((i) => vocab[i]).join('').replace(/^ /, '');
    const text = spDecode([0, 1]);
    expect(text).toBe('hello world');
    const r = tokenCharRanges(spDecode, [0, 1], text);
    expect(r).toEqual([{ start: 0, end: 5 }, { start: 5, end: 11 }]);
    expect(tokensInSpans(r, [{ start: 6, end: 11 }])).toEqual([1]);
    // A span ending exactly at a token boundary does not take the next token.
    expect(tokensInSpans(r, [{ start: 0, end: 5 }])).toEqual([0]);
    // The piece path, not the whole-prefix fallback: decoding stays linear (each call decodes one token here).
    let decoded = 0;
    const counting = (ids: readonly number[]) => {
      decoded += ids.length;
      return spDecode(ids);
    };
    const long = Array.from({ length: 200 }, (_, i) => i % 2);
    const longText = spDecode(long);
    const rr = tokenCharRanges(counting, long, longText);
    expect(rr[199]).toEqual({ start: longText.length - 6, end: longText.length });
    expect(decoded).toBe(200);
  });
});

describe('spanCreditMultipliers', () => {
  it('puts each share on its span and the rest on the other tokens (float64 by hand)', () => {
    // n = 10; criterion A (share 0.5) on tokens 0, 1; criterion B (0.25) has no span.
    const s = spanCreditMultipliers(10, [{ share: 0.5, tokens: [0, 1] }, { share: 0.25, tokens: [] }], 1);
    expect(s[0]).toBeCloseTo(2.5, 12); // 0.5 · 10 / 2
    expect(s[5]).toBeCloseTo(0.625, 12); // (1 − 0.5) · 10 / 8
    expect(sum(s)).toBeCloseTo(10, 12);
    // λ mixes with uniform: 1 − λ + λ d
    const h = spanCreditMultipliers(10, [{ share: 0.5, tokens: [0, 1] }], 0.4);
    expect(h[0]).toBeCloseTo(0.6 + 0.4 * 2.5, 12);
    expect(sum(h)).toBeCloseTo(10, 12);
  });

  it('conserves the total with overlapping spans and when every token is in a span; never negative', () => {
    const a = spanCreditMultipliers(4, [{ share: 0.6, tokens: [0, 1] }, { share: 0.4, tokens: [1, 2, 3] }], 1);
    expect(Array.from(a)).toEqual([1.2, 1.2 + 0.4 * 4 / 3, 0.4 * 4 / 3, 0.4 * 4 / 3].map((x) => expect.closeTo(x, 12)));
    const b = spanCreditMultipliers(3, [{ share: 0.5, tokens: [0, 1, 2] }], 1); // no free token: the rest goes to all
    expect(Array.from(b)).toEqual([1, 1, 1].map((x) => expect.closeTo(x, 12)));
    for (const x of [...a, ...b]) expect(x).toBeGreaterThanOrEqual(0);
    expect(Array.from(spanCreditMultipliers(3, [{ share: 1, tokens: [0] }], 0))).toEqual([1, 1, 1]);
    expect(spanCreditMultipliers(0, [{ share: 1, tokens: [] }], 1)).toHaveLength(0);
  });
});

describe('criterionDiagnostics (CriPO UC / SC)', () => {
  const criteria = [
    { id: 'a', weight: 2 },
    { id: 'b', weight: 1 },
    { id: 'pit', weight: -1 },
  ];
  it('counts unexplored and suppressed positive criteria per group; unscorable rollouts count for neither', () => {
    const rollouts = [
      { group: 0, advantage: 1, scores: [1, 0, 0], reward: 0.7 },
      { group: 0, advantage: -1, scores: [0.6, 0, 1], reward: 0.2 }, // meets a with A < 0: a suppressed
      { group: 1, advantage: 0, scores: [0, 0, 1], reward: 0 },
      { group: 1, advantage: -0.5, scores: [null, 1, 0], reward: null }, // unscorable: ignored
    ];
    const d = criterionDiagnostics(criteria, rollouts, 2, 0.5);
    expect(d.unexplored).toEqual([['b'], ['a', 'b']]);
    expect(d.suppressed).toEqual([[], ['a'], [], []]);
    expect(d.unexploredCount).toBe(3);
    expect(d.suppressedCount).toBe(1);
  });

  it('flipSuppressed negates each token once', () => {
    const w = Float64Array.from([1, 2, 3]);
    flipSuppressed(w, [2, 0, 2, 9]);
    expect(Array.from(w)).toEqual([-1, 2, -3]);
  });
});

describe('entropy pivots and the schedule', () => {
  it('boosts the top entropy fraction of a completion, mean 1', () => {
    const g = entropyPivotWeights([0.1, 2, 0.3, 1.5], 0.5, 3);
    // pivots: 2 and 1.5 (the top half): raw [1, 3, 1, 3], mean 2
    expect(Array.from(g)).toEqual([0.5, 1.5, 0.5, 1.5].map((x) => expect.closeTo(x, 12)));
    expect(Array.from(entropyPivotWeights([1, 2], 0.5, 1))).toEqual([1, 1]);
    expect(Array.from(entropyPivotWeights([1, 2], 0, 3))).toEqual([1, 1]);
    expect(entropyPivotWeights([], 0.5, 3)).toHaveLength(0);
    const withNaN = entropyPivotWeights([NaN, 1, 3], 0.5, 2);
    expect(sum(withNaN)).toBeCloseTo(3, 12);
    expect(withNaN[0]).toBeLessThan(withNaN[2]);
  });

  it('α goes from 1 (targeted) to 0 (uniform)', () => {
    expect(creditScheduleAlpha('constant', 50, 10)).toBe(1);
    expect(creditScheduleAlpha('linear', 0, 10)).toBe(1);
    expect(creditScheduleAlpha('linear', 5, 10)).toBeCloseTo(0.5, 12);
    expect(creditScheduleAlpha('linear', 20, 10)).toBe(0);
    expect(creditScheduleAlpha('cosine', 5, 10)).toBeCloseTo(0.5, 12);
    expect(creditScheduleAlpha('cosine', 10, 10)).toBeCloseTo(0, 12);
  });
});

describe('tokenCredit (the composition grpoStep calls)', () => {
  const rubric = parseRubric({
    name: 'r',
    criteria: [
      { id: 'cat', text: 'mentions a cat', weight: 3, tier: 'essential', rule: { kind: 'contains', terms: ['cat'] } },
      { id: 'short', text: 'at most 3 words', weight: 1, tier: 'optional', rule: { kind: 'length', unit: 'words', max: 3 } },
    ],
  });
  const make = (completion: string, advantage: number, group = 0, scorable = true): CreditRollout => {
    const results = judgeWithRules(rubric, 'p', completion);
    const scores = results.map((r) => (r.status === 'ok' ? r.score : null));
    return { group, completion, completion_ids: tok.encode(completion), results, scores, reward: scorable ? 0.5 : null, advantage };
  };
  const T = 20;
  const at = 3;
  const run = async (options: Record<string, unknown>, rollouts: CreditRollout[], entropy: Float32Array | null = null, step = 0, cortContrast?: () => Promise<Float64Array[]>) => {
    const credit = await tokenCredit({ cortContrast, config: parseGrpoConfig({ num_generations: 2, generation_batch_size: 2, ...options }), step, criteria: rubric.criteria, rollouts, groups: 1, decode, seqLen: T, completionStart: at });
    const w = credit.source?.weightsFor(0, rollouts.length, entropy) ?? null;
    const of = (b: number) => (w ? Array.from(w.subarray(b * T + at, b * T + at + rollouts[b].completion_ids.length)) : null);
    return { credit, w, of };
  };

  it('is off (no weights) by default, but the diagnostics are always there', async () => {
    const { credit } = await run({}, [make('a cat', 1), make('no pets at all here', -1)]);
    expect(credit.source).toBeNull();
    expect(credit.diagnostics.unexploredCount).toBe(0);
    expect(credit.diagnostics.suppressed).toEqual([[], []]); // "cat" is not met by the negative one
  });

  it('span_credit: each criterion\'s share on its span, the total conserved, padding untouched', async () => {
    // "the cat sat down" (16 tokens): cat (share 3/4) on tokens 4-6; short fails past 3 words: "down" (share 1/4) on 12-15.
    const r = make('the cat sat down', -0.8);
    const { w, of } = await run({ span_credit: 1 }, [r]);
    const m = of(0)!;
    const n = 16;
    expect(m[4]).toBeCloseTo((0.75 * n) / 3, 5);
    expect(m[12]).toBeCloseTo((0.25 * n) / 4, 5);
    expect(m[0]).toBeCloseTo(0, 5); // every share placed: nothing for the free tokens
    expect(sum(m)).toBeCloseTo(n, 4); // Σ A m = n A
    expect(w![0]).toBe(1); // prompt positions keep weight 1 (the mask leaves them out)
  });

  it('cripo_flip flips the suppressed criterion\'s span in a negative rollout only', async () => {
    const neg = make('a cat!', -1);
    const pos = make('cats', 1);
    const { credit, of } = await run({ cripo_flip: true }, [neg, pos]);
    expect(credit.diagnostics.suppressed).toEqual([['cat', 'short'], []]);
    // 'a cat!': "cat" on tokens 2-4 (and "short": no span when it passes) -> -1 there, 1 elsewhere
    expect(of(0)).toEqual([1, 1, -1, -1, -1, 1]);
    expect(of(1)).toEqual([1, 1, 1, 1]);
  });

  it('unscorable rollouts get weight 0; empty completions work', async () => {
    const { of } = await run({ span_credit: 0.5 }, [make('a cat', 1, 0, false), make('', -1)]);
    expect(of(0)).toEqual([0, 0, 0, 0, 0]);
    expect(of(1)).toEqual([]);
  });

  it('cort_credit: weights from the scoring passes\' contrasts; combined with span credit the product is renormalised', async () => {
    const r = make('the cat sat down', 1);
    const contrast = Float64Array.from({ length: 16 }, (_, j) => (j >= 4 && j < 7 ? 1 : 0));
    const alone = await run({ cort_credit: true, cort_weight_min: 0.1, cort_weight_max: 10 }, [r], null, 0, async () => [contrast]);
    const k = cortWeights(contrast, 0.1, 10);
    expect(alone.of(0)!.map((x) => Number(x.toFixed(5)))).toEqual(Array.from(k, (x) => Number(x.toFixed(5))));
    expect(alone.credit.views()[0]!.cortContrast).toEqual(Array.from(contrast));
    const both = await run({ cort_credit: true, cort_weight_min: 0.1, cort_weight_max: 10, span_credit: 0.5 }, [r], null, 0, async () => [contrast]);
    const s = both.credit.views()[0]!.span!;
    const prod = s.map((x, j) => x * k[j]);
    const mean = sum(prod) / prod.length;
    both.of(0)!.forEach((x, j) => expect(x).toBeCloseTo(prod[j] / mean, 5));
    await expect(run({ cort_credit: true }, [r])).rejects.toThrow(/cort_credit/);
  });

  it('entropy pivots use the update\'s entropies; the schedule mixes toward uniform', async () => {
    const r = make('abcd', 1);
    const entropy = new Float32Array(T).fill(0);
    entropy.set([0.1, 3, 0.2, 0.3], at);
    const first = await run({ entropy_pivot_quantile: 0.25, entropy_pivot_boost: 4 }, [r], entropy);
    expect(first.credit.source!.needsEntropy).toBe(true);
    // raw [1, 4, 1, 1], mean 7/4
    expect(first.of(0)!.map((x) => Number(x.toFixed(5)))).toEqual([4 / 7, 16 / 7, 4 / 7, 4 / 7].map((x) => Number(x.toFixed(5))));
    const half = await run({ entropy_pivot_quantile: 0.25, entropy_pivot_boost: 4, credit_schedule: 'linear', credit_schedule_steps: 10 }, [r], entropy, 5);
    expect(half.of(0)![1]).toBeCloseTo(0.5 * (16 / 7) + 0.5, 5);
    expect(sum(half.of(0)!)).toBeCloseTo(4, 5);
    const views = half.credit.views()[0]!;
    expect(views.pivot![1]).toBeCloseTo(16 / 7, 5);
    expect(views.span).toBeNull();
  });
});

describe('CoRT', () => {
  it('writes the rubric into the conditioned prompt, pitfalls as things to avoid', () => {
    expect(rubricConditionedPrompt('Describe the sea.', [{ text: 'Mentions waves', weight: 2 }, { text: 'Uses jargon', weight: -1 }, { text: 'Tracked', weight: 0 }])).toBe(
      'Describe the sea.\n\nA good answer meets these criteria:\n- Mentions waves\nIt avoids:\n- Uses jargon',
    );
  });

  it('maps contrasts to bounded, mean-1 weights (float64 reference by hand)', () => {
    // No clipping: λ e^c with mean 1, so w_j = e^{c_j} / mean(e^c).
    const c = [0, Math.log(2), Math.log(0.5), 0];
    const raw = c.map(Math.exp);
    const m = raw.reduce((a, b) => a + b, 0) / raw.length;
    expect(Array.from(cortWeights(c, 0.1, 10))).toEqual(raw.map((r) => expect.closeTo(r / m, 9)));
    // Clipped at max: the others share the rest; still mean 1 and within bounds.
    const w = cortWeights([5, 0, 0, 0], 0.5, 2);
    expect(w[0]).toBeCloseTo(2, 9);
    expect(w[1]).toBeCloseTo(2 / 3, 9);
    expect(sum(w) / 4).toBeCloseTo(1, 9);
    // Non-finite contrasts count as 0; equal contrasts give 1; empty stays empty.
    expect(Array.from(cortWeights([NaN, -Infinity], 0.5, 2))).toEqual([1, 1].map((x) => expect.closeTo(x, 9)));
    expect(Array.from(cortWeights([3, 3, 3], 0.5, 2))).toEqual([1, 1, 1].map((x) => expect.closeTo(x, 9)));
    expect(cortWeights([], 0.5, 2)).toHaveLength(0);
    for (const x of cortWeights([40, -40, 1, 0.3, -2], 0.25, 3)) {
      expect(x).toBeGreaterThanOrEqual(0.25);
      expect(x).toBeLessThanOrEqual(3);
    }
  });
});

describe('config', () => {
  it('validates the token-credit options with clear messages', () => {
    expect(() => parseGrpoConfig({ span_credit: 1.5 })).toThrow(/span_credit/);
    expect(() => parseGrpoConfig({ span_credit: 0.5, importance_sampling_level: 'sequence' })).toThrow(/span_credit: token credit needs importance_sampling_level "token"/);
    expect(() => parseGrpoConfig({ cripo_flip: true, num_iterations: 2 })).toThrow(/cripo_flip: needs num_iterations = 1/);
    expect(() => parseGrpoConfig({ entropy_pivot_boost: 0.5 })).toThrow(/entropy_pivot_boost/);
    expect(() => parseGrpoConfig({ cort_weight_min: 1.5 })).toThrow(/cort_weight_min/);
    expect(() => parseGrpoConfig({ cort_weight_max: 0.5 })).toThrow(/cort_weight_max/);
    expect(() => parseGrpoConfig({ cort_credit: true, importance_sampling_level: 'sequence' })).toThrow(/cort_credit: token credit needs/);
    expect(parseGrpoConfig({ cripo_flip: true, span_credit: 0.3 })).toMatchObject({ cripo_flip: true, span_credit: 0.3, credit_schedule: 'constant', credit_schedule_steps: null });
  });
});
