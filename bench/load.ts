// In-page side of bench/load.mjs: one checkpoint in the Hub's layout, served by Vite, through
// the app's Hub path. Phases, each timed on its own:
//   download   fetchHubModelFiles with an empty cache: network (local server) + Cache API writes
//   cached     fetchHubModelFiles again: every file from the Cache API, no network
//   parse      safetensors → f32 tensors in the engine's names (readModelWeights + fromHfTensors)
//   loadModel  the whole load of a model: parse again, tokenizer, GPU upload (until the queue is idle)
import { GpuRuntime } from '../src/gpu/runtime';
import { configFromHf } from '../src/model/config';
import { withEngineTensorNames } from '../src/model/hub/checkpointNames';
import { fetchHubModelFiles } from '../src/model/hub/fetchHubModel';
import { deleteCachedModel } from '../src/model/hub/modelCache';
import { readModelWeights } from '../src/model/hub/shards';
import { loadModel } from '../src/model/load';
import { fromHfTensors } from '../src/model/weights';

export interface LoadBenchRequest {
  /** "owner/name" under `endpoint`. */
  id: string;
  endpoint: string;
}

export interface PhaseResult {
  seconds: number;
  bytes: number;
  megabytesPerSecond: number;
}

export interface LoadBenchResult {
  adapter: GpuRuntime['info'];
  files: { file: string; bytes: number }[];
  parameters: number;
  /** Tensors in the engine's layout (GPT-2's c_attn split into q, k, v). */
  tensors: number;
  download: PhaseResult & { progressEvents: number; lastBytesPerSecond: number; cache: string; cacheError: string | null };
  cached: PhaseResult;
  parse: PhaseResult;
  loadModel: PhaseResult;
  /** GPU bytes of the loaded model: values alone, and with the gradient buffers the trainer keeps. */
  gpuValueBytes: number;
  gpuBytes: number;
}

declare global {
  interface Window {
    loadBench: { run(req: LoadBenchRequest): Promise<LoadBenchResult> };
    loadBenchReady: Promise<string | null>;
  }
}

const seconds = (t0: number) => (performance.now() - t0) / 1000;
const phase = (s: number, bytes: number): PhaseResult => ({ seconds: s, bytes, megabytesPerSecond: bytes / 1e6 / s });

async function run(rt: GpuRuntime, req: LoadBenchRequest): Promise<LoadBenchResult> {
  await deleteCachedModel(req.id, { endpoint: req.endpoint });
  try {
    let events = 0;
    let lastSpeed = 0;
    let t0 = performance.now();
    let files = await fetchHubModelFiles(req.id, {
      endpoint: req.endpoint,
      onProgress: (p) => {
        events++;
        if (!p.done) lastSpeed = p.bytesPerSecond;
      },
    });
    const download = { ...phase(seconds(t0), files.hub.networkBytes), progressEvents: events, lastBytesPerSecond: lastSpeed, cache: files.hub.cache, cacheError: files.hub.cacheError };
    const fileList = files.hub.files.map((f) => ({ file: f.file, bytes: f.bytes }));

    t0 = performance.now();
    files = await fetchHubModelFiles(req.id, { endpoint: req.endpoint });
    const cached = phase(seconds(t0), files.hub.cachedBytes);
    if (files.hub.networkBytes !== 0) throw new Error(`the second load fetched ${files.hub.networkBytes} bytes from the network`);

    const weightBytes = fileList.filter((f) => f.file.endsWith('.safetensors')).reduce((s, f) => s + f.bytes, 0);
    const config = configFromHf(files.config);
    t0 = performance.now();
    let parsed: Map<string, unknown> | null = fromHfTensors(config, withEngineTensorNames(config, readModelWeights(files.weights)));
    const parse = phase(seconds(t0), weightBytes);
    const tensorCount = parsed.size;
    parsed = null; // let the parsed copy go before the load parses again

    t0 = performance.now();
    const loaded = await loadModel(rt, files);
    await rt.device.queue.onSubmittedWorkDone();
    const load = phase(seconds(t0), weightBytes);
    const gpuValueBytes = loaded.model.params.list.reduce((s, p) => s + p.value.size, 0);
    const result: LoadBenchResult = {
      adapter: rt.info,
      files: fileList,
      parameters: loaded.model.params.totalSize,
      tensors: tensorCount,
      download,
      cached,
      parse,
      loadModel: load,
      gpuValueBytes,
      gpuBytes: loaded.model.params.bytes,
    };
    loaded.model.params.destroy();
    return result;
  } finally {
    await deleteCachedModel(req.id, { endpoint: req.endpoint });
  }
}

window.loadBenchReady = GpuRuntime.create().then(
  (rt) => {
    window.loadBench = { run: (req) => run(rt, req) };
    return null;
  },
  (err: Error) => err.message,
);
