// Share links: the whole experiment in the URL fragment, so opening a link recreates it with no
// server. Format: `#x=<version>.<base64url(deflate-raw(UTF-8 JSON))>`, version 1:
//   { "experiment": Experiment, "preset"?: id, "lesson"?: { id, title?, guidance, hidden_controls } }
// (a held-out rubric, scored as a metric only, travels inside the experiment: held_out_rubric).
// A link is untrusted input. decodeShareLink checks, in order: the fragment's length, its
// version, the base64url alphabet, the deflate stream (inflated in small pieces and stopped at
// MAX_PAYLOAD_BYTES: no zip bomb), strict UTF-8, JSON, then every key (no __proto__ /
// constructor / prototype anywhere, nothing named like a secret) and the strict schemas
// (parseExperiment: the rubric and the GRPO options too). Any failure is one ShareLinkError.
// Strings stay data: a prompt may hold "<script>", and rendering it as text is the UI's job.
// Links never carry weights (the schema has no place for them) or keys (rejected by name).
import { Inflate, deflateSync } from 'fflate';
import { z } from 'zod';
import { GRPO_DEFAULTS } from '../rl/config';
import { parseExperiment, type Experiment } from '../rl/experiment';
import { experimentPathLabel, experimentProblems } from '../rl/issueLabels';
import { explainIssue, primaryIssues } from '../rubric/zodIssue';
import type { LineageEntry } from '../rubric/evolve';

export const SHARE_LINK_VERSION = 1;
/** Longest fragment accepted (characters after "#"); about 75 KB of compressed JSON. */
export const MAX_FRAGMENT_CHARS = 100_000;
/** Largest decompressed JSON accepted (bytes): inflation stops here. */
export const MAX_PAYLOAD_BYTES = 2_000_000;
/** Deepest JSON nesting accepted (a rubric's JSON shapes nest at most 8 levels). */
export const MAX_JSON_DEPTH = 40;

/** Controls a lesson can hide: the builder's sections and every GRPO option by its TRL name. */
export const CONTROL_IDS: readonly string[] = ['model', 'prompts', 'rubric', 'judge', ...Object.keys(GRPO_DEFAULTS)];

export interface SharedLesson {
  id: string;
  title?: string;
  /** Short guidance shown with the experiment (plain text). */
  guidance: string;
  /** CONTROL_IDS the page hides while the lesson is open. */
  hidden_controls: string[];
}

export interface Shared {
  experiment: Experiment;
  /** The preset the experiment started from. */
  preset?: string;
  lesson?: SharedLesson;
  /**
   * Online rubric evolution: "pin" opens the experiment with rubric_evolution off (the link's rubric
   * as is), "allow" keeps its setting; versions: where the rubric came from, oldest first (with pin
   * the last is the pinned version, the link's rubric; see ./linkLineage.ts).
   */
  rubric_lineage?: { mode: 'pin' | 'allow'; versions?: LineageEntry[] };
}

export type ShareLinkErrorCode =
  | 'too_large'
  | 'bad_format'
  | 'newer_version'
  | 'bad_encoding'
  | 'bad_compression'
  | 'bad_json'
  | 'forbidden_field'
  | 'invalid'
  /** Reading it ran past its time bound (src/share/linkDecoder.ts). */
  | 'too_slow';

export class ShareLinkError extends Error {
  constructor(
    readonly code: ShareLinkErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ShareLinkError';
  }
}

// ---- base64 (standard and url-safe), strict ----

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Base64 of bytes; url: the "-_" alphabet without padding (RFC 4648 §5). */
export function bytesToBase64(bytes: Uint8Array, url = false): string {
  const abc = url ? B64URL : B64;
  const parts: string[] = [];
  let chunk = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const left = bytes.length - i;
    chunk += abc[(n >> 18) & 63] + abc[(n >> 12) & 63];
    chunk += left > 1 ? abc[(n >> 6) & 63] : url ? '' : '=';
    chunk += left > 2 ? abc[n & 63] : url ? '' : '=';
    if (chunk.length >= 8192) {
      parts.push(chunk);
      chunk = '';
    }
  }
  parts.push(chunk);
  return parts.join('');
}

/** Decodes base64 (url: the "-_" alphabet, padding optional); throws RangeError on anything else. */
export function base64ToBytes(text: string, url = false): Uint8Array {
  const abc = url ? B64URL : B64;
  const body = text.replace(/={1,2}$/, '');
  if (body.length % 4 === 1 || (!url && text.length % 4 !== 0)) throw new RangeError(`base64 text of length ${text.length} is truncated`);
  const lookup = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) lookup[abc.charCodeAt(i)] = i;
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const v = c < 128 ? lookup[c] : -1;
    if (v < 0) throw new RangeError(`invalid base64 character ${JSON.stringify(body[i])} at ${i}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) throw new RangeError('base64 text has stray bits at its end');
  return out;
}

// ---- bounded inflate ----

/**
 * Inflates raw DEFLATE data, stopping as soon as the output would exceed `limit` bytes. The input
 * goes in 16 KiB pieces, so no single step can produce more than about 16 MiB (DEFLATE expands at
 * most ~1032:1) before the limit is checked. Not smaller: fflate's streaming inflater redoes work
 * at piece boundaries, and 4 KiB pieces made a valid 1.5 MB link (30 KB compressed) inflate about
 * 25 times slower than in one go, a main-thread stall of seconds on a busy machine.
 */
export function inflateLimited(data: Uint8Array, limit: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const inflater = new Inflate((chunk) => {
    total += chunk.length;
    if (total > limit) over = true;
    else chunks.push(chunk);
  });
  const PIECE = 16 * 1024;
  for (let i = 0; i < data.length || i === 0; i += PIECE) {
    const last = i + PIECE >= data.length;
    inflater.push(data.subarray(i, i + PIECE), last);
    if (over) throw new RangeError(`decompresses to more than ${limit} bytes`);
    if (last) break;
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

// ---- key checks ----

const PROTO_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** True for keys that name credentials: api_key, apiKey, Authorization, token, hf_token, secret, password... */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return /(apikey|authorization|token|secret|password|passwd|credential|credentials|bearer|privatekey|cookie)$/.test(k) || k === 'auth';
}

function pathOf(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || 'link';
}

const LESSON_WORDS: Record<string, string> = { id: 'id', title: 'title', guidance: 'guidance', hidden_controls: 'hidden controls' };

/** A place in a link's data as the page labels it: "Prompt 4", "Setting top_k", "Lesson hidden controls, item 2". */
export function linkPathLabel(path: readonly (string | number)[], root: unknown): string {
  const [head, ...rest] = path;
  if (head === undefined) return 'The link';
  if (head === 'experiment') return experimentPathLabel(rest, (root as { experiment?: unknown } | null)?.experiment);
  if (head === 'preset') return 'Preset';
  if (head === 'lesson') {
    if (rest.length === 0) return 'Lesson';
    const [field, item] = rest;
    return `Lesson ${LESSON_WORDS[String(field)] ?? String(field)}${typeof item === 'number' ? `, item ${item + 1}` : ''}`;
  }
  if (head === 'rubric_lineage') {
    const [field, item, part] = rest;
    if (field === 'versions' && typeof item === 'number') return `Rubric lineage, version ${item + 1}${part === undefined ? '' : ` ${String(part).replace('_', ' ')}`}`;
    return `Rubric lineage${field === undefined ? '' : ` ${String(field)}`}`;
  }
  return `The link's field "${String(head)}"`;
}

export interface CheckKeysOptions {
  secrets: boolean;
  /** Names a path in messages (default: the JSON path, "experiment.config.api_key"). */
  label?: (path: readonly (string | number)[]) => string;
}

/**
 * Walks parsed JSON: rejects prototype keys everywhere, nesting deeper than MAX_JSON_DEPTH, and
 * (with `secrets`) secret-named keys everywhere except as property names of a JSON shape (a
 * rubric may require a "token" field in the model's answer).
 */
export function checkKeys(value: unknown, path: (string | number)[] = [], options: CheckKeysOptions = { secrets: true }): void {
  const label = options.label ?? pathOf;
  if (path.length > MAX_JSON_DEPTH) throw new ShareLinkError('invalid', `${label(path)}: nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkKeys(v, [...path, i], options));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const shapeNames = path[path.length - 1] === 'properties';
  for (const key of Object.keys(value)) {
    // A labelled place names the object holding the key; a JSON path names the key itself.
    const where = options.label ? options.label(path) : pathOf([...path, key]);
    if (PROTO_KEYS.has(key)) throw new ShareLinkError('forbidden_field', `${where}: the key "${key}" is not allowed in a link`);
    if (options.secrets && !shapeNames && isSecretKey(key)) {
      throw new ShareLinkError('forbidden_field', `${where}: links never carry keys or credentials; remove "${key}"`);
    }
    checkKeys((value as Record<string, unknown>)[key], [...path, key], options);
  }
}

// ---- schema ----

const idSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must use only a-z, 0-9, "_" and "-"');

const lessonSchema = z.strictObject({
  id: idSchema,
  title: z.string().min(1).max(200).optional(),
  guidance: z.string().max(4000),
  hidden_controls: z
    .array(z.string().max(64))
    .max(CONTROL_IDS.length)
    .superRefine((controls, ctx) => {
      controls.forEach((c, i) => {
        if (!CONTROL_IDS.includes(c)) ctx.addIssue({ code: 'custom', path: [i], message: `unknown control ${JSON.stringify(c)}` });
        else if (controls.indexOf(c) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `lists ${JSON.stringify(c)} twice` });
      });
    }),
});

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');

/** Online rubric evolution in a link: pin (the link's rubric as is: evolution off) or allow (the experiment's rubric_evolution), and the lineage the rubric came from. */
const rubricLineageSchema = z.strictObject({
  mode: z.enum(['pin', 'allow']),
  versions: z
    .array(
      z.strictObject({
        version: sha256,
        parent: sha256.nullable(),
        first_step: z.number().int().min(0),
        strategy: z.enum(['prune', 'rare', 'online_rubrics']).nullable(),
        reason: z.string().max(4000).nullable(),
      }),
    )
    .min(1)
    .max(200)
    .superRefine(lineageChain)
    .optional(),
});

/**
 * A lineage is one chain, oldest first: the starting rubric (no parent, no strategy), then each
 * evolved version with its strategy, a parent among the earlier versions and a later first step.
 * With pin the last version is the pinned one, the link's rubric (checked when the link is opened:
 * checkLinkRubricLineage in ./linkLineage.ts; hashing is async).
 */
function lineageChain(versions: readonly LineageEntry[], ctx: z.RefinementCtx): void {
  const at = (i: number, field: keyof LineageEntry, message: string) => ctx.addIssue({ code: 'custom', path: [i, field], message });
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v.version)) at(i, 'version', `${v.version.slice(0, 12)}… appears twice in the lineage`);
    if (i === 0) {
      if (v.parent !== null) at(0, 'parent', 'the first version is the starting rubric: it has no parent (null)');
      if (v.strategy !== null) at(0, 'strategy', 'the first version is the starting rubric: no strategy made it (null)');
    } else {
      if (v.parent === null) at(i, 'parent', 'is missing: only the first version (the starting rubric) has no parent');
      else if (!seen.has(v.parent)) at(i, 'parent', `${v.parent.slice(0, 12)}… is not an earlier version in the lineage: the lineage is broken`);
      if (v.strategy === null) at(i, 'strategy', 'is missing: an evolved version names the strategy that made it (prune, rare or online_rubrics)');
      if (v.first_step <= versions[i - 1].first_step) at(i, 'first_step', `${v.first_step} is not after the previous version's first step ${versions[i - 1].first_step}`);
    }
    seen.add(v.version);
  });
}

const payloadSchema = z.strictObject({
  experiment: z.unknown(),
  preset: idSchema.optional(),
  lesson: lessonSchema.optional(),
  rubric_lineage: rubricLineageSchema.optional(),
});

function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The link's own fields (experiment, preset, lesson) in plain words. */
function payloadProblem(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path as (string | number)[];
  if (issue.code === 'unrecognized_keys' && path.length === 0) {
    return `The link has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (expected: experiment, preset, lesson, rubric_lineage)`;
  }
  if (path.length === 1 && path[0] === 'experiment' && (input as { experiment?: unknown }).experiment === undefined) {
    return 'The link has no experiment (expected an object with the model, prompts, rubric and settings)';
  }
  return `${linkPathLabel(path, input)}: ${explainIssue(issue, input)}`;
}

/** Validates a Shared value (the schemas, the held-out rubric, the keys); returns it typed. */
export function validateShared(input: unknown): Shared {
  checkKeys(input, [], { secrets: true, label: (path) => linkPathLabel(path, input) });
  const parsed = payloadSchema.safeParse(input);
  if (!parsed.success) {
    const issues = primaryIssues(parsed.error.issues).map((i) => payloadProblem(i, input));
    throw new ShareLinkError('invalid', `the link is not a valid experiment:\n${issues.join('\n')}`);
  }
  let experiment: Experiment;
  try {
    experiment = parseExperiment(parsed.data.experiment).experiment;
  } catch (e) {
    const problems = experimentProblems(e, parsed.data.experiment);
    if (problems === null) throw e;
    throw new ShareLinkError('invalid', `the link's experiment is invalid:\n${problems.join('\n')}`);
  }
  const { lesson, preset, rubric_lineage: lineage } = parsed.data;
  // pin: the link's rubric is used as is, whatever the experiment's rubric_evolution says.
  if (lineage?.mode === 'pin') experiment = { ...experiment, config: { ...experiment.config, rubric_evolution: 'off' } };
  const out: Shared = { experiment };
  if (lineage !== undefined) out.rubric_lineage = { mode: lineage.mode, ...(lineage.versions ? { versions: lineage.versions } : {}) };
  if (preset !== undefined) out.preset = preset;
  if (lesson !== undefined) {
    out.lesson = { id: lesson.id, guidance: lesson.guidance, hidden_controls: lesson.hidden_controls };
    if (lesson.title !== undefined) out.lesson.title = lesson.title;
  }
  return out;
}

// ---- encode / decode ----

/** The fragment ("#x=1.…") for a shared experiment. Throws ShareLinkError if invalid or too large for a link. */
export function encodeShareLink(shared: Shared): string {
  const valid = validateShared(shared);
  const json = new TextEncoder().encode(JSON.stringify(valid));
  if (json.length > MAX_PAYLOAD_BYTES) {
    throw new ShareLinkError('too_large', `the experiment is ${json.length} bytes as JSON, above a link's ${MAX_PAYLOAD_BYTES}: export a run file instead`);
  }
  const fragment = `x=${SHARE_LINK_VERSION}.${bytesToBase64(deflateSync(json, { level: 9 }), true)}`;
  if (fragment.length > MAX_FRAGMENT_CHARS) {
    throw new ShareLinkError('too_large', `the link would be ${fragment.length} characters long (limit ${MAX_FRAGMENT_CHARS}): use fewer prompts, or export a run file instead`);
  }
  return `#${fragment}`;
}

/** A page URL with the experiment in its fragment (any earlier fragment replaced). */
export function shareUrl(pageUrl: string, shared: Shared): string {
  const hash = pageUrl.indexOf('#');
  return `${hash < 0 ? pageUrl : pageUrl.slice(0, hash)}${encodeShareLink(shared)}`;
}

/** True when a fragment (or URL) carries a share link, valid or not: the page should try to open it. */
export function hasShareLink(fragmentOrUrl: string): boolean {
  const hash = fragmentOrUrl.indexOf('#');
  const fragment = hash < 0 ? fragmentOrUrl : fragmentOrUrl.slice(hash + 1);
  return fragment.split('&').some((p) => p.startsWith('x='));
}

/**
 * The fragment of a share link (after "#"), refused at once when it is not text or longer than
 * MAX_FRAGMENT_CHARS: a check that costs nothing, so the page makes it before handing the link to
 * its worker (src/share/linkDecoder.ts) rather than copying megabytes there to be refused.
 */
export function linkFragment(fragmentOrUrl: string): string {
  if (typeof fragmentOrUrl !== 'string') throw new ShareLinkError('bad_format', 'a share link must be text');
  const hash = fragmentOrUrl.indexOf('#');
  const fragment = hash < 0 ? fragmentOrUrl : fragmentOrUrl.slice(hash + 1);
  if (fragment.length > MAX_FRAGMENT_CHARS) {
    throw new ShareLinkError('too_large', `the link is ${fragment.length} characters long (limit ${MAX_FRAGMENT_CHARS})`);
  }
  return fragment;
}

/**
 * Opens a share link: a fragment with or without "#", or a whole URL. Returns the validated
 * experiment; throws ShareLinkError (code and a message for the user) on anything else.
 */
export function decodeShareLink(fragmentOrUrl: string): Shared {
  const fragment = linkFragment(fragmentOrUrl);
  const values = fragment.split('&').filter((p) => p.startsWith('x='));
  if (values.length === 0) throw new ShareLinkError('bad_format', 'the link has no experiment (expected "#x=<version>.<data>")');
  if (values.length > 1) throw new ShareLinkError('bad_format', 'the link has more than one experiment ("x=" appears twice)');
  const m = /^x=(\d{1,6})\.(.*)$/s.exec(values[0]);
  if (!m) throw new ShareLinkError('bad_format', 'the link is malformed (expected "#x=<version>.<data>")');
  const version = Number(m[1]);
  if (version > SHARE_LINK_VERSION) {
    throw new ShareLinkError('newer_version', `this link was made by a newer version of Rubric Playground (link format ${version}; this page reads up to ${SHARE_LINK_VERSION}): reload the page to get the latest version`);
  }
  if (version < 1) throw new ShareLinkError('bad_format', `link format ${version} does not exist`);
  let compressed: Uint8Array;
  try {
    compressed = base64ToBytes(m[2], true);
  } catch (e) {
    throw new ShareLinkError('bad_encoding', `the link is damaged (bad base64url data: ${describeError(e)}); was it cut off when copied?`);
  }
  if (compressed.length === 0) throw new ShareLinkError('bad_encoding', 'the link has no data after the version');
  let bytes: Uint8Array;
  try {
    bytes = inflateLimited(compressed, MAX_PAYLOAD_BYTES);
  } catch (e) {
    if (e instanceof RangeError && /decompresses to more than/.test(e.message)) {
      throw new ShareLinkError('too_large', `the link's data ${e.message} (limit for an experiment)`);
    }
    throw new ShareLinkError('bad_compression', `the link is damaged (its compressed data does not decompress: ${describeError(e)})`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ShareLinkError('bad_json', 'the link is damaged (its data is not UTF-8 text)');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ShareLinkError('bad_json', `the link is damaged (its data is not JSON: ${describeError(e)})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ShareLinkError('invalid', 'the link is not a valid experiment (its data is not an object)');
  }
  return validateShared(value);
}
