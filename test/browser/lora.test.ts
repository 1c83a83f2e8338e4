// LoRA in the engine, in headless Chromium (SwiftShader WebGPU):
// - the dropout kernel against its twin (mask exact, values to f32 rounding);
// - one adapter with dropout against the float64 twin (f32 vs f64: 2e-5 abs + 1e-4 rel);
// - whole-model parity with PyTorch float64 (scripts/golden/make_lora_golden.py), GPT-2 (fused
//   c_attn) and Llama (GQA, rsLoRA), adapters on every linear module: logits and loss 1e-4 abs,
//   adapters-off logits 1e-4, every dA / dB 2e-5 abs + 1e-3 of the tensor's largest value, one
//   clipped AdamW step on the adapters 1e-5, base weights bit-identical after it;
// - the base-model view, seeded dropout, PEFT export / re-import (bit-identical logits), the
//   merged model (1e-4), LoRA checkpoints; GPU bytes equal to the memory estimate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { dropoutAccumulateRef, dropoutRef } from '../../src/ops/dropout.reference';
import { loraBackwardRef, loraForwardRef } from '../../src/model/loraLinear.reference';
import { normal, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/lora.ts';
const f32 = (v: number[]) => Array.from(new Float32Array(v));

describe('dropout kernel', () => {
  it('matches the twin: the same mask, values to f32 rounding, and accumulates', async () => {
    const x = f32(normal(rng(1), 3001));
    for (const p of [0, 0.3]) {
      const got: number[] = await harness.runModule(CASES, 'dropoutKernel', { x, p, seed: 77 });
      const want = dropoutRef(x, p, 77);
      got.forEach((v, i) => {
        expect(v === 0, `mask[${i}]`).toBe(want[i] === 0);
        expect(Math.abs(v - want[i])).toBeLessThanOrEqual(1e-6 * Math.abs(want[i]));
      });
      if (p === 0) expect(got).toEqual(x);
    }
    const acc = f32(normal(rng(2), 3001));
    const got: number[] = await harness.runModule(CASES, 'dropoutKernel', { x, p: 0.5, seed: 3, acc });
    const want = dropoutAccumulateRef(acc, x, 0.5, 3);
    got.forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThan(1e-6 * (1 + Math.abs(want[i]))));
  });

  it('names a bad p', async () => {
    await expect(harness.runModule(CASES, 'dropoutKernel', { x: [1], p: 1, seed: 0 })).rejects.toThrow(/p must be in \[0, 1\), got 1/);
  });
});

describe('one LoRA adapter (GPT-2 c_attn shape: one A, three B blocks)', () => {
  it('matches the float64 twin with dropout: outputs, H, dx, dA, every dB', async () => {
    const rand = rng(9);
    const rows = 37;
    const inDim = 20;
    const r = 3;
    const outDims = [16, 8, 8];
    const dropout = { p: 0.25, seed: 1234 };
    const input = {
      rows,
      inDim,
      r,
      scale: 1.5,
      outDims,
      x: f32(normal(rand, rows * inDim)),
      a: f32(normal(rand, r * inDim, 0.3)),
      b: outDims.map((o) => f32(normal(rand, o * r, 0.3))),
      y0: outDims.map((o) => f32(normal(rand, rows * o))),
      dx0: f32(normal(rand, rows * inDim)),
      dys: outDims.map((o) => f32(normal(rand, rows * o))),
      dropout,
    };
    const got = await harness.runModule(CASES, 'loraLinear', input);
    const ref = { ...input, dropout };
    const fwd = loraForwardRef(ref);
    const bwd = loraBackwardRef(ref, input.dys);
    const close = (a: number[], b: ArrayLike<number>, label: string) =>
      a.forEach((v, i) => expect(Math.abs(v - b[i]), `${label}[${i}]`).toBeLessThan(2e-5 + 1e-4 * Math.abs(b[i])));
    close(got.h, fwd.h, 'H');
    got.ys.forEach((y: number[], j: number) => close(y, input.y0[j].map((v, i) => v + fwd.deltas[j][i]), `y${j}`));
    close(got.dx, input.dx0.map((v, i) => v + bwd.dx[i]), 'dx');
    close(got.dA, bwd.dA, 'dA');
    got.dB.forEach((b: number[], j: number) => close(b, bwd.dB[j], `dB${j}`));
  });
});

describe.each(['lora-gpt2-tiny', 'lora-llama-tiny'])('%s against PyTorch', (model) => {
  it('matches logits, loss, every adapter gradient and one AdamW step; the base stays frozen', async () => {
    const r = await harness.runModule(CASES, 'goldenLora', { model });
    expect(r.submits).toBe(1);
    expect(Math.abs(r.loss - r.goldenLoss)).toBeLessThan(1e-4);
    expect(Math.abs(r.gradNorm - r.goldenGradNorm) / r.goldenGradNorm).toBeLessThan(1e-4);
    expect(r.adapterTensors).toBe(model.includes('gpt2') ? 16 : 28);
    // Only the adapters reach AdamW; GPT-2's c_attn B is three engine tensors (q, k, v).
    expect(r.optimizerTensors).toBe(r.trainable);
    expect(r.optimizerTensors).toBe(model.includes('gpt2') ? 20 : 28);
    expect(r.frozenWithState).toBe(0);
    expect(r.baseValues).toBeGreaterThan(10_000);
    expect(r.changedBaseValues).toBe(0);
    // Frozen base: values only (the memory estimate counts the same buffers); before LoRA the
    // model held values and gradients.
    expect(r.loraBytes).toBe(r.estimatedLoraBytes);
    expect(r.loraBytes).toBeLessThan(r.fullBytes);
    for (const e of r.errors as { name: string; maxAbsError: number; maxAbsExpected: number }[]) {
      const tol = e.name.startsWith('logits') ? 1e-4 : e.name.startsWith('grad.') ? 2e-5 + 1e-3 * e.maxAbsExpected : 1e-5;
      expect(e.maxAbsError, `${e.name} (largest value ${e.maxAbsExpected})`).toBeLessThan(tol);
    }
  });
});

describe('LoRA engine behaviour', () => {
  it('refuses to differentiate the frozen base, to hand out adapted weights raw, and a second adapter', async () => {
    const r = await harness.runModule(CASES, 'refusals', { model: 'lora-llama-tiny' });
    expect(r.messages['backward without adapters']).toMatch(/nothing to differentiate: this forward ran without the adapters and the base weights are frozen/);
    expect(r.messages['raw adapted weight']).toMatch(/model\.layers\.0\.self_attn\.q_proj\.weight has a LoRA adapter: compute with model\.project/);
    expect(r.messages['second attach']).toMatch(/already has LoRA adapters \(r = 4\)/);
    expect(r.messages['attach on view']).toMatch(/base-model view/);
    expect(r.messages['bad dropout seed']).toMatch(/dropoutSeed must be a 32-bit unsigned integer, got -1/);
    expect(r.viewWeight).toBe(true);
  });

  it('applies lora_dropout only with a dropout seed, the same masks for the same seed', async () => {
    const r = await harness.runModule(CASES, 'dropoutInModel', { model: 'lora-gpt2-tiny', lora: { r: 4, lora_dropout: 0.3, target_modules: 'all-linear' } });
    expect(r).toEqual({
      plainRepeatable: true,
      seededRepeatable: true,
      seededDiffersFromPlain: true,
      seedsDiffer: true,
      gradsRepeatable: true,
      gradsDifferAcrossSeeds: true,
      gradsFinite: true,
    });
  });

  it.each(['lora-gpt2-tiny', 'lora-llama-tiny'])('%s: exports PEFT files, re-imports, merges, and resumes a checkpoint', async (model) => {
    const r = await harness.runModule(CASES, 'exportRoundTrip', { model });
    const gpt2 = model.includes('gpt2');
    expect(r.exportedNames).toContain(gpt2 ? 'base_model.model.transformer.h.1.attn.c_attn.lora_B.weight' : 'base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight');
    expect(r.exportedNames).toHaveLength(gpt2 ? 16 : 28);
    if (gpt2) {
      expect(r.exportedShapes['base_model.model.transformer.h.0.attn.c_attn.lora_A.weight']).toEqual([4, 32]);
      expect(r.exportedShapes['base_model.model.transformer.h.0.attn.c_attn.lora_B.weight']).toEqual([96, 4]);
      expect(r.exportedShapes['base_model.model.transformer.h.0.mlp.c_proj.lora_A.weight']).toEqual([4, 80]);
    } else {
      expect(r.exportedShapes['base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight']).toEqual([16, 4]);
      expect(r.exportedShapes['base_model.model.model.layers.0.mlp.down_proj.lora_A.weight']).toEqual([4, 48]);
    }
    expect(r.adapterConfig).toMatchObject({ peft_type: 'LORA', r: 4, fan_in_fan_out: gpt2, base_model_name_or_path: 'test/golden', use_rslora: !gpt2 });
    expect(r.reloadBitwise).toBe(true);
    expect(r.mergedTensors).toBe(0);
    expect(r.merged.maxAbsError).toBeLessThan(1e-4);
    expect(r.projectError).toBeLessThan(1e-5);
    expect(r.checkpointFiles).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'config.json', 'model.safetensors', 'optimizer.safetensors', 'trainer_state.json']);
    expect(r.baseFilesHaveOptimizer).toBe(false);
    expect(r.resumedTrainable).toBe(gpt2 ? 20 : 28);
    expect(r.resumedBitwise).toBe(true);
    expect(r.momentError).toBe(0);
  });
});

describe('GPU memory against the estimate (embedded 0.86M model)', () => {
  const modelDir = '/public/models/tiny-gpt2-byte/';
  it.each([
    ['full fine-tuning', null, false],
    ['LoRA r=8 all-linear, dropout', { r: 8, lora_dropout: 0.1, target_modules: 'all-linear' }, true],
  ])('%s: parameter bytes and every buffer of a training submission', async (_, lora, dropout) => {
    const r = await harness.runModule(CASES, 'memoryCheck', { modelDir, lora, batch: 2, seqLen: 16, dropout });
    expect(r.paramBytes).toBe(r.estimatedParamBytes);
    // LoRA keeps the base once, without gradients or moments: far below full fine-tuning.
    if (lora) expect(r.paramBytes).toBeLessThan(0.35 * r.fullFineTuningParamBytes);
    else expect(r.paramBytes).toBe(r.fullFineTuningParamBytes);
    expect(r.measuredStepBuffers).toBe(r.estimatedStepBuffers);
    expect(r.measuredStepBytes).toBe(r.estimatedStepBytes);
  });
});
