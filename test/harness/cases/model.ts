// Page side of test/browser/model.test.ts: loads a golden checkpoint through the same code path
// as real models (config.json + model.safetensors), runs forward, cross-entropy, backward and
// one clipped AdamW step in ONE submission, and compares everything with the PyTorch values.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { ParameterStore } from '../../../src/model/parameters';
import { readSafetensors, type Tensor } from '../../../src/model/safetensors';
import { Transformer } from '../../../src/model/transformer';
import { fromHfTensors, toHfTensors } from '../../../src/model/weights';
import { recordLogprobsBackward, recordLogprobsForward } from '../../../src/ops/logprobs';
import { recordOptimizerStep } from '../../../src/ops/adamw';
import { readStepState } from '../../../src/ops/gradNorm';

async function fetchBytes(url: string): Promise<ArrayBuffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

export interface TensorError {
  name: string;
  maxAbsError: number;
  maxAbsExpected: number;
}

function compare(name: string, got: Float32Array, want: Float32Array, keep?: (i: number) => boolean): TensorError {
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

export async function goldenStep(rt: GpuRuntime, input: { model: string }) {
  const dir = `/test/golden/${input.model}`;
  const config = configFromHf(await (await fetch(`${dir}/config.json`)).json());
  const settings = await (await fetch(`${dir}/golden.json`)).json();
  const weights = readSafetensors(await fetchBytes(`${dir}/model.safetensors`));
  const golden = readSafetensors(await fetchBytes(`${dir}/golden.safetensors`)).tensors;
  const get = (name: string): Tensor => {
    const t = golden.get(name);
    if (!t) throw new Error(`golden.safetensors has no ${name}`);
    return t;
  };
  const [batch, seqLen] = get('input_ids').shape;
  const rows = batch * seqLen;
  const pads = Array.from(get('pads').data);
  const tokens = { batch, seqLen, ids: Uint32Array.from(get('input_ids').data), pads };
  const targets = Uint32Array.from(get('target_ids').data);
  const mask = get('loss_mask').data;
  const maskSum = mask.reduce((a, b) => a + b, 0);

  const params = ParameterStore.create(rt, config, fromHfTensors(config, weights.tensors));
  const model = new Transformer(rt, config, params);
  const submitsBefore = rt.counters.submits;
  const rec = rt.recorder('golden step');
  params.recordZeroGrads(rec);
  const state = model.forward(rec, tokens);
  const targetBuf = rt.upload(targets, 'targets');
  const lp = recordLogprobsForward(rt, rec, state.logits, targetBuf, { rows, vocab: config.vocabSize, temperature: 1 });
  const gradLp = rt.upload(mask.map((m) => -m / maskSum), 'grad_logprobs');
  const dLogits = recordLogprobsBackward(rt, rec, lp, gradLp, null);
  model.backward(rec, state, dLogits);
  const logitsRead = rec.readF32(state.logits, rows * config.vocabSize);
  const logprobsRead = rec.readF32(lp.logprobs, rows);
  const a = settings.adamw;
  const norm = recordOptimizerStep(rt, rec, params.optimizerTensors(rec), {
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

  const logits = await logitsRead;
  const logprobs = await logprobsRead;
  let loss = 0;
  for (let i = 0; i < rows; i++) if (mask[i]) loss -= (mask[i] * logprobs[i]) / maskSum;
  // Logits of padding rows are not defined the same way in both (HF attends somewhere; we output 0).
  const V = config.vocabSize;
  const realRow = (i: number) => Math.floor(i / V) % seqLen >= pads[Math.floor(Math.floor(i / V) / seqLen)];
  const errors: TensorError[] = [compare('logits', logits, get('logits').data, realRow)];
  const grads = toHfTensors(config, await params.read('grad'));
  const values = toHfTensors(config, await params.read('value'));
  for (const [name, t] of grads) errors.push(compare(`grad.${name}`, t.data, get(`grad.${name}`).data));
  // AdamW's first step moves each value by about lr * g / (|g| + eps): where the true gradient
  // is ~0 (e.g. GPT-2's key bias, which softmax ignores) the direction is rounding noise in
  // both implementations, so those entries are left out of the comparison and counted.
  let noiseEntries = 0;
  for (const [name, t] of values) {
    const g = get(`grad.${name}`).data;
    // Exactly-zero gradients (embedding rows of unused tokens) are deterministic: keep them.
    const meaningful = (i: number) => g[i] === 0 || Math.abs(g[i]) > 1e-6;
    noiseEntries += g.reduce((n, x, i) => n + (meaningful(i) ? 0 : 1), 0);
    errors.push(compare(`adamw.${name}`, t.data, get(`adamw.${name}`).data, meaningful));
  }
  const s = await stepState;
  rt.release(targetBuf, gradLp, lp.logprobs, lp.entropy, lp.rowStats, dLogits, norm.stepState, norm.tensorStats);
  model.release(state);
  params.destroy();
  return {
    loss,
    goldenLoss: get('loss').data[0],
    gradNorm: s.gradNorm,
    goldenGradNorm: get('grad_norm').data[0],
    submits,
    tensors: grads.size,
    values: params.size,
    noiseEntries,
    errors,
  };
}
