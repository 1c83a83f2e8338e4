// A run survives a reload and goes on from its checkpoint; a run file exported from the page
// imports back with the same metrics. On the tiny byte-level fixture model with tiny settings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';


let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/', { acceptDialogs: true }));
});
afterAll(async () => {
  await opened?.close();
});

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

const status = () => page.getByTestId('run-status');
const row = () => page.getByTestId('run-row');

/** Saves what a click downloads and returns its text. */
async function downloadText(testId: string): Promise<{ text: string; path: string }> {
  const download = page.waitForEvent('download');
  await page.getByTestId(testId).click();
  const path = (await (await download).path())!;
  return { text: readFileSync(path, 'utf8'), path };
}

describe('saved runs in the page', () => {
  it('a reload keeps a run of 2 steps; Resume goes on from its checkpoint at step 2', async () => {
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '3'], ['max_steps', '3'], ['save_steps', '1']]) {
      await setSetting(key, value);
    }
    await page.getByTestId('step').click();
    await status().filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 110_000 });
    await page.getByTestId('step').click();
    await status().filter({ hasText: 'Paused after step 1' }).waitFor({ timeout: 60_000 });
    await row().getByTestId('run-steps').filter({ hasText: '2' }).waitFor({ timeout: 10_000 });

    await page.reload();
    await row().waitFor({ timeout: 60_000 });
    expect(await row().count()).toBe(1);
    expect(await row().getByTestId('run-steps').textContent()).toBe('2');
    await expect(page.getByTestId('chart-reward').getAttribute('data-points')).resolves.toBe('0');

    await row().getByTestId('run-resume').click();
    await status().filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
    expect(await status().textContent()).toContain('Finished: 3 steps');
    // Steps 0 and 1 from the store, step 2 newly trained: the counter went on, not over.
    await expect(page.getByTestId('chart-reward').getAttribute('data-points')).resolves.toBe('3');
    expect(await page.getByTestId('chart-reward').getByTestId('chart-plot').getAttribute('aria-label')).toMatch(/at step 2\b/);
    await row().getByTestId('run-steps').filter({ hasText: '3' }).waitFor({ timeout: 10_000 });
    expect(await row().count()).toBe(1);
    expect(await row().getByTestId('run-status-cell').textContent()).toBe('finished');
    await page.screenshot({ path: join(SHOTS, 'app-resumed.png'), fullPage: true });
    expect(opened.pageErrors).toEqual([]);
  });

  it('a run file exported from the page imports back with the same metrics and rollouts', async () => {
    await row().getByTestId('run-open').click();
    await page.getByTestId('viewing').filter({ hasText: 'the saved run' }).waitFor();
    const storedCsv = (await downloadText('export-csv')).text;
    expect(storedCsv.trim().split('\r\n').length).toBe(4);

    const runFile = await downloadText('export-run');
    const doc = JSON.parse(runFile.text) as { format: string; metrics: { step: number }[]; rollouts: { step: number; tokens?: string[] }[] };
    expect(doc.format).toBe('rubric-playground-run');
    expect(doc.metrics.map((m) => m.step)).toEqual([0, 1, 2]);

    await page.getByTestId('import-run').setInputFiles(runFile.path);
    await page.getByTestId('export-message').filter({ hasText: 'Opened' }).waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('export-message').textContent()).toContain(`3 steps, ${doc.rollouts.length} rollouts`);
    await page.getByTestId('viewing').filter({ hasText: 'the imported run' }).waitFor();
    await expect(page.getByTestId('chart-reward').getAttribute('data-points')).resolves.toBe('3');
    // The same metrics: the imported run's CSV is the stored run's, byte for byte.
    expect((await downloadText('export-csv')).text).toBe(storedCsv);
    // Its newest step's rollouts are in the inspector.
    const lastStep = doc.rollouts.filter((r) => r.step === 2).length;
    await expect(page.getByTestId('rollout').count()).resolves.toBe(lastStep);
    // Importing adds no saved run.
    expect(await row().count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'app-imported.png'), fullPage: true });
    expect(opened.pageErrors).toEqual([]);
  });
});
