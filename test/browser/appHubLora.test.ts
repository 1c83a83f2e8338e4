// LoRA on a Hugging Face model in the app: with use_peft on, hf:rubric-fixtures/tiny-gpt2
// (served by Vite as ?hub_endpoint=/test/fixtures/hub) trains one step, then "Download adapter
// (PEFT)" saves a zip with adapter_model.safetensors and an adapter_config.json of peft_type
// LORA carrying the run's LoRA settings, and "Download merged model" a zip with the merged
// weights, config and tokenizer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { openApp, setSettingOn, SHOTS } from '../helpers/appPage';


let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/?hub_endpoint=/test/fixtures/hub'));
});
afterAll(async () => {
  await opened?.close();
});

const setSetting = (key: string, value: string) => setSettingOn(page, key, value);

/** The files of the zip a click downloads. */
async function downloadZip(testId: string): Promise<{ name: string; files: Record<string, Uint8Array> }> {
  const download = page.waitForEvent('download', { timeout: 60_000 });
  await page.getByTestId(testId).click();
  const d = await download;
  return { name: d.suggestedFilename(), files: unzipSync(new Uint8Array(readFileSync((await d.path())!))) };
}

/** The tensor names in a safetensors file's header. */
function tensorNames(bytes: Uint8Array): string[] {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(strFromU8(bytes.subarray(8, 8 + length))) as Record<string, unknown>;
  return Object.keys(header).filter((k) => k !== '__metadata__');
}

describe('LoRA on a Hugging Face model', () => {
  it('trains one step with use_peft and exports the PEFT adapter and the merged model', async () => {
    await page.getByTestId('model-source-hub').check();
    await page.getByTestId('hub-input').fill('rubric-fixtures/tiny-gpt2');
    await page.getByTestId('prompts').fill('Hi.\nSay yes.');
    for (const [key, value] of [['num_generations', '2'], ['generation_batch_size', '4'], ['max_completion_length', '2']]) await setSetting(key, value);
    // Before LoRA is on, neither its options nor the adapter export show.
    expect(await page.getByTestId('setting-lora_r').count()).toBe(0);
    await page.getByTestId('hub-use-lora').click();
    await expect(page.getByTestId('setting-use_peft').locator('input').isChecked()).resolves.toBe(true);
    expect(await page.getByTestId('hub-lora-hint').count()).toBe(0);
    await setSetting('lora_r', '4');
    await setSetting('lora_alpha', '8');
    await page.getByTestId('setting-lora_target_modules').locator('input').fill('c_attn, c_fc');
    await page.getByTestId('setting-lora_target_modules').locator('input').press('Tab');
    expect(await page.getByTestId('setting-lora_target_modules').locator('[role="tooltip"]').textContent()).toContain('PEFT: target_modules');

    await page.getByTestId('step').click();
    await page.getByTestId('run-status').filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 90_000 });
    await page.screenshot({ path: join(SHOTS, 'app-hub-lora.png'), fullPage: true });

    const adapter = await downloadZip('export-adapter');
    expect(adapter.name).toMatch(/-adapter\.zip$/);
    expect(Object.keys(adapter.files).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    const config = JSON.parse(strFromU8(adapter.files['adapter_config.json'])) as Record<string, unknown>;
    expect(config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8 });
    expect([...(config.target_modules as string[])].sort()).toEqual(['c_attn', 'c_fc']);
    const names = tensorNames(adapter.files['adapter_model.safetensors']);
    expect(names.length).toBe(2 * 2 * 2); // 2 layers × 2 modules × (A, B)
    expect(names.every((n) => /lora_[AB]\.weight$/.test(n))).toBe(true);

    const merged = await downloadZip('export-merged');
    expect(merged.name).toMatch(/-model\.zip$/);
    expect(Object.keys(merged.files)).toEqual(expect.arrayContaining(['model.safetensors', 'config.json', 'tokenizer.json']));
    expect(JSON.parse(strFromU8(merged.files['config.json'])).model_type).toBe('gpt2');
    expect(tensorNames(merged.files['model.safetensors']).some((n) => n.includes('lora'))).toBe(false);
    expect(await page.getByTestId('export-message').textContent()).toMatch(/^Saved .*-model\.zip: config\.json, model\.safetensors/);
    expect(opened.pageErrors).toEqual([]);
  });
});
