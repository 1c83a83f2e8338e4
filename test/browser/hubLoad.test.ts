// Hub loading end to end in a real page: each fixture of test/fixtures/hub (tiny random
// checkpoints in the Hub's file layout, scripts/hub_fixtures.py) is fetched through
// fetchHubModelFiles from Vite, loaded with loadModel, and its logits on golden.json's prompt
// compared with the float64 PyTorch forward of the same stored weights (F32, sharded F32,
// BF16, F16). Tolerance: 1e-5 absolute on logits of size ~2 (f32 engine vs f64 reference:
// about 1e-6 here). Goldens from the unrounded weights differ by 1e-2 (BF16) and 2e-3 (F16),
// so a loader that widened the halves wrongly would fail. Then the Cache API: the second
// load makes no request, the listing shows the bytes, deleting removes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

const CASES = '/test/harness/cases/hubLoad.ts';
const golden = JSON.parse(readFileSync(new URL('../fixtures/hub/golden.json', import.meta.url), 'utf8')) as { fixtures: { id: string }[] };

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe.each(golden.fixtures.map((f) => f.id))('%s through the Hub code path', (id) => {
  it('matches the golden logits, then loads from the cache, lists and deletes it', async () => {
    const r = await harness.runModule(CASES, 'hubGolden', { id });
    expect(r.promptIds).toEqual(r.goldenPromptIds);
    expect(r.rowsCompared).toBe(3);
    expect(r.maxAbsExpected).toBeGreaterThan(0.05); // the logits are not all ~0
    expect(r.maxAbsError, `${id} (${r.dtype}, ${r.architecture})`).toBeLessThan(1e-5);

    expect(r.first.cache).toBe('used');
    expect(r.first.requests).toBeGreaterThanOrEqual(r.first.files.length);
    expect(r.progressFiles).toEqual(r.first.files);
    expect(r.progressFinalTotal).toBe(r.first.networkBytes);
    expect(r.second).toEqual({ requests: 0, cachedBytes: r.first.networkBytes, networkBytes: 0 });
    expect(r.listedBytes).toBe(r.first.networkBytes);
    expect(r.listedFiles).toBe(r.first.files.length);
    expect(r.deleted).toEqual({ files: r.first.files.length, bytes: r.first.networkBytes });
    expect(r.afterDelete).toBe(false);
  });
});

it('names a model the server does not have, and cancels a download', async () => {
  const r = await harness.runModule(CASES, 'hubErrors', {});
  expect(r.missing).toMatch(/^MissingFileError: config.json is missing: the server sent an HTML page instead of the file at \/test\/fixtures\/hub\/rubric-fixtures\/no-such-model\/resolve\/main\/config.json/);
  expect(r.cancelled).toMatch(/^DownloadCancelledError: download cancelled \(while fetching model-00001-of-00003.safetensors\)/);
});
