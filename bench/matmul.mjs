#!/usr/bin/env node
// Benchmark of square f32 matmul: our WGSL kernels vs TensorFlow.js (WebGPU backend), jax-js
// (WebGPU) and plain JS, all in one page on the same adapter; plus decode-time rows (M = 1, 4)
// through our small-M kernel vs the forced 64x64 tile vs tf.matMul. Prints GFLOP/s and
// ratios, writes bench/results/matmul.json. Never asserts a time.
//
//   node bench/matmul.mjs [--sizes 256,512,1024,2048] [--engines ours,tfjs,jax,js]
//                         [--decode 1024] [--target-seconds 1] [--runs 2] [--max-repeats 50]
//
// On SwiftShader (software WebGPU, a few tenths of a GFLOP/s) the default sizes take many
// minutes; `--sizes 256,512` is quick.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPage, repoRoot } from '../scripts/lib/browser.mjs';

const ENGINES = ['ours', 'tfjs', 'jax', 'js'];
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '256,512,1024,2048' },
    engines: { type: 'string', default: ENGINES.join(',') },
    decode: { type: 'string', default: '1024' },
    'target-seconds': { type: 'string', default: '1' },
    runs: { type: 'string', default: '2' },
    'max-repeats': { type: 'string', default: '50' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'matmul.json') },
  },
});

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}
const list = (text) => (text === '' || text === '0' ? [] : text.split(',').map((s) => s.trim()));
const sizes = list(values.sizes).map(Number);
const decodeSizes = list(values.decode).map(Number);
const engines = list(values.engines);
const targetSeconds = Number(values['target-seconds']);
const runs = Number(values.runs);
const maxRepeats = Number(values['max-repeats']);
for (const [name, v] of [...sizes.map((s) => ['--sizes', s]), ...decodeSizes.map((s) => ['--decode', s]), ['--runs', runs], ['--max-repeats', maxRepeats]]) {
  if (!Number.isInteger(v) || v < 1) fail(`${name} must hold positive integers, got ${v}`);
}
if (!(targetSeconds > 0)) fail(`--target-seconds must be > 0, got ${values['target-seconds']}`);
for (const e of engines) if (!ENGINES.includes(e)) fail(`unknown engine ${e}; choose from ${ENGINES.join(', ')}`);

const timing = { targetSeconds, runs, maxRepeats };
const fmt = (r) => (r.error ? 'n/a' : `${r.gflops.toFixed(r.gflops < 10 ? 3 : 1)} GFLOP/s`);

const opened = await openPage('/bench/matmul.html');
try {
  const error = await opened.page.evaluate(() => window.matmulBenchReady);
  if (error) throw new Error(error);
  const adapter = await opened.page.evaluate(() => window.matmulBench.adapter);
  console.log(`adapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}`);

  const square = [];
  for (const size of sizes) {
    const row = { size, results: {}, ratios: {} };
    for (const engine of engines) {
      const r = await opened.page.evaluate((cfg) => window.matmulBench.square(cfg), { size, engine, ...timing });
      row.results[engine] = r;
      const detail = r.error ? r.error : `${r.repeats} chained products/run, best of ${r.seconds.length}${r.kernel ? `, ${r.kernel}` : ''}`;
      console.log(`  ${String(size).padStart(4)}^3  ${engine.padEnd(4)}  ${fmt(r).padStart(16)}  (${detail})`);
    }
    const ours = row.results.ours;
    for (const peer of engines.filter((e) => e !== 'ours')) {
      const p = row.results[peer];
      if (ours && !ours.error && p && !p.error) row.ratios[`ours/${peer}`] = ours.gflops / p.gflops;
    }
    const ratioText = Object.entries(row.ratios).map(([k, v]) => `${k} ${v.toFixed(2)}x`).join('  ');
    console.log(`  ${String(size).padStart(4)}^3  ratios: ${ratioText || 'n/a'}`);
    square.push(row);
  }

  const decode = [];
  for (const size of decodeSizes) {
    for (const m of [1, 4]) {
      const row = { m, size, results: {} };
      for (const path of ['auto', 'tiled', ...(engines.includes('tfjs') ? ['tfjs'] : [])]) {
        const r = await opened.page.evaluate((cfg) => window.matmulBench.decode(cfg), { m, size, path, ...timing });
        row.results[path] = r;
        const label = path === 'auto' ? `ours (${r.kernel ?? 'auto'})` : path === 'tiled' ? 'ours (forced tiled)' : 'tfjs';
        console.log(`  decode [${m},${size}]x[${size},${size}]  ${label.padEnd(20)} ${fmt(r).padStart(16)}${r.error ? `  (${r.error})` : ''}`);
      }
      decode.push(row);
    }
  }

  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), benchmark: 'matmul', timing, adapter, square, decode }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await opened.close();
}
