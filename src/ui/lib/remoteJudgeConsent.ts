// A share link, an imported run file or a lesson names its own remote judge: an endpoint chosen by
// whoever made it, that would receive every prompt and completion the run scores (and, were keys
// not bound to their site, a key). Such an experiment opens with that judge switched off (rules
// only) and the judge held aside until the visitor confirms the endpoint; only then does it become
// the draft's judge, and a key must then be entered for its origin.
import { httpOrigin } from '../../rubric/judges/remote';

/** Where an experiment with a remote judge came from (the notice says so). */
export type JudgeSource = 'link' | 'file' | 'lesson';

export interface HeldRemoteJudge {
  /** The judge choice as the experiment names it, restored on confirmation. */
  judge: Record<string, unknown>;
  /** Its URL as text ('' when it has none). */
  url: string;
  /** The site that would receive the requests; null when the URL is not a valid http(s) URL. */
  origin: string | null;
  source: JudgeSource;
}

/**
 * The experiment with a remote judge taken out (so it runs rules-only) and that judge held for
 * consent; any other experiment unchanged, with nothing held.
 */
export function withholdRemoteJudge<E extends object>(experiment: E, source: JudgeSource): { experiment: E; held: HeldRemoteJudge | null } {
  const judge = (experiment as { judge?: unknown }).judge;
  if (judge === null || typeof judge !== 'object' || (judge as { kind?: unknown }).kind !== 'remote') return { experiment, held: null };
  const rest = { ...experiment } as Record<string, unknown>;
  delete rest.judge;
  const url = typeof (judge as { url?: unknown }).url === 'string' ? ((judge as { url: string }).url) : '';
  return { experiment: rest as E, held: { judge: structuredClone(judge as Record<string, unknown>), url, origin: httpOrigin(url), source } };
}

/** A link's, run file's or lesson's black-box distillation teacher endpoint, held until confirmed. */
export interface HeldRemoteTeacher {
  /** The endpoint as the experiment names it (URL and model; never a key). */
  endpoint: { url: string; model: string };
  url: string;
  origin: string | null;
  source: JudgeSource;
}

/**
 * The same for a black-box teacher's endpoint (distillation.teacher_endpoint), which would receive
 * every prompt of the run: taken out with the teacher switched off (plain GRPO) and held for consent.
 * A teacher of stored responses sends nothing anywhere and is left as it is.
 */
export function withholdRemoteTeacher<E extends object>(experiment: E, source: JudgeSource): { experiment: E; held: HeldRemoteTeacher | null } {
  const config = (experiment as { config?: unknown }).config;
  const distillation = config !== null && typeof config === 'object' ? (config as { distillation?: unknown }).distillation : undefined;
  const endpoint = distillation !== null && typeof distillation === 'object' ? (distillation as { teacher_endpoint?: unknown }).teacher_endpoint : undefined;
  // Only the black_box teacher asks the endpoint (with another teacher a named endpoint is never called).
  if (endpoint === null || typeof endpoint !== 'object' || (distillation as { teacher?: unknown }).teacher !== 'black_box') return { experiment, held: null };
  const e = endpoint as { url?: unknown; model?: unknown };
  const url = typeof e.url === 'string' ? e.url : '';
  const rest: Record<string, unknown> = { ...(distillation as Record<string, unknown>), teacher: 'off' };
  delete rest.teacher_endpoint;
  return {
    experiment: { ...experiment, config: { ...(config as Record<string, unknown>), distillation: rest } } as E,
    held: { endpoint: { url, model: typeof e.model === 'string' ? e.model : '' }, url, origin: httpOrigin(url), source },
  };
}

/** "Use this teacher": the config with the held endpoint as the black-box teacher's source again. */
export function restoreRemoteTeacher(config: Record<string, unknown>, held: HeldRemoteTeacher): Record<string, unknown> {
  const distillation: Record<string, unknown> = { ...((config.distillation ?? {}) as Record<string, unknown>), teacher: 'black_box', teacher_endpoint: { ...held.endpoint } };
  delete distillation.teacher_responses;
  return { ...config, distillation };
}
