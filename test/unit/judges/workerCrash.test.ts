// A judge worker that crashes (out of memory, a device lost, an uncaught throw in its module)
// never answers: the client (src/worker/judgeClient.ts) must reject what is pending instead of
// waiting forever, and the GRPO step's judgeRollouts must turn that into unscorable verdicts with
// the reason (never a 0), counted by the step's judge-failure metrics. Here a stand-in Worker
// (the real client, Comlink and workerJudge on top) receives the calls and never replies, then
// fires the 'error' event a crashed worker fires.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';
import { judgeRollouts } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';
import { startJudgeWorker } from '../../../src/worker/judgeClient';
import { workerJudge } from '../../../src/worker/workerJudge';

class CrashingWorker extends EventTarget {
  static last: CrashingWorker | null = null;
  posted = 0;
  terminated = false;
  constructor() {
    super();
    CrashingWorker.last = this;
  }
  postMessage(): void {
    this.posted++; // received, never answered
  }
  terminate(): void {
    this.terminated = true;
  }
  crash(message: string): void {
    const event = new Event('error', { cancelable: true });
    Object.assign(event, { message });
    this.dispatchEvent(event);
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const rubric = parseRubric({
  name: 'crash',
  criteria: [
    { id: 'short', text: 'Short', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 5 } },
    { id: 'polite', text: 'Is polite', weight: 1, tier: 'essential', judge_question: 'Is the response polite?' },
  ],
});

describe('a judge worker that crashes mid-batch', () => {
  it('its pending questions become unscorable with the crash as the reason; the rules still score', async () => {
    vi.stubGlobal('Worker', CrashingWorker);
    const client = startJudgeWorker();
    const worker = CrashingWorker.last!;
    const judge = workerJudge(client, 'model:tiny');
    const rollouts = [0, 1, 2].map((i) => ({ prompt: 'Say hi', completion: `hello there ${i}` }));
    const pending = judgeRollouts(rubric, 'v1', rollouts, { modelJudge: judge });
    // The batch reached the worker; then the worker dies.
    await vi.waitFor(() => expect(worker.posted).toBeGreaterThan(0));
    worker.crash('out of memory');
    const results = await pending;
    expect(worker.terminated).toBe(true);
    for (const row of results) {
      expect(row[0]).toMatchObject({ criterion_id: 'short', status: 'ok', score: 1 });
      expect(row[1]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason: 'judge "model:tiny" failed: the judge worker stopped: out of memory' });
    }
    const m = judgeFailureMetrics(results.map((r) => ({ results: r, reward: null })), 0.5);
    expect(m).toMatchObject({ verdicts: 6, failed_verdicts: 3, first_reason: 'criterion "polite": judge "model:tiny" failed: the judge worker stopped: out of memory' });
    // Later calls fail at once, with the same reason, instead of waiting on a dead worker.
    const again = await judgeRollouts(rubric, 'v1', rollouts.slice(0, 1), { modelJudge: judge });
    expect(again[0][1].reason).toBe('judge "model:tiny" failed: the judge worker stopped: out of memory');
  }, 10_000); // a client that waited on the dead worker would hang here
});
