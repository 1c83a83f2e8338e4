// The first minute (issue 14): before Train, the page measures the adapter (a short calibration
// in the trainer worker) and says how long a step of the experiment in the builder should take;
// on a software adapter it says so and offers a smaller setting, which is a visible change of
// the builder's settings. No training here: nothing depends on the machine's speed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { LESSONS } from '../../src/share/lessons';
import { encodeShareLink } from '../../src/share/link';
import { stepCountsIn } from '../../src/rl/stepTime';
import { openApp, setSettingOn } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/', { calibrate: true }));
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
    const before = perStep((await page.getByTestId('step-estimate').textContent())!);
    const button = page.getByTestId('smaller-setting');
    await button.waitFor();
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
});
