import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import { DEFAULT_GPU_BUDGET_BYTES, planMemory, promptTokenBound } from '../../../src/rl/memoryPlan';

const embedded = JSON.parse(readFileSync('public/models/tiny-gpt2-byte/config.json', 'utf8'));
const limits = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 };
// SmolLM2-135M's config.json (the fields the engine reads).
const smollm135 = {
  model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 49152, hidden_size: 576, intermediate_size: 1536,
  num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, max_position_embeddings: 8192, rms_norm_eps: 1e-5,
  rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu',
};

describe('memory plan', () => {
  it('bounds prompt tokens exactly for a byte tokenizer and generously for BPE', () => {
    expect(promptTokenBound(['héllo'], true)).toBe(6 + 48);
    expect(promptTokenBound(['a'.repeat(100)], false)).toBe(40 + 48);
  });

  it('the embedded model fits easily', () => {
    const plan = planMemory(embedded, ['Describe the sea.'], parseGrpoConfig({ max_completion_length: 48 }), limits);
    expect(plan.fit).toEqual({ fits: true, message: null });
    expect(plan.estimate.total).toBeGreaterThan(0);
    expect(plan.estimate.total).toBeLessThan(512 * 2 ** 20);
    expect(plan.budgetBytes).toBe(DEFAULT_GPU_BUDGET_BYTES);
  });

  it('a 135M model: LoRA plans far less optimizer state than full fine-tuning', () => {
    const base = { num_generations: 8, generation_batch_size: 8, max_completion_length: 128 };
    const lora = planMemory(smollm135, ['Write a haiku about the sea.'], parseGrpoConfig({ ...base, use_peft: true }), limits);
    const full = planMemory(smollm135, ['Write a haiku about the sea.'], parseGrpoConfig(base), limits);
    expect(lora.estimate.optimizer).toBeLessThan(full.estimate.optimizer / 20);
    expect(full.estimate.total).toBeGreaterThan(lora.estimate.total);
  });

  it('refuses with a message naming the limit when a buffer is too large or the budget too small', () => {
    const big = parseGrpoConfig({ num_generations: 8, generation_batch_size: 64, max_completion_length: 1024 });
    const plan = planMemory(smollm135, ['x'], big, { maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 });
    expect(plan.fit.fits).toBe(false);
    expect(plan.fit.message).toMatch(/maxBufferSize|maxStorageBufferBindingSize/);
    const tight = planMemory(embedded, ['x'], parseGrpoConfig({ max_completion_length: 48 }), limits, 1024);
    expect(tight.fit.message).toMatch(/more than the 1(\.00)? KiB available/);
  });

  it('names the context limit when prompt plus completion cannot fit', () => {
    expect(() => planMemory(embedded, ['y'.repeat(300)], parseGrpoConfig({ max_completion_length: 48 }), limits)).toThrow(/exceed this model's context of 256 tokens/);
  });
});
