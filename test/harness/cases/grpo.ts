// Page side of test/browser/grpo.test.ts: GRPO steps on a fresh tiny byte-level GPT-2.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { grpoStep, type GrpoContext, type Stage } from '../../../src/rl/grpoStep';

const tok = new ByteTokenizer();

async function context(rt: GpuRuntime, options: GrpoConfigInput, rubricJson: unknown): Promise<GrpoContext> {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 64 });
  const weights = initialWeights(config, 11, 0.1);
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, weights));
  const grpo = parseGrpoConfig(options);
  const reference = grpo.beta > 0 ? new Transformer(rt, config, ParameterStore.create(rt, config, weights)) : null;
  const rubric = parseRubric(rubricJson);
  return {
    rt,
    model,
    reference,
    tokenizer: tok,
    formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
    rubric,
    rubricVersion: await rubricVersion(rubric),
    config: grpo,
  };
}

export const LETTER_RUBRIC = {
  name: 'likes vowels',
  criteria: [
    { id: 'has_a', text: 'Contains the letter a', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['a'], case_sensitive: true } },
    { id: 'has_e', text: 'Contains the letter e', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['e'], case_sensitive: true } },
    { id: 'short', text: 'At most 6 characters', weight: 1, tier: 'optional', rule: { kind: 'length', unit: 'characters', max: 6 } },
  ],
};

export async function steps(rt: GpuRuntime, input: { options: GrpoConfigInput; steps: number; stages?: boolean; heldOut?: unknown }) {
  const ctx = await context(rt, input.options, LETTER_RUBRIC);
  if (input.heldOut) {
    const rubric = parseRubric(input.heldOut);
    ctx.heldOut = { rubric, version: await rubricVersion(rubric) };
  }
  const seen: Stage[] = [];
  const out = [];
  for (let s = 0; s < input.steps; s++) {
    const prompts = Array.from({ length: ctx.config.generation_batch_size / ctx.config.num_generations }, (_, i) => `Say word ${i}.`);
    const r = await grpoStep(ctx, s, prompts, input.stages ? { onStage: (stage) => void seen.push(stage) } : {});
    out.push({
      metrics: r.metrics,
      rollouts: r.rollouts.map((x) => ({ reward: x.reward, advantage: x.advantage, completion: x.completion, group: x.group, truncated: x.truncated, scores: x.scores, token_entropy: x.token_entropy, token_weight: x.token_weight, token_ratio: x.token_ratio })),
    });
  }
  ctx.model.params.destroy();
  ctx.reference?.params.destroy();
  return { steps: out, stages: seen };
}

/**
 * The same GRPO step with the update in one submission and in micro-batches of `microBatch`
 * sequences: the accumulated gradients and the loss scalars, for comparison.
 */
export async function microBatchParity(rt: GpuRuntime, input: { options: GrpoConfigInput; microBatch: number }) {
  const run = async (perDevice: number | null) => {
    const ctx = await context(rt, { ...input.options, per_device_train_batch_size: perDevice }, LETTER_RUBRIC);
    const prompts = Array.from({ length: ctx.config.generation_batch_size / ctx.config.num_generations }, (_, i) => `Say word ${i}.`);
    const submits = rt.counters.submits;
    const r = await grpoStep(ctx, 0, prompts);
    // Gradients, not weights: Adam's first step moves a weight by ~lr·sign(g), so a gradient at
    // rounding-noise level could flip it; the accumulated gradients compare cleanly.
    const values = await ctx.model.params.read('grad');
    ctx.model.params.destroy();
    ctx.reference?.params.destroy();
    return { metrics: r.metrics, submits: rt.counters.submits - submits, values: Object.fromEntries([...values].map(([k, t]) => [k, Array.from(t.data)])), rewards: r.rollouts.map((x) => x.reward) };
  };
  const whole = await run(null);
  const split = await run(input.microBatch);
  let maxDiff = 0;
  let maxGrad = 0;
  for (const [name, a] of Object.entries(whole.values)) {
    const b = split.values[name];
    for (let i = 0; i < a.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
      maxGrad = Math.max(maxGrad, Math.abs(a[i]));
    }
  }
  return { maxDiff, maxGrad, whole: whole.metrics, split: split.metrics, sameRewards: JSON.stringify(whole.rewards) === JSON.stringify(split.rewards) };
}
