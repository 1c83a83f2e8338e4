#!/usr/bin/env node
// Benchmark of the log-prob and distillation kernels (forward + backward) against their plain-JS
// float64 twins (cold, for clarity) and, for log-probs, a plain-JS float32 baseline written for speed
// (bench/logprobsF32.ts, warmed up, same rows), same page and adapter. Prints a table and writes
// bench/results/kernels.json. Never asserts a time.
//
//   node bench/kernels.mjs [--tokens 2048] [--vocab 50257,151936] [--twin-tokens 32] [--repeats 3]
//                          [--distill-beta 0.5] [--distill-top-k K]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPage, repoRoot } from '../scripts/lib/browser.mjs';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '2048' },
    vocab: { type: 'string', default: '50257,151936' },
    'twin-tokens': { type: 'string', default: '32' },
    repeats: { type: 'string', default: '3' },
    'distill-beta': { type: 'string', default: '0.5' },
    'distill-top-k': { type: 'string' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'kernels.json') },
  },
});
const tokens = Number(values.tokens);
const vocabs = values.vocab.split(',').map(Number);
const twinTokens = Number(values['twin-tokens']);
const repeats = Number(values.repeats);
const distillBeta = Number(values['distill-beta']);
const distillTopK = values['distill-top-k'] === undefined ? null : Number(values['distill-top-k']);
if (!(distillBeta >= 0 && distillBeta <= 1)) {
  console.error('bench: --distill-beta must be between 0 and 1');
  process.exit(2);
}
if (distillTopK !== null && (!Number.isInteger(distillTopK) || distillTopK < 1)) {
  console.error('bench: --distill-top-k must be a positive integer');
  process.exit(2);
}
for (const [name, v] of [['--tokens', tokens], ['--twin-tokens', twinTokens], ['--repeats', repeats], ...vocabs.map((v) => ['--vocab', v])]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench: ${name} must be a positive integer`);
    process.exit(2);
  }
}

/** A ratio with enough digits to read when it is far below 1. */
const ratioText = (x) => `${x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2)}x`;

const opened = await openPage('/bench/kernels.html');
try {
  const error = await opened.page.evaluate(() => window.benchReady);
  if (error) throw new Error(error);
  const results = [];
  for (const vocab of vocabs) {
    const r = await opened.page.evaluate((cfg) => window.bench.logprobs(cfg), { vocab, tokens, twinTokens, repeats });
    results.push(r);
    console.log(
      `logprobs fwd+bwd  V=${String(vocab).padStart(6)}  T=${tokens}: ` +
        `WGSL ${r.wgsl.tokensPerSecond.toFixed(0)} tok/s (best of ${repeats}, ${r.wgsl.submitsPerRun} submit, ` +
        `${r.wgsl.readbacksPerRun} readback, ${r.rowsPerChunk} rows/chunk) | ` +
        `JS twin ${r.twin.tokensPerSecond.toFixed(1)} tok/s (${r.twin.tokens} rows, f64, cold) | ratio ${r.ratio.toFixed(1)}x`,
    );
    console.log(
      `                  JS f32 baseline ${r.jsF32.tokensPerSecond.toFixed(1)} tok/s (same ${r.jsF32.tokens} rows, warmed, best of ${repeats}; ` +
        `max |logprob diff| vs twin ${r.jsF32.maxLogprobDiff.toExponential(1)}) | WGSL/JS f32 ${ratioText(r.ratioJsF32)}`,
    );
  }
  const distill = [];
  for (const vocab of vocabs) {
    const cfg = { vocab, tokens, twinTokens, repeats, beta: distillBeta, topK: distillTopK };
    const r = await opened.page.evaluate((c) => window.bench.distill(c), cfg);
    distill.push(r);
    const kind = `beta ${distillBeta}${distillTopK === null ? '' : `, top-${distillTopK}`}`;
    console.log(
      `distill  fwd+bwd  V=${String(vocab).padStart(6)}  T=${tokens}: ` +
        `WGSL ${r.wgsl.tokensPerSecond.toFixed(0)} tok/s (${kind}, best of ${repeats}, ${r.wgsl.submitsPerRun} submit, ` +
        `${r.rowsPerChunk} rows/chunk) | JS twin ${r.twin.tokensPerSecond.toFixed(1)} tok/s (${r.twin.tokens} rows) | ` +
        `ratio ${r.ratio.toFixed(1)}x`,
    );
  }
  const adapter = results[0]?.adapter;
  console.log(`adapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}`);
  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), benchmark: 'logprobs', results, distill }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await opened.close();
}
