// Which models stack q, k and v into one product, and the stack's slot size (src/model/qkvStack.ts).
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../../src/model/config';
import { stackSlot, stacksAttentionInput } from '../../../src/model/qkvStack';

describe('q, k, v stacks', () => {
  it('GPT-2 stacks; Llama (RoPE), grouped-query heads and q/k norms do not', () => {
    const gpt2 = configFromHf({ model_type: 'gpt2', vocab_size: 300, n_embd: 32, n_layer: 1, n_head: 4, n_inner: 64, n_positions: 16 });
    expect(stacksAttentionInput(gpt2)).toBe(true);
    const llama = { model_type: 'llama', vocab_size: 300, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 4, max_position_embeddings: 16 };
    expect(stacksAttentionInput(configFromHf({ ...llama, num_key_value_heads: 4 }))).toBe(false);
    expect(stacksAttentionInput(configFromHf({ ...llama, num_key_value_heads: 2 }))).toBe(false);
  });

  it('rounds each slot up to the binding offset alignment', () => {
    expect(stackSlot(8, 32)).toBe(256);
    expect(stackSlot(3, 20)).toBe(64);
    expect(stackSlot(3, 20, 32)).toBe(64);
    expect(stackSlot(3, 21, 32)).toBe(64);
    expect(stackSlot(1, 4, 32)).toBe(8);
  });
});
