// A lesson run in timed slow motion (each stage held 1 s, then the step goes on by itself), then
// the lesson's "run the other variant": the other lesson opens as a second run and the first
// run's reward curve is overlaid. The lesson comes as a link whose experiment uses the tiny
// fixture model and tiny settings, so its first run takes seconds.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, SHOTS } from '../helpers/appPage';
import { lessonById } from '../../src/share/lessons';
import { encodeShareLink } from '../../src/share/link';

const LESSON = lessonById('clipping')!;
const OTHER = lessonById(LESSON.compare_with[0])!;
const FRAGMENT = encodeShareLink({
  experiment: {
    ...LESSON.shared.experiment,
    model: '/test/fixtures/tiny-byte-gpt2/',
    config: { ...LESSON.shared.experiment.config, num_generations: 2, generation_batch_size: 4, max_completion_length: 3, max_steps: 1, num_iterations: 2 },
  },
  lesson: LESSON.shared.lesson,
});

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp(`/${FRAGMENT}`));
});
afterAll(async () => {
  await opened?.close();
});

describe('lesson mode', () => {
  it('slow motion with a 1 s hold goes through every stage without Advance', async () => {
    expect(await page.getByTestId('lesson-guide').textContent()).toContain(LESSON.title);
    // Record every text the stage line shows.
    await page.getByTestId('stage-status').evaluate((el) => {
      const seen: string[] = [];
      (window as unknown as { __stages: string[] }).__stages = seen;
      new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, { childList: true, characterData: true, subtree: true });
    });
    await page.getByTestId('slow-motion').check();
    await page.getByTestId('stage-hold').selectOption('1000');
    await page.getByTestId('train').click();
    await page.getByTestId('stage-status').filter({ hasText: 'Holding for 1 s' }).waitFor({ timeout: 110_000 });
    await expect(page.getByTestId('advance').isEnabled()).resolves.toBe(true);
    await page.screenshot({ path: join(SHOTS, 'app-slow-motion-timed.png') });
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
    const seen = await page.evaluate(() => (window as unknown as { __stages: string[] }).__stages);
    for (const stage of ['sampled', 'judged', 'advantages']) {
      expect(seen.some((t) => t.startsWith(`Step 0: ${stage}`) && t.includes('Holding for 1 s')), stage).toBe(true);
    }
    expect(seen.some((t) => t.includes('press Advance'))).toBe(false);
    expect(seen.at(-1)).toMatch(/^Step 0: updated/);
    expect(opened.pageErrors).toEqual([]);
  });

  it('"run the other variant" opens the other lesson as a second run with the first overlaid', async () => {
    const offer = page.getByTestId('lesson-compare');
    expect(await offer.textContent()).toContain('stays on the reward chart');
    await page.getByTestId('slow-motion').uncheck();
    await page.getByTestId(`run-variant-${OTHER.id}`).click();

    await page.getByTestId('lesson-guide').getByText(`Lesson: ${OTHER.title}`).waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('lesson-guidance').textContent()).toBe(OTHER.shared.lesson!.guidance);
    // A second run is saved, named after its lesson; the first is ticked for comparison.
    await page.getByTestId('run-row').nth(1).waitFor({ timeout: 60_000 });
    const names = await page.getByTestId('run-name').allTextContents();
    expect(names.sort()).toEqual([`Lesson: ${LESSON.title}`, `Lesson: ${OTHER.title}`].sort());
    const first = page.getByTestId('run-row').filter({ hasText: `Lesson: ${LESSON.title}` });
    await expect(first.getByTestId('run-compare').isChecked()).resolves.toBe(true);
    // The first run's reward curve is on the reward chart.
    const reward = page.getByTestId('chart-reward');
    await reward.locator('.u-legend').getByText(`Lesson: ${LESSON.title}`).waitFor({ timeout: 20_000 });
    expect(await reward.getByTestId('chart-plot').getAttribute('aria-label')).toContain(`Lesson: ${LESSON.title}`);
    await expect(page.getByTestId('run-status').textContent()).resolves.toMatch(/Loading|Training/);
    await page.screenshot({ path: join(SHOTS, 'app-lesson-compare.png') });
    expect(opened.pageErrors).toEqual([]);
  });
});
