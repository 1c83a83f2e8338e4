// Registers the service worker that keeps the built page working offline (src/offline/sw.ts).
// Production builds only: the dev server and the tests' dev pages must always show the current
// source, never a cached copy. Over http(s) only: a page opened from a file has no service worker.

export function registerServiceWorker(): void {
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  if (location.protocol !== 'https:' && location.protocol !== 'http:') return;
  // BASE_URL is "./" in the build: sw.js next to index.html, its scope that folder, whatever the
  // sub-path the page is served under. After the page has loaded, so it does not slow the load.
  const register = (): void => {
    navigator.serviceWorker.register(`${import.meta.env.BASE_URL}sw.js`).catch((err: unknown) => {
      // Offline use is a bonus: the page works without it.
      console.warn(`offline use is not available: ${(err as Error).message}`);
    });
  };
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
}
