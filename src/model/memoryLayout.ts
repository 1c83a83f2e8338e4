// What the memory estimate (memory.ts, memorySampling.ts) needs to know about a model and its
// LoRA adapters: the widths of its activations and the adapter sites. Pure: no GPU import.
import type { ModelConfig } from './config';
import { resolveLoraConfig, type LoraConfig } from './loraConfig';
import { loraSites, type LoraSite, type ProjectionRole, type SiteInput } from './loraSites';
import { stackSlot, stacksAttentionInput } from './qkvStack';

export interface ModelLayout {
  c: ModelConfig;
  D: number;
  F: number;
  V: number;
  qDim: number;
  kvDim: number;
  llama: boolean;
  /** q, k and v computed as one stack (qkvStack.ts): one buffer of three slots. */
  qkvStacked: boolean;
  sites: LoraSite[];
  r: number;
  /** lora_dropout > 0: training passes draw dropout masks (when given a dropout seed). */
  dropout: boolean;
}

export function modelLayout(config: ModelConfig, lora: Partial<LoraConfig> | null): ModelLayout {
  const resolved = lora ? resolveLoraConfig(lora, config) : null;
  return {
    c: config,
    D: config.hiddenSize,
    F: config.intermediateSize,
    V: config.vocabSize,
    qDim: config.numHeads * config.headDim,
    kvDim: config.numKvHeads * config.headDim,
    llama: config.architecture === 'llama',
    qkvStacked: stacksAttentionInput(config),
    sites: resolved ? loraSites(config, resolved.target_modules) : [],
    r: resolved?.r ?? 0,
    dropout: (resolved?.lora_dropout ?? 0) > 0,
  };
}

/** The sites of `layer` that read `input`, in the order the forward pass runs them. */
export function sitesReading(L: ModelLayout, layer: number, input: SiteInput): LoraSite[] {
  return L.sites.filter((s) => s.layer === layer && s.input === input);
}

/** Whether an adapter adds into projection `role` of `layer` (Transformer.project applies it). */
export function adapted(L: ModelLayout, layer: number, role: ProjectionRole): boolean {
  return L.sites.some((s) => s.layer === layer && s.outputs.some((o) => o.role === role));
}

/** Bytes of the buffer holding a q, k, v stack for `rows` token rows (Transformer: three slots). */
export function qkvStackBytes(L: ModelLayout, rows: number): number {
  return 3 * stackSlot(rows, L.qDim) * 4;
}
