// A Hugging Face model in the app, end to end, against the Hub-layout fixtures Vite serves
// (?hub_endpoint=/test/fixtures/hub): choose hf:rubric-fixtures/tiny-gpt2, see the memory
// estimate, train one step while the download panel shows progress, see the model in
// "Downloaded models" with its size, train again from the cache, delete it; a download held
// back by the network is cancelled; a too-large setting disables Train with the estimate's
// message; files picked from disk become a "local:" model, and a "local:" id without files
// says to pick them again.
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';

const FIXTURE = join(repoRoot, 'test/fixtures/hub/rubric-fixtures/tiny-gpt2/resolve/main');
const FIXTURE_FILES = readdirSync(FIXTURE).map((f) => join(FIXTURE, f));
const FIXTURE_BYTES = FIXTURE_FILES.reduce((s, f) => s + statSync(f).size, 0);
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/?hub_endpoint=/test/fixtures/hub', { acceptDialogs: true }));
});
afterAll(async () => {
  await opened?.close();
});

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

const status = () => page.getByTestId('run-status');
const memory = () => page.getByTestId('memory');
const bytesOf = async (testId: string) => Number(await page.getByTestId(testId).getAttribute('data-bytes'));

/** Waits for the memory estimate of the experiment as it is now. */
async function estimated(): Promise<void> {
  await page.waitForFunction(() => {
    const m = document.querySelector('[data-testid="memory"]');
    return m && (m.getAttribute('data-state') === 'ready' || m.getAttribute('data-state') === 'failed') && !m.querySelector('.stale');
  }, null, { timeout: 30_000 });
}

/** axe-core's serious and critical violations in the page, one line per element. */
async function audit(): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] };
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id}: ${n.target.join(' ')}`));
}

/** Records every state the download panel shows (it may pass quickly), from now on. */
async function watchDownloadPanel(): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { downloadStates: string[] }).downloadStates = seen;
    const note = () => {
      const state = document.querySelector('[data-testid="download"]')?.getAttribute('data-state') ?? 'none';
      if (seen.at(-1) !== state) seen.push(state);
    };
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
    note();
  });
  return () => page.evaluate(() => (window as unknown as { downloadStates: string[] }).downloadStates);
}

describe('a Hugging Face model in the app', () => {
  it('estimates memory, downloads with progress, trains a step, lists the cached model, reloads it from the cache and deletes it', async () => {
    await page.getByTestId('model-source-hub').check();
    await page.getByTestId('hub-input').fill('rubric-fixtures/tiny-gpt2');
    await expect(page.getByTestId('model-input').inputValue()).resolves.toBe('hf:rubric-fixtures/tiny-gpt2');
    expect(await page.getByTestId('hub-status').textContent()).toContain('rubric-fixtures/tiny-gpt2: downloaded once from /test/fixtures/hub');
    // The fixture's context is 32 tokens: short prompts, two-token completions.
    await page.getByTestId('prompts').fill('Hi.\nSay yes.');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '2'], ['max_steps', '3']]) await setSetting(key, value);

    await estimated();
    expect(await memory().getAttribute('data-state')).toBe('ready');
    for (const part of ['memory-total', 'memory-weights', 'memory-optimizer', 'memory-activations', 'memory-logits', 'memory-sampling']) {
      expect(await bytesOf(part), part).toBeGreaterThan(0);
    }
    // The fixture's 2 layers × 32 wide (+ 273 × 32 embeddings) is about 150 KB of f32 weights.
    expect(await bytesOf('memory-weights')).toBeGreaterThan(100_000);
    expect(await bytesOf('memory-weights')).toBeLessThan(1_000_000);
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(false);

    const downloadStates = await watchDownloadPanel();
    await page.getByTestId('step').click();
    await status().filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 90_000 });
    expect(await downloadStates()).toEqual(['none', 'active', 'done']);
    const bar = page.getByTestId('download-progress');
    expect(await bar.getAttribute('role')).toBe('progressbar');
    expect(await bar.getAttribute('aria-valuenow')).toBe('100');
    expect(await bar.getAttribute('aria-valuetext')).toMatch(/^100%: .* of /);
    // config.json was already cached by the memory estimate; the other files came over the network.
    expect(await page.getByTestId('download-summary').textContent()).toContain(`${FIXTURE_FILES.length - 1} files downloaded, 1 from this browser's cache`);

    const row = page.getByTestId('cached-row').filter({ has: page.locator('code', { hasText: 'rubric-fixtures/tiny-gpt2' }) });
    await row.waitFor({ timeout: 20_000 });
    expect(Number(await row.getAttribute('data-bytes'))).toBe(FIXTURE_BYTES);
    expect(await row.getByTestId('cached-size').textContent()).toMatch(/KiB$/);
    expect(await row.textContent()).toContain('from /test/fixtures/hub');
    await page.screenshot({ path: join(SHOTS, 'app-hub-downloaded.png'), fullPage: true });
    // The Hub field, the finished download panel, the memory estimate and the cached-models list.
    expect(await audit()).toEqual([]);

    // A new run of the same model reads every file from the cache.
    await page.getByTestId('stop').click();
    await status().filter({ hasText: 'Stopped' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('step').click();
    await status().filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 90_000 });
    expect(await page.getByTestId('download-summary').textContent()).toContain(`All ${FIXTURE_FILES.length} files came from this browser's cache`);

    await row.getByTestId('cached-delete').click();
    await page.getByTestId('cached-empty').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('cached-row').count()).toBe(0);
    expect(opened.pageErrors).toEqual([]);
  });

  it('cancels a download the network holds back', async () => {
    await page.getByTestId('stop').click();
    let held: Route | null = null;
    const weights = '**/rubric-fixtures/tiny-gpt2/resolve/main/model.safetensors';
    await page.context().route(weights, (route) => {
      held = route;
    });
    try {
      await page.getByTestId('step').click();
      // The small files came through; the weights' response is held.
      await expect.poll(() => held !== null, { timeout: 60_000 }).toBe(true);
      await page.getByTestId('download').and(page.locator('[data-state="active"]')).waitFor({ timeout: 30_000 });
      await page.getByTestId('download-cancel').click();
      await page.getByTestId('download').and(page.locator('[data-state="cancelled"]')).waitFor({ timeout: 30_000 });
      expect(await page.getByTestId('run-error').textContent()).toContain('the model download was cancelled');
      expect(await page.getByTestId('download-summary').textContent()).toMatch(/file.* had arrived; finished files stay in this browser's cache/);
      expect(await page.getByTestId('download-progress').count()).toBe(0);
      expect(await status().textContent()).toBe('Ready.');
    } finally {
      await page.context().unroute(weights);
      await (held as Route | null)?.abort().catch(() => {});
    }
    expect(opened.pageErrors).toEqual([]);
  });

  it('disables Train with the estimate\'s message when the run cannot fit or cannot run on the model', async () => {
    await setSetting('generation_batch_size', '400000');
    await page.getByTestId('memory-too-big').waitFor({ timeout: 30_000 });
    const message = await page.getByTestId('memory-too-big').textContent();
    expect(message).toMatch(/exceeds this GPU's max(BufferSize|StorageBufferBindingSize)|more than the .* available/);
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('step').isDisabled()).resolves.toBe(true);
    expect(await page.getByTestId('train-blocker').textContent()).toBe(message);
    await page.screenshot({ path: join(SHOTS, 'app-hub-too-big.png'), fullPage: true });

    await setSetting('generation_batch_size', '4');
    await setSetting('max_completion_length', '40');
    await page.getByTestId('memory-error').filter({ hasText: "exceed this model's context of 32 tokens" }).waitFor({ timeout: 30_000 });
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(true);

    await setSetting('max_completion_length', '2');
    await estimated();
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(false);
    expect(await page.getByTestId('train-blocker').count()).toBe(0);

    // LoRA freezes the base: its gradients and AdamW moments shrink to the adapters'.
    const full = await bytesOf('memory-optimizer');
    await page.getByTestId('setting-use_peft').locator('input').check();
    await page.getByTestId('setting-lora_r').waitFor();
    await page.waitForFunction((before) => Number(document.querySelector('[data-testid="memory-optimizer"]')?.getAttribute('data-bytes')) !== before, full, { timeout: 30_000 });
    expect(await bytesOf('memory-optimizer')).toBeLessThan(full / 4);
    await page.getByTestId('setting-use_peft').locator('input').uncheck();
    expect(opened.pageErrors).toEqual([]);
  });

  it('takes a model from picked files as a "local:" id, and asks for the files again when only the id is known', async () => {
    await page.getByTestId('model-source-local').check();
    await page.getByTestId('local-files').setInputFiles(FIXTURE_FILES);
    await page.getByTestId('local-message').filter({ hasText: `Picked ${FIXTURE_FILES.length} files` }).waitFor();
    await expect(page.getByTestId('model-input').inputValue()).resolves.toBe('local:model');
    await estimated();
    expect(await bytesOf('memory-weights')).toBeGreaterThan(100_000);
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(false);

    // As a link or a saved run would name it: the files are not in this page.
    await page.getByTestId('model-input').fill('local:from-a-link');
    await page.getByTestId('local-missing').waitFor();
    expect(await page.getByTestId('local-missing').textContent()).toContain('pick its folder (or files) again');
    await expect(page.getByTestId('train').isDisabled()).resolves.toBe(true);
    expect(await page.getByTestId('train-blocker').textContent()).toContain('local:from-a-link');
    await page.screenshot({ path: join(SHOTS, 'app-hub-local-missing.png'), fullPage: true });
    expect(await audit()).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
