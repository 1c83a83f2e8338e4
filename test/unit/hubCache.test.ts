// The model cache, against an in-memory Cache API: versioned keys, reuse without network
// (offline included), listing with sizes, deleting, and a full quota explained.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadCancelledError } from '../../src/model/hub/errors';
import { fetchHubModelFiles } from '../../src/model/hub/fetchHubModel';
import { cacheKey, deleteCachedModel, listCachedModels, MODEL_CACHE_NAME, parseCacheKey } from '../../src/model/hub/modelCache';
import { comparable, FIXTURE_ENDPOINT, fakeHub, MemoryCacheStorage } from './hubFakes';

const GPT2 = 'rubric-fixtures/tiny-gpt2';
const SHARDED = 'rubric-fixtures/tiny-smollm-sharded';
const realCaches = Object.getOwnPropertyDescriptor(globalThis, 'caches');
let storage: MemoryCacheStorage;

function useCaches(s: MemoryCacheStorage | undefined) {
  Object.defineProperty(globalThis, 'caches', { value: s, configurable: true, writable: true });
}

beforeEach(() => {
  storage = new MemoryCacheStorage();
  useCaches(storage);
});
afterEach(() => {
  if (realCaches) Object.defineProperty(globalThis, 'caches', realCaches);
  else delete (globalThis as { caches?: unknown }).caches;
});

const offline = (() => {
  throw new Error('the network must not be used');
}) as unknown as typeof fetch;

describe('cache keys', () => {
  it('are versioned and carry endpoint, id, revision and file', () => {
    const parts = { endpoint: 'https://huggingface.co', id: 'a/b', revision: 'refs/pr/1', file: 'model-00001-of-00002.safetensors' };
    const key = cacheKey(parts);
    expect(key).toBe('v1/https%3A%2F%2Fhuggingface.co/a/b@refs%2Fpr%2F1/model-00001-of-00002.safetensors');
    expect(parseCacheKey(key)).toEqual(parts);
    expect(parseCacheKey(key.replace(/^v1/, 'v0'))).toBeNull();
    expect(MODEL_CACHE_NAME).toBe('rubric-playground-models-v1');
  });
});

describe('fetchHubModelFiles with the cache', () => {
  it('downloads once, then loads from the cache with no network request, even offline', async () => {
    const hub = fakeHub({ missing: 'html' });
    const first = await fetchHubModelFiles(SHARDED, { endpoint: FIXTURE_ENDPOINT, fetch: hub.fetch });
    expect(first.hub).toMatchObject({ cache: 'used', cachedBytes: 0, cacheError: null });
    // model.safetensors was probed (absent) before the index: that answer is cached too.
    expect(hub.requests.map((u) => u.split('/').pop())).toContain('model.safetensors');
    const fromCache: string[] = [];
    const second = await fetchHubModelFiles(SHARDED, { endpoint: FIXTURE_ENDPOINT, fetch: offline, onProgress: (p) => p.done && p.fromCache && fromCache.push(p.file) });
    expect(second.hub.networkBytes).toBe(0);
    expect(second.hub.cachedBytes).toBe(first.hub.networkBytes);
    expect(fromCache).toEqual(second.hub.files.map((f) => f.file));
    expect(comparable(second)).toEqual(comparable(first));
  });

  it('keeps revisions and endpoints apart', async () => {
    await fetchHubModelFiles(GPT2, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch });
    const other = fakeHub();
    await expect(fetchHubModelFiles(`${GPT2}@v2`, { endpoint: FIXTURE_ENDPOINT, fetch: other.fetch })).rejects.toThrow(/config.json is missing: HTTP 404/);
    expect(other.requests[0]).toBe(`${FIXTURE_ENDPOINT}/${GPT2}/resolve/v2/config.json`);
    const mirror = fakeHub();
    await expect(fetchHubModelFiles(GPT2, { endpoint: 'https://mirror.test', fetch: mirror.fetch })).rejects.toThrow();
    expect(mirror.requests).toHaveLength(1); // not served from the first endpoint's entries
  });

  it('lists cached models with per-file and total sizes, and deletes them', async () => {
    const gpt2 = await fetchHubModelFiles(GPT2, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch });
    const sharded = await fetchHubModelFiles(SHARDED, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch });
    const list = await listCachedModels();
    expect(list.map((m) => [m.id, m.revision, m.endpoint, m.bytes])).toEqual(
      [
        [GPT2, 'main', FIXTURE_ENDPOINT, gpt2.hub.networkBytes],
        [SHARDED, 'main', FIXTURE_ENDPOINT, sharded.hub.networkBytes],
      ].sort((x, y) => (y[3] as number) - (x[3] as number)),
    );
    const shardedEntry = list.find((m) => m.id === SHARDED)!;
    expect(shardedEntry.files.map((f) => f.file)).toEqual([...sharded.hub.files.map((f) => f.file)].sort());
    expect(shardedEntry.files.every((f) => f.bytes > 0 && f.cachedAt !== null)).toBe(true);
    expect(await deleteCachedModel(`hf:${SHARDED}`)).toEqual({ files: sharded.hub.files.length, bytes: sharded.hub.networkBytes });
    expect((await listCachedModels()).map((m) => m.id)).toEqual([GPT2]);
    expect(await deleteCachedModel(`${GPT2}@v9`)).toEqual({ files: 0, bytes: 0 }); // another revision: nothing
    await deleteCachedModel(GPT2);
    expect(await listCachedModels()).toEqual([]);
    expect(storage.used()).toBe(0);
  });

  it('explains a full quota, keeps loading, and stops caching', async () => {
    useCaches(new MemoryCacheStorage(20_000));
    // Node 20 has no navigator: give the page's navigator.storage.estimate() a stand-in.
    const realNavigator = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: { storage: { estimate: async () => ({ usage: 9_000, quota: 20_000 }) } }, configurable: true });
    try {
      const files = await fetchHubModelFiles(GPT2, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch });
      expect(files.hub.cacheError).toMatch(
        /^not enough storage to cache model.safetensors: it needs 148.0 KiB and this site already uses 8.8 KiB of the 19.5 KiB .*still loads.*delete cached models/,
      );
      expect(files.weights).toBeInstanceOf(ArrayBuffer);
    } finally {
      if (realNavigator) Object.defineProperty(globalThis, 'navigator', realNavigator);
      else delete (globalThis as { navigator?: unknown }).navigator;
    }
  });

  it('downloads without caching where the browser has no Cache API, and when switched off', async () => {
    useCaches(undefined);
    expect((await fetchHubModelFiles(GPT2, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch })).hub.cache).toBe('unavailable');
    expect(await listCachedModels()).toEqual([]);
    useCaches(storage);
    expect((await fetchHubModelFiles(GPT2, { endpoint: FIXTURE_ENDPOINT, fetch: fakeHub().fetch, cache: false })).hub.cache).toBe('off');
    expect(storage.used()).toBe(0);
  });

  it('cancels between cached files too, and a cancelled download leaves only whole files cached', async () => {
    const controller = new AbortController();
    const hub = fakeHub({ chunk: 2048 });
    const err = await fetchHubModelFiles(SHARDED, {
      endpoint: FIXTURE_ENDPOINT,
      fetch: hub.fetch,
      signal: controller.signal,
      onProgress: (p) => p.file === 'model-00002-of-00003.safetensors' && !p.done && controller.abort(),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DownloadCancelledError);
    const cached = (await listCachedModels())[0].files.map((f) => f.file);
    expect(cached).toContain('model-00001-of-00003.safetensors');
    expect(cached).not.toContain('model-00002-of-00003.safetensors');
    const again = new AbortController();
    again.abort();
    await expect(fetchHubModelFiles(SHARDED, { endpoint: FIXTURE_ENDPOINT, fetch: offline, signal: again.signal })).rejects.toThrow('download cancelled');
  });
});
