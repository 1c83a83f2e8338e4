// The rubric lab in the page: lint findings under the rubric editor follow edits and a fix
// button changes the rubric; "Measure rubric" on a saved run (stored here straight into
// IndexedDB, no training) shows each criterion's flag. No model, no GPU work.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { FIRST_VISIT } from '../../src/share/presets';

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  opened = await openPage('/');
  page = opened.page;
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
});
afterAll(async () => {
  await opened?.close();
});

const finding = (code: string) => page.locator(`[data-testid=lint-finding][data-code=${code}]`);
const criterionText = (i: number) => page.getByTestId('criterion').nth(i).getByTestId('criterion-text');

describe('rubric lab', () => {
  it('lints the rubric as it is edited, and a fix button applies its fix', async () => {
    // The first-visit rubric's 4th criterion is a pitfall (weight −1, all capitals): worded as a goal, it is flagged.
    await criterionText(3).fill('Does not shout in capitals');
    await finding('penalty_reads_positive').waitFor({ timeout: 30_000 });
    expect(await finding('penalty_reads_positive').textContent()).toContain('Criterion 4');
    await criterionText(3).fill('Shouts in capitals');
    await finding('penalty_reads_positive').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await finding('rule_text_mismatch').count()).toBe(0);

    // Text and rule disagree: the rule allows 20 words.
    await criterionText(0).fill('Uses at most 30 words');
    await finding('rule_text_mismatch').waitFor({ timeout: 30_000 });
    expect(await finding('rule_text_mismatch').textContent()).toContain('says 30 words');
    await criterionText(0).fill('Uses at most 20 words');
    await finding('rule_text_mismatch').waitFor({ state: 'detached', timeout: 30_000 });

    // Leakage: prompts that already say "you" meet the "Speaks to the reader" rule when merely repeated.
    expect(await finding('leakage').count()).toBe(0);
    await page.getByTestId('prompts').fill('What do you think of the sea?\nDo you like cats?');
    await finding('leakage').waitFor({ timeout: 30_000 });
    expect(await finding('leakage').textContent()).toContain('on 2 of 2 prompts');

    // A near duplicate (of criterion 2), removed by its fix: criterion 3 goes.
    const criteria = (FIRST_VISIT.experiment.rubric as { criteria: unknown[] }).criteria.length;
    await criterionText(2).fill('Ends with a question!');
    await finding('near_duplicate').waitFor({ timeout: 30_000 });
    await finding('near_duplicate').getByTestId('lint-fix').click();
    await finding('near_duplicate').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await page.getByTestId('criterion').count()).toBe(criteria - 1);

    expect(opened.pageErrors).toEqual([]);
  });

  it('measures a saved run\'s rubric from its stored rollouts', async () => {
    const rubric = FIRST_VISIT.experiment.rubric;
    // Two groups of two at step 0; criteria: short (all met), asks (mixed), you and the pitfall (never met).
    const scores = [
      [1, 1, 0, 0],
      [1, 0, 0, 0],
      [1, 1, 0, 0],
      [1, 0, 0, 0],
    ];
    const rollouts = scores.map((s, i) => ({
      step: 0,
      group: Math.floor(i / 2),
      index: i % 2,
      prompt: 'p',
      completion: `c${i}`,
      completion_ids: [1],
      logprobs: [-1],
      truncated: false,
      results: [],
      scores: s,
      reward: [0.9, 0.2, 0.4, 0.6][i],
      advantage: 0,
    }));
    // A string, so vitest does not rewrite the page's import().
    await page.evaluate(`(async () => {
      const { RunStore } = await import('/src/store/index.ts');
      const { parseRubric } = await import('/src/rubric/index.ts');
      const { parseGrpoConfig } = await import('/src/rl/config.ts');
      const store = await RunStore.open();
      const run = await store.createRun({ name: 'lab run', modelId: 'm', prompts: ['p'], rubric: parseRubric(${JSON.stringify(rubric)}), config: parseGrpoConfig({}), status: 'finished' });
      await store.commitStep(run.id, 0, { step: 0 }, ${JSON.stringify(rollouts)});
      store.close();
    })()`);
    await page.reload();
    const row = page.getByTestId('run-row').filter({ hasText: 'lab run' });
    await row.waitFor({ timeout: 60_000 });
    await row.getByTestId('run-measure').click();
    const report = row.getByTestId('rubric-report');
    await report.getByTestId('report-row').first().waitFor({ timeout: 30_000 });
    expect(await report.getByTestId('report-flag').allTextContents()).toEqual(['saturated', 'discriminative', 'unreachable', 'unreachable']);
    expect(await report.textContent()).toContain('4 stored rollouts in 2 groups');
    expect(opened.pageErrors).toEqual([]);
  });

  it('human labels in the report: better/worse marks and a wrong verdict give AUROC, pairwise accuracy and agreement, kept with the rubric version', async () => {
    const row = page.getByTestId('run-row').filter({ hasText: 'lab run' });
    const labels = row.getByTestId('rubric-labels');
    await labels.getByTestId('label-rollout').first().waitFor({ timeout: 30_000 });
    expect(await labels.getByTestId('labels-auroc').textContent()).toBe('–');
    const rollout = (i: number) => labels.getByTestId('label-rollout').nth(i);
    // Rewards 0.9, 0.2 (group 1) and 0.4, 0.6 (group 2). Group 1 ordered right, group 2 wrong.
    await rollout(0).getByTestId('label-better').click();
    await rollout(1).getByTestId('label-worse').click();
    await rollout(2).getByTestId('label-better').click();
    await rollout(3).getByTestId('label-worse').click();
    // AUROC: 0.9 > 0.2, 0.9 > 0.6, 0.4 > 0.2, 0.4 < 0.6 → 3/4; pairs within groups: 1 of 2.
    await expect.poll(() => labels.getByTestId('labels-auroc').textContent(), { timeout: 30_000 }).toBe('0.75 (4 compared)');
    expect(await labels.getByTestId('labels-pairwise').textContent()).toBe('0.50 (2 compared)');
    // The judge's "short: met" on the first rollout, marked wrong: agreement 0, κ 0 (the judge always says met, you never).
    await rollout(0).locator('[data-testid=label-verdict][data-criterion=short]').selectOption('wrong');
    await expect.poll(() => labels.getByTestId('labels-agreement').textContent(), { timeout: 30_000 }).toContain('short: agreement 0.00, κ 0.00 (1 labelled)');

    // Stored with the rubric version: a reload shows them again.
    await page.reload();
    await row.waitFor({ timeout: 60_000 });
    await row.getByTestId('run-measure').click();
    await expect.poll(() => row.getByTestId('labels-auroc').textContent(), { timeout: 30_000 }).toBe('0.75 (4 compared)');
    expect(await row.getByTestId('label-rollout').nth(0).getByTestId('label-better').getAttribute('aria-pressed')).toBe('true');
    expect(opened.pageErrors).toEqual([]);
  });
});
