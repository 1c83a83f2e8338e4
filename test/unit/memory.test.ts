// The GPU memory estimate (src/model/memory.ts). Its exact agreement with the engine is checked
// in the browser (test/browser/lora.test.ts, "GPU memory against the estimate": ParameterStore
// bytes read from the live store, and every storage buffer a training submission acquires,
// counted by wrapping the buffer pool; test/browser/generate.test.ts, "sampling memory against
// the estimate": every buffer generate() makes a fresh pool create). Here: the pool's bucket
// rule and reuse, the parameter figures against the embedded model's real tensors, the LoRA and
// beta accounting, the prefill, micro-batching, the 135M figures, and the messages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bucketSize } from '../../src/gpu/bufferPool';
import { configFromHf, type ModelConfig } from '../../src/model/config';
import { checkFitsDevice, estimateTrainingBytes, formatBytes, forwardBuffers, microBatchSizes, modelLayout, poolBucket, type TrainingShape } from '../../src/model/memory';
import { prefillBuffers, samplingBuffers } from '../../src/model/memorySampling';
import { allocatedBytes, PoolSim, Tally } from '../../src/model/memorySim';
import { readSafetensors } from '../../src/model/safetensors';
import { fromHfTensors } from '../../src/model/weights';

const GiB = 1024 ** 3;
const dir = new URL('../../public/models/tiny-gpt2-byte/', import.meta.url);
const embedded = configFromHf(JSON.parse(readFileSync(new URL('config.json', dir), 'utf8')));
const bytes = readFileSync(new URL('model.safetensors', dir));
const embeddedTensors = fromHfTensors(embedded, readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).tensors);

// SmolLM2-135M's shape (config.json of HuggingFaceTB/SmolLM2-135M).
const smol: ModelConfig = configFromHf({
  model_type: 'llama',
  vocab_size: 49152,
  hidden_size: 576,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  intermediate_size: 1536,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  tie_word_embeddings: true,
});

const shape = (over: Partial<TrainingShape>): TrainingShape => ({
  config: embedded,
  lora: null,
  numGenerations: 8,
  promptsPerStep: 1,
  promptTokens: 32,
  completionTokens: 64,
  beta: 0,
  ...over,
});

describe('memory estimate', () => {
  it('rounds like the buffer pool', () => {
    for (const n of [1, 16, 255, 256, 257, 1000, 4096, 4097, 123_457, 9_999_999, 302_000_000]) expect(poolBucket(n), `${n}`).toBe(bucketSize(Math.max(n, 16)));
  });

  it("counts the embedded model's real tensors: values, gradients and two AdamW moments each", () => {
    const e = estimateTrainingBytes(shape({}));
    const values = [...embeddedTensors.values()].reduce((n, t) => n + t.data.length, 0);
    expect(values).toBeGreaterThan(850_000);
    expect(values).toBeLessThan(870_000);
    const pooled = [...embeddedTensors.values()].reduce((n, t) => n + bucketSize(t.data.length * 4), 0);
    // Values, gradients and the moments each share exactly sized buffers (ParameterStore's
    // arenas): every tensor at a 256-byte-aligned offset, less than a pool bucket each.
    const aligned = [...embeddedTensors.values()].reduce((n, t) => n + Math.ceil((t.data.length * 4) / 256) * 256, 0);
    expect(e.weights).toBe(aligned);
    expect(e.gradients).toBe(aligned);
    expect(e.optimizer).toBe(2 * aligned);
    expect(e.weights).toBeLessThan(pooled);
    expect(e.referenceModel).toBe(0);
    expect(e.kvCache).toBe(2 * embedded.numLayers * bucketSize(8 * embedded.numKvHeads * 96 * embedded.headDim * 4));
  });

  it('under LoRA counts gradients and moments of the adapters only, and no reference copy', () => {
    const r = 8;
    const e = estimateTrainingBytes(shape({ lora: { r, target_modules: 'all-linear' }, beta: 0.04 }));
    const D = embedded.hiddenSize;
    const F = embedded.intermediateSize;
    // c_attn: A [r, D], B [3D, r] (three q/k/v blocks); attn.c_proj: [r, D], [D, r]; c_fc: [r, D], [F, r]; mlp.c_proj: [r, F], [D, r].
    const perLayer = [r * D, D * r, D * r, D * r, r * D, D * r, r * D, F * r, r * F, D * r];
    const aligned = (bytes: number) => Math.ceil(bytes / 256) * 256;
    const adapters = embedded.numLayers * perLayer.reduce((s, n) => s + aligned(n * 4), 0);
    expect(e.gradients).toBe(adapters);
    expect(e.optimizer).toBe(2 * adapters);
    expect(e.weights).toBe([...embeddedTensors.values()].reduce((n, t) => n + aligned(t.data.length * 4), 0) + adapters);
    expect(e.referenceModel).toBe(0);
    const full = estimateTrainingBytes(shape({ beta: 0.04 }));
    expect(full.referenceModel).toBe(full.weights + full.gradients);
  });

  it('grows with the batch, and a KL reference adds a forward pass and its logits', () => {
    const one = estimateTrainingBytes(shape({ numGenerations: 4 }));
    const two = estimateTrainingBytes(shape({ numGenerations: 8 }));
    expect(two.activations / one.activations).toBeGreaterThan(1.8);
    expect(two.activations / one.activations).toBeLessThan(2.2);
    expect(two.logits).toBe(2 * bucketSize(8 * 96 * embedded.vocabSize * 4));
    const kl = estimateTrainingBytes(shape({ numGenerations: 8, beta: 0.04 }));
    expect(kl.logits).toBe(1.5 * two.logits);
    expect(kl.activations).toBeGreaterThan(two.activations);
  });

  it('pool model: a released buffer serves the next request of its size bucket, never another bucket', () => {
    const pool = new PoolSim();
    const t = new Tally();
    t.add('a', 1000);
    t.add('b', 1000);
    t.add('c', 5000);
    pool.submission(t.buffers);
    expect(pool.created).toHaveLength(3);
    const again = new Tally();
    again.add('a2', 1010); // the same 1024-byte bucket
    again.add('d', 600); // a smaller bucket: a new buffer, though larger free ones exist
    pool.submission(again.buffers);
    expect(pool.created.map((b) => b.label)).toEqual(['a', 'b', 'c', 'd']);
    expect(pool.bytes).toBe(2 * 1024 + poolBucket(5000) + poolBucket(600));
  });

  it('prefill keeps nothing for backward: its buffers stay a few layers’ worth, with the head on the last rows', () => {
    const L = modelLayout(smol, { r: 16, target_modules: 'all-linear' });
    const prefill = allocatedBytes(prefillBuffers(L, 8, 64));
    const training = new Tally();
    forwardBuffers(training, L, 8, 64, true, false);
    // 8 × 64 prompt tokens: 15 MiB against 713 MiB for a training forward (every layer kept, [512, V] logits).
    expect(prefill).toBeLessThan(16 * 1024 ** 2);
    expect(training.total).toBeGreaterThan(40 * prefill);
    // The logits are [8, V]: one row per sequence.
    expect(prefillBuffers(L, 8, 64).filter((b) => b.label.includes('logits')).map((b) => b.label)).toEqual(['last logits [8 × 49152]']);
    // Doubling the layers adds nothing: temporaries are reused from layer to layer.
    const deeper = modelLayout({ ...smol, numLayers: 60 }, null);
    expect(allocatedBytes(prefillBuffers(deeper, 8, 64))).toBe(allocatedBytes(prefillBuffers(modelLayout(smol, null), 8, 64)));
    // Every position's logits (scoring) add only the [512, V] logits and a wider final norm.
    const all = prefillBuffers(L, 8, 64, { logits: 'all' });
    expect(all.filter((b) => b.label.includes('logits')).map((b) => b.label)).toEqual(['logits [512 × 49152]']);
    // Sampling as a whole: the KV cache, then the prefill or a chunk of decode steps, whichever is larger, sharing buffers.
    const sampling = samplingBuffers(L, { batch: 8, promptTokens: 64, completionTokens: 128 });
    expect(allocatedBytes(sampling.kvCache)).toBe(2 * 30 * poolBucket(8 * 3 * 192 * 64 * 4));
    expect(allocatedBytes(sampling.other)).toBeLessThan(20 * 1024 ** 2);
  });

  it('micro-batches: ceil(N / size) submissions whose buffers the pool reuses from one to the next', () => {
    expect(microBatchSizes(8, null)).toEqual([8]);
    expect(microBatchSizes(8, 16)).toEqual([8]);
    expect(microBatchSizes(8, 2)).toEqual([2, 2, 2, 2]);
    expect(microBatchSizes(8, 3)).toEqual([3, 3, 2]);
    const whole = estimateTrainingBytes(shape({}));
    const halves = estimateTrainingBytes(shape({ microBatch: 4 }));
    // Logits and their gradient of one micro-batch of 4 × 96 rows.
    expect(halves.logits).toBe(2 * bucketSize(4 * 96 * embedded.vocabSize * 4));
    expect(whole.logits).toBe(2 * bucketSize(8 * 96 * embedded.vocabSize * 4));
    expect(halves.activations / whole.activations).toBeGreaterThan(0.45);
    expect(halves.activations / whole.activations).toBeLessThan(0.6);
    // Parameters and sampling do not change.
    for (const k of ['weights', 'gradients', 'optimizer', 'kvCache', 'sampling'] as const) expect(halves[k]).toBe(whole[k]);
    // One sequence per submission: the same pool as a batch of one, plus the step's inputs.
    const ones = estimateTrainingBytes(shape({ microBatch: 1 }));
    expect(ones.logits).toBe(estimateTrainingBytes(shape({ numGenerations: 1 })).logits);
    // An uneven split (3, 3, 2) leaves buffers of both sizes in the pool: more than even halves of 4.
    expect(estimateTrainingBytes(shape({ microBatch: 3 })).total).toBeGreaterThan(halves.total);
    // A scaled loss (grpo) adds the scaled gradient buffers; dapo (the default) needs none.
    expect(estimateTrainingBytes(shape({ microBatch: 4, lossType: 'grpo' })).activations).toBeGreaterThan(halves.activations);
    expect(estimateTrainingBytes(shape({ microBatch: 4, lossType: 'dapo' })).activations).toBe(halves.activations);
    // Trimming the pool around sampling never costs more than keeping everything.
    for (const e of [whole, halves, ones]) expect(e.totalIfTrimmed).toBeLessThanOrEqual(e.total);
  });

  it('135M (SmolLM2 shape), LoRA r=16, 8 completions of 128 tokens after 64 prompt tokens: under 2 GiB with micro-batches of 2', () => {
    const allLinear = { r: 16, target_modules: 'all-linear' as const };
    const step = (lora: TrainingShape['lora'], microBatch: number | null, beta = 0) =>
      estimateTrainingBytes({ config: smol, lora, numGenerations: 8, promptsPerStep: 1, promptTokens: 64, completionTokens: 128, beta, microBatch });
    const e = step(allLinear, null);
    const full = step(null, null);
    // Parameters: the base once (f32) plus 4.9M adapter values with gradients and moments,
    // against four copies of 134.5M values for full fine-tuning.
    const loraParams = e.weights + e.gradients + e.optimizer;
    expect(loraParams).toBeLessThan(0.65 * GiB);
    expect(full.weights + full.gradients + full.optimizer).toBeGreaterThan(2 * GiB);
    expect(e.largest.label).toBe('logits [1536 × 49152]');
    // Sampling is the KV cache (67.5 MiB) and 15 MiB more.
    expect(e.kvCache + e.sampling).toBeLessThan(90 * 1024 ** 2);
    // The whole batch in one update submission keeps every layer's activations of 1536 rows
    // until it runs: 3.90 GiB in all (4.11 before the o/down projections wrote the residual stream directly).
    expect(e.activations).toBeGreaterThan(2.5 * GiB);
    expect(e.total).toBeGreaterThan(3.5 * GiB);
    expect(e.total).toBeLessThan(4.5 * GiB);
    const limits = { maxBufferSize: 4 * GiB, maxStorageBufferBindingSize: 2 * GiB };
    const verdict = checkFitsDevice(e, limits, 2 * GiB);
    expect(verdict.fits).toBe(false);
    expect(verdict.message).toMatch(/^Training needs about 3\.\d+ GiB of GPU memory \(weights 5\d\d MiB, .*\), more than the 2\.00 GiB available: .*The largest buffer is logits \[1536 × 49152\] \(288 MiB\)\.$/);
    // per_device_train_batch_size 2: four submissions of 2 × 192 rows. all-linear: 1.55 GiB
    // (1.47 GiB trimmed); PEFT's default targets (q_proj, v_proj): 1.49 GiB (1.40 GiB trimmed).
    for (const lora of [allLinear, { r: 16 }]) {
      const two = step(lora, 2);
      expect(two.total).toBeLessThan(1.6 * GiB);
      expect(two.logits).toBe(2 * poolBucket(384 * 49152 * 4));
      expect(checkFitsDevice(two, limits, 2 * GiB)).toEqual({ fits: true, message: null });
      // One sequence per submission: about 1 GiB.
      expect(step(lora, 1).total).toBeLessThan(1.1 * GiB);
    }
    // The largest buffer is now the embedding table, not the logits.
    expect(step(allLinear, 2).largest.label).toBe('model.embed_tokens.weight');
    // With a KL term (beta 0.04) the reference runs as an inference pass (prefill, every position's
    // logits, no activations kept): micro-batches of 2 still fit.
    expect(step(allLinear, 2, 0.04).total).toBeLessThan(2 * GiB);
    expect(step(allLinear, 2, 0.04).total).toBeGreaterThan(step(allLinear, 2).total);
    expect(step(allLinear, 1, 0.04).total).toBeLessThan(1.4 * GiB);
  });

  it('names the largest buffer and the limit it breaks', () => {
    const e = estimateTrainingBytes({ config: smol, lora: { r: 16 }, numGenerations: 8, promptsPerStep: 1, promptTokens: 64, completionTokens: 128, beta: 0 });
    expect(checkFitsDevice(e, { maxBufferSize: 256 * 1024 ** 2, maxStorageBufferBindingSize: 128 * 1024 ** 2 }, 64 * GiB).message).toBe(
      "The largest buffer (logits [1536 × 49152], 288 MiB) exceeds this GPU's maxBufferSize of 256 MiB: use fewer generations per step, shorter prompts or completions, LoRA, or a smaller model.",
    );
    expect(checkFitsDevice(e, { maxBufferSize: GiB, maxStorageBufferBindingSize: 128 * 1024 ** 2 }, 64 * GiB).message).toMatch(
      /^The largest buffer \(logits \[1536 × 49152\], 288 MiB\) exceeds this GPU's maxStorageBufferBindingSize of 128 MiB/,
    );
  });

  it('rejects impossible shapes by name', () => {
    expect(() => estimateTrainingBytes(shape({ numGenerations: 0 }))).toThrow(/numGenerations must be a positive integer, got 0/);
    expect(() => estimateTrainingBytes(shape({ promptTokens: 200, completionTokens: 100 }))).toThrow(/= 300 exceeds the model's context of 256/);
    expect(() => estimateTrainingBytes(shape({ beta: -1 }))).toThrow(/beta must be a number >= 0/);
    expect(() => estimateTrainingBytes(shape({ microBatch: 0 }))).toThrow(/microBatch must be a positive integer, got 0/);
    expect(() => estimateTrainingBytes(shape({ lora: { r: 0 } }))).toThrow(/r must be an integer >= 1/);
  });

  it('formats bytes in binary units', () => {
    expect([formatBytes(512), formatBytes(1536), formatBytes(288 * 1024 ** 2), formatBytes(4.86 * GiB)]).toEqual(['512 B', '1.50 KiB', '288 MiB', '4.86 GiB']);
  });
});
