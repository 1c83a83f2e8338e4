// The model judge on the tiny golden GPT-2 (SwiftShader): its choice probabilities (from
// Transformer.prefill, the last-position inference pass) equal a softmax over the choices'
// first-token logits taken from independent full forward passes, for yes/no and 3-way ordinal
// criteria, across several padded passes; and the judge worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { expectClose } from '../helpers/compare';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/modelJudge.ts';
/** CharTokenizer of the case file: code point % 60. */
const tok = (ch: string) => ch.codePointAt(0)! % 60;

const rubric = {
  name: 'judged',
  criteria: [
    { id: 'q', text: 'Answers the question', weight: 1, tier: 'essential', judge_question: 'Does it answer?' },
    { id: 'o', text: 'Quality', weight: 1, tier: 'important', judge_question: 'How good is it?', choices: ['bad', 'ok', 'good'] },
    { id: 's', text: 'Shared start', weight: 1, tier: 'optional', judge_question: 'Is it?', choices: ['yes', 'yeah'] },
    { id: 'r', text: 'Greets', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['hello'] } },
  ],
};
const CHOICES = [['no', 'yes'], ['bad', 'ok', 'good']];

interface Outcome {
  ok: boolean;
  reason?: string;
  distribution?: { probabilities: number[]; mass: number; score: number };
  promptTokens?: number;
}

describe('model judge on gpt2-tiny', () => {
  it('returns softmax over the choices’ first-token logits of a full forward pass, batched in padded passes', async () => {
    // Judge prompt = criterion id + prompt + ":" + completion, then the answer prefix " ".
    const items: [number, string, string][] = [
      [0, 'hi', 'yes'], // 8 tokens
      [0, '2+2', '4'], // 7
      [0, 'a', 'b'], // 5
      [0, 'tell', 'a long an'], // 16: the model's whole context
      [1, 'rate', 'good'], // 11
      [1, 'x', 'meh'], // 7
      [1, '?', '..'], // 6
      [0, 'tell', 'a long ans'], // 17: too long
      [2, 'hi', 'yo'], // "yes" and "yeah" share their first token
      [3, 'hi', 'hello'], // a rule criterion
    ];
    const r = await harness.runModule(CASES, 'judgeVsForward', { rubric, items, batchSize: 3 });
    const outcomes = r.outcomes as Outcome[];
    expect(r.prompts.map((p: number[]) => p.length)).toEqual([8, 7, 5, 16, 11, 7, 6, 17, 7, 10]);

    // 7 scorable items, at most 3 per pass, one submission per pass: each an inference prefill
    // with the head on the last position only, never a training forward.
    expect(r.submits).toBe(3);
    expect(r.calls).toEqual({ forward: 0, prefill: [{ rows: 3, logits: 'last' }, { rows: 3, logits: 'last' }, { rows: 1, logits: 'last' }] });
    for (let i = 0; i < 7; i++) {
      const o = outcomes[i];
      expect(o.ok, `item ${i}: ${o.reason}`).toBe(true);
      const logits: number[] = r.reference[i];
      const choices = CHOICES[items[i][0]];
      const z = choices.map((c) => logits[tok(c[0])]);
      const max = Math.max(...z);
      const e = z.map((v) => Math.exp(v - max));
      const p = e.map((v) => v / e.reduce((s, x) => s + x, 0));
      const m = Math.max(...logits);
      const lse = m + Math.log(logits.reduce((s, v) => s + Math.exp(v - m), 0));
      const mass = z.reduce((s, v) => s + Math.exp(v - lse), 0);
      const score = p.reduce((s, pi, k) => s + (pi * k) / (choices.length - 1), 0);
      // The batched pass (left padding, other rows) and the lone forward differ only by f32
      // rounding of the same sums: 1e-5 on probabilities, 1e-4 relative on the mass.
      expectClose(o.distribution!.probabilities, p, { atol: 1e-5, rtol: 0 }, `item ${i} probabilities`);
      expectClose([o.distribution!.mass], [mass], { atol: 0, rtol: 1e-4 }, `item ${i} mass`);
      expectClose([o.distribution!.score], [score], { atol: 1e-5, rtol: 0 }, `item ${i} score`);
      if (choices.length === 2) expectClose([o.distribution!.score], [o.distribution!.probabilities[1]], { atol: 1e-12, rtol: 0 }, `item ${i}: score = P(yes)`);
      expect(o.promptTokens).toBe(r.prompts[i].length);
      // The Judge interface gives the same score, and says why.
      expect(r.results[i].status).toBe('ok');
      expect(r.results[i].score).toBeCloseTo(o.distribution!.score, 12);
      expect(r.results[i].reason).toMatch(choices.length === 2 ? /^P\("no"\)=0\.\d{3}, P\("yes"\)=0\.\d{3}; the choices hold .*% of the next-token probability$/ : /^P\("bad"\)=.*P\("good"\)=/);
    }
    // The random model spreads probability: the choices are a small, nonzero share.
    expect(outcomes[0].distribution!.mass).toBeGreaterThan(0);
    expect(outcomes[0].distribution!.mass).toBeLessThan(0.5);

    expect(r.results.slice(7)).toEqual([
      { criterion_id: 'q', status: 'unscorable', score: null, reason: "the judge prompt is 17 tokens, beyond the judge model's context of 16" },
      { criterion_id: 's', status: 'unscorable', score: null, reason: 'choices "yes" and "yeah" start with the same token 1: the judge cannot tell them apart; reword one' },
      { criterion_id: 'r', status: 'unscorable', score: null, reason: 'criterion "r" is a rule, not a judge_question: the rule judge scores it' },
    ]);
    expect(r.abort).toBe('AbortError');
  });
});

describe('pairwise judge on tiny-byte-gpt2', () => {
  it('reads the margin of "A" vs "B" in both orders of every pair, and the meta figures measure it', async () => {
    const groups = [
      { prompt: 'hi', completions: ['yes please', 'no thanks'] },
      { prompt: 'go', completions: ['a', 'bb'] },
    ];
    const r = await harness.runModule(CASES, 'pairwiseOnFixture', { groups, question: 'Kind?' });
    // 2 groups × 2 orders; the fixture's 128 bytes hold the first group's pairs only with the texts
    // cut (prompt, A and B to the same length), the second's whole.
    expect(r.outcomes).toHaveLength(4);
    for (const n of r.promptTokens) expect(n).toBeLessThanOrEqual(r.context);
    expect(r.cuts[0]).toBeGreaterThanOrEqual(1);
    expect(r.cuts).toEqual([r.cuts[0], r.cuts[0], null, null]);
    const margins = (r.outcomes as { ok: boolean; margin?: number; reason?: string }[]).map((o, i) => {
      expect(o.ok, `pair ${i}: ${o.reason}`).toBe(true);
      expect(Number.isFinite(o.margin)).toBe(true);
      return o.margin!;
    });
    // The batched, left-padded pass equals z["A"] − z["B"] of a lone forward (f32 rounding).
    expectClose(margins, r.reference, { atol: 1e-4, rtol: 0 }, 'margins');
    // The meta panel's figures: 4 ordered comparisons, the first slot's wins are the positive margins.
    const [bias] = r.bias;
    const positive = margins.filter((m) => m > 0).length;
    expect(bias).toMatchObject({ criterion_id: 'kind', n: 4, first_wins: positive, second_wins: 4 - positive, ties: 0, first_win_rate: positive / 4 });
    expect(bias.index).toBeCloseTo((2 * positive - 4) / 4, 12);
    expect(bias.histogram.reduce((s: number, h: { groups: number }) => s + h.groups, 0)).toBe(2);
    for (const res of r.results) expect(res).toMatchObject({ status: 'ok', reason: expect.stringMatching(/^pairwise: won \d, tied \d, lost \d of 2 comparisons/) });
  });
});

describe('probe judge on gpt2-tiny', () => {
  it('reads the last hidden state a forward pass gives, trains from labels and scores rollouts', async () => {
    const labelled: [string, string, boolean][] = [
      ['hi', 'yes', true],
      ['hi', 'yes!', true],
      ['ok', 'yep', true],
      ['2', 'yes 4', true],
      ['hi', 'no', false],
      ['hi', 'nope', false],
      ['ok', 'nah', false],
      ['2', 'no 5', false],
    ];
    const judged: [string, string][] = [
      ['a', 'yes'],
      ['tell', 'no way'],
      ['q', 'y'],
      ['hm', 'nope no'],
    ];
    const r = await harness.runModule(CASES, 'probeVsForward', { rubric, labelled, judged });
    // Features: the final norm's output at the judge prompt's last token (after the answer
    // prefix " "), from batched left-padded prefill passes = a lone full forward's, to f32 rounding.
    expect(r.ids.map((ids: number[]) => ids[ids.length - 1])).toEqual(judged.map(() => tok(' ')));
    r.batched.forEach((h: number[], i: number) => {
      expect(h).toHaveLength(r.hiddenSize);
      expectClose(h, r.reference[i], { atol: 1e-5, rtol: 1e-5 }, `rollout ${i} hidden state`);
    });
    expect(r.set).toMatchObject({ judge_model: 'self', hidden_size: r.hiddenSize, l2: 1, probes: [{ criterion_id: 'q', yes: 4, no: 4 }] });
    const { weights, bias } = r.set.probes[0];
    r.results.forEach((res: { criterion_id: string; status: string; score: number; reason: string }, i: number) => {
      const u = weights.reduce((s: number, w: number, j: number) => s + w * r.reference[i][j], bias);
      expect(res).toMatchObject({ criterion_id: 'q', status: 'ok' });
      expect(res.score).toBeCloseTo(1 / (1 + Math.exp(-u)), 4);
      expect(res.reason).toMatch(/^probe P\(yes\)=0\.\d{3} \(trained on 4 yes \/ 4 no labels\)$/);
    });
    expect(r.tooFew).toMatch(/criterion "q": the probe judge needs at least 3 "yes" and 3 "no" labels.*has 4 yes and 0 no/);
  });
});

describe('judge worker', () => {
  it('judges rules in a worker, marks a failing remote judge unscorable, caches, and never returns the key', async () => {
    const KEY = 'sk-browser-test-key-42';
    const workerRubric = {
      name: 'worker',
      criteria: [
        { id: 'greets', text: 'Greets', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['hello'] } },
        { id: 'polite', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is it polite?' },
      ],
    };
    const rollouts = [
      { prompt: 'p', completion: 'hello there' },
      { prompt: 'p', completion: 'go away' },
    ];
    const r = await harness.runModule(CASES, 'judgeWorker', { rubric: workerRubric, rollouts, apiKey: KEY });
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(r.configured.remote).toMatchObject({ kind: 'openai-chat', url: 'http://127.0.0.1:9/v1/chat/completions', model: 'judge-mini', maxAttempts: 1, hasApiKey: true });

    expect(r.first.rubricVersion).toMatch(/^[0-9a-f]{64}$/);
    expect(r.first.counts).toEqual({ ok: 2, unscorable: 2, needs_model: 0 });
    r.first.results.forEach((row: { criterion_id: string; status: string; score: number | null; reason: string }[], i: number) => {
      expect(row[0]).toEqual(r.onPage[i][0]); // rules: as judged on the page
      expect(row[1]).toMatchObject({ criterion_id: 'polite', status: 'unscorable', score: null });
      expect(row[1].reason).toMatch(/^network error: .* \(gave up after 1 attempt\)$/);
    });
    // The second batch hits the cache for the rules; failures are not cached, so they are retried.
    expect(r.second.results).toEqual(r.first.results);
    expect(r.second.cache.hits - r.first.cache.hits).toBe(2);
    expect(r.second.cache.size).toBe(2);

    expect(r.abort).toBe('AbortError');
    expect(r.badRubric).toMatch(/criteria: needs at least one criterion/);
    expect(r.cleared).toEqual({ remote: null, cache: { hits: 0, misses: 0, size: 0 } });
    expect(r.rulesOnly.counts).toEqual({ ok: 2, unscorable: 0, needs_model: 2 });
  });
});
