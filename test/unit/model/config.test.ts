import { describe, expect, it } from 'vitest';
import { configFromHf, configToHf } from '../../../src/model/config';

const gpt2Small = { model_type: 'gpt2', vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024, n_inner: null, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', bos_token_id: 50256, eos_token_id: 50256 };
const smolLm = { model_type: 'llama', vocab_size: 49152, hidden_size: 576, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, intermediate_size: 1536, max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu', bos_token_id: 1, eos_token_id: 2, rope_scaling: null };
const qwen25 = { model_type: 'qwen2', vocab_size: 151936, hidden_size: 896, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, intermediate_size: 4864, max_position_embeddings: 32768, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu', eos_token_id: 151645, use_sliding_window: false };
const qwen3 = { model_type: 'qwen3', vocab_size: 151936, hidden_size: 1024, head_dim: 128, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, intermediate_size: 3072, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, eos_token_id: 151645 };

describe('model config from config.json', () => {
  it('reads GPT-2 small', () => {
    const c = configFromHf(gpt2Small);
    expect(c).toMatchObject({ architecture: 'gpt2', hiddenSize: 768, numHeads: 12, numKvHeads: 12, headDim: 64, intermediateSize: 3072, tieWordEmbeddings: true, eosTokenId: 50256 });
  });
  it('reads Llama-family configs: SmolLM2 (GQA), Qwen2.5 (q/k/v bias), Qwen3 (head_dim, q/k norm)', () => {
    expect(configFromHf(smolLm)).toMatchObject({ architecture: 'llama', headDim: 64, numKvHeads: 3, attentionBias: false, qkNorm: false, ropeTheta: 100000 });
    expect(configFromHf(qwen25)).toMatchObject({ headDim: 64, numKvHeads: 2, attentionBias: true, qkNorm: false });
    expect(configFromHf(qwen3)).toMatchObject({ headDim: 128, numHeads: 16, attentionBias: false, qkNorm: true });
  });
  it('round-trips through configToHf', () => {
    for (const json of [gpt2Small, smolLm, qwen3]) {
      const c = configFromHf(json);
      expect(configFromHf(configToHf(c))).toEqual(c);
    }
  });
  it('names unknown architectures and unsupported fields', () => {
    expect(() => configFromHf({ model_type: 'bert' })).toThrow(/model_type "bert" is not supported/);
    expect(() => configFromHf({ ...smolLm, rope_scaling: { type: 'yarn' } })).toThrow(/"rope_scaling"/);
    expect(() => configFromHf({ ...gpt2Small, activation_function: 'relu' })).toThrow(/activation_function "relu"/);
    expect(() => configFromHf({ ...smolLm, num_key_value_heads: 2 })).toThrow(/not a multiple of num_key_value_heads 2/);
    expect(() => configFromHf({ ...gpt2Small, n_embd: 'big' })).toThrow(/"n_embd" must be a positive integer/);
  });
});
