// Nothing a visitor did is lost (issue 14): the builder's draft survives a reload, "Reset to
// preset" asks before it replaces the edits, and Pause is acknowledged at once while a step runs.
// On the tiny byte-level fixture model with tiny settings.
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { FIRST_VISIT, OPEN_WITH_THE } from '../../src/share/presets';
import { changedKeys } from '../../src/ui/lib/settingsChanged';
import { join } from 'node:path';
import { openApp, setSettingOn, SHOTS, tryItScored } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;
/** confirm() messages, answered by `answer` (OK unless a test says otherwise). */
const dialogs: string[] = [];
let answer = true;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
  page.on('dialog', (d: Dialog) => {
    dialogs.push(d.message());
    void (answer ? d.accept() : d.dismiss());
  });
});
afterAll(async () => {
  await opened?.close();
});

const prompts = () => page.getByTestId('prompts');
const status = () => page.getByTestId('run-status');
const FIXTURE = '/test/fixtures/tiny-byte-gpt2/';

describe('the builder draft', () => {
  it('counts only settings that differ from the defaults', async () => {
    const expected = changedKeys(FIRST_VISIT.experiment.config as Record<string, unknown>).length;
    expect(await page.getByTestId('settings-changed').textContent()).toBe(`(${expected} changed from the defaults)`);
  });

  it('reads a penalty the right way round in Try it, and editing the rubric warns nothing in the console', async () => {
    const warnings: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
    });
    const row = (id: string) => page.locator(`[data-testid=tryit-row][data-criterion="${id}"]`).getByTestId('tryit-verdict');
    await page.getByTestId('tryit-response').fill('THE SEA IS WIDE');
    // The row first, then its verdict.
    await tryItScored(page, row('no_caps_shouting'));
    await expect.poll(() => row('no_caps_shouting').textContent(), { timeout: 60_000 }).toBe('✗ detected: costs reward');
    await page.getByTestId('tryit-response').fill('The sea is wide.');
    await expect.poll(() => row('no_caps_shouting').textContent(), { timeout: 60_000 }).toBe('✓ not detected');
    // Edits in the criterion editor and its rule builder (Svelte warns when a prop is mutated).
    const first = page.getByTestId('criterion').first();
    await first.getByTestId('criterion-text').fill('Uses at most 30 words');
    await first.getByTestId('criterion-weight').fill('3');
    await first.getByTestId('rule-max').fill('30');
    await page.getByTestId('criterion').nth(1).getByTestId('rule-text').fill('!');
    await expect.poll(() => first.getByTestId('criterion-text').inputValue()).toBe('Uses at most 30 words');
    expect(warnings.filter((w) => /ownership|mutat/i.test(w))).toEqual([]);
  });

  it('survives a reload, and Reset to preset asks before it restores the preset', async () => {
    await prompts().fill('Say hello.\nSay goodbye.');
    await page.getByTestId('model-input').fill(FIXTURE);
    await page.getByTestId('model-input').press('Tab');
    // Written a moment after the edit (and at once on unload): wait for it, not for a time.
    await page.waitForFunction(() => Object.keys(localStorage).some((k) => k.startsWith('rubric-playground.draft:') && localStorage.getItem(k)!.includes('Say goodbye.')));
    await page.reload();
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    expect(await prompts().inputValue()).toBe('Say hello.\nSay goodbye.');
    expect(await page.getByTestId('model-input').inputValue()).toBe(FIXTURE);

    answer = false;
    await page.getByTestId('reset-preset').click();
    expect(dialogs.length).toBe(1);
    expect(dialogs[0]).toContain(`"${FIRST_VISIT.title}"`);
    expect(await prompts().inputValue()).toBe('Say hello.\nSay goodbye.');

    answer = true;
    await page.getByTestId('reset-preset').click();
    expect(dialogs.length).toBe(2);
    await expect.poll(() => prompts().inputValue()).toBe(FIRST_VISIT.experiment.prompts.join('\n'));
    // An unedited preset replaces nothing: no question.
    await page.getByTestId('reset-preset').click();
    expect(dialogs.length).toBe(2);
    // A chosen preset is what a reload opens.
    await page.locator('#preset').selectOption(OPEN_WITH_THE.id);
    expect(dialogs.length).toBe(2);
    await page.waitForFunction((id) => Object.keys(localStorage).some((k) => k.startsWith('rubric-playground.draft:') && localStorage.getItem(k)!.includes(`"preset":"${id}"`)), OPEN_WITH_THE.id);
    await page.reload();
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    expect(await page.locator('#preset').inputValue()).toBe(OPEN_WITH_THE.id);
    expect(await prompts().inputValue()).toBe(OPEN_WITH_THE.experiment.prompts.join('\n'));
    await page.locator('#preset').selectOption(FIRST_VISIT.id);
    await expect.poll(() => prompts().inputValue()).toBe(FIRST_VISIT.experiment.prompts.join('\n'));
  });

  it('acknowledges Pause at once while a step runs', async () => {
    await page.getByTestId('model-input').fill(FIXTURE);
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '2'], ['max_completion_length', '3'], ['max_steps', '100']]) {
      await setSettingOn(page, key, value);
    }
    await page.getByTestId('train').click();
    await status().filter({ hasText: 'Training…' }).waitFor({ timeout: 120_000 });
    // Click and read back before any message from the worker can be handled (only microtasks in between).
    const seen = await page.evaluate(async () => {
      const button = document.querySelector<HTMLButtonElement>('[data-testid=train]')!;
      const before = document.querySelector('[data-testid=run-status]')!.textContent;
      button.click();
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return { before, after: document.querySelector('[data-testid=run-status]')!.textContent, label: button.textContent!.trim(), disabled: button.disabled };
    });
    expect(seen.before).toBe('Training…');
    expect(seen.after).toMatch(/^Pausing after this step/);
    expect(seen).toMatchObject({ label: 'Pausing…', disabled: true });
    await status().filter({ hasText: /^Paused after step \d+\.$/ }).waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('train').textContent()).toMatch(/Resume/);
    // The charts: the x axis spans max_steps (steps 0..99), smoothing starts off, and the legend
    // shows the newest values without hovering (the step, then the reward mean).
    const reward = page.getByTestId('chart-reward');
    expect(await reward.getByTestId('chart-plot').getAttribute('data-x-end')).toBe('99');
    expect(await page.getByTestId('smoothing').inputValue()).toBe('0');
    const legend = await reward.locator('.u-legend .u-series .u-value').allTextContents();
    const lastStep = (await reward.getAttribute('data-points'))!;
    expect(legend[0]).toBe(String(Number(lastStep) - 1));
    expect(legend[1]).toMatch(/^-?\d/);
    await page.screenshot({ path: join(SHOTS, 'app-draft-paused.png'), fullPage: true });
    // The checkpoint rule says what it does: the fixture's checkpoint is small, so every step.
    const policy = (await page.getByTestId('checkpoint-policy').textContent())!;
    const rule = /every step and on pause \(about ([\d.]+) MB each; auto: at most 16 MB\)\.$/;
    expect(policy).toMatch(new RegExp(`^Checkpoint: ${rule.source}`));
    // The builder's memory panel says the same before a run, from the estimate's parameter counts
    // (an estimate: within a factor 1.5 of the loaded model's).
    await page.getByTestId('memory-checkpoints').waitFor({ timeout: 60_000 });
    const planned = (await page.getByTestId('memory-checkpoints').textContent())!;
    expect(planned).toMatch(new RegExp(`^Checkpoints \\(save_steps\\): ${rule.source}`));
    const ratio = Number(rule.exec(planned)![1]) / Number(rule.exec(policy)![1]);
    expect(ratio).toBeGreaterThan(1 / 1.5);
    expect(ratio).toBeLessThan(1.5);
    expect(opened.pageErrors).toEqual([]);
  });

  it('a reopened run shows its stored steps at once and says what resuming redoes', async () => {
    const stored = Number(await page.getByTestId('chart-reward').getAttribute('data-points'));
    expect(stored).toBeGreaterThan(0);
    await page.reload();
    const row = page.getByTestId('run-row').first();
    await row.waitFor({ timeout: 60_000 });
    await row.getByTestId('run-resume').click();
    // Before the model is open again, the chart already holds the stored steps.
    await page.locator(`[data-testid=chart-reward][data-points="${stored}"]`).waitFor({ timeout: 5_000 });
    const note = page.getByTestId('resume-note');
    await note.waitFor({ timeout: 120_000 });
    // save_steps auto checkpointed every step (and the pause): nothing is trained again.
    expect(await note.textContent()).toBe(`Resuming from step ${stored}: the checkpoint holds every stored step, nothing is trained again.`);
    await page.getByTestId('train').click(); // pause again
    await status().filter({ hasText: /^Paused after step \d+\.$/ }).waitFor({ timeout: 120_000 });
    expect(opened.pageErrors).toEqual([]);
  });
});
