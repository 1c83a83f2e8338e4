// The GRPO loop's controls (the worker exposes the same methods to the UI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { fakeOpenAi } from '../helpers/fakeOpenAi';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/trainer.ts';

describe('GrpoTrainer', () => {
  it('slow motion holds a step at sampled, judged and advantages until advanced', async () => {
    const r = await harness.runModule(CASES, 'slowMotion', {});
    expect(r.seen).toEqual(['sampled', 'judged', 'advantages']);
    expect(r.step).toBe(1);
    expect(r.status).toBe('paused');
    expect(r.events).toEqual(['status:running', 'stage:sampled', 'stage:judged', 'stage:advantages', 'stage:updated', 'step:0', 'status:paused']);
  });

  it('timed slow motion holds each stage for the delay, then goes on by itself', async () => {
    const r = await harness.runModule(CASES, 'timedSlowMotion', { delayMs: 400 });
    expect(r.step).toBe(1);
    expect(r.events).toEqual(['status:running', 'stage:sampled', 'stage:judged', 'stage:advantages', 'stage:updated', 'step:0', 'status:paused']);
    // Judging and the advantage kernel take well under the delay on the fixture, so the gaps are the holds.
    expect(r.times.judged - r.times.sampled).toBeGreaterThanOrEqual(390);
    expect(r.times.advantages - r.times.judged).toBeGreaterThanOrEqual(390);
    // Progress inside each stage arrives before that stage's event, never after it.
    expect(r.flow).toEqual(['progress:sampling', 'stage:sampled', 'progress:judging', 'stage:judged', 'progress:advantages', 'stage:advantages', 'progress:updating', 'stage:updated', 'step']);
    const sampling = r.counts.filter((c: { stage: string }) => c.stage === 'sampling');
    expect(sampling[0]).toEqual({ stage: 'sampling', done: 0, total: 4, partial: null });
    expect(sampling.slice(1).every((c: { partial: number | null }) => c.partial === 4)).toBe(true);
    expect(r.counts.filter((c: { stage: string }) => c.stage === 'judging').at(-1)).toEqual({ stage: 'judging', done: 4, total: 4, partial: null });
    expect(r.counts.filter((c: { stage: string }) => c.stage === 'updating').at(-1)).toEqual({ stage: 'updating', done: 1, total: 1, partial: null });
  });

  it('start() runs to max_steps, checkpointing every save_steps', async () => {
    const r = await harness.runModule(CASES, 'runToEnd', {});
    expect(r.step).toBe(3);
    expect(r.status).toBe('finished');
    expect(r.events.filter((e: string) => e.startsWith('step:'))).toEqual(['step:0', 'step:1', 'step:2']);
    expect(r.events.filter((e: string) => e.startsWith('checkpoint:'))).toEqual(['checkpoint:2']);
  });

  it('pause() finishes the running step and checkpoints; resume() continues to the end', async () => {
    const r = await harness.runModule(CASES, 'pauseResume', {});
    expect(r.pausedAt).toBe(1);
    expect(r.statusAfterPause).toBe('paused');
    expect(r.events).toContain('checkpoint:1');
    expect(r.final).toBe(3);
    expect(r.status).toBe('finished');
  });
});

describe('online rubric evolution (issue 12)', () => {
  it('prune: the criterion every rollout meets is pruned after step 0; step 1 is judged with the new version, marked on the reward chart', async () => {
    const t0 = performance.now();
    const r = await harness.runModule(CASES, 'evolvePrune', {});
    expect(r.status).toBe('finished');
    const [first, second] = r.steps;
    // Step 0: judged with the starting version; the decision after it removes 'always' (and any other criterion constant within both groups).
    expect(first.rubric_version).toBe(r.start);
    expect(first.evolution).toMatchObject({ step: 0, strategy: 'prune', outcome: 'accepted', parent: r.start });
    const v1 = first.evolution.version;
    const ids1 = first.evolution.rubric;
    expect(v1).toMatch(/^[0-9a-f]{64}$/);
    expect(v1).not.toBe(r.start);
    expect(first.evolution.removed).toContain('always');
    expect(ids1).not.toContain('always');
    expect(ids1.length).toBeGreaterThan(0);
    // Step 1: judged with the new version (fewer criteria per rollout, its ids in the metrics).
    expect(second.rubric_version).toBe(v1);
    expect(r.judgedCriteria).toEqual([3, ids1.length]);
    expect(first.passRateIds).toEqual(['always', 'ascii_start', 'lower']);
    expect(second.passRateIds).toEqual(ids1);
    // The decision after step 1 is taken on step 1 alone, under v1.
    expect(second.evolution).toMatchObject({ step: 1, parent: v1 });
    // The reward chart's marker at the first step the new version judged; the checkpoint carries the version in use.
    expect(r.markers[0]).toEqual({ x: 1, label: expect.stringMatching(new RegExp(`^rubric version ${v1.slice(0, 8)} after step 1 \\(prune: −always`)) });
    expect(r.checkpointVersion).toBe(r.final);
    console.log(`evolvePrune browser case: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  });

  it('rare with a remote writer (a loopback OpenAI-compatible fake): a malformed proposal changes nothing and says why; a valid one is judged on the snapshot and accepted with its lineage', async () => {
    const t0 = performance.now();
    // The fake: rubric-writing requests (the generation system prompt) get a malformed proposal
    // (a flaw check with a positive weight), then a valid one; judge requests get yes, no, yes, …
    // (with concurrency 1 in rollout order: each group of two splits, so the flaw discriminates).
    const seen = { writer: [] as string[], judge: 0 };
    const BAD = { criteria: [{ id: 'rambles', text: 'Rambles on', weight: 1, tier: 'important', judge_question: 'Does the response ramble?' }] };
    const GOOD = { criteria: [{ id: 'garbled', text: 'Is garbled', weight: -1, tier: 'important', judge_question: 'Is the response garbled?' }] };
    const server = await fakeOpenAi((body) => {
      if (!body.includes('You write grading rubrics')) return seen.judge++ % 2 === 0 ? 'yes' : 'no';
      seen.writer.push(body);
      return JSON.stringify(seen.writer.length === 1 ? BAD : GOOD);
    });
    try {
      const r = await harness.runModule(CASES, 'evolveRareWriter', { url: server.url });
      expect(r.status).toBe('finished');
      const [first, second] = r.events;
      // After step 1: the malformed proposal is refused with the parser's reason; the rubric stays.
      expect(first).toMatchObject({ step: 0, strategy: 'rare', outcome: 'unchanged', parent: r.start, version: null });
      expect(first.reason).toContain('"rambles" has weight 1: a flaw check is a pitfall (negative weight)');
      expect(r.versions).toEqual([r.start, r.start]);
      // After step 2: 'always' replaced by the flaw check, which split the snapshot's groups.
      expect(second).toMatchObject({ step: 1, strategy: 'rare', outcome: 'accepted', parent: r.start, removed: ['always'], added: ['garbled'] });
      expect(second.reason).toBe('"always" is met by every rollout of the recent steps: replaced by flaw checks garbled');
      expect(second.checks).toEqual([
        expect.objectContaining({ criterion: 'garbled', passed: true, met_rate: 0.5, flag: 'discriminative' }),
        expect.objectContaining({ criterion: '(reward)', passed: true }),
      ]);
      expect(second.rubric).toEqual([['never', 1], ['garbled', -1]]);
      expect(r.final).toBe(second.version);
      expect(r.lineage).toEqual([
        { version: r.start, parent: null, first_step: 0, strategy: null, reason: null },
        { version: second.version, parent: r.start, first_step: 2, strategy: 'rare', reason: second.reason },
      ]);
      // The writer saw the saturated criterion and the step's responses; 2 groups of 2 were judged once.
      expect(seen.writer).toHaveLength(2);
      expect(seen.writer[1]).toContain('At most 100000 characters');
      expect(seen.judge).toBe(4);
    } finally {
      await server.close();
    }
    console.log(`evolveRareWriter browser case: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  });
});

describe('black-box teacher (issue 11)', () => {
  it('stored responses + a loopback fake writer: after step 0 a rubric induced from teacher-vs-student contrasts judges step 1 with provenance; a malformed induction after step 1 is recorded and changes nothing', async () => {
    const t0 = performance.now();
    const TEACHER: Record<string, string> = { 'Name a color.': 'Teacher says: cobalt blue.', 'Say hello.': 'Teacher says: hello there.', 'Name an animal.': 'Teacher says: a red fox.' };
    // The stored-responses file as JSONL text (parsed page-side by the file reader).
    const responses = Object.entries(TEACHER).map(([prompt, response]) => JSON.stringify({ prompt, response })).join('\n');
    const QUESTION = 'Does the response name the thing asked for?';
    const GOOD = { criteria: [{ id: 'names_it', text: 'Names the thing asked for', weight: 2, tier: 'important', judge_question: QUESTION }] };
    // Writer requests (the generation system prompt): a valid reply first, then prose with no JSON.
    // Judge requests (only the induced criterion needs one; has_a is a rule): yes, no, yes, …
    const seen = { writer: [] as string[], judge: [] as string[] };
    const server = await fakeOpenAi((body) => {
      if (body.includes('You write grading rubrics')) {
        seen.writer.push(body);
        return seen.writer.length === 1 ? JSON.stringify(GOOD) : 'Sure, here are some criteria for you.';
      }
      seen.judge.push(body);
      return seen.judge.length % 2 === 1 ? 'yes' : 'no';
    });
    try {
      const r = await harness.runModule(CASES, 'blackBoxStored', { url: server.url, responses });
      expect(r.status).toBe('finished');
      const [first, second] = r.steps;
      // Step 0: judged with the base rubric; the induction after it makes a new version from the stored teacher.
      expect(r.judged[0].version).toBe(r.start);
      expect(Object.keys(first.passRates)).toEqual(['has_a']);
      expect(first.event).toMatchObject({ step: 0, outcome: 'induced', rubric: ['has_a', 'names_it'] });
      const v1 = first.event.version;
      expect(v1).toMatch(/^[0-9a-f]{64}$/);
      expect(v1).not.toBe(r.start);
      const prov = first.event.provenance;
      expect(prov).toMatchObject({ kind: 'teacher_contrast', teacher: 'stored responses (3 for 3 prompts)', base_version: r.start, criteria: ['names_it'], step: 0 });
      expect(prov.prompts).toHaveLength(1);
      // The writer was shown that prompt's stored teacher answer (the good side of the contrast).
      expect(seen.writer[0]).toContain(TEACHER[prov.prompts[0]]);
      // Step 1: judged with the induced version; the fake's yes/no scored the induced criterion.
      expect(r.judged[1].version).toBe(v1);
      // Each step's metrics name the version that judged it (label agreement follows the induced one).
      expect([first.rubricVersion, second.rubricVersion]).toEqual([r.start, v1]);
      expect(Object.keys(second.passRates)).toEqual(['has_a', 'names_it']);
      expect(second.passRates.names_it).toBe(0.5);
      expect(r.judged[0].ids).toEqual(['has_a']);
      expect(r.judged[0].scores.every((s: number[]) => s.length === 1)).toBe(true);
      expect(r.judged[1].ids).toEqual(['has_a', 'names_it']);
      expect(r.judged[1].scores.map((s: number[]) => s[1])).toEqual([1, 0]);
      expect(seen.judge).toHaveLength(2);
      expect(seen.judge.every((b) => b.includes(QUESTION))).toBe(true);
      // After step 1 (induce_every 1): the malformed reply is a recorded failure; the induced version stays.
      expect(second.event).toMatchObject({ step: 1, outcome: 'failed', version: null, provenance: null });
      expect(second.event.error).toContain('the reply has no JSON object');
      expect(second.event.error).toContain('the rubric was not changed');
      expect(seen.writer).toHaveLength(2);
      expect(r.final).toBe(v1);
      expect(r.finalIds).toEqual(['has_a', 'names_it']);
      expect(r.checkpointVersion).toBe(v1);
    } finally {
      await server.close();
    }
    console.log(`blackBoxStored browser case: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  });
});
