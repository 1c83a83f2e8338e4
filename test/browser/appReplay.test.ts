// A lesson's recorded run (public/recordings/): the lesson offers it, its reward curve is the
// dashed expected shape on the reward chart, "Watch the recording" at "all at once" fills every
// chart and the rollout inspector (token heatmap included) with its steps, labelled as a
// recording with its seed, steps and adapter; "Train it yourself" puts the lesson's own settings
// back in the builder and starts a live run with the recording still overlaid. No training: the
// page closes as the live run's model loads.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { layoutOverflow, NARROW, openApp, setSettingOn, shootView, WIDE } from '../helpers/appPage';
import { LESSON_PATH } from '../../src/share/lessonPath';
import { lessonById } from '../../src/share/lessons';
import { parseRecordingIndex, recordingLabel } from '../../src/share/recordings';

// The basics lesson's recording where shipped, else the first (more are added by rerunning scripts/recordings.mjs).
const INDEX = parseRecordingIndex(readFileSync(join(repoRoot, 'public', 'recordings', 'index.json'), 'utf8'));
const ENTRY = INDEX.find((e) => e.lesson === 'grpo-basics') ?? INDEX[0];
const LESSON = lessonById(ENTRY.lesson)!;
/** A lesson on the path without a recording, if any. */
const BARE = LESSON_PATH.find((id) => !INDEX.some((e) => e.lesson === id));
const LENGTH = String((LESSON.shared.experiment.config as { max_completion_length: number }).max_completion_length);

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
  await page.setViewportSize(WIDE);
});
afterAll(async () => {
  await opened?.close();
});

describe('a lesson recording', () => {
  it('the lesson offers its recording, labelled, with its curve as the expected shape', async () => {
    await page.getByTestId('lessons').locator('summary').click();
    await page.getByTestId(`lesson-${LESSON.id}`).click();
    const about = page.getByTestId('recording-about');
    await about.waitFor({ timeout: 30_000 });
    const text = await about.textContent();
    expect(text).toContain(`seed ${ENTRY.seed}, ${ENTRY.steps} step`);
    expect(text).toContain(ENTRY.adapter);
    expect(await page.getByTestId('recording-shape').textContent()).toMatch(/What you should see: the recording's mean reward went from -?\d\.\d\d at step 0 to -?\d\.\d\d at step \d+/);
    // Before any run: the reward chart already holds the recording's dashed curve.
    await page.getByTestId('chart-reward').locator('.u-legend').getByText(recordingLabel(ENTRY.seed)).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('chart-reward').getAttribute('data-points')).toBe(String(ENTRY.steps));
    await expect(page.getByTestId('replay-watch').isEnabled()).resolves.toBe(true);
  });

  it('"Watch the recording" all at once fills every chart and the inspector, labelled as a recording', async () => {
    await page.getByTestId('replay-speed').selectOption('all');
    await page.getByTestId('replay-watch').click();
    const label = page.getByTestId('recording-label');
    await label.waitFor({ timeout: 30_000 });
    expect(await label.textContent()).toContain(`seed ${ENTRY.seed}, ${ENTRY.steps} steps, recorded on ${ENTRY.adapter}`);
    await expect(page.getByTestId('replay-progress').textContent()).resolves.toBe(`Recording: ${ENTRY.steps} of ${ENTRY.steps} steps shown`);
    await expect(page.getByTestId('steps-done').textContent()).resolves.toContain(`${ENTRY.steps} steps`);
    const tag = `Recording (seed ${ENTRY.seed}, ${ENTRY.steps} of ${ENTRY.steps} steps), not a live run`;
    await expect(page.getByTestId('charts-label').textContent()).resolves.toBe(tag);
    await expect(page.getByTestId('inspector-label').textContent()).resolves.toBe(tag);
    // The run's status says the charts show a recording, not that nothing has happened.
    await expect(page.getByTestId('stage-status').textContent()).resolves.toBe('No live step has run yet: the charts show a recording. Train it yourself to train live.');

    // Every chart has a point per recorded step; the recording is not overlaid on itself.
    const figures = page.locator('figure[data-testid^="chart-"]');
    const points = await figures.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-testid')}=${e.getAttribute('data-points')}`));
    expect(points.length).toBeGreaterThan(4);
    expect(points.filter((p) => !p.endsWith(`=${ENTRY.steps}`))).toEqual([]);
    expect(await page.getByTestId('chart-reward').locator('.u-legend').getByText(recordingLabel(ENTRY.seed)).count()).toBe(0);
    // The x axis spans the recording's steps.
    expect(await page.getByTestId('chart-reward').getByTestId('chart-plot').getAttribute('data-x-end')).toBe(String(ENTRY.steps - 1));

    // The inspector shows the last recorded step's groups, as text; the token heatmap colours them.
    const inspector = page.getByTestId('inspector');
    await inspector.getByText(`Step ${ENTRY.steps - 1}: `).first().waitFor({ timeout: 10_000 });
    expect(await inspector.getByTestId('group').count()).toBeGreaterThan(0);
    expect(await inspector.getByTestId('rollout').count()).toBeGreaterThan(0);
    await page.getByTestId('heat-quantity').selectOption('advantage');
    await inspector.getByTestId('heatmap').first().waitFor({ timeout: 10_000 });
    expect(await inspector.getByTestId('token').count()).toBeGreaterThan(0);
    await page.getByTestId('heat-quantity').selectOption('');

    // Serious or critical axe-core findings in the replay's controls and labels (as in a11y.test.ts).
    await page.addScriptTag({ path: AXE });
    const findings = await page.evaluate(async () => {
      type V = { id: string; impact: string | null; nodes: { target: string[] }[] };
      const axe = (window as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<{ violations: V[] }> } }).axe;
      const { violations } = await axe.run({ include: [['[data-testid=recording]'], ['[data-testid=recording-label]'], ['[data-testid=charts-label]']] }, { resultTypes: ['violations'] });
      return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    expect(findings).toEqual([]);

    // Timed: 4 steps/s plays it again to its last step.
    await page.getByTestId('replay-speed').selectOption('4');
    await page.getByTestId('replay-watch').click();
    await page.getByTestId('replay-progress').filter({ hasText: `${ENTRY.steps} of ${ENTRY.steps} steps shown` }).waitFor({ timeout: 30_000 });
    await expect(page.getByTestId('replay-watch').textContent()).resolves.toContain('Watch again');

    await page.getByTestId('lesson-guide').scrollIntoViewIfNeeded();
    await shootView(page, 'lesson-replay');
    await page.locator('#charts').evaluate((el) => el.scrollIntoView());
    await shootView(page, 'lesson-replay-charts');
    // On a phone-sized screen nothing of the replay is cut off.
    await page.setViewportSize(NARROW);
    await page.getByTestId('recording').scrollIntoViewIfNeeded();
    await shootView(page, 'narrow-lesson-replay');
    const { cut } = await layoutOverflow(page);
    expect(cut.filter((c) => /recording|replay|charts-label|inspector-label/.test(c))).toEqual([]);
    await page.setViewportSize(WIDE);
    expect(opened.pageErrors).toEqual([]);
  });

  it.skipIf(BARE === undefined)('a lesson without a recording offers none, and says nothing about it', async () => {
    await page.getByTestId(`lesson-${BARE}`).click();
    await page.getByTestId('intro-title').filter({ hasText: lessonById(BARE!)!.title }).waitFor({ timeout: 10_000 });
    await page.getByTestId('lesson-guide').waitFor();
    // The index has been read by now (it was for the first lesson); nothing to wait for.
    expect(await page.getByTestId('recording').count()).toBe(0);
    expect(await page.getByTestId('recording-error').count()).toBe(0);
    expect(await page.getByTestId('chart-reward').locator('.u-legend').getByText(/^recording \(seed/).count()).toBe(0);
    await page.getByTestId(`lesson-${LESSON.id}`).click();
    await page.getByTestId('recording-about').waitFor({ timeout: 30_000 });
  });

  it('"Train it yourself" puts the lesson\'s settings back and starts a live run, the recording overlaid', async () => {
    // An edit the lesson's own settings replace.
    await setSettingOn(page, 'max_completion_length', String(Number(LENGTH) + 8));
    await expect(page.getByTestId('setting-max_completion_length').locator('input').inputValue()).resolves.not.toBe(LENGTH);
    await page.getByTestId('replay-train').click();
    await page.getByTestId('recording-label').waitFor({ state: 'detached', timeout: 30_000 });
    await expect(page.getByTestId('setting-max_completion_length').locator('input').inputValue()).resolves.toBe(LENGTH);
    await expect(page.getByTestId('intro-title').textContent()).resolves.toBe(LESSON.title);
    // The live run opens (the page closes before it trains).
    await page.waitForFunction(() => document.querySelector('[data-testid=run-status]')?.textContent !== 'Ready.', null, { timeout: 30_000 });
    expect(await page.getByTestId('charts-label').count()).toBe(0);
    await page.getByTestId('chart-reward').locator('.u-legend').getByText(recordingLabel(ENTRY.seed)).waitFor({ timeout: 30_000 });
    expect(opened.pageErrors).toEqual([]);
  });
});
