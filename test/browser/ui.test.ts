// The app page as a visitor meets it: the first-visit experiment in the builder, the live
// "try it" score, invalid settings blocking Train with the parser's message, and model output
// and rubric text rendered as text, never as HTML. Training itself: uiTrain.test.ts.
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, openPage, repoRoot, type Harness, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { GrpoConfigError, parseGrpoConfig } from '../../src/rl/config';
import { FIRST_VISIT } from '../../src/share/presets';
import { tryItScored } from '../helpers/appPage';

const SHOTS = join(repoRoot, 'test-results');
const PAYLOAD = `<img src=x onerror="window.__pwned=1;alert('img')"><script>window.__pwned=2;alert('script')</script>`;

let opened: OpenedPage;
let page: Page;
const dialogs: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  opened = await openPage('/');
  page = opened.page;
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
});
afterAll(async () => {
  await opened?.close();
});

const criterion = (i: number) => page.getByTestId('criterion').nth(i);
const tryRow = (id: string) => page.locator(`[data-testid=tryit-row][data-criterion="${id}"]`);
const reward = () => page.getByTestId('tryit-reward').textContent();
/** "Try it" has scored the latest edit (see tryItScored). */
const settled = () => tryItScored(page, page.locator('[data-testid=tryit-table][data-scoring=false]'));

/** Types into a settings field and commits it (number fields commit on change, i.e. on Tab). */
async function setSetting(key: string, value: string) {
  const input = page.getByTestId(`setting-${key}`).locator('input');
  await input.fill(value);
  await input.press('Tab');
}

describe('app: first visit and the experiment builder', () => {
  it('shows the first-visit experiment with a Train button, and the GPU section folded', async () => {
    const exp = FIRST_VISIT.experiment;
    await expect(page.getByTestId('model-input').inputValue()).resolves.toBe(exp.model);
    await expect(page.getByTestId('prompts').inputValue()).resolves.toBe(exp.prompts.join('\n'));
    const criteria = (exp.rubric as { criteria: { text: string }[] }).criteria;
    await expect(page.getByTestId('criterion').count()).resolves.toBe(criteria.length);
    for (let i = 0; i < criteria.length; i++) {
      await expect(criterion(i).getByTestId('criterion-text').inputValue()).resolves.toBe(criteria[i].text);
    }
    await expect(page.getByTestId('setting-num_generations').locator('input').inputValue()).resolves.toBe('8');
    await expect(page.getByTestId('setting-max_completion_length').locator('input').inputValue()).resolves.toBe('48');
    const train = page.getByTestId('train');
    await expect(train.textContent()).resolves.toContain('Train');
    await expect(train.isEnabled()).resolves.toBe(true);
    await expect(page.getByTestId('train-blocked').count()).resolves.toBe(0);
    // The adapter and the self-check live in a closed "About this GPU" section.
    await expect(page.getByTestId('about-gpu').getAttribute('open')).resolves.toBeNull();
    await page.screenshot({ path: join(SHOTS, 'ui-first-visit.png'), fullPage: true });
    expect(opened.pageErrors).toEqual([]);
  });

  it('scores a typed response live, and a rule edit changes the score and the reward', async () => {
    await page.getByTestId('tryit-response').fill('The sea is wide and blue.');
    await settled();
    // short (w 2) met, asks (w 1) not, you (w 1) not, the all-caps pitfall not met: 2 / 4.
    await expect(tryRow('short').getByTestId('tryit-score').textContent()).resolves.toBe('1');
    await expect(tryRow('asks').getByTestId('tryit-score').textContent()).resolves.toBe('0');
    expect(await reward()).toMatch(/weighted_mean\): 0\.5\b/);

    // "Ends with ?" becomes "ends with ." : asks is met, 3 / 4.
    await criterion(1).getByTestId('rule-text').fill('.');
    await settled();
    await expect(tryRow('asks').getByTestId('tryit-score').textContent()).resolves.toBe('1');
    expect(await reward()).toMatch(/: 0\.75\b/);

    // At most 3 words: short fails, 1 / 4.
    await criterion(0).getByTestId('rule-max').fill('3');
    await settled();
    await expect(tryRow('short').getByTestId('tryit-score').textContent()).resolves.toBe('0');
    expect(await tryRow('short').textContent()).toContain('above max 3');
    expect(await reward()).toMatch(/: 0\.25\b/);

    // A new kind of rule: "you" becomes "count sentences, max 1" (1 sentence: met), 2 / 4.
    await criterion(2).getByTestId('rule-kind').selectOption('count');
    await criterion(2).getByTestId('rule-max').fill('1');
    await settled();
    await expect(tryRow('you').getByTestId('tryit-score').textContent()).resolves.toBe('1');
    expect(await reward()).toMatch(/: 0\.5\b/);
  });

  it('an invalid setting or rubric disables Train and shows the parser message', async () => {
    const train = page.getByTestId('train');
    await setSetting('generation_batch_size', '30');
    let expected = '';
    try {
      parseGrpoConfig({ ...FIRST_VISIT.experiment.config, generation_batch_size: 30 });
    } catch (e) {
      expected = (e as GrpoConfigError).message;
    }
    expect(expected).toBe('generation_batch_size: must be a multiple of num_generations (8), got 30');
    await expect(train.isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('train-blocked').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('run-status').locator('xpath=../..').getByTestId('issues').textContent()).resolves.toContain(expected);
    await expect(page.getByTestId('setting-generation_batch_size').textContent()).resolves.toContain(expected);
    await page.screenshot({ path: join(SHOTS, 'ui-invalid-setting.png'), fullPage: false });
    await train.locator('xpath=ancestor::section[1]').screenshot({ path: join(SHOTS, 'ui-train-blocked.png') });

    await page.getByTestId('setting-generation_batch_size').getByRole('button', { name: /reset/i }).click();
    await expect(train.isEnabled()).resolves.toBe(true);

    // An empty term list is the rubric parser's "needs at least one term".
    await page.getByTestId('criterion').nth(3).getByTestId('rule-kind').selectOption('contains');
    await criterion(3).getByTestId('rule-terms').fill('');
    await expect(train.isDisabled()).resolves.toBe(true);
    expect(await criterion(3).getByTestId('issues').textContent()).toMatch(/^Criterion 4 \(id "[a-z0-9_-]+"\), rule terms: needs at least one term/);
    await criterion(3).getByTestId('rule-terms').fill('SHOUT');
    await expect(train.isEnabled()).resolves.toBe(true);
  });

  it('imports prompts from a CSV file with a prompt column, replacing or appending', async () => {
    const file = page.getByTestId('prompts-file');
    await file.setInputFiles({ name: 'set.csv', mimeType: 'text/csv', buffer: Buffer.from('id,prompt\n1,"Hello, there"\n2,"Two\nlines"\n3,\n') });
    const prompts = () => page.getByTestId('prompts').inputValue();
    // Reading the file is asynchronous: poll until the editor shows the import.
    await expect.poll(prompts).toBe('Hello, there\nTwo\\nlines');
    expect(await page.getByText('Imported 2 prompts from set.csv (csv, 1 empty row skipped).').count()).toBe(1);
    await page.getByLabel('append to the list').check();
    await file.setInputFiles({ name: 'more.jsonl', mimeType: 'application/json', buffer: Buffer.from('{"prompt": "Third"}\n') });
    await expect.poll(prompts).toBe('Hello, there\nTwo\\nlines\nThird');
    await file.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('question\nq\n') });
    await page.getByText('Could not import bad.csv: no "prompt" column in the header (columns: question)').waitFor();
    expect(await prompts()).toBe('Hello, there\nTwo\\nlines\nThird');
  });

  it('renders rubric and prompt text containing HTML as text', async () => {
    await criterion(0).getByTestId('criterion-text').fill(PAYLOAD);
    await page.getByTestId('prompts').fill(`${PAYLOAD}\nSecond prompt`);
    await page.waitForTimeout(300);
    await settled();
    expect(await tryRow('short').textContent()).toContain(PAYLOAD);
    const state = await page.evaluate(() => ({
      imgs: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('#app script').length,
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
      option: document.querySelector('select option')?.textContent ?? '',
    }));
    expect(state).toEqual({ imgs: 0, scripts: 0, pwned: null, option: expect.any(String) });
    await expect(page.getByText(PAYLOAD, { exact: false }).first().isVisible()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});

describe('rollout inspector', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await openHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('shows completions and prompts with HTML as text, chips with reasons, filters and the prompt across steps', async () => {
    const seen: string[] = [];
    harness.page.on('dialog', (d) => {
      seen.push(d.message());
      void d.dismiss();
    });
    const completions = [`${PAYLOAD} tail`, 'fine and short', `<b>bold?</b> ${PAYLOAD} and more words here`, 'ok'];
    const r = await harness.runModule('/test/harness/cases/uiInspector.ts', 'hostileRollouts', { prompt: `Say ${PAYLOAD}`, completions });
    expect(r.completions).toEqual(completions);
    expect(r.headings[0]).toContain(`Say ${PAYLOAD}`);
    expect(r.imgs).toBe(0);
    expect(r.scripts).toBe(0);
    expect(r.pwned).toBeNull();
    expect(seen).toEqual([]);
    // Chips: (short, has_img) per rollout; short passes on even rollouts.
    expect(r.chips).toEqual(['pass', 'pass', 'fail', 'fail', 'pass', 'pass', 'fail', 'fail']);
    expect(r.tooltips[0]).toContain('score 1: within max 5');
    expect(r.tooltips[1]).toContain('found "<img"');
    expect(r.tooltips[1]).toContain('Mentions <img src=x onerror=alert(1)>');
    expect(r.before).toBe(4);
    expect(r.failingShort).toBe(2);
    expect(r.acrossHeadings).toEqual(['Step 0', 'Step 1']);
    expect(harness.pageErrors).toEqual([]);
  });
});

describe('src/ui layering and escaping (source checks)', () => {
  const uiRoot = join(repoRoot, 'src', 'ui');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : /\.(svelte|ts)$/.test(name) ? [path] : [];
    });
  const sources = [...files(uiRoot), join(repoRoot, 'src', 'main.ts')].map((path) => ({ path, text: readFileSync(path, 'utf8') }));

  it('finds the UI sources', () => {
    expect(sources.length).toBeGreaterThan(15);
  });

  it('never renders raw HTML ({@html}, innerHTML, outerHTML, insertAdjacentHTML)', () => {
    const offenders = sources.filter((s) => /\{@html\b|\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write/.test(s.text)).map((s) => relative(repoRoot, s.path));
    expect(offenders).toEqual([]);
  });

  it('imports nothing from src/gpu or src/ops', () => {
    const offenders: string[] = [];
    for (const { path, text } of sources) {
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+|new URL\(\s*)['"]([^'"]+)['"]/g)) {
        const spec = m[1];
        if (!spec.startsWith('.') && !spec.startsWith('/')) continue;
        const target = relative(join(repoRoot, 'src'), resolve(dirname(path), spec));
        if (/^(gpu|ops)(\/|$)/.test(target)) offenders.push(`${relative(repoRoot, path)} → ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check above would catch an offending import', () => {
    const spec = '../../gpu/runtime';
    const target = relative(join(repoRoot, 'src'), resolve(join(uiRoot, 'lib'), spec));
    expect(/^(gpu|ops)(\/|$)/.test(target)).toBe(true);
  });
});
