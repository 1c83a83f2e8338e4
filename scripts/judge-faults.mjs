#!/usr/bin/env node
// Judge-fault suite: the app's remote judge (src/rubric/judges/remote.ts, loaded through Vite)
// against a loopback OpenAI-compatible server that misbehaves in one way per fault: HTTP 500,
// 429 with an absurd Retry-After, no answer, a slow trickle, malformed JSON, a 64 MB body, an
// HTML error page, answers that are neither yes nor no, a connection reset before and during the
// reply, a 401 echoing the key; plus a well-behaved control. Per fault it judges --questions
// questions and checks: no verdict scored (above all never 0) except the control's, every
// unscorable one with a reason, requests per question <= maxAttempts, the batch within its time
// bound, and the key in no reason, no result and no log line. Then the step-level rule: the
// rollouts of such a batch have no reward, the step counts them with the first reason, and with
// on_unscorable "stop" (max_unscorable_fraction 0.5) the run would end with that message.
//
//   node scripts/judge-faults.mjs [--questions 8] [--out bench/results/judge-faults.json]
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './lib/browser.mjs';

const { values } = parseArgs({ options: { questions: { type: 'string', default: '8' }, out: { type: 'string', default: resolve(repoRoot, 'bench/results/judge-faults.json') } } });
const N = Number(values.questions);
if (!Number.isInteger(N) || N < 1) {
  console.error('usage: node scripts/judge-faults.mjs [--questions N>0] [--out FILE]');
  process.exit(2);
}

const KEY = 'sk-judge-faults-0123456789-DO-NOT-LEAK';
const SETTINGS = { maxAttempts: 3, timeoutMs: 500, backoffMs: 20, maxBackoffMs: 200, concurrency: 4 };
/** One question's worst case: every attempt times out and every wait is the longest. */
const QUESTION_BOUND_MS = SETTINGS.maxAttempts * SETTINGS.timeoutMs + (SETTINGS.maxAttempts - 1) * SETTINGS.maxBackoffMs;

const answer = (res, content) => {
  res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
};
const NON_VERDICTS = ['maybe', '', 'n/a', 'YESNO', 'I cannot judge that.', '<script>alert(1)</script>', 'nope', 'yeah'];

/** fault name → (req, res, nth request of this question) */
const FAULTS = {
  control: (_req, res) => answer(res, 'Yes.'),
  http_500: (_req, res) => res.writeHead(500, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error: { message: 'internal error' } })),
  http_429_retry_after_1_day: (_req, res) => res.writeHead(429, { 'retry-after': '86400', connection: 'close' }).end('rate limited'),
  no_answer: () => {},
  slow_trickle: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    const timer = setInterval(() => res.write(' '), 50);
    res.on('close', () => clearInterval(timer));
  },
  malformed_json: (_req, res) => res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('{"choices": [{"message": '),
  body_64_mb: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    let closed = false;
    res.on('close', () => (closed = true));
    const pump = () => {
      while (!closed && sent < 64 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!closed) res.end();
    };
    pump();
  },
  html_error_page: (_req, res) => res.writeHead(502, { 'content-type': 'text/html', connection: 'close' }).end(`<html><body><h1>502 Bad Gateway</h1>${'<p>upstream</p>'.repeat(10_000)}</body></html>`),
  neither_yes_nor_no: (_req, res, _n, q) => answer(res, NON_VERDICTS[q % NON_VERDICTS.length]),
  reset_before_reply: (req) => req.socket.destroy(),
  reset_mid_body: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000', connection: 'close' });
    res.write('{"choices": [{"message": {"content": "ye');
    setTimeout(() => res.socket?.destroy(), 20);
  },
  http_401_echoing_key: (req, res) =>
    res.writeHead(401, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization).replace('Bearer ', '')}` } })),
};

// Vite loads the app's TypeScript modules as they are (no build, no browser).
const { createServer: createVite } = await import('vite');
const vite = await createVite({ root: repoRoot, configFile: false, logLevel: 'error', server: { middlewareMode: true, hmr: false, watch: null }, appType: 'custom', optimizeDeps: { noDiscovery: true } });
const [{ remoteJudge }, { judgeRollouts }, { parseRubric }, { aggregateGroup }, { scoresOf }, { judgeFailureMetrics, unscorableMessage }] = await Promise.all(
  ['/src/rubric/judges/remote.ts', '/src/rubric/judge.ts', '/src/rubric/schema.ts', '/src/rubric/aggregations.ts', '/src/rubric/aggregate.ts', '/src/rl/judgeFailures.ts'].map((m) => vite.ssrLoadModule(m)),
);

// Every line the judge code logs is kept, to look for the key.
const logged = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    logged.push(args.map(String).join(' '));
    if (level === 'error' && process.env.JUDGE_FAULTS_DEBUG) original(...args);
  };
}
const print = (line) => process.stdout.write(`${line}\n`);

let current = 'control';
/** Requests received per question (the completion text says which). */
let perQuestion = new Map();
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    const q = Number(/answer (\d+)/.exec(raw)?.[1] ?? -1);
    const n = (perQuestion.get(q) ?? 0) + 1;
    perQuestion.set(q, n);
    FAULTS[current](req, res, n, q);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const rubric = parseRubric({ name: 'faults', criteria: [{ id: 'polite', text: 'Is polite', weight: 1, tier: 'essential', judge_question: 'Is the response polite?' }] });
const rows = [];
let stepRule = null;
for (const name of Object.keys(FAULTS)) {
  current = name;
  perQuestion = new Map();
  server.closeAllConnections();
  const judge = remoteJudge({ url, model: 'judge', apiKey: KEY, ...SETTINGS });
  const rollouts = Array.from({ length: N }, (_, i) => ({ prompt: 'Say hi', completion: `answer ${i}` }));
  const t0 = performance.now();
  const results = (await judgeRollouts(rubric, 'v1', rollouts, { modelJudge: judge })).map((r) => r[0]);
  const ms = performance.now() - t0;
  const boundMs = Math.ceil(N / SETTINGS.concurrency) * QUESTION_BOUND_MS + 2000;
  const { rewards } = aggregateGroup(rubric, results.map((r) => scoresOf(rubric, [r])), { method: 'weighted_mean' });
  const failures = judgeFailureMetrics(results.map((r, i) => ({ results: [r], reward: rewards[i] })), 0.5);
  const control = name === 'control';
  const row = {
    fault: name,
    questions: N,
    unscorable: results.filter((r) => r.status === 'unscorable').length,
    scored: results.filter((r) => r.status === 'ok').length,
    scoredZero: results.filter((r) => r.status === 'ok' && r.score === 0).length,
    withoutReason: results.filter((r) => r.status !== 'ok' && !(typeof r.reason === 'string' && r.reason.length > 0)).length,
    nullRewards: rewards.filter((r) => r === null).length,
    maxRequestsPerQuestion: Math.max(0, ...perQuestion.values()),
    requests: [...perQuestion.values()].reduce((a, b) => a + b, 0),
    ms: Math.round(ms),
    boundMs,
    keyLeaks: JSON.stringify(results).includes(KEY) || (failures.first_reason ?? '').includes(KEY) || logged.some((l) => l.includes(KEY)) ? 1 : 0,
    firstReason: failures.first_reason,
  };
  row.ok = control
    ? row.scored === N && row.scoredZero === 0
    : row.scored === 0 && row.unscorable === N && row.withoutReason === 0 && row.nullRewards === N && row.maxRequestsPerQuestion <= SETTINGS.maxAttempts && row.ms <= boundMs && row.keyLeaks === 0;
  rows.push(row);
  if (!control && stepRule === null) stepRule = `${unscorableMessage(0, failures)}. With on_unscorable "stop" (over max_unscorable_fraction 0.5) the run ends as failed with this message; with "warn" (the default) it goes on and the run view warns.`;
  print(
    `${row.ok ? 'ok  ' : 'FAIL'} ${name.padEnd(27)} unscorable ${row.unscorable}/${N}, scored ${row.scored} (0 ${row.scoredZero}), ≤${row.maxRequestsPerQuestion} requests/question (max ${SETTINGS.maxAttempts}), ${row.ms} ms (bound ${boundMs}), key leaks ${row.keyLeaks}` +
      (row.firstReason ? `\n       first reason: ${row.firstReason}` : ''),
  );
}
server.closeAllConnections();
server.close();
await vite.close();

const faults = rows.filter((r) => r.fault !== 'control');
const totals = {
  faults: faults.length,
  questions: faults.reduce((n, r) => n + r.questions, 0),
  scoredWrongly: faults.reduce((n, r) => n + r.scored, 0),
  scoredZero: faults.reduce((n, r) => n + r.scoredZero, 0),
  unscorable: faults.reduce((n, r) => n + r.unscorable, 0),
  overAttempts: faults.filter((r) => r.maxRequestsPerQuestion > SETTINGS.maxAttempts).length,
  overTime: faults.filter((r) => r.ms > r.boundMs).length,
  keyLeaks: rows.reduce((n, r) => n + r.keyLeaks, 0),
  controlOk: rows.find((r) => r.fault === 'control').ok,
};
print(`step rule: ${stepRule}`);
print(
  `faults ${totals.faults}, questions ${totals.questions}, unscorable ${totals.unscorable}, scored ${totals.scoredWrongly} (as 0: ${totals.scoredZero}), ` +
    `over maxAttempts ${totals.overAttempts}, over time bound ${totals.overTime}, key leaks ${totals.keyLeaks}; control ${totals.controlOk ? 'scored' : 'FAILED'}`,
);
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, JSON.stringify({ settings: SETTINGS, questionBoundMs: QUESTION_BOUND_MS, totals, stepRule, rows }, null, 2));
print(`wrote ${values.out}`);
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
