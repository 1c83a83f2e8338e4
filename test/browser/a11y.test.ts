// Accessibility audit with axe-core (WCAG 2.x A/AA rules and best practices) on the page's main
// views: the first visit, the run view after a training step (token heatmap shown, the remote
// judge's fields open) and the saved-runs list (with its rename form). No serious or critical
// violation is allowed; a failure lists each rule with the elements it flagged.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
  await page.addScriptTag({ path: AXE });
});
afterAll(async () => {
  await opened?.close();
});

/** axe's serious and critical violations within `include` (the whole page by default), one line per element. */
async function audit(include?: string): Promise<string[]> {
  const violations = await page.evaluate(async (selector) => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(selector ? { include: [selector] } : document, { resultTypes: ['violations'] });
    return result.violations;
  }, include ?? null);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id} (${v.help}): ${n.target.join(' ')}`));
}

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

describe('accessibility (axe-core)', () => {
  it('the audit finds a violation planted in the page', async () => {
    await page.evaluate(() => {
      const img = document.createElement('img');
      img.id = 'planted';
      img.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
      document.body.append(img);
    });
    expect((await audit('#planted')).some((line) => line.includes('image-alt'))).toBe(true);
    await page.evaluate(() => document.getElementById('planted')?.remove());
  });

  it('the first-visit view has no serious or critical violation', async () => {
    expect(await audit()).toEqual([]);
  });

  it('the run view after a step (heatmap on, remote judge fields open) has none', async () => {
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '3'], ['max_steps', '1']]) {
      await setSetting(key, value);
    }
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
    await page.getByTestId('heat-quantity').selectOption('advantage');
    await page.getByTestId('heat-legend').waitFor();
    await page.getByTestId('judge-kind-remote').check();
    await page.getByTestId('judge-section').locator('summary', { hasText: 'Request settings' }).click();
    // The external grading block's fields (fraction, external judge, its key) are audited too.
    await page.getByTestId('judge-external').locator('summary').click();
    await page.getByTestId('slow-motion').check();
    expect(await audit()).toEqual([]);
  });

  it('the saved-runs list (with a rename form open) has none', async () => {
    await page.getByTestId('run-row').getByTestId('run-rename').click();
    await page.getByTestId('run-name-input').waitFor();
    expect(await audit('[data-testid=runs]')).toEqual([]);
    expect(await audit('[data-testid=export]')).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
