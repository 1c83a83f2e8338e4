// In-page side of bench/grpo.mjs: one model of a real model's shape with random weights, a
// rule rubric, and GRPO steps through the app's own grpoStep (LoRA or full fine-tuning). Times
// the sampling and the update of each step and reports GPU bytes: what the pool holds after the
// steps (in use + free, i.e. the peak it kept) next to the memory plan's estimate.
import type { GpuRuntime } from '../src/gpu/runtime';
import { configFromHf } from '../src/model/config';
import { initialWeights } from '../src/model/init';
import { ParameterStore } from '../src/model/parameters';
import { ByteTokenizer, type Tokenizer } from '../src/model/tokenizer';
import { Transformer } from '../src/model/transformer';
import { loraConfigFromTrl } from '../src/model/lora';
import { parseRubric, rubricVersion } from '../src/rubric';
import { parseGrpoConfig } from '../src/rl/config';
import { grpoStep, type GrpoContext } from '../src/rl/grpoStep';
import { planMemory } from '../src/rl/memoryPlan';

export interface GrpoBenchRequest {
  /** A config.json (the vocabulary is replaced by the byte tokenizer's 259 ids plus padding to vocab_size). */
  hfConfig: Record<string, unknown>;
  config: Record<string, unknown>;
  steps: number;
  promptWords: number;
  /** Dispatch pairing (GpuRuntime.pairDispatches); default on. */
  pairing?: boolean;
}

/**
 * The byte tokenizer over a real model's vocabulary: ids past the bytes and specials (a random
 * model samples them) decode as a letter, so the rubric has text to judge.
 */
class WideByteTokenizer implements Tokenizer {
  private readonly bytes = new ByteTokenizer();
  readonly bosTokenId = this.bytes.bosTokenId;
  readonly eosTokenId = this.bytes.eosTokenId;
  readonly padTokenId = this.bytes.padTokenId;
  constructor(readonly vocabSize: number) {}
  encode(text: string): number[] {
    return this.bytes.encode(text);
  }
  decode(ids: ArrayLike<number>): string {
    return this.bytes.decode(Array.from(ids, (id) => (id < this.bytes.vocabSize ? id : 97 + (id % 26))));
  }
}

const RUBRIC = { name: 'bench', criteria: [{ id: 'vowel', text: 'Starts with a vowel', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[aeiouAEIOU]' } }] };

export async function run(rt: GpuRuntime, req: GrpoBenchRequest) {
  const was = rt.pairDispatches;
  rt.pairDispatches = req.pairing ?? was;
  try {
    return await runSteps(rt, req);
  } finally {
    rt.pairDispatches = was;
  }
}

async function runSteps(rt: GpuRuntime, req: GrpoBenchRequest) {
  const modelConfig = configFromHf(req.hfConfig);
  if (modelConfig.vocabSize < 259) throw new RangeError('vocab_size must be at least 259 (the byte tokenizer)');
  const tok = new WideByteTokenizer(modelConfig.vocabSize);
  const config = parseGrpoConfig(req.config);
  const prompt = Array.from({ length: req.promptWords }, (_, i) => ['tell', 'me', 'about', 'the', 'sea'][i % 5]).join(' ');
  const prompts = Array.from({ length: config.generation_batch_size / config.num_generations }, () => prompt);
  const plan = planMemory({ ...req.hfConfig, rubric_playground: { tokenizer: 'byte' } }, prompts, config, rt.device.limits, Number.MAX_SAFE_INTEGER);
  const t0 = performance.now();
  const params = ParameterStore.create(rt, modelConfig, initialWeights(modelConfig, 1));
  const model = new Transformer(rt, modelConfig, params);
  if (config.use_peft) model.attachLora(loraConfigFromTrl(config), config.seed);
  const rubric = parseRubric(RUBRIC);
  const ctx: GrpoContext = {
    rt,
    model,
    reference: config.beta > 0 ? (config.use_peft ? model.withoutAdapters() : new Transformer(rt, modelConfig, ParameterStore.create(rt, modelConfig, initialWeights(modelConfig, 1)))) : null,
    tokenizer: tok,
    formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(text)],
    rubric,
    rubricVersion: await rubricVersion(rubric),
    config,
  };
  const setupSeconds = (performance.now() - t0) / 1000;
  const steps = [];
  for (let s = 0; s < req.steps; s++) {
    const before = rt.snapshotCounters();
    const r = await grpoStep(ctx, s, prompts);
    const c = rt.countersSince(before);
    const m = r.metrics;
    steps.push({
      step_seconds: m.step_seconds,
      sampling_tokens_per_second: m.sampling_tokens_per_second,
      training_tokens_per_second: m.training_tokens_per_second,
      update_submits: m.update_submits,
      completion_tokens: m.completions.mean_length * r.rollouts.length,
      judge_seconds: m.judge_seconds,
      sampling_seconds: m.sampling_seconds ?? 0,
      update_seconds: m.update_seconds ?? 0,
      submits: c.submits,
      dispatches: c.dispatches,
      bind_groups_created: c.bindGroupsCreated,
      bind_groups_reused: c.bindGroupsReused,
      pipelines_created: c.pipelinesCreated,
      buffers_created: c.buffersCreated,
    });
  }
  const pool = rt.pool.snapshot();
  const result = {
    adapter: rt.info,
    parameters: model.params.totalSize,
    trainableParameters: model.params.size,
    setupSeconds,
    steps,
    gpuBytes: { inUse: pool.bytesInUse, free: pool.bytesFree, held: pool.bytesInUse + pool.bytesFree },
    estimate: plan.estimate,
    promptTokens: plan.promptTokens,
  };
  ctx.model.params.destroy();
  if (ctx.reference && ctx.reference.params !== params) ctx.reference.params.destroy();
  return result;
}
