// Page side of test/browser/sft.test.ts: SFT of a fresh tiny byte-level GPT-2 on a fixed set.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { loadCheckpoint, saveCheckpoint } from '../../../src/model/checkpoint';
import { configFromHf, type ModelConfig } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { SftTrainer } from '../../../src/model/sft';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';

const PAIRS = [
  ['Name a color.', 'Blue.'],
  ['Name a fruit.', 'An apple.'],
  ['Say hi.', 'Hello there!'],
  ['Count to three.', '1, 2, 3.'],
];

const tok = new ByteTokenizer();

function tinyConfig(): ModelConfig {
  return configFromHf({
    model_type: 'gpt2',
    vocab_size: tok.vocabSize,
    n_embd: 32,
    n_layer: 2,
    n_head: 4,
    n_inner: 64,
    n_positions: 64,
    bos_token_id: tok.bosTokenId,
    eos_token_id: tok.eosTokenId,
    rubric_playground: { tokenizer: 'byte', prompt_template: 'Instruction: {prompt}\nResponse: ' },
  });
}

function examples() {
  return PAIRS.map(([p, c]) => ({
    prompt: [tok.bosTokenId, ...tok.encode(`Instruction: ${p}\nResponse: `)],
    completion: [...tok.encode(c), tok.eosTokenId],
  }));
}

export async function sftLearning(rt: GpuRuntime, input: { steps: number; learningRate: number }) {
  const config = tinyConfig();
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 7)));
  const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: input.learningRate, lr_scheduler_type: 'constant', warmup_steps: 0 });
  const data = examples();
  const steps = [];
  for (let i = 0; i < input.steps; i++) steps.push(await trainStepSummary(trainer, data));
  model.params.destroy();
  return { steps, parameters: model.params.size };
}

async function trainStepSummary(trainer: SftTrainer, examples: Parameters<SftTrainer['trainStep']>[0]) {
  const r = await trainer.trainStep(examples);
  return { loss: r.loss, gradNorm: r.gradNorm, skipped: r.skipped, submits: r.submits, seconds: r.seconds };
}

/**
 * Trains 2 steps, saves a checkpoint, trains a third; then reloads the checkpoint into a fresh
 * model and trains the third step again. Returns both third steps and their weights.
 */
export async function resumeExact(rt: GpuRuntime) {
  const config = tinyConfig();
  const settings = { learning_rate: 1e-2, lr_scheduler_type: 'linear' as const, warmup_steps: 1, num_training_steps: 10 };
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 3)));
  const trainer = new SftTrainer(rt, model, tok.padTokenId, settings);
  const data = examples();
  await trainer.trainStep(data);
  await trainer.trainStep(data);
  const files = await saveCheckpoint(model, { global_step: trainer.step, seed: 3 });
  const third = await trainer.trainStep(data);
  const weights = await model.params.read('value');
  model.params.destroy();

  const loaded = await loadCheckpoint(rt, files);
  const resumed = new SftTrainer(rt, loaded.model, tok.padTokenId, settings);
  resumed.step = loaded.state.global_step;
  const again = await resumed.trainStep(data);
  const weightsAgain = await loaded.model.params.read('value');
  loaded.model.params.destroy();
  let maxDiff = 0;
  for (const [name, t] of weights) {
    const u = weightsAgain.get(name)!.data;
    for (let i = 0; i < t.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(t.data[i] - u[i]));
  }
  return {
    files: Object.keys(files).sort(),
    modelBytes: files['model.safetensors'].byteLength,
    step: loaded.state.global_step,
    loss: third.loss,
    lossAgain: again.loss,
    gradNorm: third.gradNorm,
    gradNormAgain: again.gradNorm,
    maxWeightDiff: maxDiff,
  };
}

/** A NaN in one weight makes the loss and gradients NaN: the update must be skipped, weights kept. */
export async function nanSkips(rt: GpuRuntime) {
  const config = tinyConfig();
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 5)));
  const poisoned = model.params.get('transformer.h.0.mlp.c_fc.weight');
  rt.device.queue.writeBuffer(poisoned.value.buffer, poisoned.value.offset + 4 * 10, new Float32Array([NaN]));
  const before = await model.params.read('value');
  const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: 1e-2 });
  const r = await trainer.trainStep(examples());
  const after = await model.params.read('value');
  let changed = 0;
  for (const [name, t] of before) {
    const u = after.get(name)!.data;
    for (let i = 0; i < t.data.length; i++) if (!Object.is(t.data[i], u[i])) changed++;
  }
  model.params.destroy();
  return { skipped: r.skipped, loss: r.loss, step: trainer.step, changed };
}
