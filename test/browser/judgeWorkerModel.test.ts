// An engine model as the judge in the judge worker: it loads the model on the worker's own GPU
// runtime and scores question criteria exactly as the same model does in the page; and a
// trainer run whose experiment names a 'model' judge gets its questions scored by a nested judge
// worker, with none of that model's weights on the trainer's GPU runtime.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/judgeWorkerModel.ts';
const MODEL = '/test/fixtures/tiny-byte-gpt2/';
type Result = { criterion_id: string; status: string; score: number | null; reason: string };

describe('model judge in the judge worker', () => {
  it('scores questions as the in-page model judge does, cancels, explains bad input and frees the model', { timeout: 120_000 }, async () => {
    const r = await harness.runModule(CASES, 'judgeWorkerVsPage', {});
    expect(r.configured).toEqual({ remote: null, model: { modelId: MODEL, hubEndpoint: null, name: `model:${MODEL}` }, cache: { hits: 0, misses: 0, size: 0 } });

    const fromWorker = r.fromWorker as Result[];
    const fromPage = r.fromPage as Result[];
    expect(fromWorker.map((x) => x.criterion_id)).toEqual(['kind', 'quality', 'kind', 'quality', 'kind', 'quality']);
    fromWorker.forEach((x, i) => {
      expect(x.status, x.reason).toBe('ok');
      expect(x.score).toBeGreaterThan(0);
      expect(x.score).toBeLessThan(1);
      expect(fromPage[i].status).toBe('ok');
      expect(Math.abs(x.score! - fromPage[i].score!)).toBeLessThanOrEqual(1e-6);
    });
    // Different completions get different scores: the worker really judged each item.
    expect(new Set(fromWorker.filter((x) => x.criterion_id === 'kind').map((x) => x.score)).size).toBeGreaterThan(1);
    expect(r.viaProxy).toEqual(r.fromWorker);

    // judge(): rules in the worker, questions by the loaded model, same scores as judgeQuestions.
    expect(r.batch.counts).toEqual({ ok: 9, unscorable: 0, needs_model: 0 });
    (r.batch.results as Result[][]).forEach((row, i) => {
      expect(row.map((x) => x.criterion_id)).toEqual(['kind', 'quality', 'greets']);
      expect(row[0].score).toBe(fromWorker[2 * i].score);
      expect(row[1].score).toBe(fromWorker[2 * i + 1].score);
    });
    expect(r.batch.results[0][2].score).toBe(1);

    expect(r.abort).toMatch(/^AbortError/);
    // Alone in its pass (no padding), the first item scores as it did among the others, to f32 rounding.
    expect(r.afterAbort[0].status).toBe('ok');
    expect(Math.abs(r.afterAbort[0].score - fromWorker[0].score!)).toBeLessThanOrEqual(1e-5);
    expect(r.badRequest).toBe('TypeError: judgeQuestions: requests[0].completion must be a string');
    expect(r.both).toMatch(/give either a remote judge or a model, not both/);
    expect(r.missing).toMatch(/^Error: could not load the judge model "\/test\/fixtures\/no-such-model\/": /);
    expect(r.stateAfterFailures.model).toEqual(r.configured.model);
    expect(r.stillJudging).toEqual(r.afterAbort);

    expect(r.cleared).toEqual({ remote: null, cache: { hits: 0, misses: 0, size: 0 } });
    expect(r.noJudge).toMatch(/the judge worker has no question judge/);
  });

  it("a trainer run with a 'model' judge scores its questions in a nested judge worker", { timeout: 120_000 }, async () => {
    const r = await harness.runModule(CASES, 'trainerWithModelJudge', {});
    expect(r.done.type, JSON.stringify(r.done)).toBe('step');
    const results = r.done.results as Result[][];
    expect(results.length).toBe(8);
    for (const row of results) {
      expect(row[0].criterion_id).toBe('kind');
      expect(row[0].status, row[0].reason).toBe('ok');
      expect(row[0].score).toBeGreaterThan(0);
      expect(row[0].score).toBeLessThan(1);
      expect(row[0].reason).toMatch(/P\("yes"\)/);
    }
    for (const reward of r.done.rewards) expect(Number.isFinite(reward)).toBe(true);
    // The judge model's weights live in the judge worker: the trainer holds what a rules-only run holds.
    expect(r.modelJudgeBytes).toBe(r.rulesBytes);
    expect(r.closed).toBe('resolved');
  });
});
