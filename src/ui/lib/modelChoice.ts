// Which kind of model an id names (embedded, a Hugging Face Hub repository, files picked on this
// computer, a directory served by this page), the Hub suggestions the picker offers, and the
// live check of a typed id. Pure: the registry's parsers only, no GPU engine.
import { DEFAULT_REVISION, HUB_MODEL_PREFIX } from '../../model/hub/hubId';
import { EMBEDDED_MODELS, isHubModelId, isLocalModelId, parseHubModelId } from '../../model/registry';

export type ModelSource = 'embedded' | 'hub' | 'local' | 'served';

/** Small instruction-tuned checkpoints the engine runs (GPT-2 and Llama-family architectures). */
export const HUB_SUGGESTIONS: readonly { id: string; note: string }[] = [
  { id: 'hf:openai-community/gpt2', note: 'GPT-2, 124M parameters, about 550 MB' },
  { id: 'hf:HuggingFaceTB/SmolLM2-135M-Instruct', note: 'SmolLM2 135M, about 270 MB' },
  { id: 'hf:HuggingFaceTB/SmolLM2-360M-Instruct', note: 'SmolLM2 360M, about 720 MB' },
  { id: 'hf:Qwen/Qwen2.5-0.5B-Instruct', note: 'Qwen2.5 0.5B, about 990 MB' },
  { id: 'hf:Qwen/Qwen3-0.6B', note: 'Qwen3 0.6B, about 1.5 GB' },
];

export function modelSourceOf(modelId: string): ModelSource {
  if (modelId in EMBEDDED_MODELS) return 'embedded';
  if (isHubModelId(modelId)) return 'hub';
  if (isLocalModelId(modelId)) return 'local';
  return 'served';
}

/** What a Hub id is wrong about, in the parser's words; null when it parses. */
export function hubIdProblem(modelId: string): string | null {
  if (!isHubModelId(modelId)) return null;
  try {
    parseHubModelId(modelId);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * The Hub id for what the user typed in the Hugging Face field: "owner/name[@rev]" with or
 * without "hf:", spaces around it dropped.
 */
export function hubIdFromInput(text: string): string {
  const trimmed = text.trim();
  return trimmed.startsWith(HUB_MODEL_PREFIX) ? trimmed : `${HUB_MODEL_PREFIX}${trimmed}`;
}

/** The text the Hugging Face field shows for a Hub id (without the "hf:" prefix). */
export function hubInputFromId(modelId: string): string {
  return isHubModelId(modelId) ? modelId.slice(HUB_MODEL_PREFIX.length) : '';
}

/** One line saying where a valid Hub id's files come from. */
export function describeHubModel(modelId: string, endpoint: string | null): string {
  const { id, revision } = parseHubModelId(modelId);
  const from = endpoint ?? 'huggingface.co';
  const rev = revision === DEFAULT_REVISION ? '' : ` at revision ${revision}`;
  return `${id}${rev}: downloaded once from ${from} (config.json, tokenizer and *.safetensors), then loaded from this browser's cache. Trained with LoRA when use_peft is on.`;
}
