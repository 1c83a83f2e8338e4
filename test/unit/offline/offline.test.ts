// The service worker's choices (src/offline/policy.ts) and the build's list of files to cache
// (scripts/vite/offlinePlugin.ts). The browser side is test/browser/staticBuild.test.ts.
import { describe, expect, it } from 'vitest';
import { offlineManifest } from '../../../scripts/vite/offlinePlugin';
import { appCacheName, APP_CACHE_PREFIX, obsoleteCaches, routeRequest, type OfflineManifest } from '../../../src/offline/policy';
import { MODEL_CACHE_NAME } from '../../../src/model/hub/modelCache';

const SCOPE = 'https://example.org/some/sub/path/';
const MANIFEST: OfflineManifest = { version: 'v1', shell: ['index.html', 'assets/index-abc.js'], onFirstUse: ['models/'] };
const get = (url: string, extra: Partial<{ method: string; mode: string; range: string }> = {}) =>
  routeRequest({ url, method: 'GET', mode: 'cors', ...extra }, SCOPE, MANIFEST);

describe('routeRequest', () => {
  it('answers the shell from the cache and caches the embedded model on first use', () => {
    expect(get(`${SCOPE}assets/index-abc.js`)).toBe('shell');
    expect(get(`${SCOPE}index.html`)).toBe('shell');
    expect(get(`${SCOPE}models/tiny-gpt2-byte/model.safetensors`)).toBe('first-use');
  });

  it('sends navigations in scope to the network first, with the cached page as fallback', () => {
    expect(get(SCOPE, { mode: 'navigate' })).toBe('page');
    expect(get(`${SCOPE}index.html`, { mode: 'navigate' })).toBe('page');
    expect(get('https://example.org/elsewhere/', { mode: 'navigate' })).toBe('network');
  });

  it('never caches another origin, a POST, a range, a query, or a file outside the page folder', () => {
    expect(get('https://huggingface.co/some/model/resolve/main/model.safetensors')).toBe('network');
    expect(get('https://example.org.evil.test/some/sub/path/index.html')).toBe('network');
    expect(get(`${SCOPE}assets/index-abc.js`, { method: 'POST' })).toBe('network');
    expect(get(`${SCOPE}models/tiny-gpt2-byte/model.safetensors`, { range: 'bytes=0-9' })).toBe('network');
    expect(get(`${SCOPE}assets/index-abc.js?v=2`)).toBe('network');
    expect(get('https://example.org/models/tiny-gpt2-byte/config.json')).toBe('network');
    expect(get(`${SCOPE}models/../../../models/x.json`)).toBe('network');
    // A built file not in the shell (the zero-shot judge's WebAssembly) is left to the network.
    expect(get(`${SCOPE}assets/ort.wasm`)).toBe('network');
  });
});

describe('caches', () => {
  it('deletes only this app’s shell caches of other versions, never the Hub model cache', () => {
    const current = appCacheName(MANIFEST);
    expect(current.startsWith(APP_CACHE_PREFIX)).toBe(true);
    const old = appCacheName({ ...MANIFEST, version: 'v0' });
    expect(obsoleteCaches([current, old, MODEL_CACHE_NAME, 'transformers-cache'], current)).toEqual([old]);
  });
});

describe('offlineManifest', () => {
  const files = [
    { name: 'index.html', content: '<html>' },
    { name: 'assets/index-abc.js', content: 'code' },
    { name: 'assets/index-abc.js.map', content: '{}' },
    { name: 'assets/ort-wasm.wasm', content: new Uint8Array([0, 97, 115, 109]) },
    { name: 'models/tiny-gpt2-byte/model.safetensors', content: new Uint8Array([1, 2, 3]) },
    { name: 'favicon.svg', content: '<svg/>' },
    { name: 'sw.js', content: 'self' },
  ];

  it('lists the shell (not the service worker, source maps, WebAssembly or the model) and caches models on first use', () => {
    const m = offlineManifest(files);
    expect(m.shell).toEqual(['assets/index-abc.js', 'favicon.svg', 'index.html']);
    expect(m.onFirstUse).toEqual(['models/']);
    expect(m.version).toMatch(/^[0-9a-f]{16}$/);
  });

  it('gets a new version when any file changes, the embedded model included, and not when only the order does', () => {
    const m = offlineManifest(files);
    expect(offlineManifest([...files].reverse()).version).toBe(m.version);
    const changedModel = files.map((f) => (f.name.startsWith('models/') ? { ...f, content: new Uint8Array([1, 2, 4]) } : f));
    expect(offlineManifest(changedModel).version).not.toBe(m.version);
    const renamed = files.map((f) => (f.name === 'assets/index-abc.js' ? { ...f, name: 'assets/index-abd.js' } : f));
    expect(offlineManifest(renamed).version).not.toBe(m.version);
  });
});
