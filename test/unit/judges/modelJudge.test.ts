// The GPU-free parts of the model judges: choices as tokens (byte-level and merged-space
// tokenizers), the distribution over choices, packing items into passes, per-item failures found
// before any pass, and the zero-shot pipeline judge with a stand-in classifier.
import { describe, expect, it } from 'vitest';
import type { Tokenizer } from '../../../src/model/tokenizer';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import type { Transformer } from '../../../src/model/transformer';
import {
  choiceDistribution,
  choiceTokens,
  judgeChoiceDistributions,
  modelJudge,
  planPasses,
  zeroShotJudge,
  type ZeroShotClassifier,
} from '../../../src/rl/modelJudge';
import { judgeRollouts, type JudgeRequest } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';

/** Greedy longest match over a fixed vocabulary: GPT-2-like, a leading space merges into the word. */
class WordTokenizer implements Tokenizer {
  readonly eosTokenId = 0;
  readonly padTokenId = 0;
  readonly bosTokenId = null;
  constructor(private readonly vocab: string[]) {}
  get vocabSize() {
    return this.vocab.length;
  }
  encode(text: string): number[] {
    const ids: number[] = [];
    for (let i = 0; i < text.length; ) {
      let best = -1;
      this.vocab.forEach((piece, id) => {
        if (piece !== '' && text.startsWith(piece, i) && (best < 0 || piece.length > this.vocab[best].length)) best = id;
      });
      if (best < 0) throw new Error(`no token for ${JSON.stringify(text[i])}`);
      ids.push(best);
      i += this.vocab[best].length;
    }
    return ids;
  }
  decode(ids: ArrayLike<number>): string {
    return Array.from(ids, (id) => this.vocab[id]).join('');
  }
}

describe('choiceTokens', () => {
  it('byte-level: the answer prefix is a token of its own, appended to the prompt', () => {
    expect(choiceTokens(new ByteTokenizer(), ['no', 'yes'], ' ')).toEqual({ prefix: [32], tokens: [110, 121] });
    expect(choiceTokens(new ByteTokenizer(), ['no', 'yes'], '')).toEqual({ prefix: [], tokens: [110, 121] });
  });

  it('merged-space tokenizers: the " yes" token itself is read, nothing appended', () => {
    const t = new WordTokenizer(['<eos>', ' ', ' yes', ' no', 'y', 'n', 'e', 's', 'o', ' bad', ' ok', ' good']);
    expect(choiceTokens(t, ['no', 'yes'], ' ')).toEqual({ prefix: [], tokens: [3, 2] });
    expect(choiceTokens(t, ['bad', 'ok', 'good'], ' ')).toEqual({ prefix: [], tokens: [9, 10, 11] });
  });

  it('refuses choices it cannot tell apart, and a prefix that merges with only some choices', () => {
    expect(() => choiceTokens(new ByteTokenizer(), ['yes', 'yeah'], ' ')).toThrow(
      new RangeError('choices "yes" and "yeah" start with the same token 121: the judge cannot tell them apart; reword one'),
    );
    const t = new WordTokenizer(['<eos>', ' ', ' yes', 'n', 'o', 'y']);
    expect(() => choiceTokens(t, ['no', 'yes'], ' ')).toThrow(/merges into some choices' first tokens but not others'/);
  });
});

describe('choiceDistribution', () => {
  it('renormalises over the choices, scores Σ p_i·i/(n−1), and measures the choices’ share', () => {
    // logits 0 and ln 3 → p = (1/4, 3/4); logsumexp ln 8 → mass (1 + 3) / 8.
    const d = choiceDistribution([0, Math.log(3)], Math.log(8))!;
    expect(d.probabilities[0]).toBeCloseTo(0.25, 14);
    expect(d.probabilities[1]).toBeCloseTo(0.75, 14);
    expect(d.score).toBeCloseTo(0.75, 14); // yes/no: P(yes)
    expect(d.mass).toBeCloseTo(0.5, 14);
    const o = choiceDistribution([2, 2, 2], 2 + Math.log(3))!;
    expect(o.probabilities.map((p) => p * 3)).toEqual(o.probabilities.map(() => expect.closeTo(1, 14)));
    expect(o.score).toBeCloseTo(0.5, 14);
    expect(o.mass).toBeCloseTo(1, 14);
    // Large logits do not overflow; an impossible choice gets 0.
    expect(choiceDistribution([1000, -Infinity, 990], 1000)!.probabilities).toEqual([expect.closeTo(1 / (1 + Math.exp(-10)), 14), 0, expect.closeTo(Math.exp(-10) / (1 + Math.exp(-10)), 14)]);
  });

  it('returns null for non-finite logits', () => {
    expect(choiceDistribution([NaN, 0], 1)).toBeNull();
    expect(choiceDistribution([-Infinity, -Infinity], 0)).toBeNull();
    expect(choiceDistribution([0, 1], NaN)).toBeNull();
    expect(() => choiceDistribution([0], 0)).toThrow(RangeError);
  });
});

describe('planPasses', () => {
  const limits = { batchSize: 100, maxTokensPerPass: 1000, maxPositionsPerBinding: 1000 };
  it('packs longest first, within the item, token and binding limits', () => {
    expect(planPasses([5, 9, 3, 9, 2], { ...limits, batchSize: 2 })).toEqual([[1, 3], [0, 2], [4]]);
    // 2 × 9 = 18 positions fit in 20; a third row would make 27.
    expect(planPasses([5, 9, 3, 9, 2], { ...limits, maxTokensPerPass: 20 })).toEqual([[1, 3], [0, 2, 4]]);
    expect(planPasses([5, 9, 3, 9, 2], { ...limits, maxPositionsPerBinding: 10 })).toEqual([[1], [3], [0, 2], [4]]); // 2 × 5 = 10 fits, 3 × 5 does not
    // An item longer than maxTokensPerPass still gets a pass of its own.
    expect(planPasses([50, 4], { ...limits, maxTokensPerPass: 20 })).toEqual([[0], [1]]);
    expect(planPasses([], limits)).toEqual([]);
  });
});

describe('model judge: failures found before any forward pass', () => {
  const rubric = parseRubric({
    name: 'pre',
    criteria: [
      { id: 'q', text: 'Q', weight: 1, tier: 'essential', judge_question: 'OK?' },
      { id: 'r', text: 'R', weight: 1, tier: 'optional', rule: { kind: 'all_caps' } },
    ],
  });
  // No pass runs when nothing is scorable, so a model with a config and limits suffices.
  const model = { config: { vocabSize: 259, maxPositions: 64, intermediateSize: 64, numHeads: 2, headDim: 8, hiddenSize: 16 }, rt: { device: { limits: { maxStorageBufferBindingSize: 1 << 20 } } } } as unknown as Transformer;
  const req = (completion: string, k = 0): JudgeRequest => ({ rubricVersion: 'v', prompt: 'p', completion, criterion: rubric.criteria[k] });

  it('names each problem: a rule criterion, a prompt beyond the context, a token outside the vocabulary, an empty prompt', async () => {
    const special: Record<string, number[]> = { oov: [1, 300], empty: [] };
    const options = { buildPrompt: (r: JudgeRequest) => r.completion, formatPrompt: (text: string) => special[text] ?? new ByteTokenizer().encode(text) };
    const out = await modelJudge(model, new ByteTokenizer(), options).judge([req('x', 1), req('y'.repeat(64)), req('oov'), req('empty')]);
    expect(out).toEqual([
      { criterion_id: 'r', status: 'unscorable', score: null, reason: 'criterion "r" is a rule, not a judge_question: the rule judge scores it' },
      { criterion_id: 'q', status: 'unscorable', score: null, reason: "the judge prompt is 65 tokens, beyond the judge model's context of 64" },
      { criterion_id: 'q', status: 'unscorable', score: null, reason: "token id 300 is outside the judge model's vocabulary of 259" },
      { criterion_id: 'q', status: 'unscorable', score: null, reason: 'the judge prompt encodes to no tokens' },
    ]);
    expect(await judgeChoiceDistributions(model, new ByteTokenizer(), [req('empty')], options)).toEqual([{ ok: false, reason: 'the judge prompt encodes to no tokens' }]);
    const stopped = new AbortController();
    stopped.abort();
    await expect(judgeChoiceDistributions(model, new ByteTokenizer(), [req('empty')], options, stopped.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('zeroShotJudge (with a stand-in for the transformers.js pipeline)', () => {
  const rubric = parseRubric({
    name: 'nli',
    criteria: [
      { id: 'polite', text: 'Polite', weight: 1, tier: 'essential', judge_question: 'Is it {} polite?' },
      { id: 'tone', text: 'Tone', weight: 1, tier: 'important', judge_question: 'How warm?', choices: ['cold', 'neutral', 'warm'] },
      { id: 'caps', text: 'Caps', weight: 1, tier: 'optional', rule: { kind: 'all_caps' } },
    ],
  });
  const req = (k: number, completion = 'c'): JudgeRequest => ({ rubricVersion: 'v', prompt: 'p', completion, criterion: rubric.criteria[k] });
  /** Answers like the pipeline: labels sorted by score. */
  const classifier = (calls: unknown[]): ZeroShotClassifier => async (text, labels, options) => {
    calls.push({ text, labels, options });
    if (labels.length === 2) return { labels: ['yes', 'no'], scores: [0.8, 0.2] };
    return { labels: ['warm', 'cold', 'neutral'], scores: [0.5, 0.3, 0.2] };
  };

  it('scores Σ p_i·i/(n−1) over the choices as labels, and loads the model once', async () => {
    const calls: unknown[] = [];
    const loads: unknown[] = [];
    const judge = zeroShotJudge({
      model: 'Xenova/nli-deberta-v3-xsmall',
      pipelineOptions: { device: 'wasm' },
      load: async (model, options) => (loads.push([model, options]), classifier(calls)),
    });
    expect(judge.name).toBe('zero-shot:Xenova/nli-deberta-v3-xsmall');
    const out = await judge.judge([req(0), req(1), req(2)]);
    expect(out[0]).toEqual({ criterion_id: 'polite', status: 'ok', score: 0.8, reason: 'P("no")=0.200, P("yes")=0.800' });
    expect(out[1].score).toBeCloseTo(0.3 * 0 + 0.2 * 0.5 + 0.5 * 1, 14);
    expect(out[2]).toEqual({ criterion_id: 'caps', status: 'unscorable', score: null, reason: 'zero-shot judge failed: criterion "caps" is a rule, not a judge_question: the rule judge scores it' });
    expect(calls[0]).toEqual({
      text: 'Prompt: p\nResponse: c',
      labels: ['no', 'yes'],
      // The question's own "{}" is broken up: the pipeline fills only the first one.
      options: { hypothesis_template: 'The answer to the question "Is it { } polite?" is {}.', multi_label: false },
    });
    await judge.judge([req(0)]);
    expect(loads).toEqual([['Xenova/nli-deberta-v3-xsmall', { device: 'wasm' }]]);
  });

  it('rejects with a clear message when the model cannot be fetched (judgeRollouts: unscorable), and tries again next call', async () => {
    let attempts = 0;
    const judge = zeroShotJudge({
      model: 'Xenova/missing',
      load: async () => {
        attempts++;
        throw new TypeError('fetch failed');
      },
    });
    await expect(judge.judge([req(0)])).rejects.toThrow(
      'could not load the zero-shot model "Xenova/missing" through @huggingface/transformers (it needs network access to the Hugging Face Hub, or a copy in the browser cache): fetch failed',
    );
    const rows = await judgeRollouts(rubric, 'v', [{ prompt: 'p', completion: 'HELLO' }], { modelJudge: judge });
    expect(rows[0].map((r) => r.status)).toEqual(['unscorable', 'unscorable', 'ok']);
    expect(rows[0][0].reason).toMatch(/^judge "zero-shot:Xenova\/missing" failed: could not load the zero-shot model/);
    expect(attempts).toBe(2);
  });

  it('marks an item unscorable when the classifier answers for other labels', async () => {
    const judge = zeroShotJudge({ model: 'm', load: async () => async () => ({ labels: ['maybe', 'no'], scores: [0.9, 0.1] }) });
    const [r] = await judge.judge([req(0)]);
    expect(r).toMatchObject({ status: 'unscorable', score: null });
    expect(r.reason).toBe('zero-shot judge failed: the classifier returned labels ["maybe","no"] for choices ["no","yes"]');
    expect(() => zeroShotJudge({ model: '' })).toThrow(RangeError);
  });

  it('checks model judge options up front', () => {
    const none = {} as Transformer;
    expect(() => modelJudge(none, new ByteTokenizer(), { batchSize: 0 })).toThrow(new RangeError('batchSize must be a positive integer, got 0'));
    expect(() => modelJudge(none, new ByteTokenizer(), { maxTokensPerPass: 1.5 })).toThrow(RangeError);
    expect(() => modelJudge(none, new ByteTokenizer(), { minChoiceMass: 1 })).toThrow(new RangeError('minChoiceMass must be in [0, 1), got 1'));
  });
});
