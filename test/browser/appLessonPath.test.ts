// The lesson path in the page: a lesson's share link lands on the lesson ("Lesson 1 of n", its
// title and summary in place of the preset's), Next and Previous walk the path, the glossary
// opens the lesson that shows a term, and chart titles carry the glossary's words. No training.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, SHOTS } from '../helpers/appPage';
import { LESSON_PATH } from '../../src/share/lessonPath';
import { lessonById } from '../../src/share/lessons';
import { encodeShareLink } from '../../src/share/link';
import { LESSON_PROGRESS_KEY } from '../../src/ui/lib/lessonProgress';

const FIRST = lessonById(LESSON_PATH[0])!;
const SECOND = lessonById(LESSON_PATH[1])!;
const FRAGMENT = encodeShareLink({
  experiment: { ...FIRST.shared.experiment, model: '/test/fixtures/tiny-byte-gpt2/' },
  lesson: FIRST.shared.lesson,
});

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Serious or critical axe-core violations inside `selector` (as in a11y.test.ts). */
async function audit(selector: string): Promise<string[]> {
  const violations = await page.evaluate(async (include) => {
    type V = { id: string; impact: string | null; nodes: { target: string[] }[] };
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: V[] }> } }).axe;
    return (await axe.run({ include: [include] }, { resultTypes: ['violations'] })).violations;
  }, selector);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id}: ${n.target.join(' ')}`));
}

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp(`/${FRAGMENT}`));
});
afterAll(async () => {
  await opened?.close();
});

describe('the lesson path', () => {
  it('a lesson link lands on the lesson, first of the path, with its title in the intro', async () => {
    await expect(page.getByTestId('lesson-place').textContent()).resolves.toBe(`Lesson 1 of ${LESSON_PATH.length}`);
    await expect(page.getByTestId('intro-title').textContent()).resolves.toBe(FIRST.title);
    await expect(page.getByTestId('intro-description').textContent()).resolves.toBe(FIRST.summary);
    expect(await page.getByTestId('lesson-try').textContent()).toContain('Try this:');
    await expect(page.getByTestId('lesson-previous').isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('lessons-progress').textContent()).resolves.toBe(`(0 of ${LESSON_PATH.length} done)`);
  });

  it('Next opens the next lesson; Previous comes back', async () => {
    await page.getByTestId('lesson-next').click();
    await page.getByTestId('intro-title').filter({ hasText: SECOND.title }).waitFor({ timeout: 10_000 });
    await expect(page.getByTestId('lesson-place').textContent()).resolves.toBe(`Lesson 2 of ${LESSON_PATH.length}`);
    expect(await page.getByTestId('lesson-guide').locator('h2').textContent()).toBe(`Lesson: ${SECOND.title}`);
    expect(await page.getByTestId('lesson-guidance').textContent()).toBe(SECOND.shared.lesson!.guidance);
    await page.screenshot({ path: join(SHOTS, 'app-lesson-path.png') });

    await page.getByTestId('lesson-previous').click();
    await page.getByTestId('intro-title').filter({ hasText: FIRST.title }).waitFor({ timeout: 10_000 });
    await expect(page.getByTestId('lesson-place').textContent()).resolves.toBe(`Lesson 1 of ${LESSON_PATH.length}`);
    expect(opened.pageErrors).toEqual([]);
  });

  it('the glossary opens the lesson that shows a term, and chart titles carry its words', async () => {
    const tip = page.getByTestId('chart-clip').locator('figcaption [role=tooltip]');
    expect(await tip.textContent()).toContain('clip_ratio_low:');
    await page.getByTestId('glossary').locator('summary').click();
    await page.addScriptTag({ path: AXE });
    for (const part of ['[data-testid=glossary]', '[data-testid=lesson-guide]', '[data-testid=chart-clip]']) expect(await audit(part), part).toEqual([]);
    await page.getByTestId('glossary-frac_reward_zero_std').getByTestId('glossary-lesson').click();
    const zero = lessonById('zero-variance')!;
    await page.getByTestId('intro-title').filter({ hasText: zero.title }).waitFor({ timeout: 10_000 });
    await expect(page.getByTestId('lesson-place').textContent()).resolves.toBe(`Lesson ${LESSON_PATH.indexOf(zero.id) + 1} of ${LESSON_PATH.length}`);
    expect(opened.pageErrors).toEqual([]);
  });

  it('lessons done in an earlier visit are marked in the menu', async () => {
    // Marking a lesson done as its run takes a step is unit-tested (lessonPath.test.ts): no training here.
    await expect(page.getByTestId(`lesson-item-${FIRST.id}`).getAttribute('data-done')).resolves.toBe('false');
    await page.evaluate(([key, id]) => localStorage.setItem(key, JSON.stringify([id])), [LESSON_PROGRESS_KEY, FIRST.id]);
    await page.reload();
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    await expect(page.getByTestId(`lesson-item-${FIRST.id}`).getAttribute('data-done')).resolves.toBe('true');
    await expect(page.getByTestId(`lesson-item-${SECOND.id}`).getAttribute('data-done')).resolves.toBe('false');
    await expect(page.getByTestId('lessons-progress').textContent()).resolves.toBe(`(1 of ${LESSON_PATH.length} done)`);
    expect(opened.pageErrors).toEqual([]);
  });
});
