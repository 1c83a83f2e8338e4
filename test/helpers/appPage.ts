// The app page as the end-to-end tests open it: a laptop-sized viewport, the page ready to
// train, screenshots going to test-results/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { openPage, repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';

export const SHOTS = join(repoRoot, 'test-results');
/** Screenshots of the page's views for a reviewer, named by view (gitignored; see README "Screenshots"). */
export const VIEWS = join(repoRoot, 'test-artifacts', 'screenshots');

/** The laptop screen the views are checked and shot at, and a narrow phone-sized one. */
export const WIDE = { width: 1280, height: 720 };
export const NARROW = { width: 400, height: 800 };

/** Saves what the viewport shows as test-artifacts/screenshots/<name>.png. */
export async function shootView(page: Page, name: string): Promise<void> {
  mkdirSync(VIEWS, { recursive: true });
  await page.screenshot({ path: join(VIEWS, `${name}.png`) });
}

/**
 * How the page fits its viewport: the document's scroll width against the viewport's, and the
 * visible elements that reach past the viewport's left or right edge without a scrolling or
 * clipping box of their own around them (what a visitor would find cut off).
 */
export function layoutOverflow(page: Page): Promise<{ scrollWidth: number; clientWidth: number; cut: string[] }> {
  return page.evaluate(() => {
    const doc = document.documentElement;
    const width = doc.clientWidth;
    const insideClip = (el: Element) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') return true;
      return false;
    };
    const cut: string[] = [];
    for (const el of document.body.querySelectorAll('*')) {
      if (el.closest('.sr-only')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      if ((r.right > width + 1 || r.left < -1) && !insideClip(el)) {
        const id = el.getAttribute('data-testid') ?? el.id ?? '';
        cut.push(`${el.tagName.toLowerCase()}${id ? `[${id}]` : ''}.${[...el.classList].join('.')} ${Math.round(r.left)}..${Math.round(r.right)}`);
      }
    }
    return { scrollWidth: Math.max(doc.scrollWidth, document.body.scrollWidth), clientWidth: width, cut: cut.slice(0, 20) };
  });
}

/**
 * Opens the app at `path` and waits for the Train button; `acceptDialogs` answers confirm() with
 * OK; `calibrate` lets the page measure the adapter before Train (off otherwise: it costs CPU).
 */
export async function openApp(path = '/', options: { acceptDialogs?: boolean; calibrate?: boolean } = {}): Promise<{ opened: OpenedPage; page: Page }> {
  mkdirSync(SHOTS, { recursive: true });
  const opened = await openPage(path, { calibrate: options.calibrate ?? false });
  const page = opened.page;
  if (options.acceptDialogs) page.on('dialog', (d) => void d.accept());
  await page.setViewportSize({ width: 1366, height: 900 });
  // Generous: two Chromium instances on a busy 2-core machine can take a minute to load the app.
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
  return { opened, page };
}

/**
 * Waits until "Try it" shows `scored` (a settled table, a row), or fails with the message the
 * panel shows instead when the scoring was stopped or failed. Generous: the first scoring waits
 * for its worker to load, which takes seconds on a busy machine.
 */
export async function tryItScored(page: Page, scored: Locator): Promise<void> {
  const stopped = page.getByTestId('tryit-stopped');
  await scored.or(stopped).first().waitFor({ timeout: 120_000 });
  if (await stopped.count()) throw new Error(`Try it did not score: ${await stopped.textContent()}`);
}

/** Types a value into a setting's field and leaves it, as a user would. */
export async function setSettingOn(page: Page, key: string, value: string): Promise<void> {
  const input = page.getByTestId(`setting-${key}`).locator('input');
  await input.fill(value);
  await input.press('Tab');
}

/** Every record of every object store of the app's database (binary data as its size), as JSON. */
export const indexedDbDump = (page: Page): Promise<string> =>
  page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const req = indexedDB.open('rubric-playground');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const names = [...db.objectStoreNames];
          const tx = db.transaction(names);
          const out: Record<string, unknown[]> = {};
          for (const name of names) {
            const all = tx.objectStore(name).getAll();
            all.onsuccess = () => (out[name] = all.result);
          }
          tx.oncomplete = () => {
            db.close();
            resolve(JSON.stringify(out, (_k, v) => (ArrayBuffer.isView(v) || v instanceof ArrayBuffer ? `<${(v as ArrayBuffer).byteLength} bytes>` : v)));
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
