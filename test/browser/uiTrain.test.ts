// Training from the page, end to end, on the tiny byte-level fixture model (typed into the
// model field like any model directory served by the page): a missing model's error, one step
// in slow motion through every stage (labelling rollouts as they are judged), then Resume to the
// end with every chart updated.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';

const CHARTS = ['reward', 'pass-rates', 'strict', 'kl', 'entropy', 'clip', 'length', 'throughput'];

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
});
afterAll(async () => {
  await opened?.close();
});

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

const stageStatus = () => page.getByTestId('stage-status');
const currentStage = () => page.locator('[data-testid=stages] li[aria-current=step]').getAttribute('data-stage');

describe('training in the page', () => {
  it('reports a model that cannot be loaded', async () => {
    await page.getByTestId('model-input').fill('/no/such/model/');
    await page.getByTestId('train').click();
    const error = page.getByTestId('run-error');
    await error.waitFor({ timeout: 60_000 });
    expect(await error.textContent()).toContain('Could not load the experiment (model "/no/such/model/")');
    await expect(page.getByTestId('run-status').textContent()).resolves.toContain('failed');
  });

  it('steps through the stages in slow motion, then resumes to the end with every chart updated', async () => {
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '4'], ['max_steps', '2']]) {
      await setSetting(key, value);
    }
    await expect(page.getByTestId('train').isEnabled()).resolves.toBe(true);

    // Slow motion: the step stops at sampled, judged and advantages until Advance.
    await page.getByTestId('slow-motion').check();
    await page.getByTestId('step').click();
    await stageStatus().filter({ hasText: 'Step 0: sampled' }).waitFor({ timeout: 110_000 });
    expect(await stageStatus().textContent()).toContain('press Advance');
    expect(await currentStage()).toBe('sampled');
    await expect(page.getByTestId('rollout').count()).resolves.toBe(4);
    expect(await page.getByTestId('chip').first().getAttribute('data-verdict')).toBe('unscored');
    await page.screenshot({ path: join(SHOTS, 'ui-slow-motion.png'), fullPage: false });
    for (const next of ['judged', 'advantages']) {
      await page.getByTestId('advance').click();
      await stageStatus().filter({ hasText: `Step 0: ${next}` }).waitFor({ timeout: 30_000 });
      expect(await currentStage()).toBe(next);
    }
    // Judged: every chip has a verdict now.
    const verdicts = await page.getByTestId('chip').evaluateAll((els) => els.map((e) => e.getAttribute('data-verdict')));
    expect(verdicts.length).toBe(16);
    expect(verdicts.every((v) => v === 'pass' || v === 'fail' || v === 'tracked')).toBe(true);
    // Label while the run goes (issue 12): better/worse and a verdict wrong, saved with the rubric version at once.
    const first = page.getByTestId('rollout').nth(0);
    await first.getByTestId('live-better').click();
    await page.getByTestId('rollout').nth(1).getByTestId('live-worse').click();
    await first.getByTestId('live-label').locator('summary').click();
    await first.locator('[data-testid=live-verdict][data-criterion=short]').selectOption('wrong');
    await page.getByTestId('live-label-summary').filter({ hasText: /2 marked, 1\s+verdicts labelled/ }).waitFor({ timeout: 30_000 });
    expect(await first.getByTestId('live-better').getAttribute('aria-pressed')).toBe('true');
    await page.getByTestId('advance').click();
    await page.locator('[data-testid=chart-reward][data-points="1"]').waitFor({ timeout: 60_000 });
    await page.getByTestId('run-status').filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 30_000 });

    // Resume without slow motion: the run goes on to max_steps.
    await page.getByTestId('slow-motion').uncheck();
    await expect(page.getByTestId('train').textContent()).resolves.toContain('Resume');
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: "Finished" }).waitFor({ timeout: 90_000 });
    for (const chart of CHARTS) {
      await expect(page.getByTestId(`chart-${chart}`).getAttribute('data-points')).resolves.toBe('2');
    }
    const label = await page.getByTestId('chart-reward').getByTestId('chart-plot').getAttribute('aria-label');
    expect(label).toMatch(/reward mean -?\d[\d.e-]* at step 1/);
    // Every criterion of the first-visit rubric has a pass-rate line.
    const passRates = await page.getByTestId('chart-pass-rates').textContent();
    for (const id of ['short', 'asks', 'you', 'no_caps_shouting']) expect(passRates).toContain(id);
    await expect(page.getByTestId('rollout').count()).resolves.toBe(4);
    await page.screenshot({ path: join(SHOTS, 'ui-trained.png'), fullPage: true });
    await page.getByTestId('inspector').screenshot({ path: join(SHOTS, 'ui-rollouts.png') });
    // The live labels are in the store with the rubric version (where the saved run's report reads them).
    const stored = (await page.evaluate(`(async () => {
      const { RunStore } = await import('/src/store/index.ts');
      const store = await RunStore.open();
      const labelled = (await store.listRubrics()).flatMap((r) => (r.labels ? [r.labels] : []));
      store.close();
      return labelled;
    })()`)) as { marks: { rollout: string; label: string }[]; verdicts: { criterion: string; correct: boolean }[] }[];
    expect(stored).toHaveLength(1);
    expect(stored[0].marks.map((m) => [m.rollout.split('/').slice(1).join('/'), m.label])).toEqual([
      ['0/0/0', 'better'],
      ['0/0/1', 'worse'],
    ]);
    expect(stored[0].verdicts).toEqual([expect.objectContaining({ criterion: 'short', correct: false })]);
    expect(opened.pageErrors).toEqual([]);
  });
});
