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
