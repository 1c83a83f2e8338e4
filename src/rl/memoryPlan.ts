// Will a GRPO run fit this GPU? The engine's memory model (src/model/memory.ts) applied to an
// experiment before any weight is downloaded: it needs only config.json. Prompt lengths are
// bounded from their UTF-8 bytes (a byte tokenizer's exact count; BPE tokens hold about 3-4
// bytes of English, so bytes / 2.5 is a generous bound), plus the prompt template's overhead.
import { configFromHf } from '../model/config';
import { checkFitsDevice, estimateTrainingBytes, type DeviceLimits, type FitResult, type MemoryEstimate } from '../model/memory';
import { loraConfigFromTrl } from '../model/lora';
import type { GrpoConfig } from './config';
import type { Criterion } from '../rubric';
import { rubricConditionedPrompt } from './credit/cort';
import { privilegedPrompt } from './distill/teacher';
import { guidedPromptBound, guidedRowsBound } from './explore/guidedBounds';
import { scaffoldSlots } from './explore/scaffold';

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

/** CoRT's rubric-conditioned prompt in tokens, capped by the context like any estimate (cortPass.ts refuses a prompt that does not fit). */
function cortTokens(prompt: string, byte: boolean, room: number): number {
  return Math.min(promptTokenBound([prompt], byte), Math.max(1, room));
}

export function planMemory(
  hfConfig: Record<string, unknown>,
  prompts: readonly string[],
  config: GrpoConfig,
  limits: DeviceLimits,
  budgetBytes = DEFAULT_GPU_BUDGET_BYTES,
  /** The rubric's criteria: the extra prompts of CoRT and of guided rollouts are bounded from them. */
  criteria: readonly Criterion[] = [],
  /** The distillation teacher model's config.json (distillation.teacher "model"); null: estimated with the student's shape. */
  teacherHfConfig: Record<string, unknown> | null = null,
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
  // The passes and rows beyond plain GRPO's: CoRT's rubric-conditioned prompts, the guided
  // rollouts' own sampling prompts (shortened to fit the context at the step, so their bound is
  // capped there) and rows, the scaffolded rows re-scored.
  const bound = (text: string) => Math.min(promptTokenBound([text], byte), Math.max(1, room));
  const longest = prompts.length ? prompts.reduce((a, b) => (new TextEncoder().encode(b).length > new TextEncoder().encode(a).length ? b : a)) : '';
  const guidedPrompt = guidedPromptBound(prompts, criteria, config);
  const groups = config.generation_batch_size / config.num_generations;
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
    guided: guidedPrompt === null ? null : { sequences: guidedRowsBound(config), promptTokens: bound(guidedPrompt) },
    rescoredSequences: config.scaffold_fraction > 0 && config.temperature > 0 ? groups * scaffoldSlots(config) : 0,
    cortPromptTokens: config.cort_credit ? cortTokens(rubricConditionedPrompt(longest, criteria), byte, room) : null,
    // The self_rubric teacher's prompt carries the rubric (src/rl/distill/teacher.ts refuses one past the
    // context; criterion_injection's carries at most all of it). The black_box teacher runs no pass here.
    // With lmbda < 1 the teacher also samples some steps' batches from that prompt (teacherSampling.ts).
    distillation:
      config.distillation.teacher === 'off' || config.distillation.teacher === 'black_box'
        ? null
        : config.distillation.teacher === 'model'
          ? { teacherPromptTokens: promptTokens, frozen: false, teacher: teacherHfConfig ? configFromHf(teacherHfConfig) : null, samples: config.distillation.lmbda < 1 }
          : {
              teacherPromptTokens: cortTokens(privilegedPrompt(longest, criteria), byte, room),
              frozen: config.distillation.teacher_weights === 'frozen',
              ema: config.distillation.teacher_weights === 'ema',
              // Only self_rubric samples (criterion_injection is refused with lmbda < 1: samplingTeacher).
              samples: config.distillation.teacher === 'self_rubric' && config.distillation.lmbda < 1,
            },
  });
  // A plain copy: GPUSupportedLimits cannot cross postMessage.
  const plain = { maxBufferSize: limits.maxBufferSize, maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize };
  return { estimate, fit: checkFitsDevice(estimate, plain, budgetBytes), budgetBytes, limits: plain, promptTokens };
}
