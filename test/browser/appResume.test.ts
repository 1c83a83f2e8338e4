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

  it('a run left "running" whose page died reads "interrupted" after a reload, with Resume at the top of the page', async () => {
    // What a killed page leaves behind: the store still says running. (This page's worker holds
    // the run's lock until the reload below, as a crashed tab's would until it is gone.)
    const runId = (await row().getAttribute('data-run-id'))!;
    // A string, so vitest does not rewrite the page's import().
    await page.evaluate(`(async () => {
      const { RunStore } = await import('/src/store/index.ts');
      const store = await RunStore.open();
      await store.setStatus(${JSON.stringify(runId)}, 'running');
      store.close();
    })()`);

    await page.reload();
    await row().getByTestId('run-status-cell').filter({ hasText: 'interrupted' }).waitFor({ timeout: 60_000 });
    const banner = page.getByTestId('interrupted-banner');
    await banner.waitFor();
    expect(await banner.getAttribute('data-run-id')).toBe(runId);
    // Steps 0-2 committed, a checkpoint after each: nothing to redo.
    const name = await row().getByTestId('run-name').textContent();
    expect(await page.getByTestId('interrupted-text').textContent()).toBe(`Your run "${name}" was interrupted at step 3 (last checkpoint 3: resuming loses nothing).`);
    // The banner sits at the top of the page: before the run controls and the saved runs.
    const before = await page.evaluate(() => {
      const banner = document.querySelector('[data-testid=interrupted-banner]')!;
      const follows = (testId: string) => Boolean(banner.compareDocumentPosition(document.querySelector(`[data-testid=${testId}]`)!) & Node.DOCUMENT_POSITION_FOLLOWING);
      return [follows('train'), follows('runs')];
    });
    expect(before).toEqual([true, true]);
    // So does the status line.
    expect(await status().textContent()).toContain(`Ready. Your run "${name}" was interrupted at step 3`);
    await page.screenshot({ path: join(SHOTS, 'app-interrupted.png'), fullPage: true });

    await page.getByTestId('interrupted-resume').click();
    await status().filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
    expect(await status().textContent()).toContain('Finished: 3 steps');
    await row().getByTestId('run-status-cell').filter({ hasText: 'finished' }).waitFor({ timeout: 10_000 });
    expect(await banner.count()).toBe(0);
    expect(opened.pageErrors).toEqual([]);
  });
});
