// The remote judge against a loopback OpenAI-compatible server that misbehaves in each way a
// real endpoint can: HTTP 500, 429 with Retry-After (small and absurd), no answer, a slow
// trickle, malformed JSON, a body of tens of MB (and a huge error body), answers that are
// neither yes nor no, a connection reset before or during the reply. For each: every verdict is
// unscorable with a reason naming the fault (never a score of 0), the requests per question stay
// within maxAttempts, the whole batch within its bound, and the key (which the server echoes
// back) appears in no result and no log line. Downstream, such a rollout has no reward and the
// step's judge-failure metrics count it with the first reason.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';
import { aggregateGroup } from '../../../src/rubric/aggregations';
import { scoresOf } from '../../../src/rubric/aggregate';
import { judgeRollouts } from '../../../src/rubric/judge';
import { MAX_REPLY_BYTES, remoteJudge, type RemoteJudgeConfig } from '../../../src/rubric/judges/remote';
import { parseRubric } from '../../../src/rubric/schema';

const KEY = 'sk-fault-0123456789-DO-NOT-LEAK';
type Fault = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server;
let base: string;
let fault: Fault;
let requests = 0;
/** Bytes of body the server got written before the client went away (the huge-body fault). */
let written = 0;

const ok = (res: ServerResponse, content: string) => {
  res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
  res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      fault(req, res, requests);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const logged: string[] = [];
beforeEach(() => {
  requests = 0;
  written = 0;
  logged.length = 0;
  server.closeAllConnections();
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

const rubric = parseRubric({
  name: 'faults',
  criteria: [{ id: 'polite', text: 'Is polite', weight: 1, tier: 'essential', judge_question: 'Is the response polite?' }],
});
const polite = rubric.criteria[0];
const ATTEMPTS = 3;
const TIMEOUT_MS = 300;
const MAX_BACKOFF_MS = 100;
const config = (extra: Partial<RemoteJudgeConfig> = {}): RemoteJudgeConfig => ({
  url: base,
  model: 'judge',
  apiKey: KEY,
  maxAttempts: ATTEMPTS,
  timeoutMs: TIMEOUT_MS,
  backoffMs: 10,
  maxBackoffMs: MAX_BACKOFF_MS,
  concurrency: 2,
  ...extra,
});
/** The worst case for one question: every attempt times out, every wait is the longest. */
const BOUND_MS = ATTEMPTS * TIMEOUT_MS + (ATTEMPTS - 1) * MAX_BACKOFF_MS;

/** Judges `n` questions; checks what every fault must give; returns the reasons. */
async function judgeUnderFault(n: number, expectedReason: RegExp, { attempts = ATTEMPTS }: { attempts?: number } = {}): Promise<string[]> {
  const t0 = performance.now();
  const out = await remoteJudge(config()).judge(Array.from({ length: n }, (_, i) => ({ rubricVersion: 'v', prompt: 'Say hi', completion: `answer ${i}`, criterion: polite })));
  const ms = performance.now() - t0;
  expect(out).toHaveLength(n);
  for (const r of out) {
    expect(r.status).toBe('unscorable');
    expect(r.score).toBeNull();
    expect(r.reason).toMatch(expectedReason);
    expect(r.reason.length).toBeLessThan(600);
  }
  // Bounded retries: at most maxAttempts requests per question (fewer may arrive: an attempt on a
  // pooled socket the server closed fails before reaching it); bounded time (2 lanes, slack for a busy machine).
  expect(requests).toBeLessThanOrEqual(n * attempts);
  expect(requests).toBeGreaterThanOrEqual(n);
  expect(ms).toBeLessThan(Math.ceil(n / 2) * BOUND_MS + 10_000);
  expect(JSON.stringify(out)).not.toContain(KEY);
  expect(logged.join('\n')).not.toContain(KEY);
  return out.map((r) => r.reason);
}

describe('a misbehaving endpoint: every verdict unscorable with its reason, bounded, the key never shown', () => {
  it('HTTP 500 every time (with the key echoed in the error)', async () => {
    fault = (_req, res) => {
      res.writeHead(500, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(JSON.stringify({ error: { message: `backend down for key ${KEY}` } }));
    };
    const [reason] = await judgeUnderFault(2, /^HTTP 500 from the endpoint: "backend down for key \[api key\]" \(gave up after 3 attempts\)$/);
    expect(reason).toContain('[api key]');
  });

  it('429 with Retry-After: a small one is honoured, an absurd one is capped at maxBackoffMs', async () => {
    for (const retryAfter of ['0.05', '86400', 'Wed, 21 Oct 2099 07:28:00 GMT', 'soon']) {
      requests = 0;
      fault = (_req, res) => {
        res.writeHead(429, { 'Retry-After': retryAfter, Connection: 'close' });
        res.end('slow down');
      };
      await judgeUnderFault(1, /^HTTP 429 from the endpoint: "slow down" \(gave up after 3 attempts\)$/);
    }
  });

  it('no answer at all: each attempt times out', async () => {
    fault = () => {}; // holds the request open
    await judgeUnderFault(2, /^no complete reply within 300 ms \(gave up after 3 attempts\)$/);
  });

  it('a slow trickle: headers at once, then a byte every 40 ms, never finishing in time', async () => {
    fault = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
      const timer = setInterval(() => res.write(' '), 40);
      res.on('close', () => clearInterval(timer));
    };
    await judgeUnderFault(2, /^no complete reply within 300 ms \(gave up after 3 attempts\)$/);
  });

  it('malformed JSON, a reply without content, a truncated body: not retried, reason quoted', async () => {
    const bodies = ['{"choices": [', '<html><script>alert(1)</script></html>', '{"choices": []}', JSON.stringify({ choices: [{ message: { content: 42 } }] })];
    for (const body of bodies) {
      requests = 0;
      fault = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
        res.end(body);
      };
      await judgeUnderFault(1, /^the endpoint(?: sent malformed JSON|'s reply has no choices\[0\]\.message\.content): "/, { attempts: 1 });
    }
  });

  it('a body of tens of MB is not read past MAX_REPLY_BYTES; a huge error body is quoted short', async () => {
    const TOTAL = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    fault = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
      let closed = false;
      res.on('close', () => (closed = true));
      const pump = () => {
        while (!closed && written < TOTAL) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!closed) res.end();
      };
      pump();
    };
    await judgeUnderFault(1, new RegExp(`^the endpoint's reply is larger than ${MAX_REPLY_BYTES} bytes`), { attempts: 1 });
    // The client went away after about 1 MiB (plus what the socket buffers held), not 64 MB.
    expect(written).toBeLessThan(16 * 1024 * 1024);

    requests = 0;
    fault = (_req, res) => {
      res.writeHead(503, { Connection: 'close' });
      res.end(`${KEY} ${'overloaded '.repeat(500_000)}`);
    };
    await judgeUnderFault(1, /^HTTP 503 from the endpoint: "\[api key\] overloaded overloaded .*…" \(gave up after 3 attempts\)$/);
  });

  it('answers that are neither yes nor no are unscorable, quoted short; "Yes." still scores (the control)', async () => {
    const answers = ['', 'maybe', 'yeah', 'YESNO', 'nope', 'n/a', 'Not sure.', 'I cannot answer that', '<script>alert(1)</script>', 'no'.repeat(50_000), `${KEY}`];
    for (const answer of answers) {
      requests = 0;
      fault = (_req, res) => ok(res, answer);
      const [reason] = await judgeUnderFault(1, /^the judge answered ".*", which is none of \["no","yes"\]$/, { attempts: 1 });
      expect(reason.length).toBeLessThan(300);
    }
    requests = 0;
    fault = (_req, res) => ok(res, 'Yes.');
    const [good] = await remoteJudge(config()).judge([{ rubricVersion: 'v', prompt: 'p', completion: 'c', criterion: polite }]);
    expect(good).toMatchObject({ status: 'ok', score: 1 });
  });

  it('a connection reset before any reply, and one in the middle of the body', async () => {
    fault = (req) => req.socket.destroy();
    await judgeUnderFault(2, /^network error: .* \(gave up after 3 attempts\)$/);
    requests = 0;
    fault = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000', Connection: 'close' });
      res.write('{"choices": [{"message": {"content": "ye');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    await judgeUnderFault(2, /^network error: .* \(gave up after 3 attempts\)$/);
  });
});

describe('downstream: a failing judge gives no reward, counted, never 0', () => {
  it('the rollouts are unscorable, the reward null, and the step counts them with the first reason', async () => {
    fault = (_req, res) => {
      res.writeHead(500, { Connection: 'close' });
      res.end(`boom ${KEY}`);
    };
    const rollouts = [0, 1, 2, 3].map((i) => ({ prompt: 'Say hi', completion: `answer ${i}` }));
    const results = await judgeRollouts(rubric, 'v1', rollouts, { modelJudge: remoteJudge(config({ maxAttempts: 2 })) });
    expect(results.flat().every((r) => r.status === 'unscorable' && r.score === null)).toBe(true);
    const { rewards } = aggregateGroup(rubric, results.map((r) => scoresOf(rubric, r)), { method: 'weighted_mean' });
    expect(rewards).toEqual([null, null, null, null]);
    const m = judgeFailureMetrics(results.map((r, i) => ({ results: r, reward: rewards[i] })), 0.5);
    expect(m).toMatchObject({ rollouts: 4, unscorable_rollouts: 4, unscorable_fraction: 1, verdicts: 4, failed_verdicts: 4, over_threshold: true });
    expect(m.first_reason).toMatch(/^criterion "polite": HTTP 500 from the endpoint: "boom \[api key\]" \(gave up after 2 attempts\)$/);
    expect(requests).toBe(4 * 2);
  });
});
