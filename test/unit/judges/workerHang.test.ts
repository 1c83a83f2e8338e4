// A judge worker that hangs (a loop, a GPU wait that never returns) receives the batch and never
// answers, and never fires 'error' either. The model judge over it (src/worker/workerJudge.ts)
// bounds each batch: past the bound the worker is stopped, the batch's questions are unscorable
// with that reason (never a 0) and counted by the step's judge-failure metrics, and later batches
// fail at once instead of waiting the bound again. A stand-in Worker under the real client and Comlink.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';
import { judgeRollouts } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';
import { startJudgeWorker } from '../../../src/worker/judgeClient';
import { judgeAnswerBoundMs, workerJudge } from '../../../src/worker/workerJudge';

class HangingWorker extends EventTarget {
  static last: HangingWorker | null = null;
  posted = 0;
  terminated = false;
  constructor() {
    super();
    HangingWorker.last = this;
  }
  postMessage(): void {
    this.posted++; // received, never answered
  }
  terminate(): void {
    this.terminated = true;
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const rubric = parseRubric({
  name: 'hang',
  criteria: [
    { id: 'short', text: 'Short', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 5 } },
    { id: 'polite', text: 'Is polite', weight: 1, tier: 'essential', judge_question: 'Is the response polite?' },
  ],
});
const rollouts = [0, 1, 2].map((i) => ({ prompt: 'Say hi', completion: `hello there ${i}` }));

describe('a judge worker that never answers', () => {
  it('times out within its bound: the questions are unscorable with the reason and counted, the rules still score', async () => {
    vi.stubGlobal('Worker', HangingWorker);
    const client = startJudgeWorker();
    const worker = HangingWorker.last!;
    const bounds: number[] = [];
    const judge = workerJudge(client, 'model:tiny', { answerBoundMs: (n) => (bounds.push(n), 200) });
    const started = Date.now();
    const results = await judgeRollouts(rubric, 'v1', rollouts, { modelJudge: judge });
    const took = Date.now() - started;
    expect(worker.posted).toBeGreaterThan(0);
    expect(worker.terminated).toBe(true);
    expect(bounds).toEqual([3]); // one batch of the three rollouts' questions
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(5_000);
    const reason = 'judge "model:tiny" failed: the judge worker did not answer within 0.2 s, so it was stopped';
    for (const row of results) {
      expect(row[0]).toMatchObject({ criterion_id: 'short', status: 'ok', score: 1 });
      expect(row[1]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason });
    }
    const m = judgeFailureMetrics(results.map((r) => ({ results: r, reward: null })), 0.5);
    expect(m).toMatchObject({ verdicts: 6, failed_verdicts: 3, first_reason: `criterion "polite": ${reason}` });
    // The next step's batch fails at once with the same reason: no second wait on a hung worker.
    const again = Date.now();
    const next = await judgeRollouts(rubric, 'v1', rollouts.slice(0, 1), { modelJudge: judge });
    expect(Date.now() - again).toBeLessThan(150);
    expect(next[0][1]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason });
  }, 10_000);

  it('a batch that is answered is not cut short; the default bound grows with the batch', async () => {
    let answer: ((r: unknown) => void) | null = null;
    const client = {
      judgeQuestions: (_requests: readonly unknown[], options?: { timeoutMs?: number }) => {
        expect(options?.timeoutMs).toBe(judgeAnswerBoundMs(3));
        return new Promise<never>((resolve) => (answer = resolve as (r: unknown) => void));
      },
    };
    const judge = workerJudge(client as never, 'model:tiny');
    const pending = judgeRollouts(rubric, 'v1', rollouts, { modelJudge: judge });
    await vi.waitFor(() => expect(answer).not.toBeNull());
    answer!(rollouts.map(() => ({ criterion_id: 'polite', status: 'ok', score: 1, answer: 'yes' })));
    const results = await pending;
    expect(results.map((r) => r[1].status)).toEqual(['ok', 'ok', 'ok']);
    expect(judgeAnswerBoundMs(3)).toBe(75_000);
    expect(judgeAnswerBoundMs(64)).toBeGreaterThan(judgeAnswerBoundMs(3));
  });

  it('refuses a bound that is not a positive number of milliseconds', async () => {
    vi.stubGlobal('Worker', HangingWorker);
    const client = startJudgeWorker();
    await expect(client.judgeQuestions([], { timeoutMs: 0 })).rejects.toThrow('the judge timeout must be a positive number of milliseconds, not 0');
    await expect(client.judgeQuestions([], { timeoutMs: Number.NaN })).rejects.toThrow('not NaN');
  });
});
