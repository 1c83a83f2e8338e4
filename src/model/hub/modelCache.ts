// Downloaded model files in the browser's Cache API, under versioned keys
// "v1/<endpoint>/<owner/name>@<revision>/<file>", so a model downloads once and then loads
// offline. Files the server does not have (optional probes, e.g. chat_template.jinja) are
// remembered too, so an offline load makes no network request at all. Pure browser storage:
// the UI lists and deletes cached models through this module without the GPU engine.
import { formatBytes } from './errors';
import { HUB_MODEL_PREFIX, parseHubId } from './hubId';

export const MODEL_CACHE_NAME = 'rubric-playground-models-v1';
export const CACHE_KEY_VERSION = 'v1';
/** Cache API keys must be http(s) URLs; this host never resolves, it only names entries. */
const KEY_ORIGIN = 'https://model-cache.rubric-playground.invalid/';
const BYTES_HEADER = 'x-model-bytes';
const MISSING_HEADER = 'x-model-missing';
const CACHED_AT_HEADER = 'x-cached-at';

export interface CacheKeyParts {
  endpoint: string;
  /** "owner/name". */
  id: string;
  revision: string;
  file: string;
}

export interface CachedModel {
  endpoint: string;
  id: string;
  revision: string;
  /** Bytes of all its cached files. */
  bytes: number;
  files: { file: string; bytes: number; cachedAt: string | null }[];
}

/** What the cache knows about a file: its bytes, or that the server does not have it. */
export type CachedFile = { bytes: ArrayBuffer } | { missing: true };

/** Storing a file did not fit in the site's storage quota. */
export class ModelCacheQuotaError extends Error {
  constructor(file: string, bytes: number, estimate: { usage: number; quota: number } | null) {
    const used = estimate
      ? `this site already uses ${formatBytes(estimate.usage)} of the ${formatBytes(estimate.quota)} the browser allows it`
      : 'the browser does not say how much this site may use';
    super(
      `not enough storage to cache ${file}: it needs ${formatBytes(bytes)} and ${used}. ` +
        'The model still loads, but will download again next time. To cache it, delete cached models you no longer need ' +
        '(the model list shows their sizes), free disk space, or allow this site more storage in the browser settings.',
    );
    this.name = 'ModelCacheQuotaError';
  }
}

/** The versioned key of one file: "v1/<endpoint>/<id>@<revision>/<file>", endpoint and revision URL-encoded. */
export function cacheKey(p: CacheKeyParts): string {
  return `${CACHE_KEY_VERSION}/${encodeURIComponent(p.endpoint)}/${p.id}@${encodeURIComponent(p.revision)}/${p.file}`;
}

/** The parts of a key of the current version; null for anything else (an older layout, a stranger's entry). */
export function parseCacheKey(key: string): CacheKeyParts | null {
  const m = /^v1\/([^/]+)\/([^/@]+\/[^/@]+)@([^/]+)\/(.+)$/.exec(key);
  if (!m) return null;
  try {
    return { endpoint: decodeURIComponent(m[1]), id: m[2], revision: decodeURIComponent(m[3]), file: m[4] };
  } catch {
    return null;
  }
}

function keyUrl(p: CacheKeyParts): string {
  return KEY_ORIGIN + cacheKey(p);
}

function keyOf(url: string): string | null {
  return url.startsWith(KEY_ORIGIN) ? url.slice(KEY_ORIGIN.length) : null;
}

function isQuotaError(err: unknown): boolean {
  const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED';
}

async function storageEstimate(): Promise<{ usage: number; quota: number } | null> {
  try {
    const e = await globalThis.navigator?.storage?.estimate?.();
    return e && typeof e.usage === 'number' && typeof e.quota === 'number' ? { usage: e.usage, quota: e.quota } : null;
  } catch {
    return null;
  }
}

export class ModelCache {
  private constructor(private readonly cache: Cache) {}

  /** The cache, or null where the browser has no Cache API (insecure origins, some private modes). */
  static async open(): Promise<ModelCache | null> {
    if (typeof globalThis.caches === 'undefined') return null;
    try {
      return new ModelCache(await globalThis.caches.open(MODEL_CACHE_NAME));
    } catch {
      // Firefox private windows and opaque origins throw SecurityError here.
      return null;
    }
  }

  async get(p: CacheKeyParts): Promise<CachedFile | null> {
    const res = await this.cache.match(keyUrl(p));
    if (!res) return null;
    if (res.headers.get(MISSING_HEADER) === '1') return { missing: true };
    return { bytes: await res.arrayBuffer() };
  }

  /** Stores a downloaded file; a full quota is a ModelCacheQuotaError saying how much was needed. */
  async put(p: CacheKeyParts, bytes: ArrayBuffer): Promise<void> {
    const headers = { 'content-type': 'application/octet-stream', [BYTES_HEADER]: String(bytes.byteLength), [CACHED_AT_HEADER]: new Date().toISOString() };
    try {
      await this.cache.put(keyUrl(p), new Response(bytes, { headers }));
    } catch (err) {
      if (isQuotaError(err)) throw new ModelCacheQuotaError(p.file, bytes.byteLength, await storageEstimate());
      throw err;
    }
  }

  /** Remembers that the server does not have this file. */
  async putMissing(p: CacheKeyParts): Promise<void> {
    await this.cache.put(keyUrl(p), new Response(null, { headers: { [MISSING_HEADER]: '1', [CACHED_AT_HEADER]: new Date().toISOString() } }));
  }

  /** Cached models with their files and sizes, largest first (remembered-missing files left out). */
  async list(): Promise<CachedModel[]> {
    const models = new Map<string, CachedModel>();
    for (const request of await this.cache.keys()) {
      const key = keyOf(request.url);
      const parts = key === null ? null : parseCacheKey(key);
      if (!parts) continue;
      const res = await this.cache.match(request);
      if (!res || res.headers.get(MISSING_HEADER) === '1') continue;
      const bytes = Number(res.headers.get(BYTES_HEADER) ?? NaN);
      const size = Number.isFinite(bytes) ? bytes : (await res.arrayBuffer()).byteLength;
      const group = `${parts.endpoint}\n${parts.id}\n${parts.revision}`;
      let model = models.get(group);
      if (!model) models.set(group, (model = { endpoint: parts.endpoint, id: parts.id, revision: parts.revision, bytes: 0, files: [] }));
      model.bytes += size;
      model.files.push({ file: parts.file, bytes: size, cachedAt: res.headers.get(CACHED_AT_HEADER) });
    }
    for (const m of models.values()) m.files.sort((a, b) => (a.file < b.file ? -1 : 1));
    return [...models.values()].sort((a, b) => b.bytes - a.bytes);
  }

  /** Deletes every cached file of `id` (of one endpoint or revision when given); returns what went. */
  async delete(id: string, only: { endpoint?: string; revision?: string } = {}): Promise<{ files: number; bytes: number }> {
    let files = 0;
    let bytes = 0;
    for (const request of await this.cache.keys()) {
      const key = keyOf(request.url);
      const parts = key === null ? null : parseCacheKey(key);
      if (!parts || parts.id !== id) continue;
      if (only.endpoint !== undefined && parts.endpoint !== only.endpoint) continue;
      if (only.revision !== undefined && parts.revision !== only.revision) continue;
      const res = await this.cache.match(request);
      if (res && res.headers.get(MISSING_HEADER) !== '1') {
        files++;
        bytes += Number(res.headers.get(BYTES_HEADER) ?? 0) || 0;
      }
      await this.cache.delete(request);
    }
    return { files, bytes };
  }
}

/** Cached models with sizes ([] where the browser has no Cache API). */
export async function listCachedModels(): Promise<CachedModel[]> {
  return (await ModelCache.open())?.list() ?? [];
}

/**
 * Deletes a cached model's files. `model` is "owner/name" (every revision) or "owner/name@revision"
 * (that one), with or without the "hf:" prefix; `only.endpoint` limits it to one endpoint.
 */
export async function deleteCachedModel(model: string, only: { endpoint?: string } = {}): Promise<{ files: number; bytes: number }> {
  const ref = parseHubId(model);
  const namesRevision = model.slice(model.startsWith(HUB_MODEL_PREFIX) ? HUB_MODEL_PREFIX.length : 0).includes('@');
  const cache = await ModelCache.open();
  return cache ? cache.delete(ref.id, { ...only, ...(namesRevision ? { revision: ref.revision } : {}) }) : { files: 0, bytes: 0 };
}
