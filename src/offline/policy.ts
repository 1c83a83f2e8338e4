// What the service worker (src/offline/sw.ts) does with each request, as pure functions so Node
// tests can check them. The page keeps working offline after a first visit: the app shell is
// cached when the service worker installs, the embedded model when it is first fetched.
// Only this page's own files are ever cached: never another origin (Hub downloads have their own
// cache, src/model/hub/modelCache.ts), never a POST (remote judges), never anything outside the
// page's folder (the service worker's scope).

/** Written into the built service worker by scripts/vite/offlinePlugin.ts. */
export interface OfflineManifest {
  /** A hash of every built and public file: a new deploy gets a new cache. */
  version: string;
  /** Paths relative to the page's folder, cached at install: the HTML, scripts, styles, icons. */
  shell: string[];
  /** Path prefixes (relative to the page's folder) cached the first time they are fetched. */
  onFirstUse: string[];
}

/** Names of this app's shell caches. The Hub model cache ("rubric-playground-models-v1") is not one. */
export const APP_CACHE_PREFIX = 'rubric-playground-app-';

export function appCacheName(manifest: OfflineManifest): string {
  return `${APP_CACHE_PREFIX}${manifest.version}`;
}

/** Caches an activating service worker deletes: this app's shell caches of other versions. */
export function obsoleteCaches(names: readonly string[], current: string): string[] {
  return names.filter((n) => n.startsWith(APP_CACHE_PREFIX) && n !== current);
}

/** The page that answers a navigation while offline. */
export const OFFLINE_PAGE = 'index.html';

/**
 * How to answer a request:
 * - 'page': a navigation in scope: the network first (a new deploy shows at once), the cached
 *   page when offline;
 * - 'shell': a file cached at install: from the cache;
 * - 'first-use': from the cache, else from the network and then cached;
 * - 'network': left alone (another origin, not a GET, a range, a query, outside the page's folder).
 */
export type Route = 'page' | 'shell' | 'first-use' | 'network';

export interface RequestInfo {
  url: string;
  method: string;
  mode: string;
  /** The Range header, when present (the Cache API cannot answer part of a file). */
  range?: string | null;
}

export function routeRequest(request: RequestInfo, scope: string, manifest: OfflineManifest): Route {
  if (request.method !== 'GET' || request.range) return 'network';
  const url = new URL(request.url);
  const base = new URL(scope);
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return 'network';
  if (request.mode === 'navigate') return 'page';
  if (url.search) return 'network';
  // The URL parser has already resolved any "..": the path is inside the page's folder.
  const path = url.pathname.slice(base.pathname.length);
  if (manifest.shell.includes(path)) return 'shell';
  if (manifest.onFirstUse.some((prefix) => path.startsWith(prefix))) return 'first-use';
  return 'network';
}
