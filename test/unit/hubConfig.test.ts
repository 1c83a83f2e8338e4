// config.json of real Hub models: supported families load, everything else is named.
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../src/model/config';

const llama32 = {
  model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 128256, hidden_size: 2048, num_hidden_layers: 16,
  num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64, intermediate_size: 8192, max_position_embeddings: 131072,
  rms_norm_eps: 1e-5, rope_theta: 500000, tie_word_embeddings: true, hidden_act: 'silu',
  rope_scaling: { factor: 32, high_freq_factor: 4, low_freq_factor: 1, original_max_position_embeddings: 8192, rope_type: 'llama3' },
};
const mistral = {
  model_type: 'mistral', architectures: ['MistralForCausalLM'], vocab_size: 32000, hidden_size: 4096, num_hidden_layers: 32,
  num_attention_heads: 32, num_key_value_heads: 8, intermediate_size: 14336, max_position_embeddings: 32768, rms_norm_eps: 1e-5,
  rope_theta: 10000, hidden_act: 'silu', sliding_window: 4096,
};
const gpt2 = { model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024 };

describe('config.json from the Hub', () => {
  it('accepts what the engine implements: rope_type "default", Qwen2 with sliding window off, Mistral without a window', () => {
    expect(configFromHf({ ...llama32, rope_scaling: { rope_type: 'default' } }).architecture).toBe('llama');
    expect(configFromHf({ ...llama32, rope_scaling: null }).ropeTheta).toBe(500000);
    expect(configFromHf({ ...mistral, sliding_window: null }).numKvHeads).toBe(8);
    expect(configFromHf({ ...mistral, sliding_window: 32768 }).numKvHeads).toBe(8); // as long as the context: no effect
    expect(configFromHf(gpt2).headDim).toBe(64);
  });

  it('names an unknown architecture with its classes, and non-causal heads', () => {
    expect(() => configFromHf({ model_type: 'gemma2', architectures: ['Gemma2ForCausalLM'] })).toThrow(
      'config.json: model_type "gemma2" (architectures: Gemma2ForCausalLM) is not supported (supported: gpt2, llama, qwen2, qwen3, mistral, smollm)',
    );
    expect(() => configFromHf({ architectures: ['BertModel'] })).toThrow(/has no "model_type" \(architectures: BertModel\); supported: gpt2/);
    expect(() => configFromHf({ ...llama32, rope_scaling: null, architectures: ['LlamaForSequenceClassification'] })).toThrow(
      /architectures LlamaForSequenceClassification is not a causal language model/,
    );
  });

  it('lists every unsupported setting at once, with its value', () => {
    const err = (() => {
      try {
        configFromHf({ ...llama32, mlp_bias: true, hidden_act: 'gelu', quantization_config: { quant_method: 'gptq', bits: 4 } });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toMatch(/^config.json \(model_type "llama"\): unsupported settings: /);
    expect(err).toContain('"quantization_config" (quant_method "gptq")');
    expect(err).toContain('"rope_scaling" {"factor":32,"high_freq_factor":4,"low_freq_factor":1,"original_max_position_embeddings":8192,"rope_type":"llama3"} (type "llama3") is not supported (plain RoPE only)');
    expect(err).toContain('hidden_act "gelu" is not supported (supported: silu)');
    expect(err).toContain('"mlp_bias": true is not supported');
  });

  it('names sliding windows, partial rotary, experts, and GPT-2 variants the engine does not run', () => {
    expect(() => configFromHf(mistral)).toThrow(/"sliding_window": 4096 is not supported \(full attention only/);
    expect(() => configFromHf({ ...mistral, sliding_window: null, model_type: 'qwen2', use_sliding_window: true })).toThrow(/"use_sliding_window": true/);
    expect(() => configFromHf({ ...mistral, sliding_window: null, partial_rotary_factor: 0.5 })).toThrow(/"partial_rotary_factor": 0.5/);
    expect(() => configFromHf({ ...mistral, sliding_window: null, num_local_experts: 8 })).toThrow(/"num_local_experts": 8 \(mixture of experts/);
    expect(() => configFromHf({ ...gpt2, tie_word_embeddings: false })).toThrow(/"tie_word_embeddings": false is not supported for gpt2/);
    expect(() => configFromHf({ ...gpt2, scale_attn_weights: false })).toThrow(/"scale_attn_weights": false/);
  });
});
