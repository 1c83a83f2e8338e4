// The remote judge's key is bound to the site it was entered for. Attack: a key is entered (and
// remembered) for judge server A; a share link then names judge server B (another loopback port:
// another origin). The link opens with its judge switched off and a notice naming B; training then
// sends B nothing (and no key). Only after the visitor confirms B and types a key for it does B
// get requests, each carrying B's key alone, never A's. Two real OpenAI-compatible stand-ins on
// 127.0.0.1 record every request's Authorization header.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { encodeShareLink } from '../../src/share/link';
import { FIRST_VISIT } from '../../src/share/presets';
import { openApp, SHOTS } from '../helpers/appPage';
import { fakeOpenAi, type FakeOpenAi, type SeenRequest } from '../helpers/fakeOpenAi';

const KEY_A = 'sk-a-3Fq8-ENTERED-FOR-A-ONLY';
const KEY_B = 'sk-b-9Lm2-ENTERED-FOR-B';

let a: FakeOpenAi;
let b: FakeOpenAi;
let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  [a, b] = await Promise.all([fakeOpenAi(), fakeOpenAi()]); // each answers "yes"
  ({ opened, page } = await openApp('/'));
});
afterAll(async () => {
  await opened?.close();
  for (const s of [a, b]) await s?.close();
});

/**
 * The link's experiment: tiny model and settings, one judge question, judge at server B. `config`
 * overrides settings: a case that opens a link after another case's must differ from it, or the
 * page's hash does not change and no link is read.
 */
function linkWithJudgeAt(url: string, config: Record<string, unknown> = {}): string {
  const rubric = FIRST_VISIT.experiment.rubric as { name: string; criteria: unknown[] };
  return encodeShareLink({
    experiment: {
      ...FIRST_VISIT.experiment,
      model: '/test/fixtures/tiny-byte-gpt2/',
      rubric: { ...rubric, criteria: [...rubric.criteria, { id: 'polite', text: 'Is polite', weight: 1, tier: 'important', judge_question: 'Is the answer polite?' }] },
      judge: { kind: 'remote', url, model: 'judge-model' },
      config: { ...FIRST_VISIT.experiment.config, num_generations: 2, generation_batch_size: 2, max_completion_length: 2, max_steps: 1, ...config },
    } as typeof FIRST_VISIT.experiment,
  });
}

/** Trains the builder's experiment for its one step; `runs` rows are expected afterwards. */
async function trainOneStep(runs: number) {
  await page.getByTestId('train').click();
  await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
  await expect.poll(() => page.getByTestId('run-row').count(), { timeout: 10_000 }).toBe(runs);
  await page.locator('[data-testid=run-row].current [data-testid=run-steps]').filter({ hasText: '1' }).waitFor({ timeout: 10_000 });
}

const posts = (seen: SeenRequest[]) => seen.filter((s) => s.method === 'POST');
const everything = (seen: SeenRequest[]) => JSON.stringify(seen);

describe('the remote judge key follows its origin, not the URL', () => {
  it('a link naming another judge opens with it off, sends it no key, and after consent only its own key', async () => {
    const urlA = `${a.origin}/v1/chat/completions`;
    const urlB = `${b.origin}/v1/chat/completions`;
    // The visitor's own judge A, with a key, remembered on this device.
    await page.getByTestId('judge-kind-remote').check();
    await page.getByTestId('judge-url').fill(urlA);
    await page.getByTestId('judge-remote-model').fill('judge-model');
    await page.getByTestId('judge-key').fill(KEY_A);
    await page.getByTestId('judge-remember').check();
    expect(await page.getByTestId('judge-key-origin').textContent()).toContain(`This key will be sent only to ${a.origin}`);

    // The crafted link arrives (same page: A's key is in memory and in localStorage).
    await page.evaluate((hash) => (location.hash = hash), linkWithJudgeAt(urlB));
    const consent = page.getByTestId('judge-consent');
    await consent.waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('judge-consent-origin').textContent()).toBe(b.origin);
    expect(await page.getByTestId('judge-consent-url').textContent()).toBe(urlB);
    expect(await consent.textContent()).toContain('Prompts and completions would be sent there');
    await consent.screenshot({ path: join(SHOTS, 'app-judge-consent.png') });
    // The judge is off: rules only, nothing of B's in the picker.
    await expect(page.getByTestId('judge-kind-rules').isChecked()).resolves.toBe(true);
    expect(await page.getByTestId('judge-url').count()).toBe(0);

    // Training now is a rules-only run: B hears nothing at all, A neither.
    await trainOneStep(1);
    expect(b.seen).toEqual([]);
    expect(a.seen).toEqual([]);

    // The visitor confirms B: the picker shows B, asks for a key for B, and does not offer A's.
    await page.getByTestId('judge-consent-use').click();
    await expect(page.getByTestId('judge-kind-remote').isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('judge-url').inputValue()).resolves.toBe(urlB);
    await expect(page.getByTestId('judge-key').inputValue()).resolves.toBe('');
    await expect(page.getByTestId('judge-remember').isChecked()).resolves.toBe(false);
    const hint = await page.getByTestId('judge-key-origin').textContent();
    expect(hint).toContain(`This key will be sent only to ${b.origin}`);
    expect(hint).toContain('keys entered for other sites are never sent here');
    expect(await consent.count()).toBe(0);

    await page.getByTestId('judge-key').fill(KEY_B);
    await trainOneStep(2);
    // B was asked (once per rollout), each time with B's key; A's key never reached it; A got nothing.
    expect(posts(b.seen).length).toBe(2);
    expect(posts(b.seen).map((s) => s.authorization)).toEqual([`Bearer ${KEY_B}`, `Bearer ${KEY_B}`]);
    expect(everything(b.seen)).not.toContain(KEY_A);
    expect(a.seen).toEqual([]);
    // A's key is still A's: back on A's URL the picker shows it, remembered; B's is not stored.
    await page.getByTestId('judge-url').fill(urlA);
    await expect(page.getByTestId('judge-key').inputValue()).resolves.toBe(KEY_A);
    const stored = await page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries(localStorage))));
    expect(stored).not.toContain(KEY_B);
    expect(opened.pageErrors).toEqual([]);
  });

  it('external grading: a self-judged step sends its graded group to the remote external judge, with that site\'s key, and the meta panel counts it', async () => {
    // Its own start (it also runs alone): the link's tiny experiment (one group of two rollouts, one
    // judge question), its remote judge kept off; the policy judges itself, and all of each step's
    // groups (fraction 1) also go to judge server A, with a key typed for A.
    const urlA = `${a.origin}/v1/chat/completions`;
    await page.evaluate((hash) => (location.hash = hash), linkWithJudgeAt(`${b.origin}/v1/chat/completions`, { seed: 7 }));
    await page.getByTestId('judge-consent-keep-off').click();
    const before = posts(a.seen).length;
    const seenByB = posts(b.seen).length;
    const runs = await page.getByTestId('run-row').count();
    await page.getByTestId('judge-kind-self').check();
    await page.getByTestId('judge-external').locator('summary').click();
    await page.getByTestId('judge-external-fraction').fill('1');
    await page.getByTestId('judge-external-fraction').blur();
    await expect(page.getByTestId('judge-external-kind').inputValue()).resolves.toBe('remote');
    await page.getByTestId('judge-external-url').fill(urlA);
    await page.getByTestId('judge-external-model').fill('judge-model');
    await page.getByTestId('judge-external-key').fill(KEY_A);
    await page.getByTestId('train').click();
    // The new run's row first (an earlier run may be current and finished), then its one step.
    await expect.poll(() => page.getByTestId('run-row').count(), { timeout: 60_000 }).toBe(runs + 1);
    await page.locator('[data-testid=run-row].current [data-testid=run-steps]').filter({ hasText: '1' }).waitFor({ timeout: 240_000 });
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 30_000 });
    // Two rollouts × one judge question, each asked of A with A's key; B heard nothing more.
    const asked = posts(a.seen).slice(before);
    expect(asked.length).toBe(2);
    expect(asked.map((s) => s.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_A}`]);
    expect(everything(a.seen)).not.toContain(KEY_B);
    expect(posts(b.seen).length).toBe(seenByB);
    // The meta panel: step 1 graded 2 rollouts with 2 external calls, none failed; one criterion row.
    await page.getByTestId('judge-meta').locator('summary').click();
    const row = page.getByTestId('external-step-row');
    await row.first().waitFor({ timeout: 10_000 });
    const cells = await row.first().locator('th, td').allTextContents();
    expect(cells.slice(0, 4)).toEqual(['1', '2', '2', '0']);
    expect(await page.getByTestId('external-criterion-row').locator('th').allTextContents()).toEqual(['polite']);
    expect(await page.getByTestId('external-grading-hint').textContent()).toContain('remote:judge-model');
    expect(opened.pageErrors).toEqual([]);
  });
});

