// Judges: rule results, 'needs_model' for questions, model-judge failures as 'unscorable'
// (never 0), batch calls, abort, and cache hits.
import { describe, expect, it } from 'vitest';
import { parseRubric } from '../../../src/rubric/schema';
import { JudgeCache } from '../../../src/rubric/cache';
import {
  cachedJudge,
  choiceScore,
  judgeRollouts,
  judgeWithRules,
  ruleJudge,
  type CriterionResult,
  type Judge,
  type JudgeRequest,
} from '../../../src/rubric/judge';
import { scoresOf, weightedMean } from '../../../src/rubric/aggregate';

const rubric = parseRubric({
  name: 'mixed',
  criteria: [
    { id: 'hello', text: 'Greets', weight: 2, tier: 'essential', rule: { kind: 'contains', terms: ['hello'] } },
    { id: 'polite', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is it polite?' },
    { id: 'short', text: 'Short', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '^.{0,20}$', flags: 's', max_input_chars: 50 } },
  ],
});
const V = 'v1';

/** A fake model judge: scores "polite" by whether the completion says "please"; counts calls. */
function fakeJudge(behaviour: (requests: readonly JudgeRequest[]) => CriterionResult[] | Promise<CriterionResult[]> = (rs) =>
  rs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok', score: r.completion.includes('please') ? 1 : 0, reason: 'fake' }))) {
  const calls: JudgeRequest[][] = [];
  const judge: Judge = {
    name: 'fake',
    judge: async (requests, options) => {
      calls.push([...requests]);
      if (options?.signal?.aborted) throw new DOMException('aborted', 'AbortError');
      return behaviour(requests);
    },
  };
  return { judge, calls };
}

describe('judgeWithRules', () => {
  it('scores rule criteria in rubric order and marks questions needs_model', () => {
    expect(judgeWithRules(rubric, 'p', 'hello there')).toEqual([
      // Rules report their evidence spans (src/rubric/evidence.ts): the term found, the regex match.
      { criterion_id: 'hello', status: 'ok', score: 1, reason: 'found "hello"', spans: [{ start: 0, end: 5 }] },
      { criterion_id: 'polite', status: 'needs_model', score: null, reason: 'needs a model judge' },
      { criterion_id: 'short', status: 'ok', score: 1, reason: 'matched "hello there" at 0', spans: [{ start: 0, end: 11 }] },
    ]);
  });

  it('reports a rule that cannot judge the input as unscorable, and the reward as null', () => {
    const results = judgeWithRules(rubric, 'p', 'x'.repeat(51));
    expect(results[2]).toEqual({ criterion_id: 'short', status: 'unscorable', score: null, reason: "completion has 51 UTF-16 code units, above this regex's max_input_chars 50" });
    expect(weightedMean(rubric, scoresOf(rubric, results))).toBeNull();
  });

  it('uses the cache: hits for rule criteria, keyed by version', () => {
    const cache = new JudgeCache();
    judgeWithRules(rubric, 'p', 'hello', { cache, rubricVersion: V });
    expect(cache.stats()).toEqual({ hits: 0, misses: 2, size: 2 }); // questions are not looked up here
    expect(judgeWithRules(rubric, 'p', 'hello', { cache, rubricVersion: V })).toEqual(judgeWithRules(rubric, 'p', 'hello'));
    expect(cache.stats().hits).toBe(2);
    judgeWithRules(rubric, 'p', 'hello', { cache, rubricVersion: 'v2' });
    expect(cache.stats().hits).toBe(2);
    expect(() => judgeWithRules(rubric, 'p', 'x', { cache })).toThrow(/needs options.rubricVersion/);
  });

  it('ruleJudge implements Judge', async () => {
    const out = await ruleJudge().judge(rubric.criteria.map((criterion) => ({ rubricVersion: V, prompt: 'p', completion: 'hello', criterion })));
    expect(out.map((r) => r.status)).toEqual(['ok', 'needs_model', 'ok']);
  });
});

describe('judgeRollouts', () => {
  const rollouts = [
    { prompt: 'p', completion: 'hello, please' },
    { prompt: 'p', completion: 'go away' },
  ];

  it('sends every question criterion in one batch and merges results in rubric order', async () => {
    const { judge, calls } = fakeJudge();
    const out = await judgeRollouts(rubric, V, rollouts, { modelJudge: judge });
    expect(calls).toHaveLength(1);
    expect(calls[0].map((r) => [r.completion, r.criterion.id])).toEqual([
      ['hello, please', 'polite'],
      ['go away', 'polite'],
    ]);
    expect(out.map((row) => row.map((r) => r.score))).toEqual([
      [1, 1, 1],
      [0, 0, 1],
    ]);
  });

  it('without a model judge, questions are needs_model and the reward is null', async () => {
    const out = await judgeRollouts(rubric, V, rollouts);
    expect(out[0][1].status).toBe('needs_model');
    expect(weightedMean(rubric, scoresOf(rubric, out[0]))).toBeNull();
  });

  it('turns a rejected batch into unscorable items, never 0', async () => {
    const { judge } = fakeJudge(() => {
      throw new Error('HTTP 503');
    });
    const out = await judgeRollouts(rubric, V, rollouts, { modelJudge: judge });
    expect(out[0][1]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason: 'judge "fake" failed: HTTP 503' });
    expect(out[0][0].status).toBe('ok'); // rules are unaffected
    expect(out.map((row) => weightedMean(rubric, scoresOf(rubric, row)))).toEqual([null, null]);
  });

  it('checks each answer: wrong count, wrong id, score outside [0, 1], unknown status', async () => {
    const short = await judgeRollouts(rubric, V, rollouts, { modelJudge: fakeJudge(() => []).judge });
    expect(short[0][1].reason).toBe('judge "fake" returned 0 results for 2 requests');
    const bad = await judgeRollouts(rubric, V, [...rollouts, { prompt: 'p', completion: 'c' }], {
      modelJudge: fakeJudge(() => [
        { criterion_id: 'other', status: 'ok', score: 1, reason: '' },
        { criterion_id: 'polite', status: 'ok', score: 2, reason: '' },
        { criterion_id: 'polite', status: 'maybe', score: null, reason: '' } as unknown as CriterionResult,
      ]).judge,
    });
    expect(bad.map((row) => [row[1].status, row[1].reason])).toEqual([
      ['unscorable', 'judge "fake" answered for "other"'],
      ['unscorable', 'judge "fake" returned score 2, outside [0, 1]'],
      ['unscorable', 'judge "fake" returned status "maybe"'],
    ]);
  });

  it('rejects when aborted instead of scoring', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(judgeRollouts(rubric, V, rollouts, { modelJudge: fakeJudge().judge, signal: controller.signal })).rejects.toThrow('aborted');
  });

  it('hits the cache on a repeat, and retries failures instead of replaying them', async () => {
    const cache = new JudgeCache();
    const ok = fakeJudge();
    const first = await judgeRollouts(rubric, V, rollouts, { modelJudge: ok.judge, cache });
    const again = await judgeRollouts(rubric, V, rollouts, { modelJudge: ok.judge, cache });
    expect(again).toEqual(first);
    expect(ok.calls).toHaveLength(1);
    expect(cache.stats()).toEqual({ hits: 6, misses: 6, size: 6 });

    const failing = fakeJudge(() => {
      throw new Error('timeout');
    });
    const fresh = new JudgeCache();
    await judgeRollouts(rubric, V, rollouts, { modelJudge: failing.judge, cache: fresh });
    await judgeRollouts(rubric, V, rollouts, { modelJudge: failing.judge, cache: fresh });
    expect(failing.calls).toHaveLength(2);
    expect(fresh.stats().size).toBe(4); // the rule results only
  });

  it('leaves dropped criteria out, and does not ask the judge about them', async () => {
    const { judge, calls } = fakeJudge();
    const out = await judgeRollouts(rubric, V, rollouts, { modelJudge: judge, keep: [[true, false, true], undefined] });
    expect(out[0].map((r) => r.criterion_id)).toEqual(['hello', 'short']);
    expect(out[1].map((r) => r.criterion_id)).toEqual(['hello', 'polite', 'short']);
    expect(calls[0]).toHaveLength(1);
    await expect(judgeRollouts(rubric, V, rollouts, { keep: [[true]] })).rejects.toThrow(RangeError);
  });
});

describe('cachedJudge and choiceScore', () => {
  it('forwards only misses and stores ok answers', async () => {
    const { judge, calls } = fakeJudge();
    const cache = new JudgeCache();
    const cached = cachedJudge(judge, cache);
    const request = (completion: string): JudgeRequest => ({ rubricVersion: V, prompt: 'p', completion, criterion: rubric.criteria[1] });
    await cached.judge([request('a please'), request('b')]);
    const out = await cached.judge([request('b'), request('c please')]);
    expect(calls.map((c) => c.map((r) => r.completion))).toEqual([['a please', 'b'], ['c please']]);
    expect(out.map((r) => r.score)).toEqual([0, 1]);
  });

  it('scores ordinal answers index / (n - 1)', () => {
    const choices = ['cold', 'neutral', 'warm'];
    expect(choiceScore(choices, ' Warm ')).toBe(1);
    expect(choiceScore(choices, 'neutral')).toBe(0.5);
    expect(choiceScore(choices, 'cold')).toBe(0);
    expect(choiceScore(choices, 'hot')).toBeNull();
  });
});
