#!/usr/bin/env node
// Model load benchmark: random checkpoints the size of GPT-2 small (124M, F32) and SmolLM2-135M
// (BF16, as it is on the Hub), written in the Hub's file layout (sharded, with an index) and
// served by Vite, go through the app's Hub path in headless Chromium: download (with the Cache
// API writes), reload from the cache, parse, and loadModel (GPU upload). Prints bytes, seconds
// and MB/s per phase and the GPU bytes, writes bench/results/load.json. Never asserts a time.
//
//   node bench/load.mjs [--quick] [--models gpt2,smollm] [--shards 2] [--out FILE]
//
// --quick: much smaller models of the same shapes' kinds (about 1M parameters), for SwiftShader.
// Checkpoints are written once to bench/results/hub-load/ (git-ignored) and reused.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPage, repoRoot } from '../scripts/lib/browser.mjs';

const MODELS = ['gpt2', 'smollm'];
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    models: { type: 'string', default: MODELS.join(',') },
    shards: { type: 'string', default: '2' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'load.json') },
  },
});

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}
const models = values.models.split(',').map((s) => s.trim()).filter(Boolean);
for (const m of models) if (!MODELS.includes(m)) fail(`unknown model ${m}; choose from ${MODELS.join(', ')}`);
const shardCount = Number(values.shards);
if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 99) fail(`--shards must be an integer from 1 to 99, got ${values.shards}`);

const ENDPOINT_DIR = join(repoRoot, 'bench', 'results', 'hub-load');
const ENDPOINT = '/bench/results/hub-load';
// Tokenizer files of the test fixtures (tiny byte-level BPEs): the weights are what is measured.
const TOKENIZERS = {
  gpt2: join(repoRoot, 'test', 'fixtures', 'hub', 'rubric-fixtures', 'tiny-gpt2', 'resolve', 'main'),
  smollm: join(repoRoot, 'test', 'fixtures', 'hub', 'rubric-fixtures', 'tiny-smollm-sharded', 'resolve', 'main'),
};

const SIZES = values.quick
  ? {
      gpt2: { vocab: 4096, d: 128, layers: 4, heads: 4, positions: 256 },
      smollm: { vocab: 4096, d: 96, layers: 4, heads: 3, kvHeads: 1, ffn: 256, positions: 256 },
    }
  : {
      gpt2: { vocab: 50257, d: 768, layers: 12, heads: 12, positions: 1024 },
      smollm: { vocab: 49152, d: 576, layers: 30, heads: 9, kvHeads: 3, ffn: 1536, positions: 8192 },
    };

/** Hugging Face tensor names and shapes, in the order transformers writes them. */
function gpt2Tensors(s) {
  const t = [['wte.weight', [s.vocab, s.d]], ['wpe.weight', [s.positions, s.d]]];
  for (let i = 0; i < s.layers; i++) {
    const p = `h.${i}.`;
    t.push(
      [`${p}ln_1.weight`, [s.d]], [`${p}ln_1.bias`, [s.d]],
      [`${p}attn.c_attn.weight`, [s.d, 3 * s.d]], [`${p}attn.c_attn.bias`, [3 * s.d]],
      [`${p}attn.c_proj.weight`, [s.d, s.d]], [`${p}attn.c_proj.bias`, [s.d]],
      [`${p}ln_2.weight`, [s.d]], [`${p}ln_2.bias`, [s.d]],
      [`${p}mlp.c_fc.weight`, [s.d, 4 * s.d]], [`${p}mlp.c_fc.bias`, [4 * s.d]],
      [`${p}mlp.c_proj.weight`, [4 * s.d, s.d]], [`${p}mlp.c_proj.bias`, [s.d]],
    );
  }
  t.push(['ln_f.weight', [s.d]], ['ln_f.bias', [s.d]]);
  return t;
}

function llamaTensors(s) {
  const dh = s.d / s.heads;
  const t = [['model.embed_tokens.weight', [s.vocab, s.d]]];
  for (let i = 0; i < s.layers; i++) {
    const p = `model.layers.${i}.`;
    t.push(
      [`${p}input_layernorm.weight`, [s.d]],
      [`${p}self_attn.q_proj.weight`, [s.heads * dh, s.d]], [`${p}self_attn.k_proj.weight`, [s.kvHeads * dh, s.d]],
      [`${p}self_attn.v_proj.weight`, [s.kvHeads * dh, s.d]], [`${p}self_attn.o_proj.weight`, [s.d, s.heads * dh]],
      [`${p}post_attention_layernorm.weight`, [s.d]],
      [`${p}mlp.gate_proj.weight`, [s.ffn, s.d]], [`${p}mlp.up_proj.weight`, [s.ffn, s.d]], [`${p}mlp.down_proj.weight`, [s.d, s.ffn]],
    );
  }
  t.push(['model.norm.weight', [s.d]]);
  return t;
}

function tokenIds(dir, names) {
  const vocab = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')).model.vocab;
  const added = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')).added_tokens;
  const id = (n) => added.find((a) => a.content === n)?.id ?? vocab[n];
  return names.map(id);
}

function spec(name) {
  const s = SIZES[name];
  const tag = values.quick ? 'quick' : 'full';
  if (name === 'gpt2') {
    const [eos] = tokenIds(TOKENIZERS.gpt2, ['<|endoftext|>']);
    return {
      id: `bench/gpt2-124m-${tag}`,
      dtype: 'F32',
      tokenizerDir: TOKENIZERS.gpt2,
      tensors: gpt2Tensors(s),
      config: {
        activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], bos_token_id: eos, eos_token_id: eos,
        layer_norm_epsilon: 1e-5, model_type: 'gpt2', n_ctx: s.positions, n_embd: s.d, n_head: s.heads, n_inner: null,
        n_layer: s.layers, n_positions: s.positions, torch_dtype: 'float32', vocab_size: s.vocab,
      },
    };
  }
  const [bos, eos] = tokenIds(TOKENIZERS.smollm, ['<|im_start|>', '<|im_end|>']);
  return {
    id: `bench/smollm2-135m-${tag}`,
    dtype: 'BF16',
    tokenizerDir: TOKENIZERS.smollm,
    tensors: llamaTensors(s),
    config: {
      architectures: ['LlamaForCausalLM'], bos_token_id: bos, eos_token_id: eos, hidden_act: 'silu', hidden_size: s.d,
      intermediate_size: s.ffn, max_position_embeddings: s.positions, model_type: 'llama', num_attention_heads: s.heads,
      num_hidden_layers: s.layers, num_key_value_heads: s.kvHeads, rms_norm_eps: 1e-5, rope_scaling: null,
      rope_theta: 100000, tie_word_embeddings: true, torch_dtype: 'bfloat16', vocab_size: s.vocab,
    },
  };
}

/** Random values like a trained model's spread: norms 1, biases 0, weights uniform with std 0.02. */
function fillTensor(name, out, rand) {
  if (/(ln_\d|ln_f|layernorm|norm)\.weight$/.test(name)) return out.fill(1);
  if (name.endsWith('.bias')) return out.fill(0);
  const a = 0.02 * Math.sqrt(3);
  for (let i = 0; i < out.length; i++) out[i] = (rand() * 2 - 1) * a;
  return out;
}

function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** Writes one safetensors file (header padded to 8 bytes, as the reference writer does). */
function writeShard(path, tensors, dtype, rand) {
  const width = dtype === 'F32' ? 4 : 2;
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * width;
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const fd = openSync(path, 'w');
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    writeSync(fd, len);
    writeSync(fd, json);
    for (const [name, shape] of tensors) {
      const values = fillTensor(name, new Float32Array(shape.reduce((a, b) => a * b, 1)), rand);
      if (dtype === 'F32') {
        writeSync(fd, new Uint8Array(values.buffer));
        continue;
      }
      // BF16: the high half of each f32 (truncation is fine for random weights).
      const bits = new Uint32Array(values.buffer);
      const halves = new Uint16Array(bits.length);
      for (let i = 0; i < bits.length; i++) halves[i] = bits[i] >>> 16;
      writeSync(fd, new Uint8Array(halves.buffer));
    }
  } finally {
    closeSync(fd);
  }
}

/** The checkpoint in the Hub's layout; skipped when a complete one from an earlier run is there. */
function writeCheckpoint(m) {
  const dir = join(ENDPOINT_DIR, m.id, 'resolve', 'main');
  const marker = join(dir, '.complete.json');
  const signature = JSON.stringify({ config: m.config, dtype: m.dtype, shards: shardCount });
  if (existsSync(marker) && readFileSync(marker, 'utf8') === signature) return { dir, reused: true };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(m.config, null, 2));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(dir, f), readFileSync(join(m.tokenizerDir, f)));
  // Shards of about equal size, whole tensors in order, as transformers cuts them.
  const width = m.dtype === 'F32' ? 4 : 2;
  const sizes = m.tensors.map(([, shape]) => shape.reduce((a, b) => a * b, 1) * width);
  const total = sizes.reduce((a, b) => a + b, 0);
  const groups = Array.from({ length: shardCount }, () => []);
  let acc = 0;
  m.tensors.forEach((t, i) => {
    groups[Math.min(shardCount - 1, Math.floor((acc / total) * shardCount))].push(t);
    acc += sizes[i];
  });
  const rand = xorshift(1234);
  const weightMap = {};
  groups.forEach((group, s) => {
    const file = shardCount === 1 ? 'model.safetensors' : `model-${String(s + 1).padStart(5, '0')}-of-${String(shardCount).padStart(5, '0')}.safetensors`;
    writeShard(join(dir, file), group, m.dtype, rand);
    for (const [name] of group) weightMap[name] = file;
  });
  if (shardCount > 1) writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2));
  writeFileSync(marker, signature);
  return { dir, reused: false };
}

const fmtBytes = (b) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const fmtPhase = (p) => `${p.seconds.toFixed(p.seconds < 1 ? 3 : 2)} s, ${p.megabytesPerSecond.toFixed(1)} MB/s of file bytes (${fmtBytes(p.bytes)})`;

const results = [];
const specs = models.map(spec);
for (const m of specs) {
  const started = performance.now();
  const { reused } = writeCheckpoint(m);
  console.log(`${m.id}: ${reused ? 'reusing' : 'wrote'} ${m.dtype} checkpoint, ${shardCount} shard(s)${reused ? '' : ` in ${((performance.now() - started) / 1000).toFixed(1)} s`}`);
}

const opened = await openPage('/bench/load.html');
try {
  const error = await opened.page.evaluate(() => window.loadBenchReady);
  if (error) throw new Error(error);
  // Untimed warm-up on a test fixture: the first load in a page also pays for importing the
  // tokenizer library (@huggingface/transformers), which would otherwise land on the first model.
  await opened.page.evaluate((req) => window.loadBench.run(req), { id: 'rubric-fixtures/tiny-gpt2', endpoint: '/test/fixtures/hub' });
  for (const m of specs) {
    const r = await opened.page.evaluate((req) => window.loadBench.run(req), { id: m.id, endpoint: ENDPOINT });
    results.push({ model: m.id, dtype: m.dtype, shards: shardCount, mode: values.quick ? 'quick' : 'full', ...r });
    console.log(`\n${m.id} (${(r.parameters / 1e6).toFixed(1)}M parameters, ${m.dtype}, ${r.files.length} files):`);
    console.log(`  download   ${fmtPhase(r.download)}; cache ${r.download.cache}, ${r.download.progressEvents} progress events${r.download.cacheError ? `\n    cache: ${r.download.cacheError}` : ''}`);
    console.log(`  cached     ${fmtPhase(r.cached)} (from the Cache API, no network)`);
    console.log(`  parse      ${fmtPhase(r.parse)} (safetensors → f32 tensors, ${r.tensors} tensors)`);
    console.log(`  loadModel  ${fmtPhase(r.loadModel)} (parse + tokenizer + GPU upload)`);
    console.log(`  GPU bytes  ${fmtBytes(r.gpuValueBytes)} values, ${fmtBytes(r.gpuBytes)} with gradient buffers`);
  }
  const adapter = results[0]?.adapter;
  if (adapter) console.log(`\nadapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}; mode: ${values.quick ? 'quick' : 'full'}`);
  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), benchmark: 'load', endpoint: ENDPOINT, results }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await opened.close();
}
