#!/usr/bin/env node
// Kernel profile: GPU time per kernel of one training step (forward + backward + AdamW) and of
// sampling, for the embedded default model's shape (random weights) or a SmolLM2-135M-shaped
// model, measured with timestamp queries around every dispatch (src/gpu/kernelProfiler.ts) after
// an unprofiled warm-up. Prints the kernels by total time and writes bench/results/profile.json.
// A tool for choosing what to optimise; it never asserts a time.
//
//   node bench/profile.mjs [--model default|gpt2-small|smollm135-quick] [--train-size BxT] [--sample BxPxN] [--grpo] [--pairing-rounds N] [--top 15] [--out FILE]
//
// --pairing-rounds N also times N unprofiled train steps with dispatch pairing off and N with it
// on (src/gpu/dispatchPair.ts), alternating in the page, and prints the median wall seconds.
// --grpo adds one GRPO step (bench/grpoStep.ts: 8 completions of 16 tokens, LoRA, micro-batches of 2).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from '../scripts/lib/browser.mjs';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'default' },
    'train-size': { type: 'string', default: '2x32' },
    sample: { type: 'string', default: '8x8x16' },
    top: { type: 'string', default: '15' },
    grpo: { type: 'boolean', default: false },
    'pairing-rounds': { type: 'string', default: '0' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'profile.json') },
  },
});
const fail = (m) => {
  console.error(`bench: ${m}`);
  process.exit(2);
};
const MODELS = {
  default: { model_type: 'gpt2', vocab_size: 259, n_embd: 128, n_layer: 4, n_head: 4, n_inner: 512, n_positions: 256, bos_token_id: 256, eos_token_id: 257 },
  // GPT-2 small's shape (bench/model.mjs's): run it with --train-size 1x8 --sample 1x4x2 on a software adapter.
  'gpt2-small': { model_type: 'gpt2', vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_inner: 3072, n_positions: 1024, bos_token_id: 50256, eos_token_id: 50256 },
  'smollm135-quick': { model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 4096, hidden_size: 96, intermediate_size: 256, num_hidden_layers: 4, num_attention_heads: 3, num_key_value_heads: 1, max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu' },
};
if (!(values.model in MODELS)) fail(`--model must be one of ${Object.keys(MODELS).join(', ')}, got ${values.model}`);
const ints = (name, text, parts) => {
  const v = text.split('x').map(Number);
  if (v.length !== parts || v.some((n) => !Number.isInteger(n) || n < 1)) fail(`--${name} must be ${parts} positive integers joined by x, got ${text}`);
  return v;
};
const [batch, seqLen] = ints('train-size', values['train-size'], 2);
if (seqLen < 2) fail('--train-size needs a sequence of at least 2 tokens');
const [sBatch, promptLen, newTokens] = ints('sample', values.sample, 3);
const top = ints('top', values.top, 1)[0];
const pairingRounds = values['pairing-rounds'] === '0' ? 0 : ints('pairing-rounds', values['pairing-rounds'], 1)[0];

const harness = await openHarness();
try {
  const r = await harness.runModule('/bench/profile.ts', 'run', {
    hfConfig: MODELS[values.model],
    train: { batch, seqLen },
    sample: { batch: sBatch, promptLen, newTokens },
    ...(pairingRounds > 0 ? { pairingRounds } : {}),
    ...(values.grpo
      ? { grpo: { config: { num_generations: 8, generation_batch_size: 8, max_completion_length: 16, learning_rate: 1e-4, use_peft: true, per_device_train_batch_size: 2, seed: 1 }, promptWords: 12 } }
      : {}),
  });
  console.log(`adapter: ${r.adapter.vendor} ${r.adapter.architecture} (${r.adapter.description || 'no description'}); model: ${values.model}`);
  for (const p of r.phases) {
    console.log(`\n${p.what}: ${p.dispatches} dispatches, GPU ${p.gpuMs.toFixed(1)} ms summed over dispatches, wall ${(p.wallSeconds * 1000).toFixed(0)} ms (profiled: a pass per dispatch)`);
    console.log('  share   GPU ms  dispatches  kernel');
    for (const k of p.kernels.slice(0, top)) {
      console.log(`  ${(100 * k.share).toFixed(1).padStart(5)}%  ${k.ms.toFixed(1).padStart(7)}  ${String(k.dispatches).padStart(10)}  ${k.kernel}`);
    }
    if (p.kernels.length > top) console.log(`  … ${p.kernels.length - top} more kernels`);
  }
  if (r.pairing) {
    const p = r.pairing;
    const list = (v) => v.map((x) => x.toFixed(3)).join(' ');
    console.log(`\ntrain step wall, pairing off / on (${p.rounds} rounds each, alternating): medians ${p.offMedian.toFixed(3)} / ${p.onMedian.toFixed(3)} s, off/on ${(p.offMedian / p.onMedian).toFixed(2)}x`);
    console.log(`  off: ${list(p.off)}\n  on:  ${list(p.on)}`);
  }
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ model: values.model, ...r }, null, 2));
  console.log(`\nwrote ${values.out}`);
} finally {
  await harness.close();
}
