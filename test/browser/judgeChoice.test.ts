// The experiment's judge choice reaches the GRPO step: the frozen policy (self), another model
// on the engine, or a remote endpoint whose key is used for the request and appears nowhere in
// rollouts or metrics. Also the per-token inspector data every rollout carries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/judgeChoice.ts';
type Result = { criterion_id: string; status: string; score: number | null; reason: string };

describe('judge choice', () => {
  it('rules only: the judge question stays unscored', async () => {
    const r = await harness.runModule(CASES, 'stepWithJudge', { judge: { kind: 'rules' } });
    expect(r.judgeName).toBeNull();
    for (const results of r.results as Result[][]) expect(results[0].status).toBe('needs_model');
    // A rollout with an unscored criterion has no reward (it is unscorable, never scored 0).
    expect(r.rewards).toEqual(Array(8).fill(null));
  });

  it('self: the frozen starting policy scores the question as a probability, and its weights are freed', async () => {
    const r = await harness.runModule(CASES, 'stepWithJudge', { judge: { kind: 'self' } });
    expect(r.judgeName).toBe('self');
    for (const results of r.results as Result[][]) {
      expect(results[0].status, results[0].reason).toBe('ok');
      expect(results[0].score).toBeGreaterThan(0);
      expect(results[0].score).toBeLessThan(1);
      expect(results[0].reason).toMatch(/P\("yes"\)/);
    }
    expect(r.bytesAfterRelease).toBeLessThan(r.bytesWithJudge);
  });

  it('model: another model by id judges', async () => {
    const r = await harness.runModule(CASES, 'stepWithJudge', { judge: { kind: 'model', model: '/test/fixtures/tiny-byte-gpt2/' } });
    expect(r.judgeName).toBe('model:/test/fixtures/tiny-byte-gpt2/');
    for (const results of r.results as Result[][]) expect(results[0].status).toBe('ok');
  });

  it('remote: the key goes in the Authorization header only, never into rollouts or metrics', async () => {
    const key = 'sk-test-0123456789abcdef';
    const r = await harness.runModule(CASES, 'stepWithJudge', { judge: { kind: 'remote', url: 'https://judge.example.test/v1', model: 'judge-1', max_attempts: 1 }, apiKey: key, reply: 'no' });
    expect(r.sent.length).toBe(8);
    for (const s of r.sent) {
      expect(s.url).toBe('https://judge.example.test/v1/chat/completions');
      expect(s.authorization).toBe(`Bearer ${key}`);
      expect(s.body).not.toContain(key);
    }
    for (const results of r.results as Result[][]) expect(results[0]).toMatchObject({ status: 'ok', score: 0 });
    expect(r.rolloutsJson).not.toContain(key);
    expect(r.metricsJson).not.toContain(key);
  });

  it('rollouts carry per-token text, entropy, ratio and loss weight aligned with the completion', async () => {
    for (const numIterations of [1, 2]) {
      const r = await harness.runModule(CASES, 'stepWithJudge', { judge: { kind: 'self' }, numIterations });
      for (const t of r.tokens as { ids: number[]; tokens: string[]; entropy: number[]; ratio: number[]; weight: number[] }[]) {
        const n = t.ids.length;
        expect([t.tokens.length, t.entropy.length, t.ratio.length, t.weight.length]).toEqual([n, n, n, n]);
        for (const h of t.entropy) expect(h).toBeGreaterThan(0);
        for (const w of t.weight) expect(w).toBe(1);
        // One pass: π_θ = π_old exactly; two passes: the second pass sees the first update.
        if (numIterations === 1) for (const x of t.ratio) expect(x).toBe(1);
        else for (const x of t.ratio) expect(x > 0 && Number.isFinite(x)).toBe(true);
      }
      if (numIterations === 2) expect((r.tokens as { ratio: number[] }[]).some((t) => t.ratio.some((x) => x !== 1))).toBe(true);
    }
  });
});

describe('holistic_likert with an in-page judge', () => {
  it('self judges the whole rubric on a 1–5 scale; the reward is that score; the checklist is judged next to it', { timeout: 300_000 }, async () => {
    const r = await harness.runModule(CASES, 'stepHolistic', {});
    // The judged rubric gains the holistic criterion (weight 0: tracked by the checklist, trained by holistic_likert).
    expect(r.criteria).toEqual(['blue', 'holistic_likert']);
    expect(r.rewards).toHaveLength(4);
    (r.results as Result[][]).forEach((results, i) => {
      expect(results[0]).toMatchObject({ criterion_id: 'blue', status: 'ok' });
      const h = results[1];
      expect(h.criterion_id).toBe('holistic_likert');
      expect(h.status, h.reason).toBe('ok');
      // The self judge's expected Likert point, (k − 1)/4 weighted by P(k) over "1".."5".
      expect(h.reason).toMatch(/^P\("1"\)=.*P\("5"\)=/);
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThan(1);
      expect(r.rewards[i]).toBe(h.score);
      expect(r.direct[i].score).toBeCloseTo(h.score!, 6);
    });
    // Different completions, different holistic scores: the judge read each response.
    expect(new Set(r.rewards).size).toBeGreaterThan(1);
    expect(r.metrics.rewards.reward).toBeCloseTo((r.rewards as number[]).reduce((s, x) => s + x, 0) / 4, 6);
  });
});

describe('generative verdicts on the engine (judge_verdict "generative")', () => {
  it('an engine judge writes verdict lines through the sampler; malformed ones are unscorable with the reason and the words, per criterion and per checklist', { timeout: 300_000 }, async () => {
    const r = await harness.runModule(CASES, 'generativeVerdicts', {});
    const all = [...(r.single as Result[]), ...(r.checklist as Result[])];
    expect(all.map((v) => v.criterion_id)).toEqual(['kind', 'kind', 'short']);
    for (const v of all) {
      // Either a strict verdict (answer, quote, reason) or no verdict with why and what it wrote —
      // never a context refusal (the compact prompts fit) and never a score without a verdict line.
      if (v.status === 'ok') expect(v.reason).toMatch(/the judge answered "(no|yes)" \(.*\); reason: /);
      else {
        expect(v.status).toBe('unscorable');
        expect(v.score).toBeNull();
        expect(v.reason).toMatch(/\(the (verdict|checklist) reply: ".*"\)$/s);
      }
    }
    for (const v of r.checklist as Result[]) expect(v.reason).toMatch(/^checklist of 2: /);
    console.log('generative judge on the embedded model:', JSON.stringify(r));
  });
});
