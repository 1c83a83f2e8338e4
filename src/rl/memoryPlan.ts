// Will a GRPO run fit this GPU? The engine's memory model (src/model/memory.ts) applied to an
// experiment before any weight is downloaded: it needs only config.json. Prompt lengths are
// bounded from their UTF-8 bytes (a byte tokenizer's exact count; BPE tokens hold about 3-4
// bytes of English, so bytes / 2.5 is a generous bound), plus the prompt template's overhead.
import { configFromHf } from '../model/config';
import { checkFitsDevice, estimateTrainingBytes, type DeviceLimits, type FitResult, type MemoryEstimate } from '../model/memory';
import { loraConfigFromTrl } from '../model/lora';
import type { GrpoConfig } from './config';

/** What WebGPU cannot tell: how much memory the GPU has. A conservative laptop figure. */
export const DEFAULT_GPU_BUDGET_BYTES = 4 * 1024 ** 3;
/** Template and chat-template tokens around a prompt (BOS, role markers, "Response: "). */
const TEMPLATE_TOKENS = 48;

export interface MemoryPlan {
  estimate: MemoryEstimate;
  fit: FitResult;
  budgetBytes: number;
  limits: DeviceLimits;
  /** The prompt length the estimate assumed (tokens). */
  promptTokens: number;
}

export function promptTokenBound(prompts: readonly string[], byteTokenizer: boolean): number {
  const longest = Math.max(1, ...prompts.map((p) => new TextEncoder().encode(p).length));
  return (byteTokenizer ? longest : Math.ceil(longest / 2.5)) + TEMPLATE_TOKENS;
}

export function planMemory(
  hfConfig: Record<string, unknown>,
  prompts: readonly string[],
  config: GrpoConfig,
  limits: DeviceLimits,
  budgetBytes = DEFAULT_GPU_BUDGET_BYTES,
): MemoryPlan {
  const model = configFromHf(hfConfig);
  const byte = (hfConfig as { rubric_playground?: { tokenizer?: string } }).rubric_playground?.tokenizer === 'byte';
  const room = model.maxPositions - config.max_completion_length;
  // The byte bound is exact; a BPE bound is only an estimate, so it is capped by the context.
  const promptTokens = byte ? promptTokenBound(prompts, true) : Math.min(promptTokenBound(prompts, false), Math.max(1, room));
  if (promptTokens + config.max_completion_length > model.maxPositions) {
    const message = `Prompts of up to about ${promptTokens} tokens plus max_completion_length ${config.max_completion_length} exceed this model's context of ${model.maxPositions} tokens: shorten the prompts or max_completion_length.`;
    throw new RangeError(message);
  }
  const estimate = estimateTrainingBytes({
    config: model,
    lora: config.use_peft ? loraConfigFromTrl(config) : null,
    numGenerations: config.num_generations,
    promptsPerStep: config.generation_batch_size / config.num_generations,
    promptTokens,
    completionTokens: config.max_completion_length,
    beta: config.beta,
    entropyCoef: config.entropy_coef,
    // Empty per_device_train_batch_size: a whole slice per submission (steps_per_generation slices).
    microBatch: config.per_device_train_batch_size ?? (config.steps_per_generation > 1 ? config.generation_batch_size / config.steps_per_generation : null),
    lossType: config.loss_type,
  });
  // A plain copy: GPUSupportedLimits cannot cross postMessage.
  const plain = { maxBufferSize: limits.maxBufferSize, maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize };
  return { estimate, fit: checkFitsDevice(estimate, plain, budgetBytes), budgetBytes, limits: plain, promptTokens };
}
