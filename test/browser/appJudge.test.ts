// The judge picker never leaks the remote judge's API key: a link opens an experiment with a
// remote judge (off until the visitor confirms it) and a judge-question criterion; with a key
// entered, the run's judge requests (to a stand-in endpoint the browser routes) carry it, while
// the share link, the exported run file, the saved run (all of IndexedDB) and localStorage hold
// the judge's URL and model, never the key. Only ticking "remember on this device" stores it,
// under its origin; unticking removes it.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { base64ToBytes, decodeShareLink, encodeShareLink, inflateLimited } from '../../src/share/link';
import { FIRST_VISIT } from '../../src/share/presets';
import { indexedDbDump as dumpIndexedDb } from '../helpers/appPage';

const SHOTS = join(repoRoot, 'test-results');
const KEY = 'sk-test-7Qz9-DO-NOT-LEAK-4f1e';
const URL_ = 'https://judge.example/v1/chat/completions';
const SLOT = 'rubric-playground.judge-key:https://judge.example';
const JUDGE = { kind: 'remote', url: URL_, model: 'judge-model' };
const RUBRIC = FIRST_VISIT.experiment.rubric as { name: string; criteria: unknown[] };
const FRAGMENT = encodeShareLink({
  experiment: {
    ...FIRST_VISIT.experiment,
    model: '/test/fixtures/tiny-byte-gpt2/',
    rubric: { ...RUBRIC, criteria: [...RUBRIC.criteria, { id: 'polite', text: 'Is polite', weight: 1, tier: 'important', judge_question: 'Is the answer polite?' }] },
    judge: JUDGE,
    config: { ...FIRST_VISIT.experiment.config, num_generations: 2, generation_batch_size: 4, max_completion_length: 3, max_steps: 1 },
  } as typeof FIRST_VISIT.experiment,
});
/** What the stand-in judge endpoint received: each request's Authorization header. */
const authorizations: (string | undefined)[] = [];

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  opened = await openPage(`/${FRAGMENT}`);
  page = opened.page;
  // The remote judge: answers "yes" to every question, with CORS headers like a real API.
  await page.context().route(`${URL_}*`, async (route) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST, OPTIONS' };
    if (route.request().method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
    authorizations.push(route.request().headers()['authorization']);
    return route.fulfill({ status: 200, headers: cors, contentType: 'application/json', body: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'yes' } }] }) });
  });
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
});
afterAll(async () => {
  await opened?.close();
});

async function chooseRemote() {
  await page.getByTestId('judge-kind-remote').check();
  await page.getByTestId('judge-url').fill(URL_);
  await page.getByTestId('judge-remote-model').fill('judge-model');
}

const localStorageDump = () => page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries(localStorage))));

const indexedDbDump = () => dumpIndexedDb(page);

describe('judge picker', () => {
  it('a remote judge with a key: its requests carry the key; the link, the run file and the saved run never do', async () => {
    // The link's remote judge waits, off, for the visitor to confirm its endpoint; then it is in the picker.
    await expect(page.getByTestId('judge-kind-rules').isChecked()).resolves.toBe(true);
    expect(await page.getByTestId('judge-consent-url').textContent()).toBe(URL_);
    await page.getByTestId('judge-consent-use').click();
    await expect(page.getByTestId('judge-kind-remote').isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('judge-url').inputValue()).resolves.toBe(URL_);
    await expect(page.getByTestId('judge-remote-model').inputValue()).resolves.toBe('judge-model');
    expect(await page.getByTestId('judge-section').textContent()).toContain('1 in this rubric');
    // Without a URL the experiment is invalid: Train is blocked and the field says why.
    await page.getByTestId('judge-url').fill('');
    await expect(page.getByTestId('train').isEnabled()).resolves.toBe(false);
    expect(await page.getByTestId('judge-section').getByTestId('issues').textContent()).toMatch(/Judge\b.*: must be an http\(s\) URL/);
    await page.getByTestId('judge-url').fill(URL_);
    await page.getByTestId('judge-key').fill(KEY);
    await expect(page.getByTestId('judge-key').getAttribute('type')).resolves.toBe('password');
    expect(await page.getByTestId('judge-remote-warning').textContent()).toContain('sends every prompt and completion');
    await expect(page.getByTestId('train').isEnabled()).resolves.toBe(true);
    await page.getByTestId('judge-section').screenshot({ path: join(SHOTS, 'app-judge-picker.png') });

    // Share link: the judge travels, the key does not (checked in the decompressed payload too).
    await page.getByTestId('share').click();
    const link = await page.getByTestId('share-link').inputValue();
    expect(link).not.toContain(KEY);
    const payload = new TextDecoder().decode(inflateLimited(base64ToBytes(link.slice(link.indexOf('#x=1.') + 5), true), 2_000_000));
    expect(payload).toContain('judge-model');
    expect(payload).not.toContain(KEY);
    expect(decodeShareLink(link).experiment.judge).toEqual(JUDGE);
    expect(await localStorageDump()).not.toContain(KEY);

    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 110_000 });
    await page.getByTestId('run-row').getByTestId('run-steps').filter({ hasText: '1' }).waitFor({ timeout: 10_000 });
    // The judge was asked (once per rollout) with the key, and said yes.
    expect(authorizations.length).toBe(4);
    expect(authorizations.every((a) => a === `Bearer ${KEY}`)).toBe(true);
    const polite = await page.locator('[data-testid=chip]').filter({ hasText: 'polite' }).evaluateAll((els) => els.map((e) => e.getAttribute('data-verdict')));
    expect(polite).toEqual(['pass', 'pass', 'pass', 'pass']);

    const download = page.waitForEvent('download');
    await page.getByTestId('export-run').click();
    const runFile = readFileSync((await (await download).path())!, 'utf8');
    expect(runFile).not.toContain(KEY);
    expect((JSON.parse(runFile) as { experiment: { judge?: unknown } }).experiment.judge).toEqual(JUDGE);
    const db = await indexedDbDump();
    expect(db).toContain('judge-model');
    expect(db).not.toContain(KEY);
    expect(await localStorageDump()).not.toContain(KEY);
    expect(await page.evaluate(() => location.href)).not.toContain(KEY);
    expect(opened.pageErrors).toEqual([]);
  });

  it('"remember on this device" stores the key for its origin only while ticked', async () => {
    await page.getByTestId('judge-remember').check();
    expect(JSON.parse(await localStorageDump())).toMatchObject({ [SLOT]: KEY });

    // After a reload the builder's saved draft (the visitor's own, not a link) brings the remote
    // judge back, and the key remembered for its origin is filled in; so it is after choosing
    // rules only and then the same endpoint again.
    await page.goto(new URL('/', page.url()).href);
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    await expect(page.getByTestId('judge-kind-remote').isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('judge-key').inputValue()).resolves.toBe(KEY);
    await page.getByTestId('judge-kind-rules').check();
    await chooseRemote();
    await expect(page.getByTestId('judge-key').inputValue()).resolves.toBe(KEY);
    await expect(page.getByTestId('judge-remember').isChecked()).resolves.toBe(true);

    // Another site: the key is not offered from storage for it, nor stored under it.
    await page.getByTestId('judge-url').fill('http://127.0.0.1:9/v1/chat/completions');
    await expect(page.getByTestId('judge-remember').isChecked()).resolves.toBe(false);
    const judgeKeySlots = (dump: string) => Object.keys(JSON.parse(dump)).filter((k) => k.startsWith('rubric-playground.judge-key:'));
    expect(judgeKeySlots(await localStorageDump())).toEqual([SLOT]);

    await page.getByTestId('judge-url').fill(URL_);
    await expect(page.getByTestId('judge-remember').isChecked()).resolves.toBe(true);
    await page.getByTestId('judge-remember').uncheck();
    expect(await localStorageDump()).not.toContain(KEY);
    expect(opened.pageErrors).toEqual([]);
  });
});
