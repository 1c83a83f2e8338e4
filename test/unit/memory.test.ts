// The GPU memory estimate (src/model/memory.ts). Its exact agreement with the engine is checked
// in the browser (test/browser/lora.test.ts, "GPU memory against the estimate": ParameterStore
// bytes read from the live store, and every storage buffer a training submission acquires,
// counted by wrapping the buffer pool). Here: the pool's bucket rule, the parameter figures
// against the embedded model's real tensors, the LoRA and beta accounting, the 135M figures,
// and the messages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bucketSize } from '../../src/gpu/bufferPool';
import { configFromHf, type ModelConfig } from '../../src/model/config';
import { checkFitsDevice, estimateTrainingBytes, formatBytes, poolBucket, type TrainingShape } from '../../src/model/memory';
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
    expect(e.weights).toBe(pooled);
    expect(e.gradients).toBe(pooled);
    expect(e.optimizer).toBe(2 * pooled);
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
    const adapters = embedded.numLayers * perLayer.reduce((s, n) => s + bucketSize(n * 4), 0);
    expect(e.gradients).toBe(adapters);
    expect(e.optimizer).toBe(2 * adapters);
    expect(e.weights).toBe([...embeddedTensors.values()].reduce((n, t) => n + bucketSize(t.data.length * 4), 0) + adapters);
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

  it('135M (SmolLM2 shape), LoRA r=16 on all linear layers, 8 completions of 128 tokens after 64 prompt tokens', () => {
    const lora = { r: 16, target_modules: 'all-linear' as const };
    const e = estimateTrainingBytes({ config: smol, lora, numGenerations: 8, promptsPerStep: 1, promptTokens: 64, completionTokens: 128, beta: 0 });
    const full = estimateTrainingBytes({ config: smol, lora: null, numGenerations: 8, promptsPerStep: 1, promptTokens: 64, completionTokens: 128, beta: 0 });
    // Parameters: the base once (f32) plus 4.9M adapter values with gradients and moments,
    // against four copies of 134.5M values for full fine-tuning.
    const loraParams = e.weights + e.gradients + e.optimizer;
    expect(loraParams).toBeLessThan(0.65 * GiB);
    expect(full.weights + full.gradients + full.optimizer).toBeGreaterThan(2 * GiB);
    expect(e.largest.label).toBe('logits [1536 × 49152]');
    // The update records all 1536 rows in one submission and keeps every layer's activations
    // and backward temporaries until it runs: the whole step needs far more than 2 GiB.
    expect(e.activations).toBeGreaterThan(2.5 * GiB);
    expect(e.total).toBeGreaterThan(4.5 * GiB);
    expect(e.total).toBeLessThan(5.5 * GiB);
    const verdict = checkFitsDevice(e, { maxBufferSize: 4 * GiB, maxStorageBufferBindingSize: 2 * GiB }, 2 * GiB);
    expect(verdict.fits).toBe(false);
    expect(verdict.message).toMatch(/^Training needs about 4\.\d+ GiB of GPU memory \(weights 5\d\d MiB, .*\), more than the 2\.00 GiB available: .*The largest buffer is logits \[1536 × 49152\] \(288 MiB\)\.$/);
    // Two completions per step fit.
    const small = estimateTrainingBytes({ config: smol, lora, numGenerations: 2, promptsPerStep: 1, promptTokens: 64, completionTokens: 128, beta: 0 });
    expect(checkFitsDevice(small, { maxBufferSize: 4 * GiB, maxStorageBufferBindingSize: 2 * GiB }, 2 * GiB)).toEqual({ fits: true, message: null });
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
    expect(() => estimateTrainingBytes(shape({ lora: { r: 0 } }))).toThrow(/r must be an integer >= 1/);
  });

  it('formats bytes in binary units', () => {
    expect([formatBytes(512), formatBytes(1536), formatBytes(288 * 1024 ** 2), formatBytes(4.86 * GiB)]).toEqual(['512 B', '1.50 KiB', '288 MiB', '4.86 GiB']);
  });
});
