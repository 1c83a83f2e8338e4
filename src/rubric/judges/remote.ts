// A judge behind any OpenAI-compatible chat completions endpoint (OpenAI, OpenRouter, vLLM,
// llama.cpp server, Ollama, ...). One request per (rollout, criterion), a few at a time; retries
// with exponential backoff and jitter on network errors, timeouts, 429 and 5xx; a timeout per
// attempt; an outer AbortSignal stops everything. Anything that does not end in one of the
// criterion's choices is 'unscorable' with the reason, never a 0.
// The API key lives only in a private field of the judge object: toJSON() and
// describeRemoteJudge() leave it out, and reasons never quote it. A key bound to the site it was
// entered for (apiKeyOrigin) is never sent to another: a judge whose URL has moved elsewhere
// drops the key and sends nothing, every answer unscorable with the reason. The reply is
// untrusted text: read up to MAX_REPLY_BYTES, only compared with the choices and quoted (shortened) in reasons.
import { unscorable, type CriterionResult, type Judge, type JudgeOptions, type JudgeRequest } from '../judge';
import { answerSpans } from '../evidence';
import { checklistMessages, judgeMessages, questionOf, verdictMessages } from './modelJudgePrompt';
import { designAsks } from '../judgeDesign';
import { parseChecklist, parseVerdictLine, verdictResult } from './verdictLine';
import { isHolistic, parseLikert } from '../holistic';

export interface RemoteJudgeConfig {
  /** The chat completions URL (".../v1/chat/completions") or its base (".../v1"). http(s) only. */
  url: string;
  model: string;
  /** Sent as "Authorization: Bearer <key>". Held in memory by the judge object only. */
  apiKey?: string;
  /**
   * The origin (scheme, host, port) the key was entered for. When given, the key goes only to a
   * URL of exactly this origin; for any other the judge keeps no key and sends nothing.
   */
  apiKeyOrigin?: string;
  /** Requests in flight at once (1-32, default 4). */
  concurrency?: number;
  /** Tries per request, the first included (1-10, default 4). */
  maxAttempts?: number;
  /** Per attempt, from sending to the whole reply read (default 30 000 ms). */
  timeoutMs?: number;
  /** First retry waits about this long, doubling each time (default 500 ms). */
  backoffMs?: number;
  /** Longest wait between tries, Retry-After included (default 10 000 ms). */
  maxBackoffMs?: number;
  /** Sampling temperature (default 0); null leaves it out (some reasoning models reject it). */
  temperature?: number | null;
  /** max_tokens of the reply (default 16); null leaves it out. */
  maxTokens?: number | null;
}

/** The judge's settings without the key: safe to log, store or share. */
export interface RemoteJudgeDescription {
  kind: 'openai-chat';
  url: string;
  model: string;
  concurrency: number;
  maxAttempts: number;
  timeoutMs: number;
  backoffMs: number;
  maxBackoffMs: number;
  temperature: number | null;
  maxTokens: number | null;
  /** Whether a key is set (never the key); false when the key was refused for another origin. */
  hasApiKey: boolean;
}

/** A key with the origin it was entered for (what the page hands the trainer). */
export interface OriginBoundKey {
  origin: string;
  key: string;
}

/** The origin (scheme://host:port, default port left out) of an http(s) URL; null for anything else. */
export function httpOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Why a key bound to `keyOrigin` must not go to `url`, or null when it may (same origin). Names
 * both sites, never the key.
 */
export function keyOriginMismatch(keyOrigin: string, url: string): string | null {
  const target = httpOrigin(url);
  // Exactly the origin as URL.origin writes it: the page binds keys with that very string.
  if (target !== null && keyOrigin === target) return null;
  return (
    `the API key was entered for ${JSON.stringify(keyOrigin)}, but the judge's endpoint is at ${JSON.stringify(target ?? url)}: ` +
    'a key is only ever sent to the site it was entered for, so no request was sent. Enter a key for this endpoint.'
  );
}

/** Injected in tests; the page uses the globals. */
export interface RemoteJudgeDeps {
  fetch?: typeof fetch;
  /** Uniform in [0, 1), for the backoff jitter. */
  random?: () => number;
}

/** max_tokens a verdict line gets when the judge's max_tokens is not set (answer, quote and reason). */
export const VERDICT_LINE_TOKENS = 128;

const DEFAULTS = { concurrency: 4, maxAttempts: 4, timeoutMs: 30_000, backoffMs: 500, maxBackoffMs: 10_000, temperature: 0, maxTokens: 16 };
/** HTTP statuses after which every further request would fail the same way. */
const FATAL_STATUSES = new Set([401, 403, 404]);
const EXCERPT_CHARS = 160;
/**
 * Most of a reply read (bytes). A verdict is a few words; a body beyond this is no judge's answer,
 * and reading it whole would let a broken or hostile endpoint fill the page's memory.
 */
export const MAX_REPLY_BYTES = 1 << 20;

/** The body as text, reading no more than `limit` bytes (the rest is cancelled, not downloaded). */
async function readLimited(res: Response, limit: number): Promise<{ text: string; over: boolean }> {
  const decoder = new TextDecoder();
  if (!res.body) {
    const text = await res.text();
    return text.length > limit ? { text: text.slice(0, limit), over: true } : { text, over: false };
  }
  const reader = res.body.getReader();
  let text = '';
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), over: false };
    total += value.byteLength;
    if (total > limit) {
      text += decoder.decode(value.subarray(0, value.byteLength - (total - limit)));
      void reader.cancel().catch(() => {});
      return { text, over: true };
    }
    text += decoder.decode(value, { stream: true });
  }
}

function intIn(name: string, value: number | undefined, fallback: number, lo: number, hi: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name} must be an integer in [${lo}, ${hi}], got ${String(value)}`);
  return v;
}

function endpointUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RangeError(`url ${JSON.stringify(url)} is not a valid absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError(`url must be http or https, got ${u.protocol}`);
  if (u.username || u.password) throw new RangeError('url must not contain credentials: pass the key as apiKey');
  if (!u.pathname.endsWith('/chat/completions')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/chat/completions`;
  return u.toString();
}

/** Checks a config and returns its description (no key). Throws RangeError naming the bad field. */
export function describeRemoteJudge(config: RemoteJudgeConfig): RemoteJudgeDescription {
  if (config === null || typeof config !== 'object') throw new RangeError('a remote judge needs a config object');
  if (typeof config.url !== 'string') throw new RangeError('url must be a string');
  if (typeof config.model !== 'string' || config.model.trim() === '') throw new RangeError('model must be a non-empty string');
  if (config.apiKey !== undefined && (typeof config.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(config.apiKey))) {
    throw new RangeError('apiKey must be printable ASCII without spaces');
  }
  if (config.apiKeyOrigin !== undefined && typeof config.apiKeyOrigin !== 'string') throw new RangeError('apiKeyOrigin must be a string');
  const temperature = config.temperature === undefined ? DEFAULTS.temperature : config.temperature;
  if (temperature !== null && !(Number.isFinite(temperature) && temperature >= 0 && temperature <= 2)) {
    throw new RangeError(`temperature must be in [0, 2] or null, got ${String(config.temperature)}`);
  }
  const maxTokens = config.maxTokens === null ? null : intIn('maxTokens', config.maxTokens, DEFAULTS.maxTokens, 1, 100_000);
  const backoffMs = intIn('backoffMs', config.backoffMs, DEFAULTS.backoffMs, 0, 600_000);
  const maxBackoffMs = intIn('maxBackoffMs', config.maxBackoffMs, Math.max(DEFAULTS.maxBackoffMs, backoffMs), 0, 3_600_000);
  if (maxBackoffMs < backoffMs) throw new RangeError(`maxBackoffMs ${maxBackoffMs} is below backoffMs ${backoffMs}`);
  return {
    kind: 'openai-chat',
    url: endpointUrl(config.url),
    model: config.model,
    concurrency: intIn('concurrency', config.concurrency, DEFAULTS.concurrency, 1, 32),
    maxAttempts: intIn('maxAttempts', config.maxAttempts, DEFAULTS.maxAttempts, 1, 10),
    timeoutMs: intIn('timeoutMs', config.timeoutMs, DEFAULTS.timeoutMs, 1, 600_000),
    backoffMs,
    maxBackoffMs,
    temperature,
    maxTokens,
    hasApiKey: config.apiKey !== undefined && (config.apiKeyOrigin === undefined || keyOriginMismatch(config.apiKeyOrigin, config.url) === null),
  };
}

// ---- replies ----

/** Lowercase, without a think block, an "Answer:" label, quotes, markdown emphasis or end punctuation. */
function normalise(text: string): string {
  return text
    .replace(/<think>[\s\S]*?<\/think>/gi, '')
    .trim()
    .toLowerCase()
    .replace(/^(?:final answer|answer|verdict)\s*[:-]\s*/, '')
    .replace(/^[\s"'`*_([{]+/, '')
    .replace(/[\s"'`*_)\]}.,;:!]+$/, '');
}

/**
 * The index of the choice an answer gives, or null: the whole answer (normalised) is a choice,
 * or it starts with one followed by a non-letter ("No, because ..."); the longest such wins.
 */
export function matchChoice(choices: readonly string[], answer: string): number | null {
  const a = normalise(answer);
  const norm = choices.map(normalise);
  const exact = norm.indexOf(a);
  if (exact >= 0) return exact;
  let best: number | null = null;
  norm.forEach((c, i) => {
    if (c === '' || !a.startsWith(c) || /[\p{L}\p{N}]/u.test(a.charAt(c.length))) return;
    if (best === null || c.length > norm[best].length) best = i;
  });
  return best;
}

/** The holistic judge's answer as a choice index (Likert point − 1), or null; a reasoning model's <think> block is dropped first. */
export function likertIndex(answer: string): number | null {
  const k = parseLikert(answer.replace(/<think>[\s\S]*?<\/think>/gi, ''));
  return k === null ? null : k - 1;
}

/** The message text of a chat completion, or null if the reply has none. */
function contentOf(json: unknown): string | null {
  const message = (json as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message;
  const content = message?.content;
  if (typeof content === 'string') return content;
  // Some servers send content parts: [{ type: 'text', text }].
  if (Array.isArray(content)) {
    const texts = content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : null));
    if (texts.every((t) => t !== null)) return texts.join('');
  }
  return null;
}

/** Retry-After as milliseconds (delta seconds or an HTTP date), or undefined. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

type Attempt =
  | { kind: 'answer'; text: string }
  | { kind: 'retry'; reason: string; waitMs?: number }
  | { kind: 'fail'; reason: string; fatal: boolean };

function abortError(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the judge was stopped', 'AbortError');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class RemoteJudge implements Judge {
  readonly name: string;
  readonly #settings: RemoteJudgeDescription;
  readonly #apiKey: string | undefined;
  /** Why nothing is sent: the key was entered for another origin than the endpoint's. */
  readonly #refused: string | null;
  readonly #fetch: typeof fetch;
  readonly #random: () => number;
  /** Whether max_tokens was chosen (else verdict lines get VERDICT_LINE_TOKENS each, not the bare answer's 16). */
  readonly #maxTokensSet: boolean;

  constructor(config: RemoteJudgeConfig, deps: RemoteJudgeDeps = {}) {
    this.#settings = describeRemoteJudge(config);
    // A key for another site is dropped here, before any request: it cannot reach this URL.
    this.#refused = config.apiKey !== undefined && config.apiKeyOrigin !== undefined ? keyOriginMismatch(config.apiKeyOrigin, config.url) : null;
    this.#apiKey = this.#refused === null ? config.apiKey : undefined;
    this.#fetch = deps.fetch ?? ((input, init) => fetch(input, init));
    this.#random = deps.random ?? Math.random;
    this.#maxTokensSet = config.maxTokens !== undefined;
    this.name = `remote:${this.#settings.model}`;
  }

  /** The settings without the key (JSON.stringify uses this). */
  toJSON(): RemoteJudgeDescription {
    return { ...this.#settings };
  }

  async judge(requests: readonly JudgeRequest[], options: JudgeOptions = {}): Promise<CriterionResult[]> {
    const { signal, onAnswered } = options;
    if (signal?.aborted) throw abortError(signal);
    const refused = this.#refused;
    if (refused !== null) return requests.map((r) => unscorable(r.criterion.id, refused));
    const results = new Array<CriterionResult>(requests.length);
    // One HTTP request per prompt: a (response, criterion), or a response's checklist (judge_scope "checklist").
    const asks = designAsks(requests);
    let fatal: string | null = null;
    let next = 0;
    let answered = 0;
    const lane = async () => {
      while (next < asks.length) {
        const { design, items } = asks[next++];
        if (signal?.aborted) throw abortError(signal);
        if (fatal !== null) {
          for (const i of items) results[i] = unscorable(requests[i].criterion.id, `${fatal} (not sent: an earlier request got this answer)`);
        } else {
          const onFatal = (reason: string) => (fatal ??= reason);
          const group = items.map((i) => requests[i]);
          const out =
            items.length > 1
              ? await this.judgeChecklist(group, signal, onFatal)
              : design.verdict === 'generative'
                ? [await this.judgeVerdictLine(group[0], signal, onFatal)]
                : [await this.judgeOne(group[0], signal, onFatal)];
          items.forEach((i, k) => (results[i] = out[k]));
        }
        answered += items.length;
        onAnswered?.(answered);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#settings.concurrency, asks.length) }, lane));
    return results;
  }

  /** The reply budget of `lines` verdict lines: max_tokens as set, else VERDICT_LINE_TOKENS a line. */
  private lineBudget(lines: number): number | null {
    return this.#maxTokensSet ? this.#settings.maxTokens : Math.min(4096, lines * VERDICT_LINE_TOKENS);
  }

  /** One request's text, with retries; a failure as its reason. */
  private async exchange(messages: { system: string; user: string }, maxTokens: number | null, signal: AbortSignal | undefined, onFatal: (reason: string) => void): Promise<{ text: string } | { failure: string }> {
    const s = this.#settings;
    const body = JSON.stringify({
      model: s.model,
      messages: [
        { role: 'system', content: messages.system },
        { role: 'user', content: messages.user },
      ],
      ...(s.temperature !== null ? { temperature: s.temperature } : {}),
      ...(maxTokens !== null ? { max_tokens: maxTokens } : {}),
    });
    for (let attempt = 1; ; attempt++) {
      const out = await this.attempt(body, signal);
      if (out.kind === 'answer') return { text: out.text };
      if (out.kind === 'fail') {
        if (out.fatal) onFatal(out.reason);
        return { failure: out.reason };
      }
      if (attempt >= s.maxAttempts) return { failure: `${out.reason} (gave up after ${s.maxAttempts} attempt${s.maxAttempts === 1 ? '' : 's'})` };
      const base = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** (attempt - 1));
      await sleep(Math.min(s.maxBackoffMs, Math.max(base * (0.5 + 0.5 * this.#random()), out.waitMs ?? 0)), signal);
    }
  }

  /** judge_verdict "generative": the reply must be one verdict line (verdictLine.ts), parsed strictly. */
  private async judgeVerdictLine(request: JudgeRequest, signal: AbortSignal | undefined, onFatal: (reason: string) => void): Promise<CriterionResult> {
    const id = request.criterion.id;
    let choices: readonly string[];
    let messages: { system: string; user: string };
    try {
      choices = questionOf(request).choices;
      messages = verdictMessages(request);
    } catch (e) {
      return unscorable(id, (e as Error).message);
    }
    const out = await this.exchange(messages, this.lineBudget(1), signal, onFatal);
    if ('failure' in out) return unscorable(id, out.failure);
    const text = this.redact(out.text.replace(/<think>[\s\S]*?<\/think>/gi, '')).trim();
    return verdictResult(id, choices, request.completion, parseVerdictLine(text, choices));
  }

  /** judge_scope "checklist": one request for a response's criteria, one numbered verdict line each. */
  private async judgeChecklist(requests: readonly JudgeRequest[], signal: AbortSignal | undefined, onFatal: (reason: string) => void): Promise<CriterionResult[]> {
    let choices: (readonly string[])[];
    let messages: { system: string; user: string };
    try {
      choices = requests.map((r) => questionOf(r).choices);
      messages = checklistMessages(requests);
    } catch (e) {
      return requests.map((r) => unscorable(r.criterion.id, (e as Error).message));
    }
    const out = await this.exchange(messages, this.lineBudget(requests.length), signal, onFatal);
    if ('failure' in out) return requests.map((r) => unscorable(r.criterion.id, out.failure));
    const parsed = parseChecklist(this.redact(out.text), choices);
    return requests.map((r, k) => verdictResult(r.criterion.id, choices[k], r.completion, parsed[k], `checklist of ${requests.length}: `));
  }

  private async judgeOne(request: JudgeRequest, signal: AbortSignal | undefined, onFatal: (reason: string) => void): Promise<CriterionResult> {
    const id = request.criterion.id;
    let choices: readonly string[];
    let body: string;
    try {
      choices = questionOf(request).choices;
      const { system, user } = judgeMessages(request);
      const s = this.#settings;
      body = JSON.stringify({
        model: s.model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        ...(s.temperature !== null ? { temperature: s.temperature } : {}),
        ...(s.maxTokens !== null ? { max_tokens: s.maxTokens } : {}),
      });
    } catch (e) {
      return unscorable(id, (e as Error).message);
    }
    const { maxAttempts, backoffMs, maxBackoffMs } = this.#settings;
    for (let attempt = 1; ; attempt++) {
      const out = await this.attempt(body, signal);
      if (out.kind === 'answer') {
        // The holistic judge's Likert answer is parsed strictly: "5/10" or "6" is no answer, never a score.
        const index = isHolistic(request.criterion) ? likertIndex(out.text) : matchChoice(choices, out.text);
        if (index === null) return unscorable(id, `the judge answered ${this.excerpt(out.text)}, which is none of ${JSON.stringify(choices)}`);
        // A "Quote: ..." line is evidence only where the quote is found in the completion (evidence.ts).
        const spans = answerSpans(request.completion, out.text);
        return { criterion_id: id, status: 'ok', score: index / (choices.length - 1), reason: `the judge answered "${choices[index]}"`, ...(spans.length ? { spans } : {}) };
      }
      if (out.kind === 'fail') {
        if (out.fatal) onFatal(out.reason);
        return unscorable(id, out.reason);
      }
      if (attempt >= maxAttempts) return unscorable(id, `${out.reason} (gave up after ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'})`);
      // Exponential backoff with "equal jitter": half fixed, half random, so lanes spread out.
      const base = Math.min(maxBackoffMs, backoffMs * 2 ** (attempt - 1));
      const wait = Math.min(maxBackoffMs, Math.max(base * (0.5 + 0.5 * this.#random()), out.waitMs ?? 0));
      await sleep(wait, signal);
    }
  }

  /**
   * One free-form chat exchange for rubric generation (src/rubric/generate.ts: a `Complete`): the
   * reply's text, through the same endpoint, key handling, timeout and retries as verdicts.
   * `maxTokens` is the reply's budget (default 1024: a rubric is far longer than a verdict);
   * `temperature` defaults to the judge's. Throws an Error naming the failure.
   */
  async complete(
    messages: { system: string; user: string },
    options: { signal?: AbortSignal; maxTokens?: number; temperature?: number } = {},
  ): Promise<string> {
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal);
    if (this.#refused !== null) throw new Error(this.#refused);
    const s = this.#settings;
    const temperature = options.temperature ?? s.temperature;
    const body = JSON.stringify({
      model: s.model,
      messages: [
        { role: 'system', content: messages.system },
        { role: 'user', content: messages.user },
      ],
      ...(temperature !== null ? { temperature } : {}),
      max_tokens: options.maxTokens ?? 1024,
    });
    for (let attempt = 1; ; attempt++) {
      const out = await this.attempt(body, signal);
      if (out.kind === 'answer') return out.text;
      if (out.kind === 'fail') throw new Error(out.reason);
      if (attempt >= s.maxAttempts) throw new Error(`${out.reason} (gave up after ${s.maxAttempts} attempt${s.maxAttempts === 1 ? '' : 's'})`);
      const base = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** (attempt - 1));
      await sleep(Math.min(s.maxBackoffMs, Math.max(base * (0.5 + 0.5 * this.#random()), out.waitMs ?? 0)), signal);
    }
  }

  /** One HTTP exchange under the per-attempt timeout. Throws only when `signal` aborts. */
  private async attempt(body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    if (signal?.aborted) throw abortError(signal);
    const { url, timeoutMs } = this.#settings;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.#apiKey !== undefined) headers.Authorization = `Bearer ${this.#apiKey}`;
    try {
      const res = await this.#fetch(url, { method: 'POST', headers, body, signal: controller.signal });
      const { text, over } = await readLimited(res, MAX_REPLY_BYTES);
      if (res.ok) {
        if (over) return { kind: 'fail', reason: `the endpoint's reply is larger than ${MAX_REPLY_BYTES} bytes (a verdict is a few words): not read further`, fatal: false };
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          return { kind: 'fail', reason: `the endpoint sent malformed JSON: ${this.excerpt(text)}`, fatal: false };
        }
        const content = contentOf(json);
        if (content === null) return { kind: 'fail', reason: `the endpoint's reply has no choices[0].message.content: ${this.excerpt(text)}`, fatal: false };
        return { kind: 'answer', text: content };
      }
      const reason = `HTTP ${res.status} from the endpoint${this.errorDetail(text)}`;
      if (res.status === 429 || res.status >= 500) return { kind: 'retry', reason, waitMs: retryAfterMs(res.headers.get('retry-after')) };
      return { kind: 'fail', reason, fatal: FATAL_STATUSES.has(res.status) };
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      if (timedOut) return { kind: 'retry', reason: `no complete reply within ${timeoutMs} ms` };
      return { kind: 'retry', reason: `network error: ${this.redact((e as Error)?.message ?? String(e))}` };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** ": message" from an OpenAI-style error body, or a short excerpt of the body. */
  private errorDetail(text: string): string {
    if (text.trim() === '') return '';
    try {
      const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
      if (typeof message === 'string') return `: ${this.excerpt(message)}`;
    } catch {
      // not JSON: quote the text
    }
    return `: ${this.excerpt(text)}`;
  }

  /** Untrusted text, quoted, on one line, shortened, with the key (if echoed back) removed. */
  private excerpt(text: string): string {
    const flat = this.redact(text).replace(/\s+/g, ' ').trim();
    return JSON.stringify(flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat);
  }

  private redact(text: string): string {
    return this.#apiKey ? text.split(this.#apiKey).join('[api key]') : text;
  }
}

/** A remote judge for `config` (validated now: a bad field throws RangeError). */
export function remoteJudge(config: RemoteJudgeConfig, deps?: RemoteJudgeDeps): RemoteJudge {
  return new RemoteJudge(config, deps);
}
