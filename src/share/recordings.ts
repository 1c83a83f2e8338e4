// The lessons' recorded runs (public/recordings/, written by scripts/recordings.mjs from
// scripts/experiments/lessons.mjs --record): index.json says which lessons have one (seed, steps,
// the adapter it was recorded on), each a run file in the zip container (readRunFile). URLs are
// relative to the page, so the site works under any sub-path; no query string, so the offline
// service worker answers them from its cache (src/offline/policy.ts).
import { z } from 'zod';
import { parseExperiment } from '../rl/experiment';
import { readRunFile, type RunFile } from './runFile';

export const RECORDINGS_FOLDER = 'recordings/';
export const RECORDINGS_INDEX = `${RECORDINGS_FOLDER}index.json`;

const entrySchema = z.object({
  lesson: z.string().regex(/^[a-z0-9][a-z0-9-]{0,79}$/),
  /** The zip's name inside the folder: a plain name, never a path or a URL. */
  file: z.string().regex(/^[a-z0-9][a-z0-9-]{0,79}\.rubric-run\.zip$/),
  seed: z.number().int().min(0),
  steps: z.number().int().min(1),
  model: z.string().max(200),
  recorded_at: z.string().max(100),
  adapter: z.string().max(300),
  bytes: z.number().int().min(0),
});
export type RecordingEntry = z.infer<typeof entrySchema>;

const indexSchema = z.object({
  format: z.literal('rubric-playground-recordings'),
  version: z.literal(1),
  recordings: z.array(entrySchema).max(1000),
});

/** The recordings listed in index.json's text; none when it is missing, not JSON or not an index (the page then offers no replay). */
export function parseRecordingIndex(text: string): RecordingEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return [];
  }
  const parsed = indexSchema.safeParse(json);
  return parsed.success ? parsed.data.recordings : [];
}

export function recordingFor(index: readonly RecordingEntry[], lessonId: string): RecordingEntry | null {
  return index.find((e) => e.lesson === lessonId) ?? null;
}

/** A file of the recordings folder, relative to the page (its base URL), so a sub-path deploy finds it. */
export function recordingUrl(base: string, file: string): string {
  return new URL(`${RECORDINGS_FOLDER}${file}`, base).href;
}

type Fetch = (url: string) => Promise<Pick<Response, 'ok' | 'status' | 'arrayBuffer' | 'text'>>;

/** The index from the page's folder; none when it cannot be fetched (an old deploy, offline before a first visit). */
export async function fetchRecordingIndex(base: string, fetcher: Fetch = fetch): Promise<RecordingEntry[]> {
  try {
    const response = await fetcher(new URL(RECORDINGS_INDEX, base).href);
    return response.ok ? parseRecordingIndex(await response.text()) : [];
  } catch {
    return [];
  }
}

/** How long reading a recording may take before the page says it could not (it is tens of KB). */
export const RECORDING_TIMEOUT_MS = 30_000;

/** A listed recording, read and checked like any imported run file; throws a message for the page. */
export async function fetchRecording(base: string, entry: RecordingEntry, fetcher: Fetch = fetch, timeoutMs = RECORDING_TIMEOUT_MS): Promise<RunFile> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A download that never finishes (a stalled connection or cache) must not leave the replay waiting silently.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the recording of this lesson did not arrive within ${Math.round(timeoutMs / 1000)} s; reload the page to try again`)), timeoutMs);
  });
  try {
    return await Promise.race([read(base, entry, fetcher), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function read(base: string, entry: RecordingEntry, fetcher: Fetch): Promise<RunFile> {
  let response;
  let bytes;
  try {
    response = await fetcher(recordingUrl(base, entry.file));
    if (response.ok) bytes = await response.arrayBuffer();
  } catch (e) {
    throw new Error(`the recording of this lesson could not be downloaded (${(e as Error).message})`);
  }
  if (!response.ok || !bytes) throw new Error(`the recording of this lesson could not be downloaded (HTTP ${response.status})`);
  try {
    return await readRunFile(bytes);
  } catch (e) {
    throw new Error(`the recording of this lesson is not a valid run file: ${(e as Error).message}`);
  }
}

/** Options a recording may differ in from its lesson and still show the lesson: the seed it ran with, and how far it ran. */
const RUN_ONLY = new Set(['seed', 'max_steps']);

/**
 * Whether the recording trained the lesson's experiment as it is now (model, prompts, rubrics,
 * judge and every setting but the seed and max_steps, compared after defaults are filled in).
 * False when the lesson changed since it was recorded: the page says so beside the replay.
 */
export function recordedWithLessonSettings(recording: unknown, lesson: unknown): boolean {
  const canonical = (experiment: unknown): string | null => {
    try {
      const p = parseExperiment(experiment);
      const config = Object.fromEntries(Object.entries(p.config).filter(([k]) => !RUN_ONLY.has(k)));
      return JSON.stringify([p.experiment.model, p.experiment.prompts, p.rubric, p.heldOutRubric, p.judge, p.judgeBias, config]);
    } catch {
      return null;
    }
  };
  const a = canonical(recording);
  return a !== null && a === canonical(lesson);
}

/** The recording's curve on a live run's reward chart: "recording (seed N)". */
export function recordingLabel(seed: number): string {
  return `recording (seed ${seed})`;
}

/**
 * "What you should see", from the recording's own rewards: the mean reward at its first and last
 * step (the dashed curve's ends). Null when either step has no reward (every rollout unscorable).
 */
export function expectedShape(metrics: readonly { step: number; rewards: { reward: number | null } }[]): string | null {
  const sorted = [...metrics].sort((a, b) => a.step - b.step);
  const first = sorted[0];
  const last = sorted.at(-1);
  const value = (r: number | null | undefined) => (typeof r === 'number' && Number.isFinite(r) ? r.toFixed(2) : null);
  const a = value(first?.rewards.reward);
  const b = value(last?.rewards.reward);
  if (!first || !last || a === null || b === null) return null;
  if (first === last) return `the recording's mean reward was ${a} at step ${first.step}`;
  return `the recording's mean reward went from ${a} at step ${first.step} to ${b} at step ${last.step}`;
}
