#!/usr/bin/env node
// GRPO step benchmark: a model of SmolLM2-135M's or GPT-2 small's shape (random weights, the
// byte tokenizer's ids) trained with the app's grpoStep in headless Chromium (WebGPU; SwiftShader
// where there is no GPU). Prints step time, sampling and training tokens/s, submissions per
// update, and the GPU bytes the buffer pool holds after the steps next to the memory plan's
// estimate; writes bench/results/grpo.json. Never asserts a time.
//
//   node bench/grpo.mjs [--model smollm135|gpt2] [--quick] [--full-finetune] [--generations 8]
//                       [--completion 128] [--micro-batch N] [--steps 2] [--no-pairing] [--out FILE]
//
// --no-pairing records without dispatch pairing (GpuRuntime.pairDispatches = false).
//
// Default: SmolLM2-135M's shape with LoRA (r 16, PEFT's default targets), 8 completions of 128
// tokens, the update in micro-batches of 2 (the "fits in 2 GiB" case). --quick shrinks
// the model to a few million parameters and the completions to 16 tokens, for SwiftShader.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from '../scripts/lib/browser.mjs';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'smollm135' },
    quick: { type: 'boolean', default: false },
    'full-finetune': { type: 'boolean', default: false },
    generations: { type: 'string', default: '8' },
    completion: { type: 'string' },
    'micro-batch': { type: 'string', default: '2' },
    steps: { type: 'string', default: '2' },
    'no-pairing': { type: 'boolean', default: false },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'grpo.json') },
  },
});
const fail = (m) => {
  console.error(`bench: ${m}`);
  process.exit(2);
};
const int = (name, text) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer, got ${text}`);
  return n;
};

const SHAPES = {
  smollm135: { model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 49152, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu' },
  gpt2: { model_type: 'gpt2', vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024, activation_function: 'gelu_new', tie_word_embeddings: true },
};
const QUICK = {
  smollm135: { hidden_size: 96, intermediate_size: 256, num_hidden_layers: 4, num_attention_heads: 3, num_key_value_heads: 1, vocab_size: 4096 },
  gpt2: { n_embd: 128, n_layer: 4, n_head: 4, vocab_size: 4096, n_positions: 256 },
};
if (!(values.model in SHAPES)) fail(`--model must be one of ${Object.keys(SHAPES).join(', ')}`);
const hfConfig = { ...SHAPES[values.model], ...(values.quick ? QUICK[values.model] : {}) };
const generations = int('generations', values.generations);
const completion = int('completion', values.completion ?? (values.quick ? '16' : '128'));
const microBatch = int('micro-batch', values['micro-batch']);
const config = {
  num_generations: generations,
  generation_batch_size: generations,
  max_completion_length: completion,
  learning_rate: 1e-4,
  use_peft: !values['full-finetune'],
  per_device_train_batch_size: Math.min(microBatch, generations),
  seed: 1,
};
const request = { hfConfig, config, steps: int('steps', values.steps), promptWords: 12, pairing: !values['no-pairing'] };

const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const harness = await openHarness();
try {
  const r = await harness.runModule('/bench/grpoStep.ts', 'run', request);
  console.log(`adapter: ${r.adapter.vendor} ${r.adapter.architecture} (${r.adapter.description || 'no description'})`);
  console.log(`model: ${values.model}${values.quick ? ' (quick shape)' : ''}, ${(r.parameters / 1e6).toFixed(1)}M parameters, ${(r.trainableParameters / 1e6).toFixed(2)}M trainable (${config.use_peft ? 'LoRA' : 'full fine-tuning'})`);
  console.log(`step: ${generations} completions of up to ${completion} tokens, ${r.promptTokens}-token prompts, micro-batches of ${config.per_device_train_batch_size}`);
  r.steps.forEach((s, i) =>
    console.log(
      `  step ${i}: ${s.step_seconds.toFixed(2)} s (sampling ${s.sampling_seconds.toFixed(2)} s, judge ${s.judge_seconds.toFixed(2)} s, update ${s.update_seconds.toFixed(2)} s), sampling ${s.sampling_tokens_per_second.toFixed(1)} tokens/s, training ${s.training_tokens_per_second.toFixed(1)} tokens/s, ${s.update_submits} update submits\n` +
        `    engine: ${s.submits} submits, ${s.dispatches} dispatches, bind groups ${s.bind_groups_created} created / ${s.bind_groups_reused} reused, ` +
        `pipelines ${s.pipelines_created} compiled on demand, ${s.buffers_created} buffers created`,
    ),
  );
  console.log(`GPU bytes held by the pool after the steps: ${mib(r.gpuBytes.held)} (in use ${mib(r.gpuBytes.inUse)}); memory plan estimate ${mib(r.estimate.total)}`);
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), model: values.model, quick: values.quick, request, result: r }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await harness.close();
}
