// "Try it" scoring off the main thread (issue 19): the newest request wins, a stale in-flight
// request terminates its worker, a request past the time budget is stopped and reported (the
// budget counts from the worker's "ready", never its load time), and the pure scorer shares the
// trainer's regex work bound when criteria are judged one by one.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tryResponse } from '../../../src/ui/lib/tryIt';
import { TryItScorer, type TryItReply, type TryItRequest, type WorkerLike } from '../../../src/ui/lib/tryItScorer';
import { draftFromRubric } from '../../../src/ui/lib/rubricDraft';
import { parseGrpoConfig } from '../../../src/rl/config';
import { parseRubric } from '../../../src/rubric';
import { MAX_REGEX_WORK } from '../../../src/rubric/safeRegex';

/** A worker that runs tryResponse when told to (answer()), or never (a slow rubric). */
class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  received: { seq: number; request: TryItRequest }[] = [];
  terminated = false;
  postMessage(message: unknown): void {
    this.received.push(message as { seq: number; request: TryItRequest });
  }
  terminate(): void {
    this.terminated = true;
  }
  /** The worker's module has loaded (what tryIt.worker.ts posts first). */
  loaded(): void {
    this.onmessage?.({ data: { ready: true } } as MessageEvent);
  }
  answer(i = this.received.length - 1): void {
    const { seq, request: r } = this.received[i];
    const reply: TryItReply = { seq, ok: true, result: tryResponse(r.draft, r.rubric, r.config, r.prompt, r.response, r.answers) };
    this.onmessage?.({ data: reply } as MessageEvent);
  }
}

const rubricJson = { name: 'r', criteria: [{ id: 'short', text: 'Short', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 3 } }] };
const request = (response: string): TryItRequest => ({
  draft: draftFromRubric(rubricJson),
  rubric: parseRubric(rubricJson),
  config: parseGrpoConfig({}),
  prompt: 'p',
  response,
  answers: {},
});

describe('TryItScorer', () => {
  let workers: FakeWorker[];
  let scorer: TryItScorer;
  beforeEach(() => {
    vi.useFakeTimers();
    workers = [];
    scorer = new TryItScorer(
      () => {
        const w = new FakeWorker();
        workers.push(w);
        return w;
      },
      3000,
      60_000,
    );
  });
  afterEach(() => {
    scorer.dispose();
    vi.useRealTimers();
  });

  it('scores in the worker and reuses it for the next request', async () => {
    const first = scorer.score(request('one two'));
    workers[0].loaded();
    workers[0].answer();
    const out = await first;
    expect(out?.ok && out.result.rows[0].result?.score).toBe(1);
    const second = scorer.score(request('one two three four'));
    workers[0].answer();
    const out2 = await second;
    expect(out2?.ok && out2.result.rows[0].result?.score).toBe(0);
    expect(workers).toHaveLength(1);
    expect(workers[0].terminated).toBe(false);
  });

  it('a newer request supersedes one in flight: the busy worker is terminated, the old promise resolves null', async () => {
    const stale = scorer.score(request('a b c d e'));
    workers[0].loaded();
    const fresh = scorer.score(request('a'));
    workers[0].loaded(); // a late message from the stopped worker does not make the new one ready
    expect(workers[1].received).toHaveLength(0);
    workers[1].loaded();
    expect(workers).toHaveLength(2);
    expect(workers[0].terminated).toBe(true);
    await expect(stale).resolves.toBeNull();
    workers[0].answer(); // a late answer from the dead worker changes nothing
    workers[1].answer();
    const out = await fresh;
    expect(out?.ok && out.result.rows[0].result?.score).toBe(1);
  });

  it('stops a request that runs past the time budget, says so, and starts a fresh worker next time', async () => {
    const slow = scorer.score(request('x'));
    workers[0].loaded();
    vi.advanceTimersByTime(2999);
    expect(workers[0].terminated).toBe(false);
    vi.advanceTimersByTime(1);
    const out = await slow;
    expect(out?.ok).toBe(false);
    expect(!out?.ok && out?.message).toMatch(/took over 3 s and was stopped.*max_input_chars/);
    expect(workers[0].terminated).toBe(true);
    const next = scorer.score(request('y'));
    expect(workers).toHaveLength(2);
    workers[1].loaded();
    workers[1].answer();
    expect((await next)?.ok).toBe(true);
  });

  it("charges the budget from the worker's ready message, not its load time", async () => {
    const p = scorer.score(request('one two'));
    expect(workers[0].received).toHaveLength(0); // held until the worker has loaded
    vi.advanceTimersByTime(20_000); // a cold worker on a busy machine
    expect(workers[0].terminated).toBe(false);
    workers[0].loaded();
    expect(workers[0].received).toHaveLength(1);
    vi.advanceTimersByTime(2999);
    workers[0].answer();
    const out = await p;
    expect(out?.ok && out.result.rows[0].result?.score).toBe(1);
  });

  it('a newer request while the worker loads replaces the waiting one and keeps the worker', async () => {
    const stale = scorer.score(request('a b c d e'));
    const fresh = scorer.score(request('a'));
    await expect(stale).resolves.toBeNull();
    expect(workers).toHaveLength(1);
    expect(workers[0].terminated).toBe(false);
    workers[0].loaded();
    expect(workers[0].received.map((m) => m.request.response)).toEqual(['a']);
    workers[0].answer();
    const out = await fresh;
    expect(out?.ok && out.result.rows[0].result?.score).toBe(1);
  });

  it('a worker that never loads is stopped after the start-up limit, with its own message', async () => {
    const p = scorer.score(request('x'));
    vi.advanceTimersByTime(59_999);
    expect(workers[0].terminated).toBe(false);
    vi.advanceTimersByTime(1);
    const out = await p;
    expect(!out?.ok && out?.message).toMatch(/scoring worker did not start in 60 s/);
    expect(workers[0].terminated).toBe(true);
    const next = scorer.score(request('y'));
    expect(workers).toHaveLength(2);
    workers[1].loaded();
    workers[1].answer();
    expect((await next)?.ok).toBe(true);
  });

  it('reports a worker error as a message, not a hang', async () => {
    const p = scorer.score(request('x'));
    workers[0].onerror?.({ message: 'boom', preventDefault() {} } as ErrorEvent);
    const out = await p;
    expect(!out?.ok && out?.message).toContain('boom');
  });
});

describe('tryResponse and the regex work bound', () => {
  it('judges an over-budget rubric criterion by criterion only until the bound, and names why the rest did not run', () => {
    const criteria = Array.from({ length: 30 }, (_, i) => ({
      id: `r${i}`,
      text: 't',
      weight: 1,
      tier: 'optional',
      rule: { kind: 'regex', pattern: '\\w{0,498}\\W', max_input_chars: 20_000 }, // each alone within the bound
    }));
    const draft = draftFromRubric({ name: 'slow', criteria });
    expect(() => parseRubric({ name: 'slow', criteria })).toThrow(/too costly|could cost/);
    const response = 'a'.repeat(10_000); // 999 instructions x 10,000 = 10^7 per criterion: two fit in 2 x 10^7
    expect(MAX_REGEX_WORK).toBe(20_000_000);
    const r = tryResponse(draft, null, parseGrpoConfig({}), 'p', response);
    const ran = r.rows.filter((row) => row.result !== null);
    expect(ran).toHaveLength(2);
    expect(r.rows[2].invalid).toMatch(/^not run: /);
    expect(r.reward).toBeNull();
  });

  it('a criterion too costly even alone is not run, and its row says why in its own terms', () => {
    const criteria = [{ id: 'big', text: 't', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '\\w{0,498}\\W', max_input_chars: 100_000 } }];
    const r = tryResponse(draftFromRubric({ name: 'x', criteria }), null, parseGrpoConfig({}), 'p', 'a'.repeat(50_000));
    expect(r.rows[0].result).toBeNull();
    expect(r.rows[0].invalid).toMatch(/^criterion: the regex rules could cost 99,900,000 units on one response .*above the limit of 20,000,000/);
    expect(r.rows[0].invalid).not.toMatch(/Costliest|criterion 1/);
  });
});
