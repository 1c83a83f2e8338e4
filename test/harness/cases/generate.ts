// Page side of test/browser/generate.test.ts: KV-cache sampling against greedy decoding done
// the slow way (a full forward pass over each whole sequence, no cache, no padding); the
// prefill against the training forward, bit for bit; and sampling's GPU buffers against the
// memory estimate.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { createKvCache, releaseKvCache } from '../../../src/model/decode';
import { generate, type GenerationConfig } from '../../../src/model/generate';
import { fetchModelFiles, loadModel } from '../../../src/model/load';
import { loadLoraAdapter } from '../../../src/model/loraExport';
import { modelLayout } from '../../../src/model/memoryLayout';
import { prefillBuffers, samplingBuffers } from '../../../src/model/memorySampling';
import { allocatedBytes } from '../../../src/model/memorySim';
import { ParameterStore } from '../../../src/model/parameters';
import { readSafetensors } from '../../../src/model/safetensors';
import { Transformer, type TokenBatch } from '../../../src/model/transformer';
import { fromHfTensors } from '../../../src/model/weights';
import { recordKvCacheWrite } from '../../../src/ops/kvCache';
import { sampleRowRef } from '../../../src/ops/sample.reference';

async function loadGolden(rt: GpuRuntime, name: string): Promise<Transformer> {
  const dir = `/test/golden/${name}`;
  const config = configFromHf(await (await fetch(`${dir}/config.json`)).json());
  const weights = readSafetensors(await (await fetch(`${dir}/model.safetensors`)).arrayBuffer());
  return new Transformer(rt, config, ParameterStore.create(rt, config, fromHfTensors(config, weights.tensors)));
}

async function greedyByFullForward(rt: GpuRuntime, model: Transformer, prompt: number[], steps: number): Promise<number[]> {
  const seq = [...prompt];
  const V = model.config.vocabSize;
  for (let s = 0; s < steps; s++) {
    const rec = rt.recorder('full forward');
    const state = model.forward(rec, { batch: 1, seqLen: seq.length, ids: Uint32Array.from(seq), pads: [0] });
    const logits = rec.readF32(state.logits, V, (seq.length - 1) * V);
    await rec.submit();
    const row = await logits;
    model.release(state);
    let best = 0;
    for (let i = 1; i < V; i++) if (row[i] > row[best]) best = i;
    seq.push(best);
  }
  return seq.slice(prompt.length);
}

export async function greedyParity(rt: GpuRuntime, input: { model: string; prompts: number[][]; steps: number }) {
  const model = await loadGolden(rt, input.model);
  const cfg: GenerationConfig = { max_completion_length: input.steps, temperature: 0, top_k: 0, top_p: 1, seed: 0 };
  const out = await generate(model, input.prompts, cfg, { eosTokenId: -1, stepsPerSubmit: 3 });
  const reference = [];
  for (const p of input.prompts) reference.push(await greedyByFullForward(rt, model, p, input.steps));
  model.params.destroy();
  return { completions: out.completions, reference, truncated: out.truncated, submits: out.submits };
}

export async function seeded(rt: GpuRuntime, input: { model: string; prompts: number[][]; cfg: GenerationConfig; eos: number }) {
  const model = await loadGolden(rt, input.model);
  const a = await generate(model, input.prompts, input.cfg, { eosTokenId: input.eos });
  const b = await generate(model, input.prompts, input.cfg, { eosTokenId: input.eos, stepsPerSubmit: 5 });
  const c = await generate(model, input.prompts, { ...input.cfg, seed: input.cfg.seed + 1 }, { eosTokenId: input.eos });
  model.params.destroy();
  return { a, b, c };
}

/** onChunk: the same run with and without it (counters compared), and what it was called with. */
export async function progressChunks(rt: GpuRuntime, input: { model: string; prompts: number[][]; cfg: GenerationConfig; eos: number }) {
  const model = await loadGolden(rt, input.model);
  const count = () => ({ ...rt.counters });
  const diff = (x: ReturnType<typeof count>, y: ReturnType<typeof count>) => ({ submits: y.submits - x.submits, dispatches: y.dispatches - x.dispatches, readbacks: y.readbacks - x.readbacks, bytesRead: y.bytesRead - x.bytesRead });
  const before = count();
  await generate(model, input.prompts, input.cfg, { eosTokenId: input.eos, stepsPerSubmit: 5 });
  const mid = count();
  const chunks: { steps: number; max: number; partial: number[][] }[] = [];
  const out = await generate(model, input.prompts, input.cfg, {
    eosTokenId: input.eos,
    stepsPerSubmit: 5,
    onChunk: (steps, max, partial) => chunks.push({ steps, max, partial: partial.map((ids) => [...ids]) }),
  });
  const after = count();
  model.params.destroy();
  return { completions: out.completions, chunks, plain: diff(before, mid), withProgress: diff(mid, after) };
}

/**
 * repetition_penalty / min_p through the KV-cache loop against the float64 twin: each drawn
 * token is replayed from the full forward pass's logits over prompt + completion so far, with
 * the seen ids of that prefix (the prompt's real tokens, not its padding).
 */
export async function penalisedParity(rt: GpuRuntime, input: { model: string; prompts: number[][]; cfg: GenerationConfig }) {
  const model = await loadGolden(rt, input.model);
  const out = await generate(model, input.prompts, input.cfg, { eosTokenId: -1, stepsPerSubmit: 3 });
  const V = model.config.vocabSize;
  const o = { temperature: input.cfg.temperature, topK: input.cfg.top_k, topP: input.cfg.top_p, repetitionPenalty: input.cfg.repetition_penalty ?? 1, minP: input.cfg.min_p ?? 0, seed: input.cfg.seed };
  const steps: { kernel: number; twin: number; margin: number; kernelLp: number; twinLp: number; unpenalised: number }[] = [];
  for (let b = 0; b < input.prompts.length; b++) {
    const seq = [...input.prompts[b]];
    for (let s = 0; s < out.completions[b].length; s++) {
      const rec = rt.recorder('full forward');
      const state = model.forward(rec, { batch: 1, seqLen: seq.length, ids: Uint32Array.from(seq), pads: [0] });
      const logits = rec.readF32(state.logits, V, (seq.length - 1) * V);
      await rec.submit();
      const row = Array.from(await logits);
      model.release(state);
      const ref = sampleRowRef(row, b, { ...o, step: s }, seq);
      const plain = sampleRowRef(row, b, { ...o, step: s, repetitionPenalty: 1 });
      steps.push({ kernel: out.completions[b][s], twin: ref.token, margin: ref.margin, kernelLp: out.logprobs[b][s], twinLp: ref.logprob, unpenalised: plain.token });
      seq.push(out.completions[b][s]);
    }
  }
  model.params.destroy();
  return { steps, completions: out.completions };
}

/** The models the prefill and memory checks run on: GPT-2, Llama, both with trained PEFT adapters, and Qwen3 (q/k norm). */
export type CaseModel = 'gpt2-tiny' | 'llama-tiny' | 'lora-gpt2-tiny' | 'lora-llama-tiny' | 'qwen3-tiny';

async function loadCase(rt: GpuRuntime, name: CaseModel): Promise<Transformer> {
  if (name === 'qwen3-tiny') return (await loadModel(rt, await fetchModelFiles('/test/fixtures/hub/rubric-fixtures/tiny-qwen3-f16/resolve/main/'))).model;
  const model = await loadGolden(rt, name);
  if (name.startsWith('lora-')) {
    const dir = `/test/golden/${name}`;
    await loadLoraAdapter(model, {
      'adapter_model.safetensors': await (await fetch(`${dir}/adapter_model.safetensors`)).arrayBuffer(),
      'adapter_config.json': await (await fetch(`${dir}/adapter_config.json`)).text(),
    });
  }
  return model;
}

function leftPadded(prompts: number[][]): TokenBatch {
  const P = Math.max(...prompts.map((p) => p.length));
  const ids = new Uint32Array(prompts.length * P);
  const pads = prompts.map((p, b) => {
    ids.set(p, b * P + P - p.length);
    return P - p.length;
  });
  return { batch: prompts.length, seqLen: P, ids, pads };
}

/** Values that differ bit for bit (Object.is: a NaN equals a NaN, 0 differs from -0). */
function bitMismatches(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) n++;
  return n;
}

/** The storage buffers `record` acquires from the pool (by wrapping acquire while it runs). */
function acquiredBy<T>(rt: GpuRuntime, record: () => T): { result: T; sizes: number[] } {
  const pool = rt.pool;
  const original = pool.acquire.bind(pool);
  const sizes: number[] = [];
  pool.acquire = (bytes: number, usage: GPUBufferUsageFlags, label?: string) => {
    const b = original(bytes, usage, label);
    if (usage & GPUBufferUsage.STORAGE) sizes.push(b.size);
    return b;
  };
  try {
    return { result: record(), sizes };
  } finally {
    pool.acquire = original;
  }
}

/**
 * Transformer.prefill against the training forward on the same left-padded batch: its [B, V]
 * logits against forward's last-position rows, its KV cache against a cache written from
 * forward's keys and values (what generate did before prefill existed), and its every-position
 * logits (logits: 'all') against forward's logits — all bit for bit; and the buffers the
 * every-position prefill acquires against the memory estimate.
 */
export async function prefillVsForward(rt: GpuRuntime, input: { model: CaseModel; prompts: number[][] }) {
  const model = await loadCase(rt, input.model);
  const c = model.config;
  const V = c.vocabSize;
  const tokens = leftPadded(input.prompts);
  const { batch: B, seqLen: P } = tokens;
  const fromPrefill = createKvCache(model, B, P + 2);
  const fromForward = createKvCache(model, B, P + 2);
  const floats = fromPrefill.keys[0].size / 4;
  try {
    const rec = rt.recorder('prefill vs forward');
    // Both caches start from the same garbage-free state.
    for (const b of [...fromPrefill.keys, ...fromPrefill.values, ...fromForward.keys, ...fromForward.values]) rec.clear(b);
    const state = model.forward(rec, tokens);
    state.layers.forEach((layer, i) => {
      recordKvCacheWrite(rt, rec, { k: layer.attention.k, v: layer.attention.v }, { keys: fromForward.keys[i], values: fromForward.values[i] }, fromForward.shape, 0, P);
    });
    const last = model.prefill(rec, tokens, { cache: fromPrefill });
    const every = acquiredBy(rt, () => model.prefill(rec, tokens, { logits: 'all' }));
    const forwardRows = Array.from({ length: B }, (_, b) => rec.readF32(state.logits, V, (b * P + P - 1) * V));
    const forwardLogits = rec.readF32(state.logits, B * P * V);
    const prefillLogits = rec.readF32(last, B * V);
    const everyLogits = rec.readF32(every.result, B * P * V);
    const caches = [fromPrefill, fromForward].map((cache) => [...cache.keys, ...cache.values].map((buf) => rec.readF32(buf, floats)));
    rec.releaseAfterSubmit(last, every.result);
    await rec.submit();
    model.release(state);
    const want = new Float32Array(B * V);
    (await Promise.all(forwardRows)).forEach((row, b) => want.set(row, b * V));
    const got = await prefillLogits;
    const [a, b] = await Promise.all(caches.map((list) => Promise.all(list)));
    const estimated = prefillBuffers(modelLayout(c, model.lora?.config ?? null), B, P, { logits: 'all' });
    return {
      rows: B,
      logitMismatches: bitMismatches(got, want),
      finiteLogits: got.every(Number.isFinite),
      cacheMismatches: a.reduce((n, buf, i) => n + bitMismatches(buf, b[i]), 0),
      cacheNonZero: a.reduce((n, buf) => n + buf.filter((v) => v !== 0).length, 0),
      allPositionMismatches: bitMismatches(await everyLogits, await forwardLogits),
      allPositionBuffers: every.sizes.length,
      allPositionBytes: every.sizes.reduce((s, n) => s + n, 0),
      estimatedAllPositionBuffers: estimated.length,
      estimatedAllPositionBytes: allocatedBytes(estimated),
    };
  } finally {
    releaseKvCache(model, fromPrefill);
    releaseKvCache(model, fromForward);
    model.params.destroy();
  }
}

/**
 * The storage buffers one generate() call makes a fresh pool create (the pool is trimmed first,
 * and its acquire wrapped to see which calls create a buffer) against the estimate's sampling
 * figures; and the prefill submission's acquisitions against prefillBuffers.
 */
export async function samplingMemory(rt: GpuRuntime, input: { model: CaseModel; prompts: number[][]; steps: number; stepsPerSubmit: number }) {
  const model = await loadCase(rt, input.model);
  const pool = rt.pool;
  const original = pool.acquire.bind(pool);
  const created: number[] = [];
  let prefillAcquired: number[] | null = null;
  let inPrefill = false;
  const originalPrefill = model.prefill.bind(model);
  model.prefill = (rec, tokens, options) => {
    inPrefill = true;
    prefillAcquired = [];
    try {
      return originalPrefill(rec, tokens, options);
    } finally {
      inPrefill = false;
    }
  };
  pool.trim();
  pool.acquire = (bytes: number, usage: GPUBufferUsageFlags, label?: string) => {
    const before = pool.snapshot().created;
    const b = original(bytes, usage, label);
    if (usage & GPUBufferUsage.STORAGE) {
      if (pool.snapshot().created > before) created.push(b.size);
      if (inPrefill) prefillAcquired!.push(b.size);
    }
    return b;
  };
  const cfg: GenerationConfig = { max_completion_length: input.steps, temperature: 1, top_k: 0, top_p: 1, seed: 7 };
  try {
    await generate(model, input.prompts, cfg, { eosTokenId: -1, stepsPerSubmit: input.stepsPerSubmit });
  } finally {
    pool.acquire = original;
  }
  const layout = modelLayout(model.config, model.lora?.config ?? null);
  const P = Math.max(...input.prompts.map((p) => p.length));
  const shape = { batch: input.prompts.length, promptTokens: P, completionTokens: input.steps, stepsPerSubmit: input.stepsPerSubmit };
  const estimate = samplingBuffers(layout, shape);
  const acquired = prefillAcquired ?? [];
  const result = {
    createdBuffers: created.length,
    createdBytes: created.reduce((s, n) => s + n, 0),
    estimatedBuffers: estimate.kvCache.length + estimate.other.length,
    estimatedBytes: allocatedBytes(estimate.kvCache) + allocatedBytes(estimate.other),
    prefillBuffers: acquired.length,
    prefillBytes: acquired.reduce((s, n) => s + n, 0),
    estimatedPrefillBuffers: estimate.prefill.length,
    estimatedPrefillBytes: allocatedBytes(estimate.prefill),
  };
  model.params.destroy();
  return result;
}
