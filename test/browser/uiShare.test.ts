// Share links, lessons, the saved-runs list and exports, end to end in the page: a link round
// trip fills the builder (a <script> in a prompt stays text), bad links (future version,
// garbage) show an error and keep the experiment, a lesson hides controls, and a run trained on
// the fixture model is listed, survives a reload, exports its metrics and is deleted.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn } from '../helpers/appPage';
import { LESSONS } from '../../src/share/lessons';
import { decodeShareLink, encodeShareLink } from '../../src/share/link';
import { promptsToText } from '../../src/ui/lib/promptImport';
import { FIRST_VISIT } from '../../src/share/presets';

const PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
// The last ones came back changed before issue 19: trimmed, dropped, BOM stripped, CRLF made LF.
const SHARED_PROMPTS = [`${PAYLOAD} Say hi.`, 'Name a colour.', '  spaces at both ends  ', '   ', '\ufeffBOM first', 'CR\r\nLF and lone\rCR', 'e\u0301 😀 שלום \0'];
const FRAGMENT = encodeShareLink({
  experiment: { ...FIRST_VISIT.experiment, prompts: SHARED_PROMPTS, config: { ...FIRST_VISIT.experiment.config, seed: 4321, temperature: 0.7 } },
  lesson: { id: 'shared-lesson', title: 'A shared lesson', guidance: `Watch the reward. ${PAYLOAD}`, hidden_controls: ['model', 'top_p'] },
});

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp(`/${FRAGMENT}`, { acceptDialogs: true }));
});
afterAll(async () => {
  await opened?.close();
});

const promptsText = () => page.locator('#builder textarea').first().inputValue();
const settingValue = (key: string) => page.getByTestId(`setting-${key}`).locator('input').inputValue();

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

/** Changes only the fragment: the page opens the new link without reloading. */
async function openFragment(fragment: string) {
  await page.evaluate((f) => (location.hash = f), fragment);
}

describe('share links', () => {
  it('a link recreates the experiment and its lesson; its text stays text', async () => {
    expect(await promptsText()).toBe(promptsToText(SHARED_PROMPTS));
    expect(await settingValue('seed')).toBe('4321');
    expect(await settingValue('temperature')).toBe('0.7');
    const criteria = await page.getByTestId('criterion-text').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    expect(criteria).toEqual((FIRST_VISIT.experiment.rubric as { criteria: { text: string }[] }).criteria.map((c) => c.text));
    // Lesson mode: guidance as text, hidden controls gone.
    expect(await page.getByTestId('lesson-guidance').textContent()).toBe(`Watch the reward. ${PAYLOAD}`);
    await expect(page.getByTestId('model-section').count()).resolves.toBe(0);
    await expect(page.getByTestId('setting-top_p').count()).resolves.toBe(0);
    await expect(page.getByTestId('setting-top_k').count()).resolves.toBe(1);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    await expect(page.locator('#builder script, [data-testid=lesson-guide] img').count()).resolves.toBe(0);
    await expect(page.getByTestId('link-error').count()).resolves.toBe(0);

    // Share gives back a link that decodes to the same experiment and lesson.
    await page.getByTestId('share').click();
    const link = await page.getByTestId('share-link').inputValue();
    expect(link).toMatch(/#x=1\./);
    const back = decodeShareLink(link);
    expect(back.experiment.prompts).toEqual(SHARED_PROMPTS);
    expect(back.experiment.config).toMatchObject({ seed: 4321, temperature: 0.7 });
    expect(back.lesson).toMatchObject({ id: 'shared-lesson', hidden_controls: ['model', 'top_p'] });
  });

  it('a future-version or damaged link shows an error and keeps the experiment', async () => {
    await openFragment('#x=2.AAAA');
    const error = page.getByTestId('link-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('newer version of Rubric Playground');
    expect(await promptsText()).toBe(promptsToText(SHARED_PROMPTS));

    await openFragment('#x=1.this*is!not~base64');
    await error.filter({ hasText: 'damaged' }).waitFor();
    await openFragment(`#x=1.${'A'.repeat(200_000)}`);
    await error.filter({ hasText: 'characters long' }).waitFor();
    expect(await promptsText()).toBe(promptsToText(SHARED_PROMPTS));
    expect(await settingValue('seed')).toBe('4321');
    expect(opened.pageErrors).toEqual([]);
  });

  it('a link\'s black-box teacher endpoint stays off until confirmed, its key never enters a link, and a stored-responses file is checked', async () => {
    const endpoint = { url: 'https://teacher.example.com/v1/chat/completions', model: 'big-1' };
    const config = { ...FIRST_VISIT.experiment.config, distillation: { teacher: 'black_box', teacher_endpoint: endpoint } };
    await openFragment(encodeShareLink({ experiment: { ...FIRST_VISIT.experiment, config } }));
    await page.getByTestId('teacher-consent').waitFor();
    expect(await page.getByTestId('teacher-consent-origin').textContent()).toBe('https://teacher.example.com');
    expect(await page.getByTestId('setting-distillation.teacher').locator('select').inputValue()).toBe('off');
    await page.getByTestId('teacher-consent-use').click();
    expect(await page.getByTestId('teacher-url').inputValue()).toBe(endpoint.url);
    await page.getByTestId('teacher-key').fill('sk-teacher-secret');
    const shared = async () => {
      await page.getByTestId('share').click();
      await page.getByTestId('share-link').waitFor();
      return page.getByTestId('share-link').inputValue();
    };
    const link = await shared();
    expect(decodeShareLink(link).experiment.config.distillation).toEqual({ teacher: 'black_box', teacher_endpoint: endpoint });
    expect(JSON.stringify(decodeShareLink(link))).not.toContain('sk-teacher-secret');

    // A file of stored responses instead: a bad one is refused whole, naming its line; a good one replaces the endpoint.
    await page.getByTestId('teacher-source-file').check();
    const file = (text: string) => ({ name: 'teacher.jsonl', mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.getByTestId('teacher-responses-file').setInputFiles(file('{"prompt": "a", "response": "b"}\n{"prompt": "c"}\n'));
    expect(await page.getByTestId('teacher-responses-error').textContent()).toBe('The teacher\'s responses file "teacher.jsonl" was not used: line 2: response: missing');
    const prompt = FIRST_VISIT.experiment.prompts[0];
    await page.getByTestId('teacher-responses-file').setInputFiles(file(JSON.stringify({ prompt, response: 'A teacher\'s answer.' })));
    await page.getByTestId('teacher-responses-summary').filter({ hasText: '1 response for 1 prompt' }).waitFor();
    await expect(page.getByTestId('teacher-responses-error').count()).resolves.toBe(0);
    expect(decodeShareLink(await shared()).experiment.config.distillation).toEqual({ teacher: 'black_box', teacher_responses: [{ prompt, response: 'A teacher\'s answer.' }] });
    expect(opened.pageErrors).toEqual([]);
  });
});

describe('lessons', () => {
  it('a lesson loads its experiment, shows its guidance and hides its controls', async () => {
    // An earlier case may have left a lesson open (or opened a link without one): start outside lessons.
    if ((await page.getByTestId('leave-lesson').count()) > 0) await page.getByTestId('leave-lesson').click();
    await expect(page.getByTestId('setting-top_p').count()).resolves.toBe(1);
    await expect(page.getByTestId('model-section').count()).resolves.toBe(1);
    const lesson = LESSONS[0];
    await page.getByTestId('lessons').locator('summary').click();
    await page.getByTestId(`lesson-${lesson.id}`).click();
    expect(await page.getByTestId('lesson-guidance').textContent()).toBe(lesson.shared.lesson!.guidance);
    expect(await promptsText()).toBe(lesson.shared.experiment.prompts.join('\n'));
    for (const control of lesson.shared.lesson!.hidden_controls.filter((c) => !['model', 'prompts', 'rubric', 'judge'].includes(c))) {
      await expect(page.getByTestId(`setting-${control}`).count(), control).resolves.toBe(0);
    }
    await expect(page.getByTestId('model-section').count()).resolves.toBe(lesson.shared.lesson!.hidden_controls.includes('model') ? 0 : 1);
  });
});

describe('saved runs', () => {
  it('lists a trained run, keeps it across a reload, exports its metrics and deletes it', async () => {
    await page.evaluate(() => history.replaceState(null, '', '/'));
    await page.reload();
    await page.getByTestId('train').waitFor({ timeout: 180_000 });
    await expect(page.getByTestId('run-row').count()).resolves.toBe(0);
    await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '2'], ['max_completion_length', '3'], ['max_steps', '1']]) {
      await setSetting(key, value);
    }
    await page.getByTestId('train').click();
    await page.getByTestId('run-status').filter({ hasText: 'Finished' }).waitFor({ timeout: 120_000 });
    const row = page.getByTestId('run-row');
    await row.getByTestId('run-steps').filter({ hasText: '1' }).waitFor({ timeout: 10_000 });
    expect(await row.count()).toBe(1);
    expect(await page.getByTestId('storage-used').textContent()).toMatch(/uses .* of /);

    const downloaded = page.waitForEvent('download');
    await page.getByTestId('export-csv').click();
    const csv = readFileSync((await (await downloaded).path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toMatch(/^step,reward,/);
    expect(csv.trim().split('\r\n').length).toBe(2);

    // Rename, then reload: the run is still there, with its name.
    await row.getByTestId('run-rename').click();
    await page.getByTestId('run-name-input').fill('my <b>first</b> run');
    await page.getByTestId('run-name-save').click();
    await row.getByTestId('run-name').filter({ hasText: 'my <b>first</b> run' }).waitFor();
    await page.reload();
    await page.getByTestId('run-row').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('run-name').textContent()).toBe('my <b>first</b> run');
    expect(await page.getByTestId('run-steps').textContent()).toBe('1');

    // Reopen: its metrics fill the charts.
    await page.getByTestId('run-open').click();
    await page.locator('[data-testid=chart-reward][data-points="1"]').waitFor({ timeout: 10_000 });
    await page.getByTestId('viewing').waitFor();

    await page.getByTestId('run-delete').click();
    await page.getByTestId('run-row').waitFor({ state: 'detached', timeout: 10_000 });
    // Gone from IndexedDB too, not just from the list.
    const left = await page.evaluate(
      () =>
        new Promise<number>((resolve, reject) => {
          const req = indexedDB.open('rubric-playground');
          req.onerror = () => reject(req.error);
          req.onsuccess = () => {
            const get = req.result.transaction('runs').objectStore('runs').count();
            get.onsuccess = () => (resolve(get.result), req.result.close());
          };
        }),
    );
    expect(left).toBe(0);
    expect(opened.pageErrors).toEqual([]);
  });
});
