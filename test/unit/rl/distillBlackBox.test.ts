// The black-box teacher (ROPD): the stored-responses file (good and malformed), the remote
// teacher (the judge's client: key bound, never serialised, asked once per prompt), rubric
// induction from teacher-vs-student contrasts with a fake rubric writer (a new version with
// provenance; a malformed reply is a clear error and the rubric is unchanged), the run's
// after-step induction, the store keeping the provenance, and the options through config,
// links and the TRL export.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import { blackBoxState, inductionDue, induceAfterStep } from '../../../src/rl/distill/blackBox';
import { labelAgreementView } from '../../../src/ui/lib/labelAgreementView';
import { remoteTeacher, storedTeacher } from '../../../src/rl/distill/blackBoxTeacher';
import { parseTeacherResponses, TeacherResponsesError } from '../../../src/rl/distill/teacherResponses';
import type { GrpoContext, StepResult } from '../../../src/rl/grpoStep';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import type { GenerationMessages } from '../../../src/rubric/generate';
import { GenerationError } from '../../../src/rubric/generateParse';
import { induceTeacherRubric } from '../../../src/rubric/induce';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl } from '../../../src/share/trlExport';
import { RunStore } from '../../../src/store';

const problems = (source: string): readonly string[] => {
  try {
    parseTeacherResponses(source);
  } catch (e) {
    expect(e).toBeInstanceOf(TeacherResponsesError);
    return (e as TeacherResponsesError).problems;
  }
  throw new Error('parsed');
};

describe('the stored-responses file', () => {
  it('reads JSONL, a JSON array and a prompt → response object; several responses to one prompt are kept', async () => {
    const jsonl = '{"prompt": "Sky?", "response": "Blue, from Rayleigh scattering."}\n\n{"prompt": "Sea?", "response": "Salty."}\n{"prompt": "Sky?", "response": "Blue."}\n';
    const entries = parseTeacherResponses(jsonl);
    expect(entries).toEqual([
      { prompt: 'Sky?', response: 'Blue, from Rayleigh scattering.' },
      { prompt: 'Sea?', response: 'Salty.' },
      { prompt: 'Sky?', response: 'Blue.' },
    ]);
    expect(parseTeacherResponses(JSON.stringify(entries))).toEqual(entries);
    expect(parseTeacherResponses('{"Sky?": "Blue.", "Sea?": "Salty."}')).toEqual([
      { prompt: 'Sky?', response: 'Blue.' },
      { prompt: 'Sea?', response: 'Salty.' },
    ]);
    const teacher = storedTeacher(entries);
    expect(await teacher.responses('Sky?')).toEqual(['Blue, from Rayleigh scattering.', 'Blue.']);
    expect(await teacher.responses('Moon?')).toEqual([]);
    expect(teacher.name).toBe('stored responses (3 for 2 prompts)');
  });

  it('refuses a malformed file, naming every line or entry at fault', () => {
    expect(problems('')).toEqual(['the file is empty']);
    expect(problems('{"prompt": "a", "response": "b"}\nnot json\n{"prompt": "c"')).toEqual([
      expect.stringMatching(/^line 2: not valid JSON/),
      expect.stringMatching(/^line 3: not valid JSON/),
    ]);
    expect(problems('[{"prompt": "a"}, {"prompt": "b", "response": "  "}, {"prompt": "c", "response": "d", "api_key": "sk-1"}, 7]')).toEqual([
      'entry 1: response: missing',
      'entry 2: response: the response is empty',
      'entry 3: unknown field "api_key" (an entry has only "prompt" and "response")',
      'entry 4: expected an object {"prompt": ..., "response": ...}',
    ]);
    expect(problems('{"Sky?": 3}')).toEqual(['entry 1 ("Sky?"): response: must be text, got 3']);
    expect(problems('[]')).toEqual(['the file has no entries']);
    expect(problems('"just text"')[0]).toMatch(/expected JSON lines, an array/);
    expect(() => parseTeacherResponses('[{"prompt": "a"}]')).toThrow(/^The teacher's responses file was not used: entry 1: response: missing$/);
  });
});

describe('the remote teacher', () => {
  it('asks the endpoint once per prompt with the bound key, retries a 500, and never serialises the key', async () => {
    const calls: { url: string; auth: string | null; body: { messages: { role: string; content: string }[] } }[] = [];
    let fail = 1;
    const fetch = (async (url: string, init: RequestInit) => {
      calls.push({ url, auth: new Headers(init.headers).get('Authorization'), body: JSON.parse(String(init.body)) });
      if (fail-- > 0) return new Response('busy', { status: 500 });
      return new Response(JSON.stringify({ choices: [{ message: { content: 'The sky is blue because of Rayleigh scattering.' } }] }), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const teacher = remoteTeacher({ url: 'https://api.example.com/v1', model: 'big-1', apiKey: { origin: 'https://api.example.com', key: 'sk-secret' } }, { fetch, random: () => 0 });
    expect(await teacher.responses('Sky?')).toEqual(['The sky is blue because of Rayleigh scattering.']);
    expect(await teacher.responses('Sky?')).toEqual(['The sky is blue because of Rayleigh scattering.']);
    expect(calls).toHaveLength(2);
    expect(calls[1].url).toBe('https://api.example.com/v1/chat/completions');
    expect(calls[1].auth).toBe('Bearer sk-secret');
    expect(calls[1].body.messages[1]).toEqual({ role: 'user', content: 'Sky?' });
    expect(teacher.name).toBe('remote:big-1 @ https://api.example.com/v1/chat/completions');
    expect(JSON.stringify(teacher)).not.toContain('sk-secret');
    // A key entered for another site is never sent there.
    const other = remoteTeacher({ url: 'https://evil.example.org/v1', model: 'm', apiKey: { origin: 'https://api.example.com', key: 'sk-secret' } }, { fetch });
    await expect(other.responses('Sky?')).rejects.toThrow(/the black-box teacher \(m\) gave no answer/);
    expect(calls).toHaveLength(2);
  });
});

const BASE = parseRubric({ name: 'base', criteria: [{ id: 'on_topic', text: 'Stays on topic', weight: 1, tier: 'important', judge_question: 'Does it stay on topic?' }] });

/** A rubric writer that answers each prompt from `replies` and records the messages. */
function writer(replies: Record<string, string>) {
  const seen: GenerationMessages[] = [];
  const complete = async (m: GenerationMessages) => {
    seen.push(m);
    const key = Object.keys(replies).find((k) => m.user.includes(`<prompt>\n${k}\n</prompt>`));
    return key === undefined ? 'nothing' : replies[key];
  };
  return { complete, seen };
}

const criteriaJson = (...cs: [string, string][]) => JSON.stringify({ criteria: cs.map(([id, text]) => ({ id, text, weight: 2, tier: 'important', judge_question: `${text}?` })) });

describe('rubric induction from teacher-vs-student contrasts', () => {
  it('appends the criteria separating the teacher\'s answers from the student\'s to the base, as a new version with provenance', async () => {
    const w = writer({
      'Sky?': criteriaJson(['names_cause', 'Names the physical cause'], ['on_topic', 'Answers the question asked']),
      'Sea?': criteriaJson(['names_cause', 'Names the physical cause']),
    });
    const baseVersion = await rubricVersion(BASE);
    const r = await induceTeacherRubric(
      w.complete,
      BASE,
      baseVersion,
      [
        { prompt: 'Sky?', teacher: ['Blue, from Rayleigh scattering.'], student: ['Blue.', 'Nice day.'] },
        { prompt: 'Sea?', teacher: ['Salty: dissolved minerals.'], student: ['Wet.'] },
        { prompt: 'Moon?', teacher: [], student: ['Round.'] },
      ],
      { teacher: 'stored responses (2 for 2 prompts)', judge: 'remote:judge', step: 0 },
    );
    // The teacher's answers are the good side, the student's the bad side.
    expect(w.seen[0].user).toContain('Good response 1:\n<response>\nBlue, from Rayleigh scattering.\n</response>');
    expect(w.seen[0].user).toContain('Bad response 2:\n<response>\nNice day.\n</response>');
    expect(w.seen).toHaveLength(2);
    // The two prompts' "names the physical cause" are one criterion; the clashing id gets a suffix.
    expect(r.rubric.criteria.map((c) => c.id)).toEqual(['on_topic', 'names_cause', 'on_topic_2']);
    expect(r.version).toBe(await rubricVersion(r.rubric));
    expect(r.version).not.toBe(baseVersion);
    expect(r.provenance).toEqual({ kind: 'teacher_contrast', teacher: 'stored responses (2 for 2 prompts)', judge: 'remote:judge', base_version: baseVersion, prompts: ['Sky?', 'Sea?'], criteria: ['names_cause', 'on_topic_2'], step: 0 });
    expect(BASE.criteria).toHaveLength(1);
  });

  it('a malformed reply is a clear error naming the prompt, and nothing is induced', async () => {
    const w = writer({ 'Sky?': criteriaJson(['names_cause', 'Names the physical cause']), 'Sea?': '{"criteria": [{"id": "Bad Id", "text": "x"' });
    const run = induceTeacherRubric(w.complete, BASE, 'v', [
      { prompt: 'Sky?', teacher: ['a'], student: ['b'] },
      { prompt: 'Sea?', teacher: ['c'], student: ['d'] },
    ], { teacher: 't', judge: 'j' });
    await expect(run).rejects.toBeInstanceOf(GenerationError);
    await expect(run).rejects.toThrow(/prompt "Sea\?": the JSON is cut off before it closes/);
    await expect(induceTeacherRubric(w.complete, BASE, 'v', [{ prompt: 'Sky?', teacher: [], student: ['b'] }], { teacher: 't', judge: 'j' })).rejects.toThrow(
      /no prompt has both a teacher response and a student response/,
    );
  });
});

/** Just what induceAfterStep reads of a context and a step. */
async function runContext(config: ReturnType<typeof parseGrpoConfig>, complete: (m: GenerationMessages) => Promise<string>) {
  const version = await rubricVersion(BASE);
  const ctx = { config, rubric: BASE, rubricVersion: version, rubricGenerator: complete, modelJudge: { name: 'remote:judge', judge: async () => [] }, blackBox: blackBoxState(config, { rubric: BASE, version }) } as unknown as GrpoContext;
  return { ctx, version };
}
const stepResult = (step: number): StepResult =>
  ({
    metrics: { step },
    rollouts: [
      { prompt: 'Sky?', completion: 'Blue.' },
      { prompt: 'Sky?', completion: 'Nice day.' },
      { prompt: 'Sea?', completion: 'Wet.' },
      { prompt: 'Sea?', completion: 'Big.' },
    ],
  }) as unknown as StepResult;

describe('the black_box teacher in a run', () => {
  const config = parseGrpoConfig({
    num_generations: 2,
    generation_batch_size: 4,
    distillation: { teacher: 'black_box', teacher_responses: [{ prompt: 'Sky?', response: 'Blue, from Rayleigh scattering.' }, { prompt: 'Sea?', response: 'Salty.' }] },
  });

  it('after the first step, the induced version becomes the run\'s rubric and the step says so with its provenance', async () => {
    const w = writer({ 'Sky?': criteriaJson(['names_cause', 'Names the physical cause']), 'Sea?': criteriaJson(['explains', 'Explains why']) });
    const { ctx, version } = await runContext(config, w.complete);
    const result = stepResult(0);
    await induceAfterStep(ctx, 0, result);
    const e = result.metrics.teacher_rubric!;
    expect(e.outcome).toBe('induced');
    expect(ctx.rubricVersion).toBe(e.version);
    expect(ctx.rubric.criteria.map((c) => c.id)).toEqual(['on_topic', 'names_cause', 'explains']);
    expect(e.provenance).toMatchObject({ teacher: 'stored responses (2 for 2 prompts)', judge: 'remote:judge', base_version: version, prompts: ['Sky?', 'Sea?'], step: 0 });
    expect(e.rubric).toBe(ctx.rubric);
    // Once: the next step induces nothing (induce_every null).
    const next = stepResult(1);
    await induceAfterStep(ctx, 1, next);
    expect(next.metrics.teacher_rubric).toBeUndefined();
    expect(inductionDue({ induced: true }, 3, 2)).toBe(true);
    expect(inductionDue({ induced: true }, 2, 2)).toBe(false);
    expect(inductionDue({ induced: false }, 7, null)).toBe(true);
  });

  it('every step names the version that judged it (rubric_version): the base until the induction, the induced one after, so label agreement counts labels of the induced version', async () => {
    const w = writer({ 'Sky?': criteriaJson(['names_cause', 'Names the physical cause']), 'Sea?': criteriaJson(['explains', 'Explains why']) });
    const { ctx, version } = await runContext(config, w.complete);
    const steps = [stepResult(0), stepResult(1)];
    await induceAfterStep(ctx, 0, steps[0]);
    await induceAfterStep(ctx, 1, steps[1]);
    const induced = steps[0].metrics.teacher_rubric!.version!;
    expect(induced).not.toBe(version);
    // Step 0 was judged with the base rubric (the induction after it changes the next step's).
    expect(steps.map((r) => r.metrics.rubric_version)).toEqual([version, induced]);
    // The judge meta panel's versions (the run's rubric, then its steps'): a verdict labelled on
    // step 1 is stored with the induced version, and now counts.
    const labels = { [induced]: { marks: [], verdicts: [{ rollout: 'r/1/0/0', criterion: 'names_cause', score: 1, correct: false }] } };
    const versions = [version, ...steps.map((r) => r.metrics.rubric_version!)];
    expect(labelAgreementView(['on_topic'], labels, versions, 0.5)).toMatchObject([{ criterion_id: 'names_cause', n: 1, fp: 1 }]);
    // A failed induction still names the version that judged the step; no teacher: nothing.
    const failing = await runContext(config, async () => 'no JSON here');
    const failed = stepResult(0);
    await induceAfterStep(failing.ctx, 0, failed);
    expect([failed.metrics.teacher_rubric?.outcome, failed.metrics.rubric_version]).toEqual(['failed', version]);
    const off = await runContext(parseGrpoConfig({ num_generations: 2, generation_batch_size: 4 }), w.complete);
    const plain = stepResult(0);
    await induceAfterStep(off.ctx, 0, plain);
    expect(plain.metrics.rubric_version).toBeUndefined();
  });

  it('a malformed reply leaves the rubric as it was and says why', async () => {
    const { ctx, version } = await runContext(config, async () => 'I cannot help with that.');
    const result = stepResult(0);
    await induceAfterStep(ctx, 0, result);
    expect(result.metrics.teacher_rubric).toEqual({
      step: 0,
      outcome: 'failed',
      version: null,
      provenance: null,
      error: expect.stringMatching(/^The model's rubric was not used: prompt "Sky\?": the reply has no JSON object.*; the rubric was not changed$/),
    });
    expect(ctx.rubric).toBe(BASE);
    expect(ctx.rubricVersion).toBe(version);
  });

  it('the store keeps the induced version with its provenance', async () => {
    const w = writer({ 'Sky?': criteriaJson(['names_cause', 'Names the physical cause']), 'Sea?': criteriaJson(['explains', 'Explains why']) });
    const { ctx } = await runContext(config, w.complete);
    const result = stepResult(0);
    await induceAfterStep(ctx, 0, result);
    const e = result.metrics.teacher_rubric!;
    const store = await RunStore.open({ name: 'black-box-provenance', storage: null });
    try {
      expect(await store.saveRubric(e.rubric!, e.provenance!)).toBe(e.version);
      const record = (await store.listRubrics()).find((r) => r.version === e.version)!;
      expect(record.provenance).toEqual(e.provenance);
      expect(await store.rubric(e.version!)).toEqual(e.rubric);
    } finally {
      store.close();
    }
  });

  it('its options: one source of answers, never a key, not pure; through a share link and the TRL export', async () => {
    expect(() => parseGrpoConfig({ distillation: { teacher: 'black_box' } })).toThrow(/the black_box teacher needs exactly one source of answers/);
    expect(() => parseGrpoConfig({ distillation: { teacher: 'black_box', teacher_endpoint: { url: 'https://api.example.com/v1', model: 'm', api_key: 'sk-1' } } })).toThrow(/api_key/);
    expect(() => parseGrpoConfig({ distillation: { teacher: 'black_box', mode: 'pure', teacher_endpoint: { url: 'https://api.example.com/v1', model: 'm' } } })).toThrow(
      /distillation\.mode: the black_box teacher needs the judge/,
    );
    expect(() => parseGrpoConfig({ distillation: { teacher: 'black_box', teacher_endpoint: { url: 'ftp://x', model: 'm' } } })).toThrow(/must be an http\(s\) URL/);
    expect(() => parseGrpoConfig({ rubric_evolution: 'prune', distillation: { teacher: 'black_box', teacher_endpoint: { url: 'https://api.example.com/v1', model: 'm' } } })).toThrow(
      /rubric_evolution: cannot be combined with the black_box distillation teacher/,
    );
    const remote = parseGrpoConfig({ distillation: { teacher: 'black_box', teacher_endpoint: { url: 'https://api.example.com/v1', model: 'big-1' }, induce_every: 5 } });
    expect(blackBoxState(remote, { rubric: BASE, version: 'v' })!.teacher.name).toBe('remote:big-1 @ https://api.example.com/v1/chat/completions');
    expect(blackBoxState(parseGrpoConfig({}), { rubric: BASE, version: 'v' })).toBeNull();
    expect(parseGrpoConfig({}).distillation).toMatchObject({ teacher_responses: null, teacher_endpoint: null, induce_every: null, induce_max_criteria: 6 });
    const distillation = { teacher: 'black_box', teacher_responses: [{ prompt: 'Sky?', response: 'Blue.' }], induce_max_criteria: 3 };
    const experiment = { ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, distillation } };
    expect(decodeShareLink(encodeShareLink({ experiment })).experiment.config.distillation).toEqual(distillation);
    const { files, notes } = await exportToTrl(experiment);
    expect(notes.some((n) => n.startsWith('distillation teacher "black_box" (1 stored responses; induced once, after the first step, at most 3 criteria per prompt)'))).toBe(true);
    expect(files['train_grpo.py']).not.toContain('GKD');
  });
});
