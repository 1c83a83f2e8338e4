// The app page as the end-to-end tests open it: a laptop-sized viewport, the page ready to
// train, screenshots going to test-results/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openPage, repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';

export const SHOTS = join(repoRoot, 'test-results');

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
