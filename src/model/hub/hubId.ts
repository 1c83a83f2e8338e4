// Hub model ids ("owner/name", optionally "@revision"), endpoints, and the Hub's file URLs.
// Pure: the registry and the UI use it without the GPU engine.

export const HUB_ENDPOINT = 'https://huggingface.co';
/** The app's model-id scheme for Hub models: "hf:owner/name" or "hf:owner/name@revision". */
export const HUB_MODEL_PREFIX = 'hf:';
export const DEFAULT_REVISION = 'main';

export interface HubModelRef {
  /** "owner/name". */
  id: string;
  revision: string;
}

export class HubIdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HubIdError';
  }
}

// The Hub's rules for owner and repository names: letters, digits, "-", "_", "."; no "--" or
// "..", not starting or ending with "-" or "."; at most 96 characters each.
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const MAX_NAME_LENGTH = 96;
const REVISION = /^[A-Za-z0-9._/-]+$/;
const MAX_REVISION_LENGTH = 255;

function checkName(part: string, what: string, id: string): void {
  if (part === '') throw new HubIdError(`Hub model id "${id}": the ${what} is empty (write owner/name, e.g. HuggingFaceTB/SmolLM2-135M)`);
  if (part.length > MAX_NAME_LENGTH) throw new HubIdError(`Hub model id: the ${what} "${part.slice(0, 40)}…" is ${part.length} characters long (at most ${MAX_NAME_LENGTH})`);
  if (!NAME.test(part) || part.includes('--') || part.includes('..')) {
    throw new HubIdError(
      `Hub model id "${id}": the ${what} "${part}" may use only letters, digits, "-", "_" and ".", not start or end with "-" or ".", and not contain "--" or ".."`,
    );
  }
}

/** Validates a revision: a branch, tag or commit ("main", "v1.0", "refs/pr/1", a sha). */
export function checkRevision(revision: string): string {
  if (revision === '') throw new HubIdError('revision is empty (leave it out for "main")');
  if (revision.length > MAX_REVISION_LENGTH) throw new HubIdError(`revision is ${revision.length} characters long (at most ${MAX_REVISION_LENGTH})`);
  if (!REVISION.test(revision) || revision.includes('..') || revision.startsWith('/') || revision.endsWith('/')) {
    throw new HubIdError(`revision "${revision}" may use only letters, digits, ".", "_", "-" and inner "/", and not contain ".."`);
  }
  return revision;
}

/**
 * Parses "owner/name", "owner/name@revision" or the same with the "hf:" prefix. `revision`
 * (e.g. from a separate form field) applies when the id names none; two different ones are an error.
 */
export function parseHubId(text: string, revision?: string): HubModelRef {
  const raw = text.startsWith(HUB_MODEL_PREFIX) ? text.slice(HUB_MODEL_PREFIX.length) : text;
  if (raw.trim() === '') throw new HubIdError('Hub model id is empty (write owner/name, e.g. HuggingFaceTB/SmolLM2-135M)');
  if (/\s/.test(raw)) throw new HubIdError(`Hub model id "${raw}" contains a space or other whitespace`);
  const at = raw.indexOf('@');
  const id = at < 0 ? raw : raw.slice(0, at);
  const idRevision = at < 0 ? null : raw.slice(at + 1);
  const parts = id.split('/');
  if (parts.length === 1) {
    throw new HubIdError(`Hub model id "${id}" has no owner: write owner/name (e.g. openai-community/gpt2 rather than gpt2)`);
  }
  if (parts.length !== 2) throw new HubIdError(`Hub model id "${id}" must be owner/name with exactly one "/"`);
  checkName(parts[0], 'owner', id);
  checkName(parts[1], 'name', id);
  if (idRevision !== null && revision !== undefined && idRevision !== revision) {
    throw new HubIdError(`Hub model id "${raw}" names revision "${idRevision}" but "${revision}" was also given`);
  }
  return { id, revision: checkRevision(idRevision ?? revision ?? DEFAULT_REVISION) };
}

/** The app's model id for a Hub model: "hf:owner/name", with "@revision" unless it is main. */
export function hubModelId(ref: HubModelRef): string {
  return `${HUB_MODEL_PREFIX}${ref.id}${ref.revision === DEFAULT_REVISION ? '' : `@${ref.revision}`}`;
}

/**
 * An endpoint is the Hub's base URL or anything laid out like it: an http(s) URL, or a path of
 * this page's server starting with "/" (tests serve fixtures at /test/fixtures/hub). No
 * trailing slash, query or fragment.
 */
export function normalizeEndpoint(endpoint: string = HUB_ENDPOINT): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  if (trimmed.startsWith('/') && !trimmed.startsWith('//')) {
    if (trimmed.includes('..') || /[\s?#]/.test(trimmed)) throw new HubIdError(`endpoint "${endpoint}": a path may not contain "..", spaces, "?" or "#"`);
    return trimmed;
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new HubIdError(`endpoint "${endpoint}" is neither an http(s) URL nor a path starting with "/"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HubIdError(`endpoint "${endpoint}" must use http or https, not ${url.protocol}`);
  if (url.search || url.hash || url.username || url.password) throw new HubIdError(`endpoint "${endpoint}" may not carry a query, fragment or credentials`);
  return trimmed;
}

/** Checks a file name inside a repository: "config.json", "model-00001-of-00002.safetensors". */
export function checkRepoFile(file: string): string {
  if (file === '' || file.startsWith('/') || file.split('/').some((p) => p === '' || p === '.' || p === '..') || /[\s?#\\]/.test(file)) {
    throw new HubIdError(`file name "${file}" is not a plain path inside the repository`);
  }
  return file;
}

/** The Hub's download URL: `${endpoint}/${id}/resolve/${revision}/${file}` (revision URL-encoded, as the Hub's client does). */
export function resolveUrl(endpoint: string, id: string, revision: string, file: string): string {
  const ref = parseHubId(id, revision);
  return `${normalizeEndpoint(endpoint)}/${ref.id}/resolve/${encodeURIComponent(ref.revision)}/${checkRepoFile(file)}`;
}
