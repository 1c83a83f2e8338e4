// The black-box teacher's source as the builder edits it (distillation.teacher "black_box";
// src/rl/distill/blackBox.ts): either a file of stored responses, read and checked here with the
// same parser the run uses (teacherResponses.ts), or an OpenAI-compatible endpoint named by URL
// and model. Exactly one is set at a time (the config refuses both or neither). The endpoint's API
// key is never part of this: the page holds it per site (judgeKey.svelte.ts) and hands it to the
// trainer when a run opens. Pure: the component (BlackBoxTeacher.svelte) only shows these.
import { parseTeacherResponses, responsesByPrompt, TeacherResponsesError, type TeacherResponse } from '../../rl/distill/teacherResponses';

export type TeacherSource = 'file' | 'endpoint';

/** Bigger files are refused before reading: 2000 responses of at most 50,000 characters fit well under it. */
export const MAX_TEACHER_FILE_BYTES = 32 * 1024 * 1024;

type Config = Record<string, unknown>;
const distillationOf = (config: Config) => (config.distillation ?? {}) as Record<string, unknown>;

/** The stored responses the draft carries, or null. */
export function teacherResponsesOf(config: Config): TeacherResponse[] | null {
  const r = distillationOf(config).teacher_responses;
  return Array.isArray(r) ? (r as TeacherResponse[]) : null;
}

/** The endpoint the draft names, or null. */
export function teacherEndpointOf(config: Config): { url: string; model: string } | null {
  const e = distillationOf(config).teacher_endpoint as { url?: unknown; model?: unknown } | null | undefined;
  if (e === null || typeof e !== 'object') return null;
  return { url: typeof e.url === 'string' ? e.url : '', model: typeof e.model === 'string' ? e.model : '' };
}

/** Which source the draft uses: the endpoint when it names one, else the file. */
export function teacherSourceOf(config: Config): TeacherSource {
  return teacherEndpointOf(config) !== null ? 'endpoint' : 'file';
}

/** A copy of the config with distillation's fields replaced (undefined removes one). */
function withDistillation(config: Config, fields: Record<string, unknown>): Config {
  const next = { ...distillationOf(config), ...fields };
  for (const [k, v] of Object.entries(fields)) if (v === undefined) delete next[k];
  return { ...config, distillation: next };
}

/** The config with the stored responses as the teacher's only source. */
export function withTeacherResponses(config: Config, entries: readonly TeacherResponse[]): Config {
  return withDistillation(config, { teacher_responses: entries.map((e) => ({ prompt: e.prompt, response: e.response })), teacher_endpoint: undefined });
}

/** The config with the endpoint (URL and model as typed) as the teacher's only source. */
export function withTeacherEndpoint(config: Config, endpoint: { url: string; model: string }): Config {
  return withDistillation(config, { teacher_endpoint: { url: endpoint.url.trim(), model: endpoint.model.trim() }, teacher_responses: undefined });
}

/** The config with neither source (the builder then says one is needed). */
export function withoutTeacherSource(config: Config): Config {
  return withDistillation(config, { teacher_endpoint: undefined, teacher_responses: undefined });
}

/** A picked file's text as stored responses, or the reason it was not used, in the page's words. */
export function readTeacherResponses(name: string, size: number, text: string | null): { entries: TeacherResponse[] } | { error: string } {
  if (size > MAX_TEACHER_FILE_BYTES) {
    return { error: `The teacher's responses file "${name}" was not used: it is ${(size / 1024 ** 2).toFixed(1)} MB, more than the ${MAX_TEACHER_FILE_BYTES / 1024 ** 2} MB this page reads` };
  }
  if (text === null) return { error: `The teacher's responses file "${name}" could not be read` };
  try {
    return { entries: parseTeacherResponses(text) };
  } catch (e) {
    if (e instanceof TeacherResponsesError) return { error: e.message.replace(/^The teacher's responses file/, `The teacher's responses file "${name}"`) };
    throw e;
  }
}

/** What the stored responses cover: how many responses, for how many prompts, and which of the experiment's prompts have none. */
export function responsesCoverage(entries: readonly TeacherResponse[], prompts: readonly string[]): { responses: number; prompts: number; missing: string[] } {
  const byPrompt = responsesByPrompt(entries);
  return { responses: entries.length, prompts: byPrompt.size, missing: prompts.filter((p) => !byPrompt.has(p)) };
}

/** One line about the coverage, for the builder. */
export function describeCoverage(c: ReturnType<typeof responsesCoverage>, experimentPrompts: number): string {
  const head = `${c.responses} response${c.responses === 1 ? '' : 's'} for ${c.prompts} prompt${c.prompts === 1 ? '' : 's'}`;
  if (experimentPrompts === 0) return `${head}.`;
  if (c.missing.length === 0) return `${head}: every prompt of the experiment has one.`;
  if (c.missing.length === experimentPrompts) return `${head}, but none of them is a prompt of this experiment (matched exactly): nothing can be induced from them.`;
  return `${head}: ${experimentPrompts - c.missing.length} of the experiment's ${experimentPrompts} prompts have one (the induction skips the others).`;
}
