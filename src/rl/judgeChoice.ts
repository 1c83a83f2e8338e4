// Which judge scores a rubric's judge-question criteria, as data an experiment carries. Rule
// criteria are always scored by the rule judge; this only picks the model behind the yes/no
// questions. Pure (no GPU imports): links, run files and the builder validate it.
// An API key is never part of a judge choice: it is handed to the trainer worker separately
// (open({judgeApiKey})), so links, exports and stored runs cannot carry it.
import { z } from 'zod';

/** Field names that name credentials (api_key, apiKey, key, token, Authorization, secret...); max_tokens is not one. */
const KEY_LIKE = /(key|token|secret|authorization|password|bearer|credentials?)$/;

const remoteJudgeChoice = z
  .object({
    kind: z.literal('remote'),
    /** An OpenAI-compatible chat completions URL (or its /v1 base). */
    url: z
      .string()
      .max(500)
      .refine((u) => /^https?:\/\/[^\s]+$/i.test(u), 'must be an http(s) URL'),
    model: z.string().min(1).max(200),
    concurrency: z.number().int().min(1).max(32).optional(),
    max_attempts: z.number().int().min(1).max(10).optional(),
    timeout_ms: z.number().int().min(1000).max(600_000).optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    max_tokens: z.number().int().min(1).max(4096).nullable().optional(),
  })
  .strict();

export const judgeChoiceSchema = z.discriminatedUnion('kind', [
  /** Rules only: judge-question criteria stay unscored ("needs a model judge"). */
  z.object({ kind: z.literal('rules') }).strict(),
  /** The starting policy, frozen, scores each question as P(yes). */
  z.object({ kind: z.literal('self') }).strict(),
  /** Another model our engine runs (an id the model registry knows). */
  z.object({ kind: z.literal('model'), model: z.string().min(1).max(200) }).strict(),
  /**
   * A linear probe on a judge model's final hidden state, trained when the run opens from the
   * verdict labels stored with the rubric version (src/rl/probeJudge.ts). model: another model
   * our engine runs; absent, the starting policy (frozen). l2: the fit's L2 penalty (default 1).
   */
  z.object({ kind: z.literal('probe'), model: z.string().min(1).max(200).optional(), l2: z.number().positive().max(1e6).optional() }).strict(),
  /** A transformers.js zero-shot classification pipeline (downloads its model; needs a network). */
  z.object({ kind: z.literal('zero_shot'), model: z.string().min(1).max(200) }).strict(),
  remoteJudgeChoice,
]);

export type JudgeChoice = z.output<typeof judgeChoiceSchema>;
export type RemoteJudgeChoice = z.output<typeof remoteJudgeChoice>;

export const DEFAULT_JUDGE: JudgeChoice = { kind: 'rules' };

/**
 * A message when `input` looks like a judge choice that carries a key, so the experiment parser
 * can say why it is refused instead of a bare "unrecognized key".
 */
export function keyFieldIn(input: unknown): string | null {
  if (typeof input !== 'object' || input === null) return null;
  const field = Object.keys(input).find((k) => KEY_LIKE.test(k.toLowerCase().replace(/[_-]/g, '')));
  return field === undefined ? null : `"${field}" is not allowed: an API key never travels in an experiment, link or export; enter it in the judge settings instead`;
}

/** True when the choice needs a model to answer judge questions (anything but rules). */
export function usesModelJudge(choice: JudgeChoice): boolean {
  return choice.kind !== 'rules';
}
