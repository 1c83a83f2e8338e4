// The bias sandbox end to end (issue 13): a link declaring judge_bias opens with the Judge bias
// panel on; one step on the tiny byte-level fixture shows the "Judge bias ON" badge over the
// charts, mark the verdicts the bias changed "(biased)" in the rollout inspector, and, with a
// held-out (gold) copy of the rubric that is never biased, chart proxy vs gold reward.
// The rubric's one rule asks for a word a 4-byte completion cannot contain, so every verdict is a
// fail and leniency at strength 1 passes every one: the proxy reward is 1, the gold reward 0.
// The rubric check's adversarial probe and the judge meta-evaluation panel show on the same page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { encodeShareLink } from '../../src/share/link';
import { FIRST_VISIT } from '../../src/share/presets';
import { openApp } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;

const rubric = { name: 'impossible', criteria: [{ id: 'magic', text: 'Says the magic word', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['xyzzyplugh'] } }] };

beforeAll(async () => {
  const fragment = encodeShareLink({
    experiment: {
      ...FIRST_VISIT.experiment,
      model: '/test/fixtures/tiny-byte-gpt2/',
      rubric,
      held_out_rubric: rubric,
      judge_bias: { kind: 'leniency', strength: 1 },
      config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 4, max_steps: 1, learning_rate: 1e-3 },
    } as typeof FIRST_VISIT.experiment,
  });
  ({ opened, page } = await openApp(`/${fragment}`));
});
afterAll(async () => {
  await opened?.close();
});

describe('bias sandbox', () => {
  it('is shown, trains biased, marks the biased verdicts and plots proxy vs gold', async () => {
    await expect(page.getByTestId('bias-on').isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('bias-kind-leniency').isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('bias-warning').textContent()).resolves.toMatch(/Judge bias ON: leniency ×1/);
    await expect(page.getByTestId('train').isEnabled()).resolves.toBe(true);
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 180_000 });

    await expect(page.getByTestId('bias-badge').textContent()).resolves.toMatch(/Judge bias ON: leniency ×1/);
    const chips = page.locator('[data-testid=chip]').filter({ hasText: 'magic' });
    expect(await chips.count()).toBeGreaterThan(0);
    const verdicts = await chips.evaluateAll((els) => els.map((e) => [e.getAttribute('data-verdict'), e.querySelector('[data-testid=chip-biased]') !== null]));
    expect(verdicts.every(([v, biased]) => v === 'pass' && biased === true)).toBe(true);

    const chart = page.getByTestId('chart-proxy-gold');
    await expect(chart.getAttribute('data-points')).resolves.toBe('1');
    const label = await chart.getByTestId('chart-plot').getAttribute('aria-label');
    expect(label).toMatch(/proxy \(trained\) reward 1 at step \d+; gold \(held-out\) reward 0 at step \d+/);
    await expect(page.getByTestId('chart-proxy-gold-gap').count()).resolves.toBe(1);

    // The rubric check: keyword stuffing earns the contains rule (the adversarial probe, seed #104).
    const exploit = page.locator('[data-testid=lint-finding][data-code=adversarial]');
    await exploit.first().waitFor({ timeout: 30_000 });
    expect(await exploit.count()).toBe(1);
    expect(await exploit.textContent()).toMatch(/Criterion 1: Credited without content\..*keyword stuffing/);
    // Judge meta-evaluation: a verbosity row per criterion, a load row per step (rules only: no model-judge request).
    await page.getByTestId('judge-meta').locator('summary').click();
    await page.getByTestId('verbosity-row').first().waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('verbosity-row').count()).toBe(1);
    expect(await page.getByTestId('judge-load-row').allTextContents()).toEqual([expect.stringMatching(/^10/)]);
    // Nothing labelled in the inspector yet: the agreement section says how to get it.
    expect(await page.getByTestId('label-agreement-empty').textContent()).toContain('Mark verdicts right or wrong in the rollout inspector to see agreement');
    expect(opened.pageErrors).toEqual([]);
  });
});
