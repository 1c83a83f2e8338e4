// The deployable page: `vite build` output served by a plain static server under a sub-path.
// A lesson link opens there, the embedded model is fetched from under that sub-path (never the
// server root), a share link keeps the sub-path, and once the service worker is active the page
// loads with the network off and the server stopped.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openUrl, repoRoot, type OpenedUrl } from '../../scripts/lib/browser.mjs';
import { DEFAULT_MODEL_ID } from '../../src/model/registry';
import { lessonById } from '../../src/share/lessons';
import { encodeShareLink } from '../../src/share/link';
import { APP_CACHE_PREFIX } from '../../src/offline/policy';

const SUB = '/some/sub/path/';
const MODEL_DIR = `${SUB}models/tiny-gpt2-byte/`;
const LESSON = lessonById('grpo-basics')!;
// The lesson on the embedded model, with settings small enough for one quick step.
const FRAGMENT = encodeShareLink({
  experiment: {
    ...LESSON.shared.experiment,
    model: DEFAULT_MODEL_ID,
    config: { ...LESSON.shared.experiment.config, num_generations: 2, generation_batch_size: 4, max_completion_length: 3, max_steps: 1, save_steps: 1 },
  },
  lesson: LESSON.shared.lesson,
});

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/** A static host: `dir` under SUB on a loopback port, nothing elsewhere; every request path is logged. */
function serveStatic(dir: string, requests: string[]): Promise<Server> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(path);
    let file = path.startsWith(SUB) ? normalize(join(dir, path.slice(SUB.length))) : null;
    if (file && !(file === dir || file.startsWith(dir + sep))) file = null;
    try {
      if (file && statSync(file).isDirectory()) file = join(file, 'index.html');
      const body = file ? readFileSync(file) : null;
      if (!file || !body) throw new Error('not found');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

let outDir: string;
let server: Server;
let opened: OpenedUrl;
const requests: string[] = [];
let origin: string;

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'rp-dist-'));
  // Vite's build() in a child process: vitest sets NODE_ENV=test, which would make a development build.
  const script = `const { build } = await import('vite'); await build({ root: process.cwd(), logLevel: 'error', build: { outDir: ${JSON.stringify(outDir)}, emptyOutDir: true } });`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, env: { ...process.env, NODE_ENV: 'production' } });
  server = await serveStatic(outDir, requests);
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  opened = await openUrl(`${origin}${SUB}${FRAGMENT}`);
  await opened.page.setViewportSize({ width: 1366, height: 900 });
});
afterAll(async () => {
  await opened?.close();
  server?.closeAllConnections();
  await new Promise((ok) => (server ? server.close(ok) : ok(undefined)));
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/** Whether the embedded model is in this deploy's cache. */
const cachedModel = () =>
  opened.page.evaluate(async (prefix) => {
    const names = (await caches.keys()).filter((n) => n.startsWith(prefix));
    const found = await Promise.all(names.map(async (n) => !!(await (await caches.open(n)).match(new URL('models/tiny-gpt2-byte/model.safetensors', location.href).href))));
    return found.includes(true);
  }, APP_CACHE_PREFIX);

describe('the built page under a sub-path', () => {
  it('opens a lesson link, loads the embedded model from the sub-path, and shares links under it', async () => {
    const page = opened.page;
    await page.getByTestId('lesson-guide').filter({ hasText: LESSON.title }).waitFor({ timeout: 60_000 });
    // The lesson's recording (public/recordings/) is found under the sub-path too.
    await page.getByTestId('recording-about').waitFor({ timeout: 60_000 });
    expect(requests).toContain(`${SUB}recordings/index.json`);
    // The first visit's service worker takes control of the page (clients.claim) once installed;
    // the model fetched after that is cached for offline use.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
    await page.getByTestId('train').click();
    // The trainer fetches the model first; the run itself is not needed here (the reload below ends it).
    await expect.poll(() => requests.includes(`${MODEL_DIR}model.safetensors`), { timeout: 120_000 }).toBe(true);
    expect(requests).toContain(`${MODEL_DIR}config.json`);
    // The page may have asked for the model before the service worker took control; the run's own
    // fetch, after it, is the one cached: wait for it rather than race the reload of the next test.
    await expect.poll(cachedModel, { timeout: 120_000 }).toBe(true);
    // Nothing was asked of the server outside the sub-path (a root-relative URL would be).
    expect(requests.filter((p) => !p.startsWith(SUB))).toEqual([]);

    await page.getByTestId('share').click();
    const link = await page.getByTestId('share-link').inputValue();
    expect(link.startsWith(`${origin}${SUB}#x=`)).toBe(true);
    expect(opened.pageErrors).toEqual([]);
  });

  it('keeps working offline once the service worker is active: the shell and the embedded model are cached', async () => {
    const page = opened.page;
    // The model the first run fetched is in this deploy's cache (cached on first use).
    await expect.poll(cachedModel, { timeout: 30_000 }).toBe(true);

    // Offline for real: the browser's network off and the server gone.
    await opened.context.setOffline(true);
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
    const before = requests.length;
    await page.reload();
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    await page.getByTestId('lesson-guide').filter({ hasText: LESSON.title }).waitFor({ timeout: 60_000 });
    expect(requests.length).toBe(before);
    expect(opened.pageErrors).toEqual([]);
  });
});
