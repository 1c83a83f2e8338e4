// Page side of test/browser/hubLoad.test.ts: a fixture in the Hub's layout, served by Vite at
// /test/fixtures/hub, fetched through fetchHubModelFiles (network + Cache API), loaded with
// loadModel, run forward on golden.json's prompt; then the cached copy, its listing and deletion.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { fetchHubModelFiles, type HubModelFiles } from '../../../src/model/hub/fetchHubModel';
import { deleteCachedModel, listCachedModels } from '../../../src/model/hub/modelCache';
import { loadModel } from '../../../src/model/load';

export const FIXTURE_ENDPOINT = '/test/fixtures/hub';

interface Golden {
  id: string;
  dtype: string;
  prompt: string;
  prompt_ids: number[];
  vocab_size: number;
  rows_from: number;
  logits: number[][];
}

/** fetch that counts the requests it passes on. */
function countingFetch(): { requests: number; fetch: typeof fetch } {
  const counter = {
    requests: 0,
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      counter.requests++;
      return fetch(input, init);
    },
  };
  return counter;
}

async function forwardLogits(rt: GpuRuntime, files: HubModelFiles, prompt: string) {
  const loaded = await loadModel(rt, files);
  try {
    const ids = loaded.formatPrompt(prompt);
    const V = loaded.config.vocabSize;
    const rec = rt.recorder('hub golden forward');
    const state = loaded.model.forward(rec, { batch: 1, seqLen: ids.length, ids: Uint32Array.from(ids), pads: [0] });
    const logits = rec.readF32(state.logits, ids.length * V);
    await rec.submit();
    const out = await logits;
    loaded.model.release(state);
    return { ids, logits: out, vocab: V, architecture: loaded.config.architecture };
  } finally {
    loaded.model.params.destroy();
  }
}

export async function hubGolden(rt: GpuRuntime, input: { id: string }) {
  const golden = ((await (await fetch(`${FIXTURE_ENDPOINT}/golden.json`)).json()) as { fixtures: Golden[] }).fixtures.find((f) => f.id === input.id);
  if (!golden) throw new Error(`golden.json has no fixture ${input.id}`);
  await deleteCachedModel(input.id);

  const network = countingFetch();
  const progress: { file: string; fromCache: boolean; done: boolean; overallTotal: number | null }[] = [];
  const first = await fetchHubModelFiles(input.id, {
    endpoint: FIXTURE_ENDPOINT,
    fetch: network.fetch,
    onProgress: (p) => progress.push({ file: p.file, fromCache: p.fromCache, done: p.done, overallTotal: p.overall.total }),
  });
  const run = await forwardLogits(rt, first, golden.prompt);
  let maxAbsError = 0;
  let maxAbsExpected = 0;
  golden.logits.forEach((row, r) =>
    row.forEach((want, v) => {
      const got = run.logits[(golden.rows_from + r) * run.vocab + v];
      maxAbsError = Number.isNaN(got) ? Infinity : Math.max(maxAbsError, Math.abs(got - want));
      maxAbsExpected = Math.max(maxAbsExpected, Math.abs(want));
    }),
  );

  const cachedOnly = countingFetch();
  const second = await fetchHubModelFiles(input.id, { endpoint: FIXTURE_ENDPOINT, fetch: cachedOnly.fetch });
  const listed = (await listCachedModels()).find((m) => m.id === input.id && m.endpoint === FIXTURE_ENDPOINT);
  const deleted = await deleteCachedModel(input.id);
  const afterDelete = (await listCachedModels()).some((m) => m.id === input.id);

  return {
    dtype: golden.dtype,
    architecture: run.architecture,
    promptIds: run.ids,
    goldenPromptIds: golden.prompt_ids,
    rowsCompared: golden.logits.length,
    maxAbsError,
    maxAbsExpected,
    first: { requests: network.requests, cache: first.hub.cache, networkBytes: first.hub.networkBytes, files: first.hub.files.map((f) => f.file) },
    progressFiles: [...new Set(progress.filter((p) => p.done).map((p) => p.file))],
    progressFinalTotal: progress.at(-1)?.overallTotal ?? null,
    second: { requests: cachedOnly.requests, cachedBytes: second.hub.cachedBytes, networkBytes: second.hub.networkBytes },
    listedBytes: listed?.bytes ?? null,
    listedFiles: listed?.files.length ?? 0,
    deleted,
    afterDelete,
  };
}

/** A missing model through the dev server (which answers index.html), and a cancelled download. */
export async function hubErrors(_rt: GpuRuntime) {
  const message = (p: Promise<unknown>) => p.then(() => 'no error', (e: Error) => `${e.name}: ${e.message}`);
  const missing = await message(fetchHubModelFiles('rubric-fixtures/no-such-model', { endpoint: FIXTURE_ENDPOINT, cache: false }));
  const controller = new AbortController();
  const cancelled = await message(
    fetchHubModelFiles('rubric-fixtures/tiny-smollm-sharded', {
      endpoint: FIXTURE_ENDPOINT,
      cache: false,
      signal: controller.signal,
      onProgress: (p) => p.file.endsWith('.safetensors') && controller.abort(),
    }),
  );
  return { missing, cancelled };
}
