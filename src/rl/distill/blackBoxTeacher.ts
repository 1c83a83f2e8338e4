// Where a black-box teacher's answers come from (ROPD): a file of stored responses
// (teacherResponses.ts), or a remote OpenAI-compatible endpoint asked once per prompt through the
// remote judge's client (src/rubric/judges/remote.ts: the same retries, timeouts, reply limit and
// key handling; the key lives in that client's private field and is never serialised: describe()
// and toJSON() name the endpoint and the model only).
import { remoteJudge, type OriginBoundKey, type RemoteJudgeDeps } from '../../rubric/judges/remote';
import { responsesByPrompt, type TeacherResponse } from './teacherResponses';

export interface BlackBoxTeacher {
  /** For provenance and messages: "file (12 responses)" or "remote:gpt-4o @ https://…". Never a key. */
  readonly name: string;
  /** The teacher's responses to `prompt`; empty when it has none (a stored file without that prompt). */
  responses(prompt: string, signal?: AbortSignal): Promise<string[]>;
}

/** The stored responses as a teacher. */
export function storedTeacher(entries: readonly TeacherResponse[]): BlackBoxTeacher {
  const byPrompt = responsesByPrompt(entries);
  return {
    name: `stored responses (${entries.length} for ${byPrompt.size} prompt${byPrompt.size === 1 ? '' : 's'})`,
    responses: async (prompt) => [...(byPrompt.get(prompt) ?? [])],
  };
}

export const TEACHER_SYSTEM_PROMPT = 'You are a helpful assistant. Answer the user\'s request as well as you can.';

export interface RemoteTeacherConfig {
  /** The chat completions URL or its base (".../v1"). */
  url: string;
  model: string;
  /** A key bound to the site it was entered for: sent only to a URL of that origin. */
  apiKey?: OriginBoundKey;
  /** The answer's token budget (default 512). */
  maxTokens?: number;
  /** Sampling temperature (default 0.7: a teacher's typical answer, not its greedy one). */
  temperature?: number;
  timeoutMs?: number;
  maxAttempts?: number;
}

/** A remote teacher; each prompt is asked once and its answer kept for later inductions. */
export function remoteTeacher(config: RemoteTeacherConfig, deps?: RemoteJudgeDeps): BlackBoxTeacher {
  const client = remoteJudge(
    {
      url: config.url,
      model: config.model,
      apiKey: config.apiKey?.key,
      apiKeyOrigin: config.apiKey?.origin,
      concurrency: 1,
      maxAttempts: config.maxAttempts,
      timeoutMs: config.timeoutMs ?? 60_000,
      temperature: config.temperature ?? 0.7,
      maxTokens: null,
    },
    deps,
  );
  const asked = new Map<string, Promise<string[]>>();
  const description = client.toJSON();
  return {
    name: `remote:${description.model} @ ${description.url}`,
    responses(prompt, signal) {
      let answer = asked.get(prompt);
      if (!answer) {
        answer = client
          .complete({ system: TEACHER_SYSTEM_PROMPT, user: prompt }, { signal, maxTokens: config.maxTokens ?? 512 })
          .then((text) => {
            if (text.trim() === '') throw new Error('the teacher endpoint answered with empty text');
            return [text];
          })
          .catch((e: unknown) => {
            asked.delete(prompt); // a failed ask is tried again next time
            throw new Error(`the black-box teacher (${description.model}) gave no answer: ${(e as Error).message}`);
          });
        asked.set(prompt, answer);
      }
      return answer;
    },
  };
}
