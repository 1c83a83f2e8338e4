// Evidence-required credit and the vacuous-credit probe (src/rubric/evidenceCredit.ts) with fake
// quoting judges (deterministic), the remote judge's prompt and reply parsing, the config and
// experiment checks, and the metrics in run files, CSV and the TRL export.
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import { parseExperiment } from '../../../src/rl/experiment';
import { answerSpans } from '../../../src/rubric/evidence';
import { deleteSpans, evidenceJudges, evidenceJudgeIssue, evidenceMetrics, evidenceRequiredJudge, type EvidenceResult } from '../../../src/rubric/evidenceCredit';
import { judgeRollouts, type CriterionResult, type Judge, type JudgeRequest } from '../../../src/rubric/judge';
import { judgeMessages, QUOTE_INSTRUCTION } from '../../../src/rubric/judges/modelJudgePrompt';
import { remoteJudge } from '../../../src/rubric/judges/remote';
import { parseRubric } from '../../../src/rubric/schema';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';
import { metrics as storeMetrics } from '../store/fixtures';

const rubric = parseRubric({
  name: 'r',
  criteria: [
    { id: 'sky', text: 'Says the sky is blue', weight: 1, tier: 'essential', judge_question: 'Does the response say the sky is blue?' },
    { id: 'polite', text: 'Is polite', weight: 1, tier: 'important', judge_question: 'Is the response polite?' },
    { id: 'rude', text: 'Insults the user', weight: -1, tier: 'important', judge_question: 'Does the response insult the user?' },
  ],
});

/** A fake generative judge: `answer(request)` is its reply text; verdict and quote parsed as the remote judge does. */
function textJudge(answer: (r: JudgeRequest) => string, log: JudgeRequest[] = []): Judge {
  return {
    name: 'fake',
    judge: async (requests) =>
      requests.map((r) => {
        log.push(r);
        const text = answer(r);
        if (text === 'unscorable') return { criterion_id: r.criterion.id, status: 'unscorable', score: null, reason: 'no answer' } satisfies CriterionResult;
        const yes = /^yes/i.test(text);
        const spans = answerSpans(r.completion, text);
        return { criterion_id: r.criterion.id, status: 'ok', score: yes ? 1 : 0, reason: `the judge answered "${yes ? 'yes' : 'no'}"`, ...(spans.length ? { spans } : {}) };
      }),
  };
}

/** Honest: passes "sky" only when the text says "blue", quoting it. */
const honest = (r: JudgeRequest) => (r.criterion.id === 'sky' ? (/blue/i.test(r.completion) ? 'yes\nQuote: "blue"' : 'no\nQuote: none') : 'no');
/** Vacuous: passes everything, quoting the first word of the response (or nothing when empty). */
const vacuous = (r: JudgeRequest) => `yes\nQuote: "${r.completion.split(/\s+/)[0] ?? ''}"`;

const req = (completion: string, id = 'sky'): JudgeRequest => ({ rubricVersion: 'v', prompt: 'p', completion, criterion: rubric.criteria.find((c) => c.id === id)! });

describe('evidence-required credit', () => {
  it('asks every request for a quote and keeps a pass whose quote is in the response', async () => {
    const log: JudgeRequest[] = [];
    const judge = evidenceRequiredJudge(textJudge(honest, log), { probe: false });
    const [r] = (await judge.judge([req('The sky is BLUE today.')])) as EvidenceResult[];
    expect(log.every((x) => x.requireQuote === true)).toBe(true);
    expect(r).toMatchObject({ status: 'ok', score: 1, evidence: 'quoted', spans: [{ start: 11, end: 15 }] });
  });

  it('withholds a pass with no quote or a quote not in the response (score 0, reason says why)', async () => {
    const judge = evidenceRequiredJudge(
      textJudge((r) => (r.completion.startsWith('A') ? 'yes' : 'yes\nQuote: "the sky is blue"')),
      { probe: false },
    );
    const [none, invented] = (await judge.judge([req('A grey day.'), req('Clouds everywhere.')])) as EvidenceResult[];
    for (const r of [none, invented]) {
      expect(r).toMatchObject({ status: 'ok', score: 0, evidence: 'withheld' });
      expect(r.reason).toMatch(/credit withheld: evidence required/);
    }
  });

  it('leaves failures, pitfalls and unscorable verdicts alone', async () => {
    const judge = evidenceRequiredJudge(textJudge((r) => (r.completion === 'x' ? 'unscorable' : r.criterion.id === 'rude' ? 'yes' : 'no')), { probe: false });
    const out = (await judge.judge([req('fine words', 'polite'), req('you fool', 'rude'), req('x')])) as EvidenceResult[];
    expect(out[0]).toMatchObject({ score: 0 });
    expect(out[0].evidence).toBeUndefined();
    expect(out[1]).toMatchObject({ status: 'ok', score: 1 }); // a pitfall's verdict stands without a quote
    expect(out[1].evidence).toBeUndefined();
    expect(out[2].status).toBe('unscorable');
  });

  it('ignores spans a judge returns outside the response', async () => {
    const bad: Judge = { name: 'bad', judge: async (rs) => rs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok', score: 1, reason: 'yes', spans: [{ start: 5, end: 99 }] })) };
    const [r] = (await evidenceRequiredJudge(bad, { probe: false }).judge([req('short')])) as EvidenceResult[];
    expect(r).toMatchObject({ score: 0, evidence: 'withheld' });
  });
});

describe('the vacuous-credit probe', () => {
  it('deletes the quoted span and re-judges: an honest pass falls, a vacuous one survives and is flagged', async () => {
    const log: JudgeRequest[] = [];
    const honestJudge = evidenceRequiredJudge(textJudge(honest, log), { probe: true });
    const [h] = (await honestJudge.judge([req('The sky is blue.')])) as EvidenceResult[];
    expect(log.map((x) => x.completion)).toEqual(['The sky is blue.', 'The sky is .']);
    expect(h).toMatchObject({ score: 1, evidence: 'quoted', probe: 'fell' });

    const vacuousJudge = evidenceRequiredJudge(textJudge(vacuous), { probe: true });
    const [v] = (await vacuousJudge.judge([req('Clouds everywhere.')])) as EvidenceResult[];
    expect(v).toMatchObject({ score: 1, evidence: 'quoted', probe: 'survived' }); // flagged, score unchanged
    expect(v.reason).toMatch(/vacuous-credit probe/);
  });

  it('records a failed re-judgement as unscorable, and does not probe withheld passes', async () => {
    let calls = 0;
    const judge = evidenceRequiredJudge(
      textJudge((r) => {
        calls++;
        if (r.completion === ' is blue') return 'unscorable';
        return r.completion.includes('sky') ? 'yes\nQuote: "sky"' : 'yes';
      }),
      { probe: true },
    );
    const out = (await judge.judge([req('sky is blue'), req('grey')])) as EvidenceResult[];
    expect(out[0]).toMatchObject({ evidence: 'quoted', probe: 'unscorable' });
    expect(out[1]).toMatchObject({ evidence: 'withheld' });
    expect(out[1].probe).toBeUndefined();
    expect(calls).toBe(3); // two verdicts, one probe
  });

  it('counts per criterion per step, through judgeRollouts', async () => {
    const judge = evidenceRequiredJudge(
      textJudge((r) => (r.criterion.id === 'sky' ? honest(r) : r.criterion.id === 'polite' ? vacuous(r) : 'no')),
      { probe: true },
    );
    const rollouts = ['The sky is blue, friend.', 'Rain again.'].map((completion) => ({ prompt: 'p', completion }));
    const results = await judgeRollouts(rubric, 'v1', rollouts, { modelJudge: judge });
    const m = evidenceMetrics(rubric, results);
    expect(m.by_criterion.sky).toEqual({ passes: 1, quoted: 1, withheld: 0, probed: 1, vacuous: 0, fell: 1 });
    expect(m.by_criterion.polite).toEqual({ passes: 2, quoted: 2, withheld: 0, probed: 2, vacuous: 2, fell: 0 });
    expect(m.by_criterion.rude).toBeUndefined();
    expect(m).toMatchObject({ passes: 3, withheld: 0, probed: 3, vacuous: 2 });
  });

  it('deleteSpans removes merged spans in order', () => {
    expect(deleteSpans('abcdefgh', [{ start: 5, end: 7 }, { start: 1, end: 3 }, { start: 2, end: 4 }])).toBe('aeh');
  });
});

describe('the judge prompt and the remote judge', () => {
  it('the prompt asks for a quote line only when evidence is required', () => {
    expect(judgeMessages(req('x')).user).toMatch(/Reply with the answer only\.$/);
    const asked = judgeMessages({ ...req('x'), requireQuote: true });
    expect(asked.user.endsWith(QUOTE_INSTRUCTION)).toBe(true);
    expect(asked.system).toMatch(/verbatim quote/);
  });

  it('a remote reply "yes" + a curly-quoted quote becomes a quoted pass at the right span; an invented quote is withheld', async () => {
    const replies = ['Yes\nQuote: “The sky’s BLUE”', 'yes\nQuote: "grass is green"'];
    let n = 0;
    const fetchFake = (async () => new Response(JSON.stringify({ choices: [{ message: { content: replies[n++] } }] }), { status: 200 })) as typeof fetch;
    const remote = remoteJudge({ url: 'http://127.0.0.1:9/v1/chat/completions', model: 'm', concurrency: 1 }, { fetch: fetchFake });
    const judge = evidenceRequiredJudge(remote, { probe: false });
    const text = "Look: the sky's blue.";
    const [a, b] = (await judge.judge([req(text), req(text)])) as EvidenceResult[];
    expect(a).toMatchObject({ score: 1, evidence: 'quoted' });
    expect(text.slice(a.status === 'ok' ? a.spans![0].start : 0, a.status === 'ok' ? a.spans![0].end : 0)).toBe("the sky's blue");
    expect(b).toMatchObject({ score: 0, evidence: 'withheld' });
  });
});

describe('the run\'s judges', () => {
  it('wrap the trained rubric\'s judge only when evidence is required; the held-out rubric keeps the bare judge', async () => {
    const bare = textJudge(vacuous);
    expect(evidenceJudges(bare, { judge_evidence_required: false, vacuous_credit_probe: false })).toEqual({ modelJudge: bare });
    expect(evidenceJudges(undefined, { judge_evidence_required: true, vacuous_credit_probe: true })).toEqual({ modelJudge: undefined });
    const on = evidenceJudges(bare, { judge_evidence_required: true, vacuous_credit_probe: true });
    expect(on.heldOutJudge).toBe(bare);
    const [r] = (await on.modelJudge!.judge([req('Clouds everywhere.')])) as EvidenceResult[];
    expect(r).toMatchObject({ evidence: 'quoted', probe: 'survived' });
  });
});

describe('the options', () => {
  const remote = { kind: 'remote' as const, url: 'https://judge.example/v1', model: 'm' };
  const experiment = (config: Record<string, unknown>, judge: typeof remote | { kind: 'self' | 'rules' } = remote) => ({ ...structuredClone(FIRST_VISIT.experiment), judge, config: { ...FIRST_VISIT.experiment.config, ...config } });

  it('are off by default; the probe needs evidence-required credit', () => {
    const c = parseGrpoConfig({});
    expect([c.judge_evidence_required, c.vacuous_credit_probe]).toEqual([false, false]);
    expect(() => parseGrpoConfig({ vacuous_credit_probe: true })).toThrow(/vacuous_credit_probe: needs judge_evidence_required/);
    expect(parseGrpoConfig({ judge_evidence_required: true, vacuous_credit_probe: true }).vacuous_credit_probe).toBe(true);
  });

  it('an experiment refuses evidence-required credit with a judge that cannot quote', () => {
    expect(evidenceJudgeIssue(false, 'self')).toBeNull();
    expect(evidenceJudgeIssue(true, 'remote')).toBeNull();
    expect(() => parseExperiment(experiment({ judge_evidence_required: true }, { kind: 'self' }))).toThrow(/scores P\("yes"\).*writes no quote/);
    expect(() => parseExperiment(experiment({ judge_evidence_required: true }, { kind: 'rules' }))).toThrow(/needs a model judge that quotes/);
    expect(parseExperiment(experiment({ judge_evidence_required: true })).config.judge_evidence_required).toBe(true);
  });

  it('the TRL export says it is not applied, only when on', async () => {
    expect((await exportToTrl(experiment({}))).files['train_grpo.py']).not.toContain('judge_evidence_required');
    const on = await exportToTrl(experiment({ judge_evidence_required: true, vacuous_credit_probe: true }));
    expect(on.files['train_grpo.py']).toMatch(/# judge_evidence_required with vacuous_credit_probe .*not applied/);
  });

  it('run files keep the step counts and the marks on results; CSV has their columns only when present', async () => {
    const evidence = evidenceMetrics(rubric, [
      [
        { criterion_id: 'sky', status: 'ok', score: 1, reason: 'yes', spans: [{ start: 0, end: 3 }], evidence: 'quoted', probe: 'survived' },
        { criterion_id: 'polite', status: 'ok', score: 0, reason: 'yes — withheld', evidence: 'withheld' },
      ],
    ] as EvidenceResult[][]);
    const step: StepMetrics = { ...storeMetrics(1), evidence };
    const text = await runFileJson({ name: 'r', experiment: experiment({ judge_evidence_required: true }), metrics: [storeMetrics(0), step], rollouts: [] });
    const back = await readRunFile(text);
    expect(back.metrics[0].evidence).toBeUndefined();
    expect(back.metrics[1].evidence).toEqual(evidence);
    expect(metricColumns([storeMetrics(0)])).not.toContain('evidence/vacuous');
    const [header, , second] = metricsToCsv([storeMetrics(0), step]).trim().split(/\r?\n/);
    const cols = header.split(',');
    expect(second.split(',')[cols.indexOf('evidence/vacuous/sky')]).toBe('1');
    expect(second.split(',')[cols.indexOf('evidence/withheld/polite')]).toBe('1');
  });
});
