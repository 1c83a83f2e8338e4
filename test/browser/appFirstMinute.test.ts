// The first minute (issue 14): the results are a few Tab presses away (skip links) and named in
// a sticky section bar; the page fits 1280×720 and a narrow screen without sideways scrolling;
// before Train, the page measures the adapter (a short calibration in the trainer worker) and
// says how long a step of the experiment in the builder should take; on a software adapter it
// says so and offers a smaller setting, a visible change of the builder's settings. Each view is
// saved as test-artifacts/screenshots/<view>.png. One tiny step at the end fills the charts for
// the last screenshots; no check depends on the machine's speed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { LESSONS } from '../../src/share/lessons';
import { encodeShareLink } from '../../src/share/link';
import { stepCountsIn } from '../../src/rl/stepTime';
import { layoutOverflow, NARROW, openApp, setSettingOn, shootView, WIDE } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/', { calibrate: true }));
  await page.setViewportSize(WIDE);
});
afterAll(async () => {
  await opened?.close();
});

/** "about 2 min per step" → seconds. */
function perStep(text: string): number {
  const m = /about (\d+) (s|min|h)\b[^(]*per step/.exec(text);
  if (!m) throw new Error(`no per-step time in "${text}"`);
  return Number(m[1]) * (m[2] === 's' ? 1 : m[2] === 'min' ? 60 : 3600);
}

const settingValue = (key: string) => page.getByTestId(`setting-${key}`).locator('input').inputValue();

/** Every section of the bar, opened from it, shot at the current viewport as `<prefix>-<section>`. */
async function shootSections(prefix: string): Promise<void> {
  for (const id of ['builder', 'run-controls', 'charts', 'rollouts', 'saved-runs']) {
    await page.getByTestId(`section-${id}`).click();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(id);
    await shootView(page, `${prefix}-${id}`);
  }
}

async function expectFits(): Promise<void> {
  const layout = await layoutOverflow(page);
  expect(layout.cut).toEqual([]);
  expect(layout.scrollWidth).toBeLessThanOrEqual(layout.clientWidth);
}

describe('results reachable at first sight', () => {
  it('a skip link, reached within 3 Tab presses, moves focus to the results', async () => {
    let presses = 0;
    let active: string | null = null;
    while (presses < 3 && active !== 'skip-results') {
      await page.keyboard.press('Tab');
      presses++;
      active = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);
    }
    expect(active).toBe('skip-results');
    await expect(page.getByTestId('skip-results').isVisible()).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('results');
    // The address keeps its fragment (a share link may live there).
    expect(new URL(page.url()).hash).toBe('');
    // The next Tab from the start reaches "Skip to charts".
    await page.getByTestId('skip-results').focus();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).resolves.toBe('skip-charts');
    await page.keyboard.press('Enter');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('charts');
    const top = await page.evaluate(() => document.getElementById('charts')!.getBoundingClientRect().top);
    expect(top).toBeLessThan(WIDE.height);
  });

  it('fits 1280×720 and a narrow screen without sideways scrolling; the section bar stays in view', async () => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByTestId('step-estimate').waitFor({ timeout: 180_000 });
    await shootView(page, 'first-visit');
    await expectFits();
    await shootSections('wide');
    // Scrolled down, the section bar is still at the top of the view.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await expect(page.evaluate(() => document.querySelector('[data-testid=section-nav]')!.getBoundingClientRect().top)).resolves.toBe(0);
    await page.setViewportSize(NARROW);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shootView(page, 'narrow-first-visit');
    await expectFits();
    await shootSections('narrow');
    await expectFits();
    await page.setViewportSize(WIDE);
  });
});

describe('the time per step before Train', () => {
  it('is shown before Train and follows the settings', async () => {
    const estimate = page.getByTestId('step-estimate');
    await estimate.waitFor({ timeout: 180_000 });
    await expect(page.getByTestId('run-status').textContent()).resolves.toMatch(/Ready/);
    const first = (await estimate.textContent())!;
    expect(first).toMatch(/Expected on this GPU: about \d+ (s|min) per step/);
    expect(first).toMatch(/Measured in \d+\.\d s/);
    // Longer completions: more decode steps and longer update sequences, so a longer step.
    await setSettingOn(page, 'max_completion_length', '160');
    await expect.poll(async () => perStep((await estimate.textContent())!), { timeout: 30_000 }).toBeGreaterThan(perStep(first));
    await setSettingOn(page, 'max_completion_length', '48');
    await expect.poll(async () => perStep((await estimate.textContent())!), { timeout: 30_000 }).toBe(perStep(first));
  });

  it('says when the adapter is a software one and offers a smaller setting that changes the fields', async () => {
    const software = await page.evaluate(async () => {
      const adapter = await navigator.gpu.requestAdapter();
      const info = adapter?.info as (GPUAdapterInfo & { isFallbackAdapter?: boolean }) | undefined;
      return Boolean(info?.isFallbackAdapter || /swiftshader/i.test(`${info?.description} ${info?.vendor} ${info?.architecture}`));
    });
    const notice = page.getByTestId('software-adapter');
    if (!software) {
      // A hardware GPU: no notice (this machine's tests run on SwiftShader, where the rest applies).
      await expect(notice.count()).resolves.toBe(0);
      return;
    }
    await notice.waitFor();
    await expect(notice.textContent()).resolves.toMatch(/runs on the CPU.*expect about \d+ (s|min) per step/s);
    const estimate = page.getByTestId('step-estimate');
    const button = page.getByTestId('smaller-setting');
    const raised = (await button.count()) === 0;
    if (raised) {
      // The defaults already fit a first step here (the engine got fast enough on this adapter):
      // the notice says so. Then make the step long enough to need the offer.
      await expect(page.getByTestId('software-fits').textContent()).resolves.toMatch(/small enough for a first step within about \d+ s/);
      expect(perStep((await estimate.textContent())!)).toBeLessThanOrEqual(30);
      await setSettingOn(page, 'num_iterations', '16');
      await setSettingOn(page, 'max_completion_length', '200');
    }
    await button.waitFor({ timeout: 30_000 });
    const before = perStep((await estimate.textContent())!);
    const offer = (await button.textContent())!;
    expect(offer).toMatch(/generation_batch_size 32 → \d+/);
    const gbs = await settingValue('generation_batch_size');
    expect(gbs).toBe('32');
    await button.click();
    await expect(page.getByTestId('smaller-applied').textContent()).resolves.toMatch(/Changed in the settings below: generation_batch_size 32 → \d+/);
    const after = Number(await settingValue('generation_batch_size'));
    expect(after).toBeLessThan(32);
    expect(offer).toContain(`generation_batch_size 32 → ${after}`);
    // The changed options read as changed in the builder, and the estimate follows.
    await expect(page.getByTestId('setting-generation_batch_size').getAttribute('class')).resolves.toMatch(/changed/);
    await expect.poll(async () => perStep((await page.getByTestId('step-estimate').textContent())!), { timeout: 30_000 }).toBeLessThan(before);
    // The settings the later cases start from.
    if (raised) for (const [key, value] of [['num_iterations', '1'], ['max_completion_length', '48']]) await setSettingOn(page, key, value);
    expect(opened.pageErrors).toEqual([]);
  });

  it('times the step counts a lesson gives for this adapter', async () => {
    // Whichever lesson's text gives a step count (the texts change; the page reads them as written).
    const lesson = LESSONS.find((l) => stepCountsIn(`${l.shared.lesson?.guidance ?? ''} ${l.explanation}`).length > 0);
    if (!lesson) return;
    const n = stepCountsIn(`${lesson.shared.lesson?.guidance ?? ''} ${lesson.explanation}`)[0];
    // The same page (the calibration is kept): the link opens through the address's fragment.
    await page.evaluate((hash) => (location.hash = hash), encodeShareLink(lesson.shared).slice(1));
    const timed = page.getByTestId('lesson-time');
    await timed.waitFor({ timeout: 60_000 });
    await expect(timed.textContent()).resolves.toMatch(new RegExp(`On this GPU: ${n} steps ≈ \\d+ (s|min|h)`));
  });

  it('after a tiny step, the filled charts and rollouts still fit both screens (screenshots)', async () => {
    await shootView(page, 'lesson');
    // Every control back (a lesson hides some of the settings set here).
    if (await page.getByTestId('leave-lesson').count()) await page.getByTestId('leave-lesson').click();
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '2'], ['max_completion_length', '4'], ['max_steps', '1']]) {
      await setSettingOn(page, key, value);
    }
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 240_000 });
    // Beside the estimate, what the run's step measured (the first step compiles the kernels).
    await expect(page.getByTestId('step-measured').textContent()).resolves.toMatch(/Measured in this run: \d+ (s|min) per step over 1 step \(the first/);
    await shootSections('trained');
    await expectFits();
    await page.setViewportSize(NARROW);
    await shootSections('narrow-trained');
    await expectFits();
    await page.setViewportSize(WIDE);
    expect(opened.pageErrors).toEqual([]);
  });
});
