// Free-text completion on our engine, for drafting a rubric with a model (the rubric lab, issue
// 12): the generation prompt's system and user messages become one prompt in the model's own
// format (BOS + template, or its chat template), the model samples a reply, and the reply's text
// goes back with what the model could see. The sampling itself is a callback (the judge worker
// passes src/model/generate.ts on its GPU; tests pass a fake), so this file stays pure.
// A small model's context may not hold the whole request: the reply gets up to half the context
// (or all that the prompt leaves), and a prompt longer than the rest keeps its first token (BOS
// or the chat template's opening) and its last tokens — the format instructions and the answer
// cue. The caller says so next to a malformed reply (the reply is parsed strictly either way).

export interface CompletionMessages {
  system: string;
  user: string;
}

export interface EngineCompleteOptions {
  /** Most reply tokens wanted (default 1500); the context may allow fewer. */
  maxTokens?: number;
  /** 0 (default) samples greedily. */
  temperature?: number;
  /** Sampling seed (default 0). */
  seed?: number;
}

export interface EngineCompletion {
  text: string;
  /** Tokens of the whole request as the model formats it. */
  promptTokens: number;
  /** Of those, the tokens the model was given (fewer when its context could not hold them all). */
  keptPromptTokens: number;
  /** The model's context length. */
  contextLength: number;
  /** Reply tokens sampled (the end-of-text token not counted). */
  replyTokens: number;
  /** The most reply tokens this call allowed. */
  maxReplyTokens: number;
  /** True when the reply stopped at maxReplyTokens instead of the model's end-of-text token. */
  truncated: boolean;
  seconds: number;
}

/** Samples a reply to `prompt` (token ids): the ids up to and including EOS, or maxNew ids. */
export type SampleIds = (prompt: readonly number[], settings: { maxNew: number; temperature: number; seed: number }) => Promise<{ ids: number[] }>;

export interface EngineModelParts {
  formatPrompt: (text: string) => number[];
  tokenizer: { eosTokenId: number; decode(ids: ArrayLike<number>): string };
  contextLength: number;
}

export const DEFAULT_REPLY_TOKENS = 1500;

/** The system and user messages as one prompt text (the engine's prompt formats take one text). */
export const completionPromptText = (m: CompletionMessages): string => (m.system ? `${m.system}\n\n${m.user}` : m.user);

/** How many reply tokens fit, and how many prompt tokens are kept, in a context of `context`. */
export function completionBudget(promptTokens: number, context: number, maxTokens: number): { maxNew: number; keep: number } {
  if (!(Number.isInteger(context) && context >= 2)) throw new RangeError(`the model's context must be at least 2 tokens, got ${context}`);
  if (!(Number.isInteger(maxTokens) && maxTokens >= 1)) throw new RangeError(`maxTokens must be a positive whole number, got ${maxTokens}`);
  const maxNew = Math.min(maxTokens, Math.max(Math.floor(context / 2), context - promptTokens));
  return { maxNew, keep: Math.min(promptTokens, context - maxNew) };
}

/** `ids` cut to `keep` tokens: the first one and the last keep − 1. */
export function keepPromptTail(ids: readonly number[], keep: number): number[] {
  if (ids.length <= keep) return [...ids];
  return keep <= 1 ? ids.slice(ids.length - keep) : [ids[0], ...ids.slice(ids.length - (keep - 1))];
}

/** One completion of `messages` by the model whose parts are given, sampling with `sample`. */
export async function engineComplete(parts: EngineModelParts, sample: SampleIds, messages: CompletionMessages, options: EngineCompleteOptions = {}): Promise<EngineCompletion> {
  const t0 = performance.now();
  if (typeof messages?.user !== 'string' || typeof messages.system !== 'string') throw new TypeError('complete: messages must be {system, user} strings');
  const temperature = options.temperature ?? 0;
  if (!(temperature >= 0 && Number.isFinite(temperature))) throw new RangeError(`temperature must be a number >= 0, got ${temperature}`);
  const full = parts.formatPrompt(completionPromptText(messages));
  const { maxNew, keep } = completionBudget(full.length, parts.contextLength, options.maxTokens ?? DEFAULT_REPLY_TOKENS);
  const prompt = keepPromptTail(full, keep);
  const { ids } = await sample(prompt, { maxNew, temperature, seed: options.seed ?? 0 });
  const end = ids.indexOf(parts.tokenizer.eosTokenId);
  const reply = end === -1 ? ids : ids.slice(0, end);
  return {
    text: parts.tokenizer.decode(reply),
    promptTokens: full.length,
    keptPromptTokens: prompt.length,
    contextLength: parts.contextLength,
    replyTokens: reply.length,
    maxReplyTokens: maxNew,
    truncated: end === -1 && ids.length >= maxNew,
    seconds: (performance.now() - t0) / 1000,
  };
}

/**
 * What a user should know next to a reply from an engine model that was not a usable rubric: the
 * request did not fit its context, or the reply ran out of tokens. Empty when neither.
 */
export function completionLimits(c: Pick<EngineCompletion, 'promptTokens' | 'keptPromptTokens' | 'contextLength' | 'truncated' | 'maxReplyTokens'>): string[] {
  const out: string[] = [];
  if (c.keptPromptTokens < c.promptTokens) {
    out.push(
      `The model's context holds ${c.contextLength} tokens: it saw only ${c.keptPromptTokens} of the request's ${c.promptTokens} tokens (its start and its end, with the format to reply in).`,
    );
  }
  if (c.truncated) out.push(`Its reply stopped at the ${c.maxReplyTokens}-token limit before the model ended it.`);
  return out;
}
