// Opens a page of this repository in headless Chromium with WebGPU, served by Vite.
// Used by the browser tests, scripts/kernel.mjs and the benchmarks.
//
// Browser: $CHROME_PATH when set (e.g. /usr/bin/chromium), else the self-contained
// Chromium of @sparticuz/chromium, which brings SwiftShader, so WebGPU works on machines
// without a GPU. Never downloads anything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Flags that give headless Chromium a WebGPU adapter (SwiftShader on CPU-only machines). */
export const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

export async function chromiumExecutable() {
  if (process.env.CHROME_PATH) return process.env.CHROME_PATH;
  const { default: sparticuz } = await import('@sparticuz/chromium');
  return sparticuz.executablePath();
}

/**
 * Removes a Chromium profile folder. Chromium's helper processes (GPU, network) outlive the
 * browser by a moment and may still write its cache (ENOTEMPTY on rmdir): retry, and never fail
 * a test over a leftover temp folder.
 */
export function removeProfile(profile, log = console.warn) {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  } catch (e) {
    log(`could not remove the browser profile ${profile}: ${e.message}`);
  }
}

/**
 * Launches headless Chromium with a fresh profile and gives its first page. Returns
 * { context, page, pageErrors, close }; `close` stops the browser and removes the profile.
 */
async function launchChromium({ log, webgpu, calibrate = false }) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'rp-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: await chromiumExecutable(),
      headless: true,
      // Playwright's default is 30 s; a 2-core machine busy with another browser's shaders took longer.
      timeout: 180_000,
      // Without --enable-unsafe-webgpu, headless Chromium on Linux has navigator.gpu but no
      // adapter: what many visitors see, so tests use it for the "no WebGPU" path.
      args: webgpu ? CHROMIUM_FLAGS : CHROMIUM_FLAGS.filter((f) => f !== '--enable-unsafe-webgpu'),
    });
  } catch (err) {
    removeProfile(profile);
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  // The app measures the adapter before Train (seconds of shader compiling on SwiftShader): only
  // the tests that check that estimate ask for it, the others keep the CPU for what they test.
  if (!calibrate) {
    await context.addInitScript(() => {
      try {
        localStorage.setItem('rubric-playground.calibration', 'off');
      } catch {
        // about:blank and opaque origins have no storage.
      }
    });
  }
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(err));
  if (log) page.on('console', (msg) => log(`[page ${msg.type()}] ${msg.text()}`));
  const close = async () => {
    await context.close().catch(() => {});
    removeProfile(profile);
  };
  return { context, page, pageErrors, close };
}

/**
 * For a URL with a share link: waits until the app shows and has read the link (it reads links in
 * a worker, showing "Opening the share link…" meanwhile), so tests see the link's experiment.
 */
async function linkOpened(page, url) {
  if (!/#(.*&)?x=/.test(url)) return;
  await page.waitForFunction(() => document.querySelector('[data-testid=train]') && !document.querySelector('[data-testid=link-opening]'), null, { timeout: 180_000, polling: 100 });
}

/**
 * Starts a Vite dev server on a free loopback port and opens `path` in headless Chromium.
 * Returns { page, url, pageErrors, close }. `close` stops both. `webgpu: false` starts the
 * browser without WebGPU. `calibrate: true` lets the app measure the adapter before Train
 * (other tests turn that off: it compiles kernels for seconds on SwiftShader).
 */
export async function openPage(
  path,
  { log = process.env.HARNESS_DEBUG ? console.error : null, webgpu = true, calibrate = false } = {},
) {
  const { createServer } = await import('vite');
  const server = await createServer({
    root: repoRoot,
    configFile: join(repoRoot, 'vite.config.ts'),
    logLevel: 'error',
    clearScreen: false,
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
  });
  await server.listen();
  const address = server.httpServer.address();
  const url = `http://127.0.0.1:${address.port}${path}`;
  let browser;
  try {
    browser = await launchChromium({ log, webgpu, calibrate });
  } catch (err) {
    await server.close();
    throw err;
  }
  const { page, pageErrors } = browser;
  await page.goto(url);
  await linkOpened(page, url);
  const close = async () => {
    await browser.close();
    await server.close();
  };
  return { page, url, pageErrors, close };
}

/**
 * Opens `url` (a page some other server serves, e.g. a built dist/) in headless Chromium, without
 * a Vite dev server. Returns { page, context, url, pageErrors, close }; `close` stops the browser.
 */
export async function openUrl(
  url,
  { log = process.env.HARNESS_DEBUG ? console.error : null, webgpu = true, calibrate = false } = {},
) {
  const browser = await launchChromium({ log, webgpu, calibrate });
  try {
    await browser.page.goto(url);
    await linkOpened(browser.page, url);
  } catch (err) {
    await browser.close();
    throw err;
  }
  return { ...browser, url };
}

/**
 * Opens the kernel harness page; `run(name, request)` executes one kernel request (the
 * JSON shapes of scripts/kernel.mjs) on the real WGSL and returns its JSON result.
 */
export async function openHarness() {
  const opened = await openPage('/test/harness/index.html');
  const ready = await opened.page.evaluate(() => window.harnessReady);
  if (ready.error) {
    await opened.close();
    throw new Error(`kernel harness failed to start: ${ready.error}`);
  }
  return {
    ...opened,
    info: ready.info,
    run: (name, request) => opened.page.evaluate(([n, r]) => window.harness.run(n, r), [name, request]),
    runModule: (path, fn, input) =>
      opened.page.evaluate(([p, f, i]) => window.harness.runModule(p, f, i), [path, fn, input]),
    evaluate: (fn, arg) => opened.page.evaluate(fn, arg),
  };
}
