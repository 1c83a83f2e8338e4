// Page side of test/browser/nanGuard.test.ts: whole tiny models (GPT-2 and Llama style) with
// one weight set to NaN, through an SFT update step and through sampling. The trainer's guard
// (grad norm + finite flag, AdamW skipping) only works if no kernel turns the NaN into a finite
// value on the way to the loss and the gradients.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf, type ModelConfig } from '../../../src/model/config';
import { generate } from '../../../src/model/generate';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { SftTrainer } from '../../../src/model/sft';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseGrpoConfig } from '../../../src/rl/config';
import { grpoStep, type GrpoContext } from '../../../src/rl/grpoStep';
import { parseRubric, rubricVersion } from '../../../src/rubric';

const tok = new ByteTokenizer();

export type Architecture = 'gpt2' | 'llama';

function tinyConfig(architecture: Architecture): ModelConfig {
  const shared = { vocab_size: tok.vocabSize, bos_token_id: tok.bosTokenId, eos_token_id: tok.eosTokenId };
  if (architecture === 'gpt2') {
    return configFromHf({ ...shared, model_type: 'gpt2', n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 64 });
  }
  return configFromHf({
    ...shared,
    model_type: 'llama',
    hidden_size: 32,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    intermediate_size: 64,
    max_position_embeddings: 64,
  });
}

const PAIRS = [
  ['Name a color.', 'Blue.'],
  ['Say hi.', 'Hello there!'],
];

function examples() {
  return PAIRS.map(([p, c]) => ({
    prompt: [tok.bosTokenId, ...tok.encode(`Q: ${p}\nA: `)],
    completion: [...tok.encode(c), tok.eosTokenId],
  }));
}

function tinyModel(rt: GpuRuntime, architecture: Architecture): Transformer {
  const config = tinyConfig(architecture);
  return new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 11)));
}

export interface Poison {
  /** Internal parameter name (see src/model/weights.ts). */
  weight: string;
  /** Element index inside the tensor. */
  index: number;
}

function poison(rt: GpuRuntime, model: Transformer, p: Poison): void {
  const { buffer, offset } = model.params.get(p.weight).value;
  rt.device.queue.writeBuffer(buffer, offset + 4 * p.index, new Float32Array([NaN]));
}

/** Elements (over every tensor of `which`) whose bits differ between two reads. */
function changedElements(before: Map<string, { data: Float32Array }>, after: Map<string, { data: Float32Array }>): number {
  let changed = 0;
  for (const [name, t] of before) {
    const u = after.get(name)!.data;
    for (let i = 0; i < t.data.length; i++) if (!Object.is(t.data[i], u[i])) changed++;
  }
  return changed;
}

function nonZero(tensors: Map<string, { data: Float32Array }>): number {
  let n = 0;
  for (const t of tensors.values()) for (const x of t.data) if (!Object.is(x, 0)) n++;
  return n;
}

/**
 * One SFT step on a fresh tiny model with `poisoned` (or nothing, as a control) set to NaN.
 * Reports the step, how many weight elements changed bitwise, and how many optimizer-moment
 * elements are not exactly zero afterwards (a skipped first step leaves them all zero).
 */
export async function sftStep(rt: GpuRuntime, input: { architecture: Architecture; poisoned: Poison | null }) {
  const model = tinyModel(rt, input.architecture);
  try {
    if (input.poisoned) poison(rt, model, input.poisoned);
    const before = await model.params.read('value');
    const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: 1e-2 });
    const r = await trainer.trainStep(examples());
    const after = await model.params.read('value');
    return {
      skipped: r.skipped,
      loss: r.loss,
      gradNorm: r.gradNorm,
      step: trainer.step,
      changedWeights: changedElements(before, after),
      nonZeroMoments: nonZero(await model.params.read('m')) + nonZero(await model.params.read('v')),
    };
  } finally {
    model.params.destroy();
  }
}

/**
 * Generation with a NaN in GPT-2's position table at the position of the first sampled token:
 * the prompt (prefill) is clean, so the first token is real, and every later step sees NaN.
 */
export async function generateAfterNaN(rt: GpuRuntime, input: { temperature: number; steps: number }) {
  const model = tinyModel(rt, 'gpt2');
  try {
    const prompt = [tok.bosTokenId, ...tok.encode('Q: hi\nA: ')];
    const row = prompt.length; // the first sampled token sits at this position
    const dim = model.config.hiddenSize;
    const wpe = model.params.get('transformer.wpe.weight').value;
    rt.device.queue.writeBuffer(wpe.buffer, wpe.offset + 4 * (row * dim + 3), new Float32Array([NaN]));
    const out = await generate(
      model,
      [prompt, prompt],
      { max_completion_length: input.steps, temperature: input.temperature, top_k: 0, top_p: 1, seed: 5 },
      // No id is -1: every sequence runs all the steps.
      { eosTokenId: -1 },
    );
    return { completions: out.completions, logprobs: out.logprobs };
  } finally {
    model.params.destroy();
  }
}

/** A GRPO step on a model with a NaN weight: it must fail with a message that names the cause. */
export async function grpoAfterNaN(rt: GpuRuntime) {
  const model = tinyModel(rt, 'gpt2');
  try {
    const wpe = model.params.get('transformer.wpe.weight').value;
    rt.device.queue.writeBuffer(wpe.buffer, wpe.offset, new Float32Array([NaN]));
    const rubric = parseRubric({ name: 'r', criteria: [{ id: 'a', text: 'Has an a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }] });
    const ctx: GrpoContext = {
      rt,
      model,
      reference: null,
      tokenizer: tok,
      formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(text)],
      rubric,
      rubricVersion: await rubricVersion(rubric),
      config: parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_completion_length: 3 }),
    };
    try {
      await grpoStep(ctx, 0, ['Say a.', 'Say b.']);
      return { error: null };
    } catch (err) {
      return { error: (err as Error).message };
    }
  } finally {
    model.params.destroy();
  }
}
