// Page side of test/browser/engineCounts.test.ts: the deterministic per-step counts of the
// engine (dispatches, bind groups and pipelines created or reused) for a fixed tiny model, so a
// change that adds dispatches or per-step setup shows up as a failing count, never as a time.
import { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { generate } from '../../../src/model/generate';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { SftTrainer } from '../../../src/model/sft';
import { buildSftBatch } from '../../../src/model/sftBatch';
import { warmModelPipelines } from '../../../src/model/warmup';
import { loraConfigFromTrl } from '../../../src/model/lora';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { parseGrpoConfig } from '../../../src/rl/config';
import { grpoStep } from '../../../src/rl/grpoStep';
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

/**
 * On a fresh device (its own pipeline cache): warms the pipelines of an SFT step and of sampling
 * at the shapes about to run, then runs `steps` SFT steps and one generate call; reports the
 * counter deltas of each.
 */
export async function warmedCounts(_rt: GpuRuntime, input: { layers: number; steps: number }) {
  const rt = await GpuRuntime.create();
  try {
    const config = fixtureConfig(input.layers);
    const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 3)));
    const { tokens } = buildSftBatch(EXAMPLES, tok.padTokenId);
    const prompts = [[tok.bosTokenId, 72, 105, 33], [tok.bosTokenId, 79, 107, 46]];
    const beforeWarm = rt.snapshotCounters();
    const requested = await warmModelPipelines(model, { train: { batch: tokens.batch, seqLen: tokens.seqLen }, sample: { batch: prompts.length, promptLen: 4 } });
    const warm = rt.countersSince(beforeWarm);
    const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: 1e-3, lr_scheduler_type: 'constant' });
    const steps = [];
    for (let i = 0; i < input.steps; i++) {
      const before = rt.snapshotCounters();
      const r = await trainer.trainStep(EXAMPLES);
      steps.push({ ...rt.countersSince(before), finite: Number.isFinite(r.loss) && !r.skipped });
    }
    const beforeSample = rt.snapshotCounters();
    const out = await generate(model, prompts, { max_completion_length: 3, temperature: 1, top_k: 0, top_p: 1, seed: 1 }, { eosTokenId: -1 });
    const sample = rt.countersSince(beforeSample);
    // The same call again: sampling in steady state.
    const beforeAgain = rt.snapshotCounters();
    await generate(model, prompts, { max_completion_length: 3, temperature: 1, top_k: 0, top_p: 1, seed: 1 }, { eosTokenId: -1 });
    const sampleAgain = rt.countersSince(beforeAgain);
    const tensors = model.params.trainable.length;
    model.params.destroy();
    return { requested, warm, steps, sample, sampleAgain, tensors, sampled: out.completions.map((c) => c.length), maxStorageBuffers: rt.device.limits.maxStorageBuffersPerShaderStage, software: rt.info.isFallback };
  } finally {
    rt.destroy();
  }
}

/**
 * On a fresh device: `steps` GRPO steps (LoRA on the fixture, 2 groups of 2 completions of up
 * to 3 tokens, sampling + judge + one update submission); the counter deltas of each step. The
 * first step compiles and builds everything; from the second on, a step of the same shapes
 * should create no bind group, pipeline or buffer. (The AdamW moments, made at the first
 * update after sampling's temporaries went back to the pool, used to take one of those and
 * leave the second step a buffer and its bind groups short.)
 */
export async function grpoCounts(_rt: GpuRuntime, input: { layers: number; steps: number }) {
  const rt = await GpuRuntime.create();
  try {
    const config = fixtureConfig(input.layers);
    const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 5), { frozen: true }));
    const grpo = parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_completion_length: 3, use_peft: true, lora_r: 4, learning_rate: 1e-3, seed: 2 });
    model.attachLora(loraConfigFromTrl(grpo), grpo.seed);
    const rubric = parseRubric({ name: 'counts', criteria: [{ id: 'a', text: 'Contains a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }] });
    const ctx = {
      rt,
      model,
      reference: null,
      tokenizer: tok,
      formatPrompt: (text: string) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
      rubric,
      rubricVersion: await rubricVersion(rubric),
      config: grpo,
    };
    const steps = [];
    for (let s = 0; s < input.steps; s++) {
      const before = rt.snapshotCounters();
      const r = await grpoStep(ctx, s, ['Name a color.', 'Say hi.']);
      steps.push({ ...rt.countersSince(before), completionTokens: r.rollouts.map((x) => x.completion_ids.length) });
    }
    model.params.destroy();
    return { steps };
  } finally {
    rt.destroy();
  }
}
