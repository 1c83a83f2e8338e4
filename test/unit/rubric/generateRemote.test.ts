// Rubric generation driven by the remote judge's endpoint (RemoteJudge.complete) against a local
// OpenAI-compatible stand-in on 127.0.0.1: the request, retries, failures, and a drafted rubric.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { draftRubric, GenerationError } from '../../../src/rubric/generate';
import { remoteJudge } from '../../../src/rubric/judges/remote';

interface Body {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
}
let server: Server;
let base: string;
let bodies: Body[];
let auth: (string | undefined)[];
let replies: { status: number; content: string }[];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      auth.push(req.headers.authorization);
      const r = replies.shift() ?? { status: 500, content: 'no reply scripted' };
      res.writeHead(r.status, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(r.status === 200 ? JSON.stringify({ choices: [{ message: { role: 'assistant', content: r.content } }] }) : JSON.stringify({ error: { message: r.content } }));
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
  bodies = [];
  auth = [];
  replies = [];
});

const judge = () => remoteJudge({ url: base, model: 'gen-model', apiKey: 'k-123', maxAttempts: 2, backoffMs: 0, maxBackoffMs: 0, temperature: 0 });
const RUBRIC = JSON.stringify({ criteria: [{ id: 'answer', text: 'States the answer', weight: 2, tier: 'essential', judge_question: 'Does it state the answer?' }] });

describe('RemoteJudge.complete', () => {
  it('sends the messages with a rubric-sized token budget and returns the reply text', async () => {
    replies.push({ status: 200, content: 'hello' });
    expect(await judge().complete({ system: 'S', user: 'U' }, { maxTokens: 777, temperature: 0.8 })).toBe('hello');
    expect(bodies[0]).toEqual({ model: 'gen-model', messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }], temperature: 0.8, max_tokens: 777 });
    expect(auth[0]).toBe('Bearer k-123');
  });
  it('retries a 500 and gives up with the reason; a 401 is not retried', async () => {
    replies.push({ status: 500, content: 'busy' }, { status: 200, content: 'ok' });
    expect(await judge().complete({ system: 'S', user: 'U' })).toBe('ok');
    expect(bodies[1].max_tokens).toBe(1024);
    replies.push({ status: 500, content: 'busy' }, { status: 500, content: 'busy' });
    await expect(judge().complete({ system: 'S', user: 'U' })).rejects.toThrow(/HTTP 500 from the endpoint: "busy" \(gave up after 2 attempts\)/);
    bodies = [];
    replies.push({ status: 401, content: 'bad key' });
    await expect(judge().complete({ system: 'S', user: 'U' })).rejects.toThrow(/HTTP 401/);
    expect(bodies).toHaveLength(1);
  });
});

describe('draftRubric through the endpoint', () => {
  it('drafts a rubric from the prompt', async () => {
    replies.push({ status: 200, content: `Here you go:\n\`\`\`json\n${RUBRIC}\n\`\`\`` });
    const j = judge();
    const rubric = await draftRubric((m, o) => j.complete(m, o), 'Explain tides.', { name: 'tides' });
    expect(rubric).toEqual({ name: 'tides', criteria: [{ id: 'answer', text: 'States the answer', weight: 2, tier: 'essential', judge_question: 'Does it state the answer?', choices: ['no', 'yes'] }] });
    expect(bodies[0].messages[1].content).toContain('<prompt>\nExplain tides.\n</prompt>');
  });
  it('a truncated reply is a GenerationError, not a partial rubric', async () => {
    replies.push({ status: 200, content: RUBRIC.slice(0, 60) });
    const j = judge();
    await expect(draftRubric((m, o) => j.complete(m, o), 'Explain tides.')).rejects.toBeInstanceOf(GenerationError);
  });
});
