// The builder's black-box teacher source (src/ui/lib/blackBoxTeacher.ts): a picked file read with
// the run's own parser, its problems in the page's words, exactly one source at a time, and a
// link's, run file's or lesson's teacher endpoint held off until confirmed (remoteJudgeConsent.ts);
// the endpoint's key is never part of the experiment.
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import {
  describeCoverage,
  MAX_TEACHER_FILE_BYTES,
  readTeacherResponses,
  responsesCoverage,
  teacherEndpointOf,
  teacherResponsesOf,
  teacherSourceOf,
  withoutTeacherSource,
  withTeacherEndpoint,
  withTeacherResponses,
} from '../../../src/ui/lib/blackBoxTeacher';
import { restoreRemoteTeacher, withholdRemoteTeacher } from '../../../src/ui/lib/remoteJudgeConsent';
import { ALL_OPTIONS } from '../../../src/ui/lib/settingsCatalog';

const JSONL = '{"prompt": "Describe the sea.", "response": "Grey-green and restless."}\n\n{"prompt": "Describe the sea.", "response": "Wide."}\n{"prompt": "Name a fruit.", "response": "A pear."}\n';

describe('the black-box teacher\'s stored responses file', () => {
  it('reads JSONL into entries, several responses per prompt kept', () => {
    const read = readTeacherResponses('teacher.jsonl', JSONL.length, JSONL);
    expect(read).toEqual({
      entries: [
        { prompt: 'Describe the sea.', response: 'Grey-green and restless.' },
        { prompt: 'Describe the sea.', response: 'Wide.' },
        { prompt: 'Name a fruit.', response: 'A pear.' },
      ],
    });
  });

  it('refuses a bad file whole, naming the file and each problem by line', () => {
    const bad = '{"prompt": "a", "response": "b"}\n{"prompt": "c"}\n{"prompt": "d", "response": "e", "api_key": "sk-1"}\n';
    const read = readTeacherResponses('teacher.jsonl', bad.length, bad);
    expect('error' in read && read.error).toBe(
      'The teacher\'s responses file "teacher.jsonl" was not used: line 2: response: missing; line 3: unknown field "api_key" (an entry has only "prompt" and "response")',
    );
    // One line with a field missing is that entry, not a map with a prompt called "prompt".
    expect(readTeacherResponses('one.jsonl', 16, '{"prompt": "a"}\n')).toEqual({ error: 'The teacher\'s responses file "one.jsonl" was not used: line 1: response: missing' });
    const notJson = readTeacherResponses('x.json', 5, '{oops');
    expect('error' in notJson && notJson.error).toMatch(/^The teacher's responses file "x.json" was not used: not valid JSON/);
    expect(readTeacherResponses('big.jsonl', MAX_TEACHER_FILE_BYTES + 1, null)).toEqual({ error: 'The teacher\'s responses file "big.jsonl" was not used: it is 32.0 MB, more than the 32 MB this page reads' });
    expect(readTeacherResponses('gone.jsonl', 10, null)).toEqual({ error: 'The teacher\'s responses file "gone.jsonl" could not be read' });
  });

  it('says how many of the experiment\'s prompts it answers', () => {
    const { entries } = readTeacherResponses('t', JSONL.length, JSONL) as { entries: { prompt: string; response: string }[] };
    const all = responsesCoverage(entries, ['Describe the sea.', 'Name a fruit.']);
    expect(all).toEqual({ responses: 3, prompts: 2, missing: [] });
    expect(describeCoverage(all, 2)).toBe('3 responses for 2 prompts: every prompt of the experiment has one.');
    const some = responsesCoverage(entries, ['Describe the sea.', 'Say hi.', 'Count to 3.']);
    expect(some.missing).toEqual(['Say hi.', 'Count to 3.']);
    expect(describeCoverage(some, 3)).toBe('3 responses for 2 prompts: 1 of the experiment\'s 3 prompts have one (the induction skips the others).');
    expect(describeCoverage(responsesCoverage(entries, ['Other.']), 1)).toMatch(/none of them is a prompt of this experiment/);
  });
});

describe('the black-box teacher\'s source in the draft', () => {
  const base = { max_steps: 3, distillation: { teacher: 'black_box', induce_every: 2 } };
  const entries = [{ prompt: 'Describe the sea.', response: 'Grey.' }];

  it('holds exactly one source: a file replaces the endpoint and back, each a valid config', () => {
    const withFile = withTeacherResponses(base, entries);
    expect(teacherSourceOf(withFile)).toBe('file');
    expect(teacherResponsesOf(withFile)).toEqual(entries);
    expect(parseGrpoConfig(withFile).distillation).toMatchObject({ teacher: 'black_box', teacher_responses: entries, teacher_endpoint: null, induce_every: 2 });
    const withEndpoint = withTeacherEndpoint(withFile, { url: ' https://api.example.com/v1 ', model: 'big-1' });
    expect(teacherSourceOf(withEndpoint)).toBe('endpoint');
    expect(teacherEndpointOf(withEndpoint)).toEqual({ url: 'https://api.example.com/v1', model: 'big-1' });
    expect((withEndpoint.distillation as Record<string, unknown>).teacher_responses).toBeUndefined();
    expect(parseGrpoConfig(withEndpoint).distillation).toMatchObject({ teacher_responses: null, teacher_endpoint: { url: 'https://api.example.com/v1', model: 'big-1' } });
    // Neither: the config says one is needed (the builder shows it beside the fields).
    expect(() => parseGrpoConfig(withoutTeacherSource(withEndpoint))).toThrow(/needs exactly one source of answers/);
    // The draft's other settings are kept; the input is not mutated.
    expect(base.distillation).toEqual({ teacher: 'black_box', induce_every: 2 });
  });

  it('offers black_box and its induction settings only for it, hides the divergence settings it does not use; the model teacher\'s id is a field', () => {
    const teacher = ALL_OPTIONS.find((o) => o.key === 'distillation.teacher')!;
    expect(teacher.values).toContain('black_box');
    const shown = (c: Record<string, unknown>) => ALL_OPTIONS.filter((o) => o.key.startsWith('distillation.') && (!o.when || o.when(c))).map((o) => o.key);
    const blackBox = shown({ distillation: { teacher: 'black_box' } });
    expect(blackBox).toEqual(expect.arrayContaining(['distillation.induce_every', 'distillation.induce_max_criteria', 'distillation.mode']));
    expect(blackBox).not.toContain('distillation.beta');
    expect(blackBox).not.toContain('distillation.lmbda');
    const self = shown({ distillation: { teacher: 'self_rubric' } });
    expect(self).toContain('distillation.beta');
    expect(self).toContain('distillation.teacher_weights');
    expect(self).not.toContain('distillation.induce_every');
    expect(self).not.toContain('distillation.teacher_model');
    // The model teacher (the distillation lessons use it): its id as text; the self teacher's weights do not apply.
    expect(teacher.values).toContain('model');
    const model = shown({ distillation: { teacher: 'model' } });
    expect(model).toEqual(expect.arrayContaining(['distillation.teacher_model', 'distillation.beta', 'distillation.lmbda']));
    expect(model).not.toContain('distillation.teacher_weights');
    expect(ALL_OPTIONS.find((o) => o.key === 'distillation.teacher_model')).toMatchObject({ kind: 'text', nullable: true, trl: 'GKDConfig.teacher_model_name_or_path' });
  });
});

describe('a link\'s black-box teacher endpoint is held until confirmed', () => {
  const endpoint = { url: 'https://teacher.example.com/v1/chat/completions', model: 'big-1' };
  const experiment = { model: 'm', prompts: ['p'], config: { max_steps: 3, distillation: { teacher: 'black_box', teacher_endpoint: endpoint, induce_every: 2 } } };

  it('switches the teacher off, holds the endpoint with its site, and restores it on "Use this teacher"', () => {
    const { experiment: off, held } = withholdRemoteTeacher(experiment, 'link');
    expect(held).toEqual({ endpoint, url: endpoint.url, origin: 'https://teacher.example.com', source: 'link' });
    expect(off.config.distillation).toEqual({ teacher: 'off', induce_every: 2 });
    expect(() => parseGrpoConfig(off.config)).not.toThrow();
    // The link's experiment is not mutated.
    expect(experiment.config.distillation.teacher).toBe('black_box');
    const back = restoreRemoteTeacher(off.config, held!);
    expect(back.distillation).toEqual({ teacher: 'black_box', induce_every: 2, teacher_endpoint: endpoint });
    expect(parseGrpoConfig(back).distillation.teacher_endpoint).toEqual(endpoint);
  });

  it('leaves stored responses and other teachers alone (they send nothing anywhere)', () => {
    const file = { ...experiment, config: { distillation: { teacher: 'black_box', teacher_responses: [{ prompt: 'p', response: 'r' }] } } };
    expect(withholdRemoteTeacher(file, 'file')).toEqual({ experiment: file, held: null });
    const other = { ...experiment, config: { distillation: { teacher: 'self_rubric', teacher_endpoint: endpoint } } };
    expect(withholdRemoteTeacher(other, 'lesson').held).toBeNull();
    expect(withholdRemoteTeacher({ model: 'm' }, 'link').held).toBeNull();
  });

  it('a share link carries the endpoint\'s URL and model, never a key', () => {
    const withTeacher = (distillation: unknown) => ({ ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, distillation } });
    const link = encodeShareLink({ experiment: withTeacher(experiment.config.distillation) });
    const back = decodeShareLink(link);
    expect(back.experiment.config.distillation).toEqual({ teacher: 'black_box', teacher_endpoint: endpoint, induce_every: 2 });
    expect(() => encodeShareLink({ experiment: withTeacher({ teacher: 'black_box', teacher_endpoint: { ...endpoint, api_key: 'sk-1' } }) })).toThrow(/api_key/);
  });
});
