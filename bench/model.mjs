#!/usr/bin/env node
// Whole-model benchmark: training tokens/s (one SFT step: forward + backward + AdamW in one
// submission) and sampling tokens/s (KV cache) of our engine, for the embedded default model
// (or a random model of its config when public/models/tiny-gpt2-byte/ is absent) and for a
// random GPT-2-small-sized model; plus the same GPT-2's forward + backward (mean cross-entropy)
// in TensorFlow.js (WebGPU) and jax-js (WebGPU) in the same page, with the ratios; queue
// submissions and readbacks per step; GPU bytes; and the peers' full train steps (forward + backward +
// clipping + AdamW, same hyperparameters) beside ours. Prints a table, writes
// bench/results/model.json. Never asserts a time.
//
//   node bench/model.mjs [--quick] [--models default,gpt2-small] [--engines tfjs,jax,jax-eager]
//                        [--gpt2-peers] [--train-size BxT] [--out FILE]
//
// --quick: sizes for SwiftShader (software WebGPU, a few tenths of a GFLOP/s); GPT-2 small runs
// at tiny batch sizes with our engine only (add --gpt2-peers to time the peers on it too).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPage, repoRoot } from '../scripts/lib/browser.mjs';

// jax = jax-js under jit, jax-eager = the same code without jit (bench/peers/jaxGpt2.ts says why both).
const PEERS = ['tfjs', 'jax', 'jax-eager'];
const MODELS = ['default', 'gpt2-small'];
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    models: { type: 'string', default: MODELS.join(',') },
    engines: { type: 'string', default: PEERS.join(',') },
    'gpt2-peers': { type: 'boolean', default: false },
    'train-size': { type: 'string', default: '' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'model.json') },
  },
});

/**
 * Each peer's train steps alone in a fresh page that loads `loadRequest` (the same seeded weights
 * as ours): a GPT-2-small-sized page cannot hold our trainer and a peer's. Results keyed by peer.
 */
async function trainPeersInOwnPages(engines, loadRequest, timing) {
  const out = {};
  for (const engine of engines) {
    let bench;
    try {
      bench = await openBench();
      await bench.call('load', loadRequest);
      Object.assign(out, await bench.call('trainPeersAlone', { ...timing, peers: [engine] }));
    } catch (err) {
      out[engine] = { engine, error: errorText(err) };
    } finally {
      await bench?.opened.close();
    }
  }
  return out;
}

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}
const list = (text) => (text === '' || text === 'none' ? [] : text.split(',').map((s) => s.trim()));
const models = list(values.models);
const peers = list(values.engines);
for (const m of models) if (!MODELS.includes(m)) fail(`unknown model ${m}; choose from ${MODELS.join(', ')}`);
for (const e of peers) if (!PEERS.includes(e)) fail(`unknown peer ${e}; choose from ${PEERS.join(', ')} (our engine always runs)`);
let trainSize = null;
if (values['train-size'] !== '') {
  const [batch, seqLen, ...rest] = values['train-size'].split('x').map(Number);
  if (rest.length || !Number.isInteger(batch) || batch < 1 || !Number.isInteger(seqLen) || seqLen < 2) {
    fail(`--train-size must be BATCHxSEQ with BATCH >= 1 and SEQ >= 2, got ${values['train-size']}`);
  }
  trainSize = { batch, seqLen };
}

const EMBEDDED = join(repoRoot, 'public', 'models', 'tiny-gpt2-byte');
const embedded = existsSync(join(EMBEDDED, 'config.json')) && existsSync(join(EMBEDDED, 'model.safetensors'));

/** The default policy's config (scripts/pretrain_default.py), for the random stand-in. */
const DEFAULT_CONFIG = { model_type: 'gpt2', vocab_size: 259, n_embd: 128, n_layer: 4, n_head: 4, n_inner: 512, n_positions: 256, bos_token_id: 256, eos_token_id: 257 };
const GPT2_SMALL = { model_type: 'gpt2', vocab_size: 50257, n_embd: 768, n_layer: 12, n_head: 12, n_inner: 3072, n_positions: 1024, bos_token_id: 50256, eos_token_id: 50256 };

// Sizes per mode. train: SFT steps, and forward+backward (ours and peers), on batch x seq
// tokens; sample: batch prompts of promptLen tokens, newTokens sampled each. In --quick mode
// GPT-2 small (one step costs minutes on SwiftShader) takes a single SFT step and two sampled
// tokens, with no warm-up: their times include creating buffers (and the AdamW moments).
const SIZES = values.quick
  ? {
      default: {
        train: { batch: 2, seqLen: 32, warmup: 1, steps: 2 },
        forwardBackward: true,
        peers: true,
        sample: { batch: 2, promptLen: 8, newTokens: 16, warmup: true, runs: 1 },
      },
      'gpt2-small': {
        // With --gpt2-peers every engine (ours too) gets one untimed step first: jit tracing,
        // pipeline compilation and allocation stay out of the comparison.
        train: { batch: 1, seqLen: 8, warmup: values['gpt2-peers'] ? 1 : 0, steps: 1 },
        forwardBackward: values['gpt2-peers'],
        peers: values['gpt2-peers'],
        sample: { batch: 1, promptLen: 4, newTokens: 2, warmup: false, runs: 1 },
      },
    }
  : {
      default: {
        train: { batch: 8, seqLen: 256, warmup: 2, steps: 5 },
        forwardBackward: true,
        peers: true,
        sample: { batch: 8, promptLen: 32, newTokens: 128, warmup: true, runs: 2 },
      },
      'gpt2-small': {
        train: { batch: 4, seqLen: 256, warmup: 2, steps: 5 },
        forwardBackward: true,
        peers: true,
        sample: { batch: 4, promptLen: 32, newTokens: 64, warmup: true, runs: 2 },
      },
    };

const fmtRate = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2));
const fmtBytes = (b) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);
/** The engine's per-step counters (src/gpu/runtime.ts EngineCounters): the setup a step pays. */
const fmtEngine = (c) =>
  `${c.dispatches} dispatches, bind groups ${c.bindGroupsCreated} created / ${c.bindGroupsReused} reused, ` +
  `pipelines ${c.pipelinesCreated} compiled on demand${c.pipelinesWarmed ? ` (+${c.pipelinesWarmed} warmed)` : ''}, ${c.buffersCreated} buffers created`;
const fmtTiming = (r) => `${fmtRate(r.tokensPerSecond)} tok/s (median ${r.medianSeconds.toFixed(3)} s of ${r.seconds.length})`;
const errorText = (err) =>
  String(err?.message ?? err)
    .split('\n')[0]
    .replace(/^page\.evaluate: (Error: )?/, '');

/**
 * Whether a peer computed what ours did: f32 engines summing in different orders agree to
 * about 1e-6 in the loss and 1e-5 in the gradient norm; 1e-3 leaves room and still catches a
 * wrong result (jax-js's nn.oneHot at GPT-2's vocabulary was off by orders of magnitude).
 */
const sameResult = (r) => r.lossDifference <= 1e-3 * Math.max(1, Math.abs(r.loss)) && r.gradNormRelativeDifference <= 1e-3;

/** Runs one in-page phase; a failure is printed and recorded, and the benchmark goes on. */
async function phase(what, run) {
  try {
    return await run();
  } catch (err) {
    console.log(`  ${what}: failed: ${errorText(err)}`);
    return { error: errorText(err) };
  }
}

/** Opens the bench page; `call(fn, ...args)` runs window.modelBench[fn] there. */
async function openBench() {
  const opened = await openPage('/bench/model.html');
  try {
    const error = await opened.page.evaluate(() => window.modelBenchReady);
    if (error) throw new Error(error);
  } catch (err) {
    await opened.close();
    throw err;
  }
  const call = (fn, ...args) => opened.page.evaluate(([f, a]) => window.modelBench[f](...a), [fn, args]);
  return { opened, call };
}

const started = performance.now();
const { opened, call } = await openBench();
const rows = [];
const results = [];
try {
  const adapter = await opened.page.evaluate(() => window.modelBench.adapter);
  console.log(`adapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}; mode: ${values.quick ? 'quick' : 'full'}`);

  for (const name of models) {
    const sizes = trainSize ? { ...SIZES[name], train: { ...SIZES[name].train, ...trainSize } } : SIZES[name];
    const useEmbedded = name === 'default' && embedded;
    const label = name === 'default' ? (useEmbedded ? 'tiny-gpt2-byte' : 'default-cfg (random)') : 'gpt2-small (random)';
    const result = { model: label, sizes, peers: {} };
    results.push(result);
    console.log(`\n${label}:`);
    const loadRequest = { config: name === 'default' ? DEFAULT_CONFIG : GPT2_SMALL, embedded: useEmbedded, seed: 1 };
    result.load = await phase('load', () => call('load', loadRequest));
    if (result.load.error) continue;
    const c = result.load.config;
    console.log(
      `  ${result.load.source}; ${(result.load.parameters / 1e6).toFixed(2)}M parameters (d ${c.hiddenSize}, ${c.numLayers} layers, ` +
        `${c.numHeads} heads, mlp ${c.intermediateSize}, vocab ${c.vocabSize}, ctx ${c.maxPositions}); loaded in ${result.load.seconds.toFixed(1)} s`,
    );
    if (name === 'default' && !embedded) console.log('  (public/models/tiny-gpt2-byte/ is absent: a random model of its config stands in)');
    const shape = `${sizes.train.batch}x${sizes.train.seqLen}`;
    const timing = { ...sizes.train, seed: 7 };
    const row = (engine, what, r, extra = {}) =>
      rows.push(r.error ? { model: label, engine, what, shape, error: r.error } : { model: label, engine, what, shape, rate: r.tokensPerSecond, seconds: r.medianSeconds, loss: r.loss, gradNorm: r.gradNorm, counters: r.counters, ...extra });
    /**
     * A peer's result `r` for `what` beside ours: adds its speed ratio and agreement to `r` (they go
     * to the JSON), a table row, and its printed lines; `notesSuffix` follows the peer's notes.
     */
    const peerRow = (engine, what, ours, r, notesSuffix = '') => {
      if (r.error) {
        console.log(`  ${engine} ${what}: failed: ${r.error}`);
        row(engine, what, r);
        return;
      }
      r.ratio = ours.tokensPerSecond / r.tokensPerSecond;
      r.lossDifference = Math.abs(r.loss - ours.loss);
      r.gradNormRelativeDifference = Math.abs(r.gradNorm - ours.gradNorm) / ours.gradNorm;
      r.sameResult = sameResult(r);
      row(engine, what, r, { ratio: r.ratio, wrong: !r.sameResult });
      console.log(
        `  ${engine.padEnd(9)} ${what} ${shape}: ${fmtTiming(r)}, loss ${r.loss.toFixed(4)}, grad norm ${r.gradNorm.toFixed(4)}; ours/${engine} ${r.ratio.toFixed(2)}x; ` +
          `vs ours: |loss diff| ${r.lossDifference.toExponential(1)}, grad norm rel. diff ${r.gradNormRelativeDifference.toExponential(1)}` +
          `${r.sameResult ? '' : '\n    MISMATCH: this peer computed a different loss or gradients, so its speed is not comparable'}\n    [${r.notes}${notesSuffix}]`,
      );
    };

    // Forward + backward first, ours and the peers interleaved step by step: the weights are
    // still the loaded ones, which the peers get too.
    if (sizes.forwardBackward) {
      const engines = sizes.peers ? peers : [];
      const both = await phase('fwd+bwd', () => call('forwardBackward', { ...timing, peers: engines }));
      const ours = (result.forwardBackward = both.error ? both : both.ours);
      row('ours', 'fwd+bwd', ours);
      if (!ours.error) {
        console.log(
          `  ours      fwd+bwd ${shape}: ${fmtTiming(ours)}, loss ${ours.loss.toFixed(4)}, grad norm ${ours.gradNorm.toFixed(4)}, ` +
            `${ours.counters.submits} submit, ${ours.counters.readbacks} readback (${ours.counters.bytesRead} B)\n    per step: ${fmtEngine(ours.counters)}`,
        );
      }
      for (const engine of both.error ? [] : engines) peerRow(engine, 'fwd+bwd', ours, (result.peers[engine] = both.peers[engine]));
    } else {
      console.log('  --quick: forward+backward alone and the peers are skipped for this model (--gpt2-peers runs them);');
      console.log('  its SFT step runs once with no warm-up, so its time includes creating the buffers');
    }

    // The peers' full train steps (AdamW with ours' hyperparameters) run beside ours, step by
    // step. GPT-2 small's run after ours, each in a fresh page with the same seeded weights: beside
    // our trainer (weights, gradients, moments) SwiftShader lost its device in each peer's step.
    const trainPeers = sizes.peers ? peers : [];
    const peersInOwnPage = name === 'gpt2-small';
    const train = (result.train = await phase('ours train step', () => call('train', { ...timing, peers: peersInOwnPage ? [] : trainPeers })));
    if (!train.error && peersInOwnPage && trainPeers.length) train.peers = await trainPeersInOwnPages(trainPeers, loadRequest, timing);
    row('ours', 'train step', train);
    if (!train.error) {
      const pool = train.memory.pool;
      console.log(
        `  ours      train step ${shape}: ${fmtTiming(train)}, loss ${train.loss.toFixed(4)}, grad norm ${train.gradNorm.toFixed(4)}${train.skipped ? `, ${train.skipped} skipped` : ''}\n` +
          `    per step: ${train.counters.submits} submit, ${train.counters.readbacks} readbacks (${train.counters.bytesRead} B), ${fmtEngine(train.counters)}\n` +
          (train.firstCounters ? `    first step of the run: ${fmtEngine(train.firstCounters)}\n` : '') +
          `    GPU bytes: parameters+grads+AdamW ${fmtBytes(train.memory.parameterBytes)}; pool in use ${fmtBytes(pool.bytesInUse)}, cached free ${fmtBytes(pool.bytesFree)}, ` +
          `total held ${fmtBytes(pool.bytesInUse + pool.bytesFree)} (${pool.created} buffers created, ${pool.reused} reuses)`,
      );
    }

    for (const engine of train.error ? [] : trainPeers) peerRow(engine, 'train step', train, train.peers[engine], '; + clip + AdamW');

    const s = sizes.sample;
    const sample = (result.sample = await phase('ours sampling', () => call('sample', { ...s, seed: 11 })));
    if (sample.error) {
      rows.push({ model: label, engine: 'ours', what: 'sampling', shape: `${s.batch}x${s.newTokens} new`, error: sample.error });
    } else {
      const best = Math.min(...sample.seconds);
      rows.push({ model: label, engine: 'ours', what: 'sampling', shape: `${s.batch}x${s.newTokens} new`, rate: sample.tokensPerSecond, seconds: best, counters: sample.counters ?? { submits: sample.submits, readbacks: sample.readbacks, bytesRead: sample.bytesRead } });
      console.log(
        `  ours      sampling ${s.batch} prompt${s.batch === 1 ? '' : 's'} x ${s.promptLen} tokens, ${s.newTokens} new each: ${fmtRate(sample.tokensPerSecond)} tok/s ` +
          `(best ${best.toFixed(3)} s of ${sample.seconds.length}, prefill included${s.warmup ? '' : ', no warm-up'}), ${sample.submits} submits, ${sample.readbacks} readbacks (${sample.bytesRead} B)` +
          (sample.counters ? `\n    per run: ${fmtEngine(sample.counters)}` : ''),
      );
    }
    await opened.page.evaluate(() => window.modelBench.unload());
  }

  console.log('\nsummary: tokens/s = batch x seq / median step seconds (sampling: batch x new tokens / best run seconds);');
  console.log('fwd+bwd = forward + mean cross-entropy + backward, no optimizer; train step = that + grad-norm clipping + AdamW (peers too, same hyperparameters)');
  const header = ['model', 'engine', 'what', 'batch x seq', 'tokens/s', 'seconds', 'loss', 'grad norm', 'ours/peer', 'submits', 'readbacks'];
  const table = rows.map((r) => [
    r.model,
    r.engine,
    r.what,
    r.shape,
    r.error ? `n/a (${r.error.slice(0, 40)})` : fmtRate(r.rate),
    r.error ? '' : r.seconds.toFixed(3),
    r.loss === undefined ? '' : r.loss.toFixed(4),
    r.gradNorm === undefined ? '' : r.gradNorm.toFixed(4),
    r.ratio === undefined ? '' : r.wrong ? `(${r.ratio.toFixed(2)}x) MISMATCH` : `${r.ratio.toFixed(2)}x`,
    r.counters ? String(r.counters.submits) : '',
    r.counters ? `${r.counters.readbacks} (${r.counters.bytesRead} B)` : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) console.log(line(row));

  const seconds = (performance.now() - started) / 1000;
  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(
    values.out,
    JSON.stringify({ date: new Date().toISOString(), benchmark: 'model', mode: values.quick ? 'quick' : 'full', embedded, adapter, seconds, results }, null, 2),
  );
  console.log(`wrote ${values.out} (${seconds.toFixed(0)} s)`);
} finally {
  await opened.close();
}
