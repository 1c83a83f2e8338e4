// Progress inside a step (issue 14): on the tiny byte-level fixture with 20 completion tokens
// (the prefill's token, then decode submissions of 16 and 3 steps, each followed by a progress event), the page shows the
// sampling count and the stage being worked on before the step's metrics arrive. Every change
// of the page is recorded by a MutationObserver, so the check does not depend on the speed of
// the machine (a fast step could finish between two polls).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
});
afterAll(async () => {
  await opened?.close();
});

interface Seen {
  count: string | null;
  working: string | null;
  current: string | null;
  line: string | null;
  streaming: number;
  metrics: boolean;
}

describe('progress inside a step', () => {
  it('shows tokens sampled of the total, the active stage and partial completions before the metrics', async () => {
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '20'], ['max_steps', '1']]) {
      await setSettingOn(page, key, value);
    }
    await expect(page.getByTestId('train').isEnabled()).resolves.toBe(true);
    await page.evaluate(() => {
      const seen: Seen[] = [];
      (window as unknown as { __seen: Seen[] }).__seen = seen;
      const text = (sel: string) => document.querySelector(sel)?.textContent?.trim() ?? null;
      new MutationObserver(() => {
        seen.push({
          count: text('[data-testid=stage-progress]'),
          working: document.querySelector('[data-testid=stages] li[data-working]')?.getAttribute('data-stage') ?? null,
          current: document.querySelector('[data-testid=stages] li[aria-current=step]')?.getAttribute('data-stage') ?? null,
          line: text('[data-testid=run-progress]'),
          streaming: document.querySelectorAll('[data-testid=streaming-completion]').length,
          metrics: document.querySelector('[data-testid=chart-reward][data-points="1"]') !== null,
        });
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 180_000 });
    const seen = await page.evaluate(() => (window as unknown as { __seen: Seen[] }).__seen);

    const before = seen.slice(0, Math.max(0, seen.findIndex((s) => s.metrics)));
    expect(before.length).toBeGreaterThan(0);
    const partway = before.filter((s) => {
      const m = /^(\d+)\/(\d+)$/.exec(s.count ?? '');
      return s.working === 'sampled' && m !== null && +m[1] > 0 && +m[1] < +m[2] && +m[2] === 20;
    });
    expect(partway.length).toBeGreaterThan(0);
    // The stage being worked on is the current one (not the last one finished), and the run line counts tokens.
    expect(partway.every((s) => s.current === 'sampled')).toBe(true);
    expect(partway.some((s) => /^Step 0 \(1 of 1\) · sampling \d+\/20 tokens/.test(s.line ?? ''))).toBe(true);
    expect(partway.some((s) => s.streaming === 4)).toBe(true);
    // The later stages are marked while they are worked on too.
    expect(before.some((s) => s.working === 'updated' && s.current === 'updated')).toBe(true);
    // Once the run is over nothing reads as in progress.
    await expect(page.getByTestId('run-progress').count()).resolves.toBe(0);
    await expect(page.locator('[data-testid=stages] li[data-working]').count()).resolves.toBe(0);
    expect(opened.pageErrors).toEqual([]);
  });
});
