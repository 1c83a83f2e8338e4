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

describe('memory plan: a teacher that samples (distillation lmbda < 1)', () => {
  // 48 bytes: with the byte tokenizer's 48 template tokens, prompts of 96 tokens; + 32 completion tokens = 128.
  const prompt = 'Write one short sentence about the calm blue sea';
  const shape = { num_generations: 8, generation_batch_size: 8, max_completion_length: 32 };
  // Half the student's width and depth (same vocabulary): head_dim 64 / 2 = 32, 2 KV heads, 2 layers.
  const teacher = { ...embedded, n_embd: 64, n_head: 2, n_inner: 256, n_layer: 2 };
  const plan = (lmbda: number, hf: Record<string, unknown> | null = teacher) =>
    planMemory(embedded, [prompt], parseGrpoConfig({ ...shape, distillation: { teacher: 'model', teacher_model: 'local:t', mode: 'pure', lmbda } }), limits, undefined, [], hf);

  it('counts the teacher model\'s KV cache and sampling buffers, by hand', () => {
    const onPolicy = plan(1).estimate;
    const mixed = plan(0.5).estimate;
    expect(plan(0.5).promptTokens).toBe(96);
    // Hand-computed: K and V of each of the teacher's 2 layers, 8 rows × 2 KV heads × 128 positions × 32 dims × 4 bytes
    // = 262,144 bytes each (a pool bucket exactly; no buffer of the student's sampling has that size to reuse).
    expect(8 * 2 * 128 * 32 * 4).toBe(262_144);
    expect(mixed.kvCache - onPolicy.kvCache).toBe(2 * 2 * 262_144);
    // The student's own KV cache is unchanged: 4 layers × K, V of 8 × 4 heads × 128 × 32 × 4 = 524,288 bytes.
    expect(onPolicy.kvCache).toBe(4 * 2 * 524_288);
    // Its sampling buffers: at least its prefill's residual stream, 8 × 96 rows × 64 × 4 = 196,608 bytes (a size the student never uses).
    expect(mixed.sampling - onPolicy.sampling).toBeGreaterThanOrEqual(196_608);
    expect(mixed.total).toBeGreaterThan(onPolicy.total);
    // lmbda 0 samples the same call: the same buffers.
    expect(plan(0).estimate.kvCache).toBe(mixed.kvCache);
    // Without the teacher's config.json the estimate uses the student's shape: the teacher's call reuses every
    // KV buffer the student's call released (same sizes), so only what it adds beyond them counts.
    expect(plan(0.5, null).estimate.kvCache).toBe(onPolicy.kvCache);
  });

  it('counts the self_rubric teacher sampling from its privileged prompt (the rubric makes it longer)', () => {
    const cfg = (lmbda: number) => parseGrpoConfig({ ...shape, max_completion_length: 16, distillation: { teacher: 'self_rubric', mode: 'pure', lmbda } });
    const at = (lmbda: number) => planMemory(embedded, ['Describe the sea.'], cfg(lmbda), limits, undefined, [{ text: 'Names a colour', weight: 1 } as never]).estimate;
    expect(at(0.5).kvCache).toBeGreaterThan(at(1).kvCache);
    expect(at(0.5).sampling).toBeGreaterThan(at(1).sampling);
    expect(at(0.5).totalIfTrimmed).toBeGreaterThanOrEqual(at(1).totalIfTrimmed);
  });
});
