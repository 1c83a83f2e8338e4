// Page side of test/browser/engineCounts.test.ts: the deterministic per-step counts of the
// engine (dispatches, bind groups and pipelines created or reused) for a fixed tiny model, so a
// change that adds dispatches or per-step setup shows up as a failing count, never as a time.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { SftTrainer } from '../../../src/model/sft';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';

const tok = new ByteTokenizer();

function fixtureConfig(layers: number) {
  return configFromHf({
    model_type: 'gpt2',
    vocab_size: tok.vocabSize,
    n_embd: 32,
    n_layer: layers,
    n_head: 4,
    n_inner: 64,
    n_positions: 64,
    bos_token_id: tok.bosTokenId,
    eos_token_id: tok.eosTokenId,
    rubric_playground: { tokenizer: 'byte', prompt_template: 'Instruction: {prompt}\nResponse: ' },
  });
}

const EXAMPLES = [
  ['Name a color.', 'Blue.'],
  ['Say hi.', 'Hello there!'],
].map(([p, c]) => ({
  prompt: [tok.bosTokenId, ...tok.encode(`Instruction: ${p}\nResponse: `)],
  completion: [...tok.encode(c), tok.eosTokenId],
}));

/** Counter deltas of each of `steps` SFT steps of a fresh model with `layers` layers. */
export async function trainStepCounts(rt: GpuRuntime, input: { layers: number; steps: number }) {
  const config = fixtureConfig(input.layers);
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 3)));
  const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: 1e-3, lr_scheduler_type: 'constant' });
  const steps = [];
  try {
    for (let i = 0; i < input.steps; i++) {
      const before = rt.snapshotCounters();
      const r = await trainer.trainStep(EXAMPLES);
      steps.push({ ...rt.countersSince(before), finite: Number.isFinite(r.loss) && !r.skipped });
    }
  } finally {
    model.params.destroy();
  }
  return { steps, tensors: model.params.trainable.length, maxStorageBuffers: rt.device.limits.maxStorageBuffersPerShaderStage };
}
