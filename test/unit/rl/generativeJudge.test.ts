// The generative judge (judge_verdict "generative") on a deterministic fake generator: per-criterion
// and checklist prompts batched into generate() calls, verdict lines parsed strictly, quotes
// flowing into evidence-required credit and the vacuous-credit probe; the design checks; the
// remote judge's verdict-line and checklist modes on a fake endpoint.
import { describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { parseExperiment } from '../../../src/rl/experiment';
import { cutLines, generativeJudge, newlineToken, type VerdictGenerator } from '../../../src/rl/generativeJudge';
import { evidenceRequiredJudge, evidenceJudgeIssue } from '../../../src/rubric/evidenceCredit';
import { judgeRollouts, type JudgeRequest } from '../../../src/rubric/judge';
import { designAsks, designedJudge, judgeDesignIssue, type JudgeDesign } from '../../../src/rubric/judgeDesign';
import { remoteJudge } from '../../../src/rubric/judges/remote';
import { parseRubric } from '../../../src/rubric/schema';
import { judgeLoad, questionIds } from '../../../src/rubric/judgeMeta';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';

const rubric = parseRubric({
  name: 'g',
  criteria: [
    { id: 'greets', text: 'Greets', weight: 1, tier: 'important', judge_question: 'Does it greet?' },
    { id: 'blue', text: 'Says blue', weight: 1, tier: 'optional', judge_question: 'Does it say blue?' },
    { id: 'short', text: 'Short', weight: 1, tier: 'optional', rule: { kind: 'length', unit: 'words', max: 50 } },
  ],
});
const [greets, blue] = rubric.criteria;
const req = (completion: string, criterion = greets, extra: Partial<JudgeRequest> = {}): JudgeRequest => ({ rubricVersion: 'v', prompt: 'Say hi.', completion, criterion, ...extra });

/** A fake model: answers each prompt by a rule on its text; records every generate() call. */
function fake(answer: (prompt: string) => string, contextLength = 4096) {
  const bytes = new ByteTokenizer();
  const calls: { prompts: string[]; maxNew: number; stopAtNewline: boolean }[] = [];
  const generator: VerdictGenerator = {
    contextLength,
    encode: (text) => bytes.encode(text),
    async generate(prompts, maxNew, stopAtNewline) {
      const texts = prompts.map((p) => bytes.decode(p));
      calls.push({ prompts: texts, maxNew, stopAtNewline });
      return texts.map(answer);
    },
  };
  return { generator, calls };
}

/** The response a prompt shows (between its <response> tags). */
const responseIn = (prompt: string) => /<response>\n([\s\S]*?)\n<\/response>/.exec(prompt)![1];

describe('generativeJudge, per criterion', () => {
  it('judges every request in one batched generate() call, greedy lines cut at the newline, quotes as spans', async () => {
    const { generator, calls } = fake((p) => (responseIn(p).includes('hello') ? ' yes | quote: "HELLO  there" | reason: it greets\nmore text' : 'no | quote: none | reason: no greeting'));
    const judge = generativeJudge(generator, { name: 'gen' });
    const out = await judge.judge([req('Oh, hello there!'), req('Bye.'), req('hello\tthere', blue)]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ maxNew: 64, stopAtNewline: true });
    expect(calls[0].prompts).toHaveLength(3);
    expect(out[0]).toMatchObject({ criterion_id: 'greets', status: 'ok', score: 1, spans: [{ start: 4, end: 15 }] });
    expect(out[0].reason).toBe('the judge answered "yes" (quoted "HELLO there"); reason: "it greets"');
    expect(out[1]).toMatchObject({ criterion_id: 'greets', status: 'ok', score: 0 });
    expect(out[2]).toMatchObject({ criterion_id: 'blue', status: 'ok', score: 1, spans: [{ start: 0, end: 11 }] });
  });

  it('reports malformed output as unscorable with the reason and the words, never a score', async () => {
    const { generator } = fake(() => '\u00e9\u00e9 yes yes blue');
    const [r] = await generativeJudge(generator).judge([req('hello')]);
    expect(r.status).toBe('unscorable');
    expect(r.score).toBeNull();
    expect(r.reason).toMatch(/is not a verdict line of the form .*\(the verdict reply: "éé yes yes blue"\)/);
  });

  it('refuses a prompt that leaves no room for its verdict line, naming both sizes, and judges the rest', async () => {
    const { generator, calls } = fake(() => 'yes | quote: none | reason: ok', 1000);
    const out = await generativeJudge(generator).judge([req('short'), req('x'.repeat(500))]);
    expect(out[0].status).toBe('ok');
    expect(out[1]).toMatchObject({ status: 'unscorable', reason: expect.stringMatching(/the judge prompt is \d+ tokens; with 32 tokens for its verdict line that is \d+, beyond the judge model's context of 1000/) });
    expect(calls[0].prompts).toHaveLength(1);
    expect(calls[0].maxNew).toBeLessThanOrEqual(64);
  });

  it('a failed generation makes its batch unscorable with the reason; a rule criterion is named', async () => {
    const generator: VerdictGenerator = { contextLength: 4096, encode: (t) => new ByteTokenizer().encode(t), generate: async () => Promise.reject(new Error('device lost')) };
    const out = await generativeJudge(generator).judge([req('a'), req('a', rubric.criteria[2])]);
    expect(out[0]).toMatchObject({ status: 'unscorable', reason: "the judge's generation failed: device lost" });
    expect(out[1]).toMatchObject({ status: 'unscorable', reason: expect.stringMatching(/is a rule/) });
  });

  it('stops when the signal aborts', async () => {
    const { generator } = fake(() => 'yes | quote: none | reason: ok');
    const controller = new AbortController();
    controller.abort();
    await expect(generativeJudge(generator).judge([req('a')], { signal: controller.signal })).rejects.toThrow();
  });
});

describe('generativeJudge, checklist', () => {
  it('asks once per response for all its criteria and parses one numbered line each', async () => {
    const { generator, calls } = fake((p) => {
      const r = responseIn(p);
      return `1. ${r.includes('hi') ? 'yes | quote: "hi" | reason: greets' : 'no | quote: none | reason: none'}\n2. ${r.includes('blue') ? 'yes | quote: "blue" | reason: says it' : 'no | quote: none | reason: no'}\n3. junk past the last line`;
    });
    const judge = generativeJudge(generator, { scope: 'checklist' });
    const out = await judge.judge([req('hi, blue sky'), req('hi, blue sky', blue), req('grey', blue), req('grey')]);
    expect(calls).toHaveLength(1);
    expect(calls[0].prompts).toHaveLength(2); // two responses, two prompts
    expect(calls[0]).toMatchObject({ maxNew: 128, stopAtNewline: false });
    expect(out.map((r) => [r.criterion_id, r.score])).toEqual([
      ['greets', 1],
      ['blue', 1],
      ['blue', 0],
      ['greets', 0],
    ]);
    expect(out[1]).toMatchObject({ spans: [{ start: 4, end: 8 }], reason: expect.stringMatching(/^checklist of 2: the judge answered "yes"/) });
  });

  it('a missing line is unscorable for its criterion only; a single criterion gets the one-line prompt', async () => {
    const { generator, calls } = fake((p) => (p.includes('1. ') ? '1. yes | quote: none | reason: ok\n\n' : 'no | quote: none | reason: single'));
    const out = await generativeJudge(generator, { scope: 'checklist' }).judge([req('a'), req('a', blue), req('b')]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1 });
    expect(out[1]).toMatchObject({ status: 'unscorable', reason: expect.stringMatching(/no line for criterion 2 \(the checklist reply: /) });
    expect(out[2]).toMatchObject({ status: 'ok', score: 0, reason: expect.stringMatching(/single/) });
    expect(calls).toHaveLength(2); // budgets differ: two lines vs one
  });

  it('refuses a checklist that does not fit the context, saying what to change', async () => {
    const { generator } = fake(() => '', 1000);
    const out = await generativeJudge(generator, { scope: 'checklist' }).judge([req('a'.repeat(400)), req('a'.repeat(400), blue)]);
    for (const r of out) expect(r.reason).toMatch(/checklist \(2 criteria\) prompt is \d+ tokens; with 2 × 32 tokens .* beyond the judge model's context of 1000: use judge_scope "per_criterion"/);
  });

  it('cutLines keeps the first n lines', () => {
    expect(cutLines('a\nb\nc\n', 2)).toBe('a\nb');
    expect(cutLines('a', 3)).toBe('a');
    expect(newlineToken(new ByteTokenizer())).toBe(10);
  });
});

describe('evidence-required credit with the generative judge', () => {
  it('credits a found quote, withholds a made-up one, and the vacuous-credit probe flags a pass that survives deleting its quote', async () => {
    // A judge that says yes to anything, quoting the first word it sees: deleting that word leaves another first word, so the pass survives.
    const { generator } = fake((p) => {
      const r = responseIn(p);
      if (r.includes('made')) return 'yes | quote: "words that are not there" | reason: sure';
      const word = r.trim().split(/\s+/)[0];
      return `yes | quote: "${word}" | reason: always yes`;
    });
    const judge = evidenceRequiredJudge(generativeJudge(generator), { probe: true });
    const out = await judge.judge([req('hello world'), req('made up')]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1, evidence: 'quoted', probe: 'survived' });
    expect(out[1]).toMatchObject({ status: 'ok', score: 0, evidence: 'withheld' });
  });

  it('the experiment accepts evidence-required credit with self/model only under judge_verdict "generative"', () => {
    const experiment = (config: Record<string, unknown>, judge: unknown) => ({ model: 'embedded/tiny-gpt2-byte', prompts: ['a'], rubric, judge, config });
    expect(evidenceJudgeIssue(true, 'self', 'generative')).toBeNull();
    expect(evidenceJudgeIssue(true, 'model')).toMatch(/Use judge_verdict "generative"/);
    expect(() => parseExperiment(experiment({ judge_evidence_required: true }, { kind: 'self' }))).toThrow(/judge_verdict "generative"/);
    expect(parseExperiment(experiment({ judge_evidence_required: true, vacuous_credit_probe: true, judge_verdict: 'generative' }, { kind: 'self' })).config.judge_verdict).toBe('generative');
  });
});

describe('judge designs', () => {
  const design = (verdict: JudgeDesign['verdict'], scope: JudgeDesign['scope']): JudgeDesign => ({ verdict, scope });

  it('refuses the combinations that cannot run, naming the field', () => {
    expect(judgeDesignIssue(design('logprob_margin', 'per_criterion'), 'self')).toBeNull();
    expect(judgeDesignIssue(design('generative', 'checklist'), 'model')).toBeNull();
    expect(judgeDesignIssue(design('logprob_margin', 'checklist'), 'remote')).toBeNull();
    expect(judgeDesignIssue(design('logprob_margin', 'checklist'), 'self')).toMatchObject({ field: 'judge_scope', message: expect.stringMatching(/checklist" with judge_verdict "logprob_margin" is refused: the P\(yes\) margin/) });
    expect(judgeDesignIssue(design('generative', 'per_criterion'), 'zero_shot')).toMatchObject({ field: 'judge_verdict' });
    expect(judgeDesignIssue(design('generative', 'per_criterion'), 'rules')).toMatchObject({ field: 'judge_verdict' });
    expect(judgeDesignIssue(design('logprob_margin', 'checklist'), 'zero_shot')).toMatchObject({ field: 'judge_scope' });
    const experiment = (config: Record<string, unknown>) => ({ model: 'embedded/tiny-gpt2-byte', prompts: ['a'], rubric, judge: { kind: 'self' }, config });
    expect(() => parseExperiment(experiment({ judge_scope: 'checklist' }))).toThrow(/config\.judge_scope.*P\(yes\) margin/s);
    expect(() => parseExperiment(experiment({ judge_verdict: 'sampled' }))).toThrow(/judge_verdict/);
  });

  it('designedJudge puts the design on every request (default: the judge unchanged); designAsks groups by design and response', async () => {
    const seen: JudgeRequest[] = [];
    const base = { name: 'b', judge: async (rs: readonly JudgeRequest[]) => (seen.push(...rs), rs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok' as const, score: 1, reason: '' }))) };
    expect(designedJudge(base, design('logprob_margin', 'per_criterion'))).toBe(base);
    await designedJudge(base, design('generative', 'checklist')).judge([req('a')]);
    expect(seen[0].design).toEqual({ verdict: 'generative', scope: 'checklist' });
    const d = design('generative', 'checklist');
    expect(designAsks([req('a', greets, { design: d }), req('b', greets, { design: d }), req('a', blue, { design: d }), req('a')])).toEqual([
      { design: d, items: [0, 2] },
      { design: d, items: [1] },
      { design: { verdict: 'logprob_margin', scope: 'per_criterion' }, items: [3] },
    ]);
  });

  it('judge load counts one call per response in checklist scope', async () => {
    const { generator, calls } = fake(() => '1. yes | quote: none | reason: a\n2. no | quote: none | reason: b');
    const results = await judgeRollouts(rubric, 'v', [{ prompt: 'p', completion: 'a' }, { prompt: 'p', completion: 'b' }], {
      modelJudge: designedJudge(generativeJudge(generator, { scope: 'checklist' }), design('generative', 'checklist')),
    });
    expect(calls[0].prompts).toHaveLength(2);
    expect(judgeLoad(questionIds(rubric), 0, results, 1, 'checklist')).toMatchObject({ model_requests: 4, judge_calls: 2 });
    expect(judgeLoad(questionIds(rubric), 0, results, 1)).toMatchObject({ model_requests: 4, judge_calls: 4 });
  });
});

describe('remote judge designs', () => {
  const endpoint = (answer: (user: string) => string) => {
    const bodies: { max_tokens?: number; messages: { content: string }[] }[] = [];
    const fetch = (async (_url: string, init: RequestInit) => {
      const body = JSON.parse(String(init.body));
      bodies.push(body);
      return new Response(JSON.stringify({ choices: [{ message: { content: answer(body.messages[1].content) } }] }), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    return { bodies, judge: remoteJudge({ url: 'https://judge.test/v1', model: 'm', maxAttempts: 1 }, { fetch }) };
  };

  it('generative: one verdict line per request, parsed strictly, with a reply budget for the line', async () => {
    const { bodies, judge } = endpoint((u) => (u.includes('blue sky') ? 'yes | quote: "blue" | reason: says it' : 'Yes.'));
    const d: JudgeDesign = { verdict: 'generative', scope: 'per_criterion' };
    const out = await judge.judge([req('a blue sky', blue, { design: d }), req('grey', blue, { design: d })]);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1, spans: [{ start: 2, end: 6 }] });
    expect(out[1]).toMatchObject({ status: 'unscorable', reason: expect.stringMatching(/"Yes\." is not a verdict line/) });
    expect(bodies[0].max_tokens).toBe(128);
    expect(bodies[0].messages[1].content).toContain('| quote: "<exact words of the response>" | reason:');
  });

  it('checklist: one request per response, one numbered line per criterion; a missing line is unscorable for that criterion', async () => {
    const { bodies, judge } = endpoint(() => '1. yes | quote: "hi" | reason: greets');
    const d: JudgeDesign = { verdict: 'logprob_margin', scope: 'checklist' };
    const out = await judge.judge([req('hi there', greets, { design: d }), req('hi there', blue, { design: d })]);
    expect(bodies).toHaveLength(1);
    expect(bodies[0].max_tokens).toBe(256);
    expect(bodies[0].messages[1].content).toMatch(/Reply with exactly 2 lines/);
    expect(out[0]).toMatchObject({ status: 'ok', score: 1, spans: [{ start: 0, end: 2 }] });
    expect(out[1]).toMatchObject({ status: 'unscorable', reason: 'checklist of 2: the judge\'s checklist reply has no line for criterion 2' });
  });
});

describe('the design options leave the page intact', () => {
  const experiment = (config: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), judge: { kind: 'self' }, config: { ...FIRST_VISIT.experiment.config, ...config } });
  const on = { judge_verdict: 'generative', judge_scope: 'checklist', judge_evidence_required: true };

  it('through share links, run files and the TRL export (a note, only when not the default)', async () => {
    const shared = { experiment: experiment(on) } as unknown as Shared;
    expect((decodeShareLink(encodeShareLink(shared)).experiment as { config: Record<string, unknown> }).config).toMatchObject(on);
    const back = await readRunFile(await runFileJson({ name: 'r', experiment: experiment(on) as never, metrics: [], rollouts: [] }));
    expect((back.experiment as { config: Record<string, unknown> }).config).toMatchObject(on);
    expect((await exportToTrl(experiment(on))).files['train_grpo.py']).toMatch(/# .*judge_verdict "generative", judge_scope "checklist" .*not applied/);
    expect((await exportToTrl(experiment({}))).files['train_grpo.py']).not.toContain('judge_verdict');
  });
});
