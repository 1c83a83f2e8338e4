// The run view's judge meta-evaluation (src/ui/lib/judgeMetaView.ts) over kept rollouts and step metrics.
import { describe, expect, it } from 'vitest';
import type { CriterionResult } from '../../../src/rubric/judge';
import { judgeMetaView } from '../../../src/ui/lib/judgeMetaView';

const ok = (id: string, score: number): CriterionResult => ({ criterion_id: id, status: 'ok', score, reason: '' });

describe('judge meta view', () => {
  it('verbosity per criterion over the kept rollouts (length in code points), load per step (requests only where rollouts are kept)', () => {
    const rollouts = [
      { step: 1, completion: 'ab', results: [ok('q', 0), ok('r', 1)] },
      { step: 1, completion: '🙂🙂🙂🙂', results: [ok('q', 1), ok('r', 1)] },
      { step: 2, completion: 'abcdef', results: [ok('q', 1), ok('r', 0)] },
      { step: 2, completion: 'a', results: [{ criterion_id: 'q', status: 'unscorable', score: null, reason: 'x' } as CriterionResult, ok('r', 1)] },
    ];
    const v = judgeMetaView(['q', 'r'], new Set(['q']), [
      { step: 0, judge_seconds: 1 },
      { step: 1, judge_seconds: 0.5 },
      { step: 2, judge_seconds: 2 },
    ], rollouts);
    const q = v.verbosity[0].bias;
    expect([q.n, q.unscored]).toEqual([3, 1]);
    expect(q.spearman).toBeCloseTo(Math.sqrt(3) / 2, 12); // lengths 2, 4, 6 vs scores 0, 1, 1
    expect(q.bins[0]).toMatchObject({ min: 2, max: 2, pass_rate: 0 });
    expect(v.verbosity[1].bias.spearman).toBeLessThan(0);
    expect(v.load).toEqual([
      { step: 0, judge_seconds: 1, model_requests: null, requests_per_second: null, judge_calls: null },
      { step: 1, judge_seconds: 0.5, model_requests: 2, requests_per_second: 4, judge_calls: 2 },
      { step: 2, judge_seconds: 2, model_requests: 2, requests_per_second: 1, judge_calls: 2 },
    ]);
    // judge_scope "checklist": one call per response for all its questions (here q and r both are).
    const checklist = judgeMetaView(['q', 'r'], new Set(['q', 'r']), [{ step: 1, judge_seconds: 1 }], rollouts, 'checklist');
    expect(checklist.load).toEqual([{ step: 1, judge_seconds: 1, model_requests: 4, requests_per_second: 4, judge_calls: 2 }]);
  });
});
