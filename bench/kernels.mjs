#!/usr/bin/env node
// Benchmark of the log-prob kernel (forward + backward) against its plain-JS twin, same page
// and adapter. Prints a table and writes bench/results/kernels.json. Never asserts a time.
//
//   node bench/kernels.mjs [--tokens 2048] [--vocab 50257,151936] [--twin-tokens 32] [--repeats 3]
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
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'kernels.json') },
  },
});
const tokens = Number(values.tokens);
const vocabs = values.vocab.split(',').map(Number);
const twinTokens = Number(values['twin-tokens']);
const repeats = Number(values.repeats);
for (const [name, v] of [['--tokens', tokens], ['--twin-tokens', twinTokens], ['--repeats', repeats], ...vocabs.map((v) => ['--vocab', v])]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench: ${name} must be a positive integer`);
    process.exit(2);
  }
}

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
        `JS twin ${r.twin.tokensPerSecond.toFixed(1)} tok/s (${r.twin.tokens} rows) | ratio ${r.ratio.toFixed(1)}x`,
    );
  }
  const adapter = results[0]?.adapter;
  console.log(`adapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}`);
  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), benchmark: 'logprobs', results }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await opened.close();
}
