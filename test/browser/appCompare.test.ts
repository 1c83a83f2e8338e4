// Two saved runs compared on the reward chart, and the token heatmap on a real step: one span
// per completion token (as many as the run file's completion_ids), switching quantities. On the
// tiny byte-level fixture model with tiny settings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';


let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
});
afterAll(async () => {
  await opened?.close();
});

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

const rowNamed = (name: string) => page.getByTestId('run-row').filter({ has: page.getByTestId('run-name').getByText(name, { exact: true }) });

/** Trains one step of the builder's experiment, then renames the new run (the newest row). */
async function trainOneStep(name: string, runsBefore: number) {
  await page.getByTestId('train').click();
  await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
  await page.locator('[data-testid=run-row].current [data-testid=run-steps]').filter({ hasText: '1' }).waitFor({ timeout: 10_000 });
  expect(await page.getByTestId('run-row').count()).toBe(runsBefore + 1);
  const current = page.locator('[data-testid=run-row].current');
  await current.getByTestId('run-rename').click();
  await page.getByTestId('run-name-input').fill(name);
  await page.getByTestId('run-name-save').click();
  await rowNamed(name).waitFor();
}

const tokenValues = () => page.getByTestId('token').evaluateAll((els) => els.map((e) => e.getAttribute('data-value')));

describe('comparing runs and the token heatmap', () => {
  it('overlays two saved runs on the reward chart', async () => {
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '4'], ['max_steps', '1']]) {
      await setSetting(key, value);
    }
    await trainOneStep('run A', 0);
    await setSetting('seed', '7');
    await setSetting('num_iterations', '2');
    await trainOneStep('run B', 1);

    const plot = page.getByTestId('chart-reward').getByTestId('chart-plot');
    for (const name of ['run A', 'run B']) await rowNamed(name).getByTestId('run-compare').check();
    // Each compared run is a series of its own: in the legend and in the chart's text alternative.
    await page.getByTestId('chart-reward').locator('.u-legend').getByText('run B').waitFor({ timeout: 10_000 });
    const legend = await page.getByTestId('chart-reward').locator('.u-legend .u-series').allTextContents();
    expect(legend.filter((l) => /run A/.test(l)).length).toBe(1);
    expect(legend.filter((l) => /run B/.test(l)).length).toBe(1);
    const label = await plot.getAttribute('aria-label');
    expect(label).toMatch(/run A -?[\d.e-]+ at step 0/);
    expect(label).toMatch(/run B -?[\d.e-]+ at step 0/);
    await page.getByTestId('chart-reward').screenshot({ path: join(SHOTS, 'app-compare.png') });

    // Unticking one removes its series.
    await rowNamed('run A').getByTestId('run-compare').uncheck();
    await page.getByTestId('chart-reward').locator('.u-legend').getByText('run A').waitFor({ state: 'detached', timeout: 10_000 });
    expect(await plot.getAttribute('aria-label')).not.toMatch(/run A/);
    expect(opened.pageErrors).toEqual([]);
  });

  it('colours each completion token by the chosen quantity: one span per token', async () => {
    // Run B is on show: 4 rollouts of its step 0, trained with num_iterations 2.
    await expect(page.getByTestId('rollout').count()).resolves.toBe(4);
    const download = page.waitForEvent('download');
    await page.getByTestId('export-run').click();
    const doc = JSON.parse(readFileSync((await (await download).path())!, 'utf8')) as {
      rollouts: { group: number; index: number; completion_ids: number[]; tokens: string[]; logprobs: number[]; token_entropy: number[] }[];
    };
    const rollouts = [...doc.rollouts].sort((a, b) => a.group - b.group || a.index - b.index);
    expect(rollouts.length).toBe(4);

    await page.getByTestId('heat-quantity').selectOption('logprob');
    await page.getByTestId('heat-legend').waitFor();
    const perRollout = await page.getByTestId('rollout').evaluateAll((els) => els.map((e) => e.querySelectorAll('[data-testid=token]').length));
    expect(perRollout).toEqual(rollouts.map((r) => r.completion_ids.length));
    expect(perRollout.every((n) => n >= 1)).toBe(true);
    for (const r of rollouts) expect(r.tokens.length).toBe(r.completion_ids.length);
    const logprobs = await tokenValues();
    expect(logprobs.map(Number)).toEqual(rollouts.flatMap((r) => r.logprobs));
    expect(logprobs.every((v) => Number(v) <= 0)).toBe(true);
    expect(await page.getByTestId('token').first().getAttribute('title')).toMatch(/^token 1 ".*": log-prob -?[\d.e-]+ \(p [\d.e-]+\)$/);
    await page.getByTestId('inspector').screenshot({ path: join(SHOTS, 'app-heatmap.png') });

    await page.getByTestId('heat-quantity').selectOption('entropy');
    await expect(page.getByTestId('token').first().getAttribute('title')).resolves.toMatch(/entropy [\d.e-]+ nats/);
    const entropies = await tokenValues();
    expect(entropies.length).toBe(logprobs.length);
    expect(entropies.map(Number)).toEqual(rollouts.flatMap((r) => r.token_entropy));
    expect(entropies.every((v) => Number(v) >= 0)).toBe(true);

    // num_iterations 2: the ratio is measured after an update, so no "always 1" note.
    await page.getByTestId('heat-quantity').selectOption('ratio');
    await expect(page.getByTestId('token').first().getAttribute('title')).resolves.toMatch(/ratio [\d.e-]+/);
    await expect(page.getByTestId('heat-ratio-note').count()).resolves.toBe(0);
    expect((await tokenValues()).every((v) => Number(v) > 0)).toBe(true);

    await page.getByTestId('heat-quantity').selectOption('advantage');
    await expect(page.getByTestId('token').first().getAttribute('title')).resolves.toMatch(/advantage × weight/);
    expect((await tokenValues()).length).toBe(logprobs.length);

    await page.getByTestId('heat-quantity').selectOption('');
    await expect(page.getByTestId('token').count()).resolves.toBe(0);
    await expect(page.getByTestId('completion').count()).resolves.toBe(4);
    expect(opened.pageErrors).toEqual([]);
  });
});
