// A file of a black-box teacher's stored responses (ROPD, seed 000 #15 / 002 A001): what a big
// model answered to the run's prompts, pasted or imported instead of calling it. Only text: the
// black-box teacher has no logits; its answers are contrasted with the student's to induce a
// rubric (src/rubric/induce.ts). Accepted shapes, each entry a prompt and the teacher's response:
//   - JSONL: one {"prompt": "...", "response": "..."} object per line (blank lines skipped);
//   - JSON: an array of such objects, or one object mapping each prompt to its response.
// Several responses to one prompt are kept (all are shown to the rubric writer). Anything else is
// a TeacherResponsesError listing every problem with its line or entry — never a partial list.
import { z } from 'zod';

export const MAX_TEACHER_RESPONSES = 2000;
export const MAX_TEACHER_PROMPT_CHARS = 20_000;
export const MAX_TEACHER_RESPONSE_CHARS = 50_000;

const text = (what: string, max: number) =>
  z
    .string({ error: (i) => (i.input === undefined ? 'missing' : `must be text, got ${JSON.stringify(i.input)?.slice(0, 40)}`) })
    .refine((s) => s.trim() !== '', `the ${what} is empty`)
    .refine((s) => s.length <= max, `the ${what} is longer than ${max} characters`);

export const teacherResponseSchema = z.strictObject({
  prompt: text('prompt', MAX_TEACHER_PROMPT_CHARS),
  response: text('response', MAX_TEACHER_RESPONSE_CHARS),
});

export type TeacherResponse = z.output<typeof teacherResponseSchema>;

/** A stored-responses file that cannot be used: `problems` names each one (line or entry first). */
export class TeacherResponsesError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`The teacher's responses file was not used: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
    this.name = 'TeacherResponsesError';
    this.problems = problems;
  }
}

function entryProblems(where: string, value: unknown): string[] {
  const r = teacherResponseSchema.safeParse(value);
  if (r.success) return [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${where}: expected an object {"prompt": ..., "response": ...}`];
  return r.error.issues.map((i) => {
    if (i.code === 'unrecognized_keys') return `${where}: unknown field "${i.keys[0]}" (an entry has only "prompt" and "response")`;
    return `${where}: ${i.path.join('.') || 'entry'}: ${i.message}`;
  });
}

/** The entries of a stored-responses file (JSON or JSONL text). Throws TeacherResponsesError. */
export function parseTeacherResponses(source: string): TeacherResponse[] {
  const trimmed = source.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') throw new TeacherResponsesError(['the file is empty']);
  let entries: { where: string; value: unknown }[];
  let whole: unknown;
  let wholeError: string | null = null;
  try {
    whole = JSON.parse(trimmed);
  } catch (e) {
    wholeError = (e as Error).message;
  }
  if (wholeError === null && Array.isArray(whole)) {
    entries = whole.map((value, i) => ({ where: `entry ${i + 1}`, value }));
  } else if (wholeError === null && whole !== null && typeof whole === 'object' && !('prompt' in whole || 'response' in whole)) {
    // One object: prompt → response. An object with a "prompt" or "response" field is one entry
    // (a one-line JSONL file), so a missing field is named rather than read as a prompt called "prompt".
    entries = Object.entries(whole as Record<string, unknown>).map(([prompt, response], i) => ({ where: `entry ${i + 1} ("${prompt.slice(0, 40)}")`, value: { prompt, response } }));
  } else if (wholeError === null && whole !== null && typeof whole === 'object') {
    entries = [{ where: 'line 1', value: whole }];
  } else if (wholeError === null) {
    throw new TeacherResponsesError([`expected JSON lines, an array of {"prompt", "response"} objects or one object mapping prompts to responses, got ${JSON.stringify(whole)?.slice(0, 40)}`]);
  } else {
    // JSONL: every non-blank line one object.
    const lines = trimmed.split(/\r?\n/);
    const problems: string[] = [];
    entries = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        entries.push({ where: `line ${i + 1}`, value: JSON.parse(line) });
      } catch (e) {
        problems.push(`line ${i + 1}: not valid JSON (${(e as Error).message})`);
      }
    });
    if (problems.length) throw new TeacherResponsesError(lines.length === 1 ? [`not valid JSON: ${wholeError}`] : problems);
  }
  if (entries.length === 0) throw new TeacherResponsesError(['the file has no entries']);
  if (entries.length > MAX_TEACHER_RESPONSES) throw new TeacherResponsesError([`the file has ${entries.length} entries, more than the ${MAX_TEACHER_RESPONSES} a run carries`]);
  const problems = entries.flatMap((e) => entryProblems(e.where, e.value));
  if (problems.length) throw new TeacherResponsesError(problems);
  return entries.map((e) => teacherResponseSchema.parse(e.value));
}

/** prompt → the teacher's responses to it, in file order. */
export function responsesByPrompt(entries: readonly TeacherResponse[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const e of entries) map.set(e.prompt, [...(map.get(e.prompt) ?? []), e.response]);
  return map;
}
