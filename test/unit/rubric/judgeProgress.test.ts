// Progress of the judging stage (issue 14): judgeRollouts reports rollouts judged of all, the
// rules and the cache at once, the model judge's requests in proportion as it answers them.
import { describe, expect, it } from 'vitest';
import { cachedJudge, judgeRollouts, type Judge, type JudgeRequest } from '../../../src/rubric/judge';
import { JudgeCache } from '../../../src/rubric/cache';
import { parseRubric } from '../../../src/rubric/schema';

const rubric = parseRubric({
  name: 'mixed',
  criteria: [
    { id: 'has_a', text: 'Contains a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } },
    { id: 'kind', text: 'Is it kind?', weight: 1, tier: 'important', judge_question: 'Is the response kind?' },
  ],
});
const rulesOnly = parseRubric({ name: 'rules', criteria: [rubric.criteria[0]] });
const rollouts = Array.from({ length: 6 }, (_, i) => ({ prompt: 'p', completion: `answer ${i}` }));

/** Answers one request at a time, reporting each (as the remote and model judges do). */
function steppingJudge(log: number[] = []): Judge {
  return {
    name: 'stepping',
    async judge(requests: readonly JudgeRequest[], options = {}) {
      const out = [];
      for (const r of requests) {
        await Promise.resolve();
        out.push({ criterion_id: r.criterion.id, status: 'ok' as const, score: 1, reason: 'fine' });
        log.push(out.length);
        options.onAnswered?.(out.length);
      }
      return out;
    },
  };
}

describe('judgeRollouts progress', () => {
  it('rules alone: every rollout at once', async () => {
    const seen: [number, number][] = [];
    await judgeRollouts(rulesOnly, 'v', rollouts, { onProgress: (d, t) => seen.push([d, t]) });
    expect(seen).toEqual([[6, 6]]);
  });

  it('a model judge: from 0, rising with its answers, below the total until every rollout has all its results', async () => {
    const seen: number[] = [];
    const answered: number[] = [];
    await judgeRollouts(rubric, 'v', rollouts, { modelJudge: steppingJudge(answered), onProgress: (d, t) => (expect(t).toBe(6), seen.push(d)) });
    expect(answered).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(6);
    expect(seen.slice(0, -1).every((d) => d < 6)).toBe(true);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    expect(new Set(seen).size).toBeGreaterThan(3);
  });

  it('cached results count at once, and the cached judge reports its hits plus the fresh answers', async () => {
    const cache = new JudgeCache();
    await judgeRollouts(rubric, 'v', rollouts.slice(0, 3), { modelJudge: steppingJudge(), cache });
    const seen: number[] = [];
    await judgeRollouts(rubric, 'v', rollouts, { modelJudge: steppingJudge(), cache, onProgress: (d) => seen.push(d) });
    expect(seen[0]).toBe(3); // the first three are cached
    expect(seen.at(-1)).toBe(6);

    const requests: JudgeRequest[] = rollouts.map((r) => ({ rubricVersion: 'w', prompt: r.prompt, completion: r.completion, criterion: rubric.criteria[1] }));
    const wrapped = cachedJudge(steppingJudge(), new JudgeCache());
    await wrapped.judge(requests.slice(0, 2));
    const counts: number[] = [];
    await wrapped.judge(requests, { onAnswered: (n) => counts.push(n) });
    expect(counts).toEqual([3, 4, 5, 6]);
  });
});
