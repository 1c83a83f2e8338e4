export interface HostileCase {
  id: number;
  kind: 'link' | 'runfile';
  category: string;
  /** A link's fragment ("#x=…"). */
  fragment?: string;
  /** A run file's bytes. */
  bytes?: Uint8Array;
  /** What a correct page does: open it, refuse it, or either (never run, hang or throw). */
  expect: 'open' | 'refuse' | 'any';
  note: string;
  /** Text a control shows once open. */
  marker?: string;
  /** Valid and megabytes large: held to HEAVY_BOUND_MS. */
  heavy?: boolean;
  /** A response to score in "Try it" once the link is open (the rubric's regexes run on it in a worker). */
  tryIt?: string;
  /** The page recomputes the run file's rubric version before import. */
  rehash?: boolean;
}
export function rng(seed: number): () => number;
export const SCRIPT_PAYLOADS: string[];
export const LINK_CATEGORIES: string[];
export const RUN_FILE_CATEGORIES: string[];
export function base64url(bytes: Uint8Array): string;
export function linkOf(json: string | Uint8Array, version?: number): string;
export function hostileCases(options: { seed?: number; count: number; experiment: Record<string, unknown>; runFile: string }): HostileCase[];
export const BASE_METRICS: Record<string, unknown>;
export const BASE_ROLLOUT: Record<string, unknown>;
