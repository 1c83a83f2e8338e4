// The remote judge against a real local HTTP server (node:http on 127.0.0.1) that imitates an
// OpenAI-compatible chat completions endpoint: answers, retries, backoff, timeouts, malformed
// replies, aborts, the key's privacy, and judgeRollouts turning failures into 'unscorable'.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { judgeRollouts, type JudgeRequest } from '../../../src/rubric/judge';
import { parseRubric, type Criterion } from '../../../src/rubric/schema';
import { describeRemoteJudge, matchChoice, remoteJudge, type RemoteJudgeConfig } from '../../../src/rubric/judges/remote';

interface Seen {
  at: number;
  headers: IncomingMessage['headers'];
  body: { model: string; messages: { role: string; content: string }[]; temperature?: number; max_tokens?: number };
}
type Handler = (seen: Seen, res: ServerResponse, n: number) => void;

let server: Server;
let base: string;
let handler: Handler;
let seen: Seen[];
let inFlight = 0;
let maxInFlight = 0;

const reply = (res: ServerResponse, content: unknown, status = 200, headers: Record<string, string> = {}) => {
  // No keep-alive: beforeEach closes leftover (hanging) connections, which must not hit a reused socket.
  res.writeHead(status, { 'Content-Type': 'application/json', Connection: 'close', ...headers });
  res.end(typeof content === 'string' && status !== 200 ? content : JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
};
/** The response text the judge was shown (between the <response> tags). */
const responseOf = (s: Seen) => /<response>\n([\s\S]*?)\n<\/response>/.exec(s.body.messages[1].content)![1];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => inFlight--);
      const s: Seen = { at: performance.now(), headers: req.headers, body: JSON.parse(raw) };
      seen.push(s);
      handler(s, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
  maxInFlight = 0;
  server.closeAllConnections(); // hanging replies of an earlier test
});

const rubric = parseRubric({
  name: 'remote',
  criteria: [
    { id: 'greets', text: 'Greets the user', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['hello'] } },
    { id: 'polite', text: 'Is polite', weight: 2, tier: 'important', judge_question: 'Is the response polite?' },
    { id: 'warmth', text: 'Warm tone', weight: 1, tier: 'optional', judge_question: 'How warm is the tone?', choices: ['cold', 'neutral', 'warm'] },
  ],
});
const polite = rubric.criteria[1];
const warmth = rubric.criteria[2];
const request = (completion: string, criterion: Criterion = polite, prompt = 'Say hi'): JudgeRequest => ({ rubricVersion: 'v1', prompt, completion, criterion });
const KEY = 'sk-test-0123456789abcdef';
const config = (extra: Partial<RemoteJudgeConfig> = {}): RemoteJudgeConfig => ({ url: base, model: 'judge-mini', apiKey: KEY, backoffMs: 10, maxBackoffMs: 200, ...extra });

describe('remote judge: answers', () => {
  it('asks the question about the prompt and response, sends the key, and maps answers to choices', async () => {
    handler = (s, res) => reply(res, responseOf(s).includes('please') ? 'Yes.' : ' **no** ');
    const judge = remoteJudge(config());
    const out = await judge.judge([request('hello, please sit'), request('go away')]);
    expect(out).toEqual([
      { criterion_id: 'polite', status: 'ok', score: 1, reason: 'the judge answered "yes"' },
      { criterion_id: 'polite', status: 'ok', score: 0, reason: 'the judge answered "no"' },
    ]);
    expect(seen).toHaveLength(2);
    const first = seen.find((s) => responseOf(s) === 'hello, please sit')!;
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.body.model).toBe('judge-mini');
    expect(first.body.temperature).toBe(0);
    expect(first.body.max_tokens).toBe(16);
    const [system, user] = first.body.messages;
    expect([system.role, user.role]).toEqual(['system', 'user']);
    expect(user.content).toContain('<prompt>\nSay hi\n</prompt>');
    expect(user.content).toContain('Is polite');
    expect(user.content).toContain('Question: Is the response polite?');
    expect(user.content).toContain('Answer with exactly one of "no" or "yes".');
  });

  it('scores ordinal choices index / (n - 1)', async () => {
    const answers: Record<string, string> = { a: 'Warm', b: 'neutral', c: 'Answer: cold' };
    handler = (s, res) => reply(res, answers[responseOf(s)]);
    const out = await remoteJudge(config()).judge(['a', 'b', 'c'].map((c) => request(c, warmth)));
    expect(out.map((r) => r.score)).toEqual([1, 0.5, 0]);
    expect(seen[0].body.messages[1].content).toContain('The answers run from worst to best: "cold", "neutral" or "warm".');
  });

  it('sends no Authorization header without a key, and leaves out null sampling fields', async () => {
    handler = (_, res) => reply(res, 'yes');
    await remoteJudge({ url: `${base}/chat/completions`, model: 'm', temperature: null, maxTokens: null }).judge([request('x')]);
    expect(seen[0].headers.authorization).toBeUndefined();
    expect('temperature' in seen[0].body || 'max_tokens' in seen[0].body).toBe(false);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    handler = (_, res) => setTimeout(() => reply(res, 'yes'), 30);
    const answered: number[] = [];
    const out = await remoteJudge(config({ concurrency: 2 })).judge(Array.from({ length: 7 }, (_, i) => request(`r${i}`)), { onAnswered: (n) => answered.push(n) });
    expect(out.every((r) => r.status === 'ok')).toBe(true);
    expect(seen).toHaveLength(7);
    expect(maxInFlight).toBe(2);
    // Progress: one call per answer as it comes (the judging stage's count).
    expect(answered).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('remote judge: failures are unscorable, never 0', () => {
  it('retries a 500, then scores', async () => {
    handler = (_, res, n) => (n === 1 ? reply(res, '{"error":{"message":"overloaded"}}', 500) : reply(res, 'yes'));
    const out = await remoteJudge(config()).judge([request('x')]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1 });
    expect(seen).toHaveLength(2);
  });

  it('backs off after a 429, honouring Retry-After', async () => {
    handler = (_, res, n) => (n === 1 ? reply(res, 'slow down', 429, { 'Retry-After': '0.15' }) : reply(res, 'no'));
    const out = await remoteJudge(config({ maxBackoffMs: 1000 }), { random: () => 0 }).judge([request('x')]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 0 });
    expect(seen).toHaveLength(2);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(140);
  });

  it('waits exponentially longer between tries (jittered), and gives up after maxAttempts', async () => {
    handler = (_, res) => reply(res, 'busy', 503);
    const out = await remoteJudge(config({ backoffMs: 40, maxBackoffMs: 1000, maxAttempts: 3 }), { random: () => 0 }).judge([request('x')]);
    expect(out[0]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason: 'HTTP 503 from the endpoint: "busy" (gave up after 3 attempts)' });
    expect(seen).toHaveLength(3);
    // random() = 0 → waits of 0.5 · 40 · 2^(k-1): 20 ms, then 40 ms.
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(18);
    expect(seen[2].at - seen[1].at).toBeGreaterThanOrEqual(38);
  });

  it('times out a hanging response', async () => {
    handler = () => {}; // never answers
    const t0 = performance.now();
    const out = await remoteJudge(config({ timeoutMs: 150, maxAttempts: 2 })).judge([request('x')]);
    expect(out[0]).toEqual({ criterion_id: 'polite', status: 'unscorable', score: null, reason: 'no complete reply within 150 ms (gave up after 2 attempts)' });
    expect(seen).toHaveLength(2);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('marks malformed JSON, a reply without content and an answer outside the choices unscorable', async () => {
    const bodies: Record<string, string> = {
      a: '{"choices": [ {"message": ',
      b: '{"id": "x", "choices": []}',
      c: JSON.stringify({ choices: [{ message: { content: 'maybe, it is hard to say' } }] }),
      d: JSON.stringify({ choices: [{ message: { content: [{ type: 'text', text: 'ye' }, { type: 'text', text: 's' }] } }] }),
    };
    handler = (s, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(bodies[responseOf(s)]);
    };
    const out = await remoteJudge(config()).judge(['a', 'b', 'c', 'd'].map((c) => request(c)));
    expect(out.map((r) => r.status)).toEqual(['unscorable', 'unscorable', 'unscorable', 'ok']);
    expect(out[0].reason).toBe('the endpoint sent malformed JSON: "{\\"choices\\": [ {\\"message\\":"');
    expect(out[1].reason).toMatch(/^the endpoint's reply has no choices\[0\]\.message\.content/);
    expect(out[2].reason).toBe('the judge answered "maybe, it is hard to say", which is none of ["no","yes"]');
    expect(seen).toHaveLength(4); // none of these is retried
  });

  it('retries network errors, then reports them', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const out = await remoteJudge(config({ url: `http://127.0.0.1:${port}/v1`, maxAttempts: 2 })).judge([request('x')]);
    expect(out[0].status).toBe('unscorable');
    expect(out[0].reason).toMatch(/^network error: .* \(gave up after 2 attempts\)$/);
  });

  it('stops sending after a 401 (every request would fail alike) and never quotes the key', async () => {
    handler = (_, res) => reply(res, JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }), 401);
    const out = await remoteJudge(config({ concurrency: 1 })).judge([request('a'), request('b'), request('c')]);
    expect(seen).toHaveLength(1);
    expect(out[0].reason).toBe('HTTP 401 from the endpoint: "Incorrect API key provided: [api key]"');
    expect(out[2].reason).toBe(`${out[0].reason} (not sent: an earlier request got this answer)`);
    expect(out.every((r) => r.status === 'unscorable' && r.score === null)).toBe(true);
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it('stops mid-batch when the outer signal aborts, cancelling requests in flight', async () => {
    handler = (s, res) => (responseOf(s) === 'fast' ? reply(res, 'yes') : undefined); // the rest hang
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const t0 = performance.now();
    const batch = [request('fast'), ...Array.from({ length: 6 }, (_, i) => request(`slow${i}`))];
    await expect(remoteJudge(config({ concurrency: 2, timeoutMs: 10_000 })).judge(batch, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(seen.length).toBeLessThan(batch.length); // the queue was not drained
    await new Promise((r) => setTimeout(r, 50));
    expect(inFlight).toBe(0); // the server saw the hanging requests closed

    // judgeRollouts rethrows an abort rather than scoring.
    const again = new AbortController();
    setTimeout(() => again.abort(), 50);
    await expect(
      judgeRollouts(rubric, 'v1', [{ prompt: 'p', completion: 'slow' }], { modelJudge: remoteJudge(config()), signal: again.signal }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('remote judge: the key stays private', () => {
  it('toJSON, describeRemoteJudge, inspect and own properties omit the key', () => {
    const judge = remoteJudge(config());
    const described = describeRemoteJudge(config());
    expect(JSON.stringify(judge)).not.toContain(KEY);
    expect(JSON.stringify(described)).not.toContain(KEY);
    expect(inspect(judge, { depth: 5, showHidden: true })).not.toContain(KEY);
    expect(Object.values(judge).join(' ')).not.toContain(KEY);
    expect(JSON.parse(JSON.stringify(judge))).toEqual(described);
    expect(described).toEqual({
      kind: 'openai-chat',
      url: `${base}/chat/completions`,
      model: 'judge-mini',
      concurrency: 4,
      maxAttempts: 4,
      timeoutMs: 30_000,
      backoffMs: 10,
      maxBackoffMs: 200,
      temperature: 0,
      maxTokens: 16,
      hasApiKey: true,
    });
    expect(judge.name).toBe('remote:judge-mini');
  });

  it('rejects bad configs with a RangeError naming the field', () => {
    const bad: [Partial<RemoteJudgeConfig>, RegExp][] = [
      [{ url: 'not a url' }, /^url "not a url" is not a valid absolute URL$/],
      [{ url: 'file:///etc/passwd' }, /^url must be http or https/],
      [{ url: 'https://user:secret@example.com/v1' }, /^url must not contain credentials/],
      [{ model: ' ' }, /^model must be/],
      [{ apiKey: 'has space' }, /^apiKey must be printable ASCII/],
      [{ concurrency: 0 }, /^concurrency must be an integer in \[1, 32\]/],
      [{ maxAttempts: 1.5 }, /^maxAttempts must be/],
      [{ timeoutMs: -1 }, /^timeoutMs must be/],
      [{ backoffMs: 500, maxBackoffMs: 100 }, /^maxBackoffMs 100 is below backoffMs 500$/],
      [{ temperature: 3 }, /^temperature must be in \[0, 2\] or null/],
    ];
    for (const [extra, message] of bad) {
      expect(() => remoteJudge(config(extra))).toThrow(RangeError);
      expect(() => remoteJudge(config(extra))).toThrow(message);
    }
    // The key never shows in a config error.
    expect(() => remoteJudge(config({ apiKey: 'sk secret' }))).not.toThrow(/secret/);
  });
});

describe('remote judge: a key bound to its origin', () => {
  const origin = () => new URL(base).origin;

  it('sends a bound key to its own origin (any path there)', async () => {
    handler = (_s, res) => reply(res, 'yes');
    const judge = remoteJudge(config({ apiKeyOrigin: origin() }));
    expect(judge.toJSON().hasApiKey).toBe(true);
    const out = await judge.judge([request('hello')]);
    expect(out[0].status).toBe('ok');
    expect(seen.map((s) => s.headers.authorization)).toEqual([`Bearer ${KEY}`]);
    expect(describeRemoteJudge(config({ url: `${base}/other`, apiKeyOrigin: origin() })).hasApiKey).toBe(true);
  });

  it('never sends a key to another origin: no request at all, every answer unscorable naming both sites', async () => {
    handler = (_s, res) => reply(res, 'yes');
    // The key was entered for another port of the same host, then for another host: both refused.
    for (const keyOrigin of ['http://127.0.0.1:1', 'https://judge.example', `${origin()}/`, origin().replace('http:', 'https:')]) {
      const judge = remoteJudge(config({ apiKeyOrigin: keyOrigin }));
      expect(judge.toJSON().hasApiKey).toBe(false);
      const out = await judge.judge([request('hello'), request('bye', warmth)]);
      expect(out.map((r) => r.status)).toEqual(['unscorable', 'unscorable']);
      expect(out.map((r) => r.criterion_id)).toEqual(['polite', 'warmth']);
      expect(out[0].reason).toContain(`the API key was entered for ${JSON.stringify(keyOrigin)}`);
      expect(out[0].reason).toContain(`the judge's endpoint is at ${JSON.stringify(origin())}`);
      expect(out[0].reason).toContain('no request was sent');
      expect(JSON.stringify(out)).not.toContain(KEY);
      expect(inspect(judge, { showHidden: true, depth: 5 })).not.toContain(KEY);
    }
    expect(seen).toEqual([]);
  });

  it('a key without an origin (a CLI reading it for this endpoint) and no key at all are unchanged', async () => {
    handler = (_s, res) => reply(res, 'no');
    await remoteJudge(config()).judge([request('hello')]);
    await remoteJudge(config({ apiKey: undefined, apiKeyOrigin: 'https://judge.example' })).judge([request('hello')]);
    expect(seen.map((s) => s.headers.authorization)).toEqual([`Bearer ${KEY}`, undefined]);
    expect(() => remoteJudge(config({ apiKeyOrigin: 42 as unknown as string }))).toThrow(/^apiKeyOrigin must be a string$/);
  });
});

describe('matchChoice', () => {
  it('accepts the answer alone or leading, case and decoration aside; rejects anything else', () => {
    const yn = ['no', 'yes'];
    expect(matchChoice(yn, 'YES')).toBe(1);
    expect(matchChoice(yn, '"No."')).toBe(0);
    expect(matchChoice(yn, '<think>maybe yes</think>\nNo')).toBe(0);
    expect(matchChoice(yn, 'No, it is rude.')).toBe(0);
    expect(matchChoice(yn, 'Final answer: **yes**')).toBe(1);
    expect(matchChoice(yn, 'Not really')).toBeNull();
    expect(matchChoice(yn, 'yesterday')).toBeNull();
    expect(matchChoice(yn, 'I think yes')).toBeNull();
    expect(matchChoice(yn, '')).toBeNull();
    expect(matchChoice(['not met', 'partly met', 'met'], 'Partly met.')).toBe(1);
    expect(matchChoice(['no', 'no way'], 'no way!')).toBe(1); // the longest leading choice
  });
});

describe('judgeRollouts with a remote judge', () => {
  it('scores what the endpoint answers, marks failures unscorable and counts them', async () => {
    // "polite": yes/no by "please"; "warmth": 500 for "boom" (after retries), nonsense for "huh".
    handler = (s, res) => {
      const text = responseOf(s);
      if (s.body.messages[1].content.includes('How warm')) {
        if (text.includes('boom')) return reply(res, 'down', 500);
        return reply(res, text.includes('huh') ? 'purple' : 'warm');
      }
      reply(res, text.includes('please') ? 'yes' : 'no');
    };
    const rollouts = [
      { prompt: 'p', completion: 'hello, please' },
      { prompt: 'p', completion: 'boom' },
      { prompt: 'p', completion: 'hello huh' },
    ];
    const out = await judgeRollouts(rubric, 'v1', rollouts, { modelJudge: remoteJudge(config({ maxAttempts: 2 })) });
    expect(out.map((row) => row.map((r) => r.score))).toEqual([
      [1, 1, 1],
      [0, 0, null],
      [1, 0, null],
    ]);
    const unscorable = out.flat().filter((r) => r.status === 'unscorable');
    expect(unscorable).toHaveLength(2);
    expect(unscorable.map((r) => r.reason)).toEqual([
      'HTTP 500 from the endpoint: "down" (gave up after 2 attempts)',
      'the judge answered "purple", which is none of ["cold","neutral","warm"]',
    ]);
    expect(seen).toHaveLength(7); // 6 questions + 1 retry
  });
});
