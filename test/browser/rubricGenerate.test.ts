// Drafting the rubric with a model in the page: the remote judge's endpoint (a stand-in the
// browser routes, OpenAI-compatible) answers the generation prompts. A truncated reply is shown as
// an error and changes nothing; a reply with prose around the JSON is a proposal that "Use it"
// puts in the editor; a criterion is decomposed into its parts. Then the fixture model drafts on
// our engine (a judge worker of its own, 64 reply tokens): its reply is an error saying why.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { encodeShareLink } from '../../src/share/link';
import { FIRST_VISIT } from '../../src/share/presets';

const URL_ = 'https://gen.example/v1/chat/completions';
const FRAGMENT = encodeShareLink({
  experiment: { ...FIRST_VISIT.experiment, model: '/test/fixtures/tiny-byte-gpt2/', judge: { kind: 'remote', url: URL_, model: 'gen-model' } } as typeof FIRST_VISIT.experiment,
});
const DRAFTED = {
  criteria: [
    { id: 'names_tides', text: 'Names the moon as the cause of tides and explains the pull', weight: 2, tier: 'essential', judge_question: 'Does it name the moon as the cause and explain the pull?' },
    { id: 'false_claim', text: 'States a false fact', weight: -1, tier: 'important', judge_question: 'Does it state a false fact?' },
  ],
};
const PARTS = {
  criteria: [
    { id: 'names_moon', text: 'Names the moon as the cause of tides', judge_question: 'Does it name the moon as the cause?' },
    { id: 'explains_pull', text: 'Explains the pull', judge_question: 'Does it explain the pull?' },
  ],
};

let opened: OpenedPage;
let page: Page;
/** The stand-in's next replies, in order; what it was asked. */
const replies: string[] = [];
const asked: { max_tokens?: number; messages: { content: string }[] }[] = [];

beforeAll(async () => {
  opened = await openPage(`/${FRAGMENT}`);
  page = opened.page;
  await page.context().route(`${URL_}*`, async (route) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST, OPTIONS' };
    if (route.request().method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
    asked.push(JSON.parse(route.request().postData() ?? '{}'));
    const content = replies.shift() ?? 'no reply scripted';
    return route.fulfill({ status: 200, headers: cors, contentType: 'application/json', body: JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }) });
  });
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
});
afterAll(async () => {
  await opened?.close();
});

describe('draft with a model', () => {
  it('asks the remote judge; malformed replies are errors, a proposal is used only on request', async () => {
    const section = page.getByTestId('rubric-generate');
    await section.locator('summary').click();
    // The link's remote judge waits for consent: until then drafting says what it needs.
    await section.getByTestId('generate-needs-judge').waitFor({ timeout: 30_000 });
    await page.getByTestId('judge-consent-use').click();
    await section.getByTestId('generate-draft').waitFor({ timeout: 30_000 });
    const before = await page.getByTestId('criterion').count();

    // Truncated JSON: an error naming it, the reply shown as text, the rubric untouched.
    replies.push(JSON.stringify(DRAFTED).slice(0, 80));
    await section.getByTestId('generate-draft').click();
    await section.getByTestId('generate-error').waitFor({ timeout: 30_000 });
    expect(await section.getByTestId('generate-error').textContent()).toMatch(/truncated/);
    expect(await page.getByTestId('criterion').count()).toBe(before);
    expect(asked[0].max_tokens).toBe(1500);
    expect(asked[0].messages[1].content).toContain('<prompt>');

    // Prose around one JSON object: a proposal of 2 criteria; "Use it" puts it in the editor.
    replies.push(`Here is a rubric:\n${JSON.stringify(DRAFTED)}\nGood luck!`);
    await section.getByTestId('generate-draft').click();
    await section.getByTestId('generate-proposal').waitFor({ timeout: 30_000 });
    expect(await section.getByTestId('generate-proposed').count()).toBe(2);
    expect(await page.getByTestId('criterion').count()).toBe(before);
    await section.getByTestId('generate-use').click();
    await section.getByTestId('generate-proposal').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await page.getByTestId('criterion').count()).toBe(2);
    expect(await page.getByTestId('criterion').nth(0).getByTestId('criterion-text').inputValue()).toBe(DRAFTED.criteria[0].text);

    // Decompose the compound first criterion: its parts share its weight.
    await section.getByTestId('generate-decompose-pick').selectOption('0');
    replies.push('```json\n' + JSON.stringify(PARTS) + '\n```');
    await section.getByTestId('generate-decompose').click();
    await section.getByTestId('generate-proposal').waitFor({ timeout: 30_000 });
    await section.getByTestId('generate-use').click();
    await section.getByTestId('generate-proposal').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await page.getByTestId('criterion').count()).toBe(3);
    expect(await page.getByTestId('criterion').nth(1).getByTestId('criterion-weight').inputValue()).toBe('1');
    expect(asked[2].messages[1].content).toContain('Names the moon as the cause of tides and explains the pull');

    // The contrast from training needs a trained step: before one, it says so and asks nothing.
    await section.getByTestId('generate-from-run').click();
    expect(await section.getByTestId('generate-picked').textContent()).toMatch(/No rollouts yet/);
    expect(asked).toHaveLength(3);
    expect(opened.pageErrors).toEqual([]);
  });

  it('a model on our engine (the fixture) drafts in a judge worker; its babble is an error that says why', async () => {
    const section = page.getByTestId('rubric-generate');
    const before = await page.getByTestId('criterion').count();
    const asks = asked.length;
    await section.getByTestId('generate-source-engine').check();
    // The engine model defaults to the policy's: the link's fixture, a 2-layer byte model with a 128-token context.
    expect(await section.getByTestId('generate-engine-model').getAttribute('placeholder')).toBe('/test/fixtures/tiny-byte-gpt2/');
    const t0 = Date.now();
    await section.getByTestId('generate-draft').click();
    await section.getByTestId('generate-error').waitFor({ timeout: 120_000 });
    console.log(`engine draft on the fixture: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const error = (await section.getByTestId('generate-error').textContent()) ?? '';
    expect(error).toMatch(/The model's rubric was not used/);
    expect(error).toMatch(/did not write a usable rubric/);
    expect(error).toMatch(/holds 128 tokens: it saw only 64 of the request's \d+ tokens/);
    expect(await page.getByTestId('criterion').count()).toBe(before);
    expect(await section.getByTestId('generate-proposal').count()).toBe(0);
    // The remote endpoint was not asked.
    expect(asked).toHaveLength(asks);
    await section.getByTestId('generate-source-remote').check();
    expect(opened.pageErrors).toEqual([]);
  });

  it('fork_precision_recall: the editor offers recall items, and training waits for one', async () => {
    await page.getByTestId('setting-reward_aggregation.method').locator('select').selectOption('fork_precision_recall');
    await page.getByTestId('setting-reward_aggregation.fork_beta').waitFor({ timeout: 30_000 });
    // No criterion is a recall item yet: the experiment is refused, saying why.
    await expect.poll(() => page.getByTestId('train').isEnabled(), { timeout: 30_000 }).toBe(false);
    expect(await page.locator('body').textContent()).toMatch(/needs at least one criterion marked as a recall item/);
    await page.getByTestId('criterion').nth(0).getByTestId('criterion-recall').check();
    await expect.poll(() => page.getByTestId('train').isEnabled(), { timeout: 30_000 }).toBe(true);
    expect(opened.pageErrors).toEqual([]);
  });
});
