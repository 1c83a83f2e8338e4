// The service worker of the built page (sw.js next to index.html), registered by
// src/offline/register.ts in production builds only. It makes the page work offline after a
// first visit: the app shell is cached at install, the embedded model when first fetched (see
// policy.ts for what is cached and what never is). Built by scripts/vite/offlinePlugin.ts, which
// writes the list of files of this deploy in place of __RP_OFFLINE_MANIFEST__.
//
// No skipWaiting(): a new version waits until the page's tabs are closed, so a tab that is
// training keeps the files of the version it started with. clients.claim() on the first
// install makes the page that installed it controlled at once, so the model it fetches for its
// first run is cached too.
import { appCacheName, obsoleteCaches, OFFLINE_PAGE, routeRequest, type OfflineManifest } from './policy';

declare const __RP_OFFLINE_MANIFEST__: OfflineManifest;

const sw = self as unknown as ServiceWorkerGlobalScope;
const manifest: OfflineManifest = __RP_OFFLINE_MANIFEST__;
const CACHE = appCacheName(manifest);

const inScope = (path: string): string => new URL(path, sw.registration.scope).href;

sw.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // cache: 'reload' skips the HTTP cache, which may still hold the previous deploy's page.
      await cache.addAll(manifest.shell.map((path) => new Request(inScope(path), { cache: 'reload' })));
    })(),
  );
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      await Promise.all(obsoleteCaches(await caches.keys(), CACHE).map((name) => caches.delete(name)));
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('fetch', (event) => {
  const request = event.request;
  const route = routeRequest({ url: request.url, method: request.method, mode: request.mode, range: request.headers.get('range') }, sw.registration.scope, manifest);
  if (route === 'network') return;
  event.respondWith(answer(route, request, (p) => event.waitUntil(p)));
});

/** `later` keeps the service worker alive for work that goes on after the answer (caching it). */
async function answer(route: 'page' | 'shell' | 'first-use', request: Request, later: (work: Promise<unknown>) => void): Promise<Response> {
  const cache = await caches.open(CACHE);
  if (route === 'page') {
    try {
      return await fetch(request);
    } catch (err) {
      const page = await cache.match(inScope(OFFLINE_PAGE));
      if (page) return page;
      throw err;
    }
  }
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  // Only whole, successful answers; a server that answers a missing file with its HTML page
  // must not leave that page cached as a model file.
  const isPage = (response.headers.get('content-type') ?? '').includes('text/html');
  if (route === 'first-use' && response.status === 200 && !isPage) later(cache.put(request, response.clone()));
  return response;
}
