// Page side of test/browser/lora.test.ts: the dropout kernel, one LoRA adapter with dropout
// against its float64 twin, whole-model LoRA parity with PyTorch (logits, adapters-off logits,
// loss, every dA / dB, one AdamW step with the base frozen bit for bit), PEFT export and
// re-import, the merged model, LoRA checkpoints, and GPU bytes against the memory estimate.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { checkpointModelFiles, restoreLoraCheckpoint, saveCheckpoint } from '../../../src/model/checkpoint';
import { configFromHf, type ModelConfig } from '../../../src/model/config';
import type { LoraConfig } from '../../../src/model/lora';
import { adapterFiles, loadLoraAdapter, mergedModelFiles, peftNames, type AdapterFiles } from '../../../src/model/loraExport';
import { recordLoraBackward, recordLoraForward } from '../../../src/model/loraLinear';
import { estimateTrainingBytes, modelLayout, trainingStepBuffers } from '../../../src/model/memory';
import { ParameterStore } from '../../../src/model/parameters';
import { readSafetensors, type Tensor } from '../../../src/model/safetensors';
import { RecordingScratch } from '../../../src/model/scratch';
import { Transformer, type ForwardOptions, type TokenBatch } from '../../../src/model/transformer';
import { fromHfTensors, parameterSpecs } from '../../../src/model/weights';
import { runDropout } from '../../../src/ops/dropout';
import { recordLogprobsBackward, recordLogprobsForward } from '../../../src/ops/logprobs';
import { recordOptimizerStep } from '../../../src/ops/adamw';
import { readStepState } from '../../../src/ops/gradNorm';

async function fetchBytes(url: string): Promise<ArrayBuffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

export async function dropoutKernel(rt: GpuRuntime, input: { x: number[]; p: number; seed: number; acc?: number[] }) {
  const out = await runDropout(rt, { x: new Float32Array(input.x), p: input.p, seed: input.seed, acc: input.acc ? new Float32Array(input.acc) : undefined });
  return Array.from(out);
}

interface LoraLinearInput {
  rows: number;
  inDim: number;
  r: number;
  scale: number;
  outDims: number[];
  x: number[];
  a: number[];
  b: number[][];
  /** Initial outputs (the base layer's) and initial dx. */
  y0: number[][];
  dx0: number[];
  dys: number[][];
  dropout: { p: number; seed: number } | null;
}

/** One adapter's forward and backward on the GPU, in one submission. */
export async function loraLinear(rt: GpuRuntime, input: LoraLinearInput) {
  const up = (v: number[], label: string) => rt.upload(new Float32Array(v), label);
  const x = up(input.x, 'x');
  const a = up(input.a, 'a');
  const bs = input.b.map((b, j) => up(b, `b${j}`));
  const ys = input.y0.map((y, j) => up(y, `y${j}`));
  const dys = input.dys.map((d, j) => up(d, `dy${j}`));
  const dx = up(input.dx0, 'dx');
  const dA = up(new Array(input.a.length).fill(0), 'dA');
  const dB = input.b.map((b, j) => up(new Array(b.length).fill(0), `dB${j}`));
  const rec = rt.recorder('lora linear');
  const scratch = new RecordingScratch(rt, rec);
  const shape = { rows: input.rows, inDim: input.inDim, r: input.r, scale: input.scale };
  const blocks = bs.map((b, j) => ({ b, outDim: input.outDims[j] }));
  const h = recordLoraForward(rt, rec, x, a, blocks, ys, shape, input.dropout, scratch);
  recordLoraBackward(rt, rec, x, h, a, blocks, dys, dx, { a: dA, b: dB }, shape, input.dropout, scratch);
  scratch.finish();
  const reads = {
    ys: ys.map((y, j) => rec.readF32(y, input.y0[j].length)),
    h: rec.readF32(h, input.rows * input.r),
    dx: rec.readF32(dx, input.dx0.length),
    dA: rec.readF32(dA, input.a.length),
    dB: dB.map((b, j) => rec.readF32(b, input.b[j].length)),
  };
  await rec.submit();
  const result = {
    ys: (await Promise.all(reads.ys)).map((v) => Array.from(v)),
    h: Array.from(await reads.h),
    dx: Array.from(await reads.dx),
    dA: Array.from(await reads.dA),
    dB: (await Promise.all(reads.dB)).map((v) => Array.from(v)),
  };
  rt.release(x, a, h, dx, dA, ...bs, ...ys, ...dys, ...dB);
  return result;
}

interface Golden {
  config: ModelConfig;
  weights: Map<string, Tensor>;
  adapter: AdapterFiles;
  golden: Map<string, Tensor>;
  settings: { adamw: Record<string, number> };
  tokens: TokenBatch;
  targets: Uint32Array;
  mask: Float32Array;
}

async function loadGolden(name: string): Promise<Golden> {
  const dir = `/test/golden/${name}`;
  const config = configFromHf(JSON.parse(await fetchText(`${dir}/config.json`)));
  const golden = readSafetensors(await fetchBytes(`${dir}/golden.safetensors`)).tensors;
  const get = (n: string) => golden.get(n)!;
  const [batch, seqLen] = get('input_ids').shape;
  return {
    config,
    weights: fromHfTensors(config, readSafetensors(await fetchBytes(`${dir}/model.safetensors`)).tensors),
    adapter: { 'adapter_model.safetensors': await fetchBytes(`${dir}/adapter_model.safetensors`), 'adapter_config.json': await fetchText(`${dir}/adapter_config.json`) },
    golden,
    settings: JSON.parse(await fetchText(`${dir}/golden.json`)),
    tokens: { batch, seqLen, ids: Uint32Array.from(get('input_ids').data), pads: Array.from(get('pads').data) },
    targets: Uint32Array.from(get('target_ids').data),
    mask: get('loss_mask').data,
  };
}

function baseModel(rt: GpuRuntime, g: Golden): Transformer {
  return new Transformer(rt, g.config, ParameterStore.create(rt, g.config, g.weights));
}

interface ErrorEntry {
  name: string;
  maxAbsError: number;
  maxAbsExpected: number;
}

function compare(name: string, got: ArrayLike<number>, want: ArrayLike<number>, keep?: (i: number) => boolean): ErrorEntry {
  if (got.length !== want.length) throw new Error(`${name}: ${got.length} values, golden has ${want.length}`);
  let err = 0;
  let mag = 0;
  for (let i = 0; i < want.length; i++) {
    if (keep && !keep(i)) continue;
    const d = Math.abs(got[i] - want[i]);
    err = Number.isNaN(d) ? Infinity : Math.max(err, d);
    mag = Math.max(mag, Math.abs(want[i]));
  }
  return { name, maxAbsError: err, maxAbsExpected: mag };
}

/** Rows after each sequence's padding (padding rows' logits are not defined alike). */
function realRows(g: Golden): (i: number) => boolean {
  const V = g.config.vocabSize;
  const T = g.tokens.seqLen;
  return (i) => {
    const row = Math.floor(i / V);
    return row % T >= g.tokens.pads[Math.floor(row / T)];
  };
}

/** The model's adapter values (or gradients) under PEFT names: B blocks joined as PEFT's lora_B. */
async function peftTensors(model: Transformer, which: 'value' | 'grad'): Promise<Map<string, Float32Array>> {
  const lora = model.lora!;
  const t = await model.params.read(which, lora.specs.map((s) => s.name));
  const out = new Map<string, Float32Array>();
  for (const site of lora.sites) {
    const names = peftNames(site);
    out.set(names.a, t.get(site.a)!.data);
    const parts = site.outputs.map((o) => t.get(o.b)!.data);
    const joined = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) {
      joined.set(p, at);
      at += p.length;
    }
    out.set(names.b, joined);
  }
  return out;
}

/** Logits of one forward pass, in their own submission. */
async function logitsOf(rt: GpuRuntime, model: Transformer, tokens: TokenBatch, options?: ForwardOptions): Promise<Float32Array> {
  const rec = rt.recorder('logits');
  const state = model.forward(rec, tokens, options);
  const read = rec.readF32(state.logits, tokens.batch * tokens.seqLen * model.config.vocabSize);
  await rec.submit();
  model.release(state);
  return read;
}

/**
 * PEFT adapter loaded onto the base; forward (adapters on), cross-entropy, backward and one
 * clipped AdamW step in one submission; adapters-off logits through the base-model view.
 */
export async function goldenLora(rt: GpuRuntime, input: { model: string }) {
  const g = await loadGolden(input.model);
  const model = baseModel(rt, g);
  const fullBytes = model.params.bytes;
  await loadLoraAdapter(model, g.adapter);
  const frozenBefore = await model.params.read('value', parameterSpecs(g.config).map((s) => s.name));
  const reference = model.withoutAdapters();
  const { config } = g;
  const rows = g.tokens.batch * g.tokens.seqLen;
  const maskSum = g.mask.reduce((a, b) => a + b, 0);

  const baseLogits = await logitsOf(rt, reference, g.tokens);
  const offLogits = await logitsOf(rt, model, g.tokens, { adapters: false });

  const submitsBefore = rt.counters.submits;
  const rec = rt.recorder('lora golden step');
  model.params.recordZeroGrads(rec);
  const state = model.forward(rec, g.tokens);
  const targets = rt.upload(g.targets, 'targets');
  const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: config.vocabSize, temperature: 1 });
  const gradLp = rt.upload(g.mask.map((m) => -m / maskSum), 'grad_logprobs');
  const dLogits = recordLogprobsBackward(rt, rec, lp, gradLp, null);
  model.backward(rec, state, dLogits);
  const logitsRead = rec.readF32(state.logits, rows * config.vocabSize);
  const logprobsRead = rec.readF32(lp.logprobs, rows);
  const a = g.settings.adamw;
  const tensors = model.params.optimizerTensors(rec);
  const norm = recordOptimizerStep(rt, rec, tensors, {
    step: 1,
    learning_rate: a.learning_rate,
    adam_beta1: a.adam_beta1,
    adam_beta2: a.adam_beta2,
    adam_epsilon: a.adam_epsilon,
    weight_decay: a.weight_decay,
    max_grad_norm: a.max_grad_norm,
  });
  const stepState = readStepState(rec, norm.stepState);
  await rec.submit();
  const submits = rt.counters.submits - submitsBefore;
  const logprobs = await logprobsRead;
  let loss = 0;
  for (let i = 0; i < rows; i++) if (g.mask[i]) loss -= (g.mask[i] * logprobs[i]) / maskSum;
  const get = (n: string) => g.golden.get(n)!.data;
  const keep = realRows(g);
  const errors: ErrorEntry[] = [
    compare('logits', await logitsRead, get('logits'), keep),
    compare('logits_base (view)', baseLogits, get('logits_base'), keep),
    compare('logits_base (adapters: false)', offLogits, get('logits_base'), keep),
  ];
  const grads = await peftTensors(model, 'grad');
  for (const [name, t] of grads) errors.push(compare(`grad.${name}`, t, get(`grad.${name}`)));
  const values = await peftTensors(model, 'value');
  for (const [name, t] of values) errors.push(compare(`adamw.${name}`, t, get(`adamw.${name}`)));
  const frozenAfter = await model.params.read('value', [...frozenBefore.keys()]);
  let changedBaseValues = 0;
  for (const [name, t] of frozenBefore) {
    const after = new Uint32Array(frozenAfter.get(name)!.data.buffer);
    const before = new Uint32Array(t.data.buffer);
    for (let i = 0; i < before.length; i++) if (before[i] !== after[i]) changedBaseValues++;
  }
  const s = await stepState;
  const trainable = model.params.trainable.map((p) => p.name);
  const frozenWithState = model.params.list.filter((p) => !trainable.includes(p.name) && (p.grad || p.m || p.v)).length;
  const estimate = estimateTrainingBytes({ config, lora: model.lora!.config, numGenerations: 1, promptsPerStep: 1, promptTokens: 1, completionTokens: 1, beta: 0 });
  const result = {
    loss,
    goldenLoss: get('loss')[0],
    gradNorm: s.gradNorm,
    goldenGradNorm: get('grad_norm')[0],
    submits,
    optimizerTensors: tensors.length,
    adapterTensors: grads.size,
    trainable: trainable.length,
    frozenWithState,
    changedBaseValues,
    baseValues: [...frozenBefore.values()].reduce((n, t) => n + t.data.length, 0),
    fullBytes,
    loraBytes: model.params.bytes,
    estimatedLoraBytes: estimate.weights + estimate.gradients + estimate.optimizer,
    errors,
  };
  rt.release(targets, gradLp, lp.logprobs, lp.entropy, lp.rowStats, dLogits, norm.stepState, norm.tensorStats);
  model.release(state);
  model.params.destroy();
  return result;
}

/** What the base-model view refuses, and what a LoRA model refuses to hand out. */
export async function refusals(rt: GpuRuntime, input: { model: string }) {
  const g = await loadGolden(input.model);
  const model = baseModel(rt, g);
  await loadLoraAdapter(model, g.adapter);
  const messages: Record<string, string> = {};
  const attempt = async (name: string, fn: () => unknown) => {
    try {
      await fn();
      messages[name] = 'no error';
    } catch (err) {
      messages[name] = (err as Error).message;
    }
  };
  const view = model.withoutAdapters();
  await attempt('backward without adapters', async () => {
    const rec = rt.recorder('refuse');
    const state = view.forward(rec, g.tokens);
    try {
      view.backward(rec, state, state.logits);
    } finally {
      await rec.submit();
      view.release(state);
    }
  });
  await attempt('raw adapted weight', () => model.p(model.names.layers[0].q));
  await attempt('second attach', () => model.attachLora({ r: 2 }, 1));
  await attempt('attach on view', () => view.attachLora({ r: 2 }, 1));
  await attempt('bad dropout seed', () => model.forward(rt.recorder('x'), g.tokens, { dropoutSeed: -1 }));
  const viewWeight = view.p(model.names.layers[0].q) === model.params.get(model.names.layers[0].q).value;
  model.params.destroy();
  return { messages, viewWeight };
}

/** lora_dropout applies only with a dropout seed, reproducibly, and gradients follow the masks. */
export async function dropoutInModel(rt: GpuRuntime, input: { model: string; lora: Partial<LoraConfig> }) {
  const g = await loadGolden(input.model);
  const model = baseModel(rt, g);
  model.attachLora(input.lora, 3);
  // B = 0 at PEFT init: give the adapters a value so they change the output.
  for (const site of model.lora!.sites) for (const o of site.outputs) model.params.writeValue(o.b, Float32Array.from({ length: o.outDim * model.lora!.config.r }, (_, i) => Math.sin(i + site.index)));
  const plain1 = await logitsOf(rt, model, g.tokens);
  const plain2 = await logitsOf(rt, model, g.tokens);
  const seeded1 = await logitsOf(rt, model, g.tokens, { dropoutSeed: 5 });
  const seeded2 = await logitsOf(rt, model, g.tokens, { dropoutSeed: 5 });
  const other = await logitsOf(rt, model, g.tokens, { dropoutSeed: 6 });
  const gradsWith = async (seed: number) => {
    const rec = rt.recorder('dropout grads');
    model.params.recordZeroGrads(rec);
    const state = model.forward(rec, g.tokens, { dropoutSeed: seed });
    const rows = g.tokens.batch * g.tokens.seqLen;
    const targets = rt.upload(g.targets, 'targets');
    const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: g.config.vocabSize, temperature: 1 });
    const gradLp = rt.upload(g.mask.map((m) => -m), 'grad_logprobs');
    const dLogits = recordLogprobsBackward(rt, rec, lp, gradLp, null);
    model.backward(rec, state, dLogits);
    await rec.submit();
    rt.release(targets, lp.logprobs, lp.entropy, lp.rowStats, gradLp, dLogits);
    model.release(state);
    const t = await model.params.read('grad');
    return Array.from(t.values()).flatMap((x) => Array.from(x.data));
  };
  const g1 = await gradsWith(5);
  const g2 = await gradsWith(5);
  const g3 = await gradsWith(6);
  const same = (x: ArrayLike<number>, y: ArrayLike<number>) => x.length === y.length && Array.from(x).every((v, i) => Object.is(v, y[i]));
  model.params.destroy();
  return {
    plainRepeatable: same(plain1, plain2),
    seededRepeatable: same(seeded1, seeded2),
    seededDiffersFromPlain: !same(seeded1, plain1),
    seedsDiffer: !same(seeded1, other),
    gradsRepeatable: same(g1, g2),
    gradsDifferAcrossSeeds: !same(g1, g3),
    gradsFinite: g1.every(Number.isFinite),
  };
}

/**
 * Trains one step so B is non-zero, then: exports PEFT files and loads them onto a fresh base
 * (same logits, bit for bit); merges and loads the merged model as a plain one (same logits,
 * f32 rounding); compares project() with the merged weights; saves a LoRA checkpoint and
 * resumes it (adapter and AdamW moments restored).
 */
export async function exportRoundTrip(rt: GpuRuntime, input: { model: string }) {
  const g = await loadGolden(input.model);
  const model = baseModel(rt, g);
  await loadLoraAdapter(model, g.adapter);
  const rows = g.tokens.batch * g.tokens.seqLen;
  let rec = rt.recorder('train');
  model.params.recordZeroGrads(rec);
  const state = model.forward(rec, g.tokens);
  const targets = rt.upload(g.targets, 'targets');
  const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: g.config.vocabSize, temperature: 1 });
  const gradLp = rt.upload(g.mask.map((m) => -m / 10), 'grad_logprobs');
  const dLogits = recordLogprobsBackward(rt, rec, lp, gradLp, null);
  model.backward(rec, state, dLogits);
  const norm = recordOptimizerStep(rt, rec, model.params.optimizerTensors(rec), { step: 1, learning_rate: 0.05 });
  await rec.submit();
  rt.release(targets, lp.logprobs, lp.entropy, lp.rowStats, gradLp, dLogits, norm.stepState, norm.tensorStats);
  model.release(state);
  const logits = await logitsOf(rt, model, g.tokens);
  const keep = realRows(g);

  const files = await adapterFiles(model, { baseModel: 'test/golden' });
  const exported = readSafetensors(files['adapter_model.safetensors']);
  const fresh = baseModel(rt, g);
  await loadLoraAdapter(fresh, files);
  const reloaded = await logitsOf(rt, fresh, g.tokens);

  const merged = await mergedModelFiles(model);
  const mergedConfig = configFromHf(JSON.parse(merged['config.json']));
  const mergedModel = new Transformer(rt, mergedConfig, ParameterStore.create(rt, mergedConfig, fromHfTensors(mergedConfig, readSafetensors(merged['model.safetensors']).tensors)));
  const mergedLogits = await logitsOf(rt, mergedModel, g.tokens);

  // project() of every adapted projection against the merged weight, on one random input.
  let projectError = 0;
  rec = rt.recorder('project');
  const reads: [Promise<Float32Array>, Promise<Float32Array>][] = [];
  const projectRows = 3;
  const owned: GPUBuffer[] = [];
  for (const site of model.lora!.sites) {
    const x = rt.upload(Float32Array.from({ length: projectRows * site.inDim }, (_, i) => Math.cos(i * 0.37)), 'x');
    owned.push(x);
    for (const o of site.outputs) {
      const y = model.project(rec, site.layer, o.role, x, projectRows);
      const z = mergedModel.project(rec, site.layer, o.role, x, projectRows);
      owned.push(y, z);
      reads.push([rec.readF32(y, projectRows * o.outDim), rec.readF32(z, projectRows * o.outDim)]);
    }
  }
  await rec.submit();
  for (const [y, z] of reads) projectError = Math.max(projectError, compare('project', await y, await z).maxAbsError);
  rt.release(...owned);

  // What loadCheckpoint does, minus the tokenizer the golden models do not have.
  const checkpoint = await saveCheckpoint(model, { global_step: 1, seed: 3 });
  const baseFiles = checkpointModelFiles(checkpoint);
  const resumedConfig = configFromHf(baseFiles.config);
  if (!(baseFiles.weights instanceof ArrayBuffer)) throw new Error('a checkpoint holds one model.safetensors');
  const resumed = new Transformer(rt, resumedConfig, ParameterStore.create(rt, resumedConfig, fromHfTensors(resumedConfig, readSafetensors(baseFiles.weights).tensors)));
  await restoreLoraCheckpoint(resumed, checkpoint);
  const resumedLogits = await logitsOf(rt, resumed, g.tokens);
  const momentsBefore = await model.params.read('m');
  const momentsAfter = await resumed.params.read('m');
  let momentError = 0;
  for (const [name, t] of momentsBefore) momentError = Math.max(momentError, compare(name, momentsAfter.get(name)!.data, t.data).maxAbsError);

  const result = {
    exportedNames: [...exported.tensors.keys()].sort(),
    exportedShapes: Object.fromEntries([...exported.tensors].map(([n, t]) => [n, t.shape])),
    adapterConfig: JSON.parse(files['adapter_config.json']),
    reloadBitwise: reloaded.every((v, i) => Object.is(v, logits[i])),
    merged: compare('merged logits', mergedLogits, logits, keep),
    mergedTensors: [...readSafetensors(merged['model.safetensors']).tensors.keys()].filter((n) => n.includes('lora')).length,
    projectError,
    checkpointFiles: Object.keys(checkpoint).sort(),
    baseFilesHaveOptimizer: baseFiles.optimizer !== undefined,
    resumedTrainable: resumed.params.trainable.length,
    resumedBitwise: resumedLogits.every((v, i) => Object.is(v, logits[i])),
    momentError,
  };
  for (const m of [model, fresh, mergedModel, resumed]) m.params.destroy();
  return result;
}

/**
 * GPU bytes against the memory estimate on the embedded model: the ParameterStore's bytes
 * after an optimizer step (full fine-tuning and LoRA), and every storage buffer one training
 * submission acquires from the pool (counted by wrapping acquire) against trainingStepBuffers.
 */
export async function memoryCheck(rt: GpuRuntime, input: { modelDir: string; lora: Partial<LoraConfig> | null; batch: number; seqLen: number; dropout: boolean }) {
  const config = configFromHf(JSON.parse(await fetchText(`${input.modelDir}config.json`)));
  const weights = fromHfTensors(config, readSafetensors(await fetchBytes(`${input.modelDir}model.safetensors`)).tensors);
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, weights));
  if (input.lora) model.attachLora(input.lora, 1);
  const tokens: TokenBatch = {
    batch: input.batch,
    seqLen: input.seqLen,
    // Distinct ids, so the embedding scatter index has its estimated (largest) size.
    ids: Uint32Array.from({ length: input.batch * input.seqLen }, (_, i) => (i * 5 + 1) % config.vocabSize),
    pads: Array.from({ length: input.batch }, (_, b) => b % 3),
  };
  const rows = tokens.batch * tokens.seqLen;
  // The caller's inputs are uploaded before the measured window: the estimate covers the step's own buffers.
  const targets = rt.upload(Uint32Array.from({ length: rows }, (_, i) => (i * 11) % config.vocabSize), 'targets');
  const gradLp = rt.upload(Float32Array.from({ length: rows }, () => -1 / rows), 'grad_logprobs');
  const step = async (measure: boolean) => {
    const rec = rt.recorder('memory step');
    model.params.recordZeroGrads(rec);
    const tensors = model.params.optimizerTensors(rec);
    const acquired: { label: string; bytes: number }[] = [];
    const pool = rt.pool;
    const original = pool.acquire.bind(pool);
    if (measure) {
      pool.acquire = (bytes: number, usage: GPUBufferUsageFlags, label?: string) => {
        const b = original(bytes, usage, label);
        if (usage & GPUBufferUsage.STORAGE) acquired.push({ label: label ?? '', bytes: b.size });
        return b;
      };
    }
    try {
      const state = model.forward(rec, tokens, input.dropout ? { dropoutSeed: 9 } : {});
      const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: config.vocabSize, temperature: 1 });
      const dLogits = recordLogprobsBackward(rt, rec, lp, gradLp, null);
      model.backward(rec, state, dLogits);
      const norm = recordOptimizerStep(rt, rec, tensors, { step: 1, learning_rate: 0 });
      pool.acquire = original;
      await rec.submit();
      rt.release(lp.logprobs, lp.entropy, lp.rowStats, dLogits, norm.stepState, norm.tensorStats);
      model.release(state);
    } finally {
      pool.acquire = original;
    }
    return acquired;
  };
  await step(false);
  const acquired = await step(true);
  const estimated = trainingStepBuffers(modelLayout(config, input.lora), tokens.batch, tokens.seqLen, { dropout: input.dropout });
  const shape = { config, numGenerations: 1, promptsPerStep: 1, promptTokens: 1, completionTokens: 1, beta: 0 };
  const estimate = estimateTrainingBytes({ ...shape, lora: input.lora });
  const full = estimateTrainingBytes({ ...shape, lora: null });
  const result = {
    paramBytes: model.params.bytes,
    estimatedParamBytes: estimate.weights + estimate.gradients + estimate.optimizer,
    fullFineTuningParamBytes: full.weights + full.gradients + full.optimizer,
    measuredStepBytes: acquired.reduce((s, a) => s + a.bytes, 0),
    measuredStepBuffers: acquired.length,
    estimatedStepBytes: estimated.reduce((s, b) => s + b.allocated, 0),
    estimatedStepBuffers: estimated.length,
  };
  rt.release(targets, gradLp);
  model.params.destroy();
  return result;
}
