// Tensor names as real checkpoints on the Hub write them → the names the engine expects.
// openai-community/gpt2 and most GPT-2 checkpoints store the bare GPT2Model ("h.0.attn.c_attn.weight",
// "wte.weight"); checkpoints saved from GPT2LMHeadModel prefix them with "transformer.".
import type { ModelConfig } from '../config';
import type { Tensor } from '../safetensors';

const BARE_GPT2 = /^(h\.\d+\.|wte\.|wpe\.|ln_f\.)/;

export function withEngineTensorNames(config: ModelConfig, tensors: Map<string, Tensor>): Map<string, Tensor> {
  if (config.architecture !== 'gpt2' || tensors.has('transformer.wte.weight')) return tensors;
  const out = new Map<string, Tensor>();
  for (const [name, t] of tensors) out.set(BARE_GPT2.test(name) ? `transformer.${name}` : name, t);
  return out;
}
