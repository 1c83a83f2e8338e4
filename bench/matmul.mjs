#!/usr/bin/env node
// Benchmark of square f32 matmul: our WGSL kernels vs TensorFlow.js (WebGPU backend), jax-js
// (WebGPU) and plain JS, all in one page on the same adapter; plus decode-time rows (M = 1, 4)
// through our small-M kernel vs the forced 64x64 tile vs tf.matMul and jax-js. Prints GFLOP/s and
// ratios, writes bench/results/matmul.json. Never asserts a time.
//
//   node bench/matmul.mjs [--sizes 256,512,1024,2048] [--engines ours,tfjs,jax,js]
//                         [--decode 1024] [--shapes MxNxK,...] [--target-seconds 1] [--rounds 5] [--max-repeats 50]
//
// --shapes times [M, K] x [K, N] products of our engine, its own kernel choice against the forced
// 64x64 tile (no peers): the long-K, few-column products of a tied head's input gradient, say.
//
// Fairness: every engine is warmed up (one product), then probed with one product per probe
// round, `--probes` rounds interleaved (the median probe sets its repeats); then the timed blocks run round-robin, `--rounds` rounds, each
// round starting one engine later, so a machine that slows down midway slows every engine alike.
// Per size: each engine's median GFLOP/s, and the ratio ours/peer per round with its median,
// quartiles and min-max. On a software adapter (SwiftShader) the CPU-seconds of Chromium's
// processes (/proc) around each timed block give a CPU-seconds ratio too, which, unlike
// wall-clock time, leaves out the time those processes waited for a core other jobs held.
//
// On SwiftShader (a few tenths of a GFLOP/s) the default sizes take many minutes;
// `--sizes 256,512 --rounds 3` is quick.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromiumExecutable, openPage, repoRoot } from '../scripts/lib/browser.mjs';
import { chromiumCpu, cpuBetween, procAvailable } from './procCpu.mjs';

const ENGINES = ['ours', 'tfjs', 'jax', 'js'];
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '256,512,1024,2048' },
    engines: { type: 'string', default: ENGINES.join(',') },
    decode: { type: 'string', default: '1024' },
    shapes: { type: 'string', default: '' },
    'target-seconds': { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
    probes: { type: 'string', default: '2' },
    // The old name of --rounds (timed runs per engine), still accepted.
    runs: { type: 'string' },
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
const shapes = list(values.shapes).map((text) => {
  const v = text.split('x').map(Number);
  if (v.length !== 3 || v.some((x) => !Number.isInteger(x) || x < 1)) fail(`--shapes takes MxNxK triples of positive integers, got ${text}`);
  return { m: v[0], n: v[1], k: v[2] };
});
const engines = list(values.engines);
const targetSeconds = Number(values['target-seconds']);
const rounds = Number(values.runs ?? values.rounds);
const probes = Number(values.probes);
const maxRepeats = Number(values['max-repeats']);
for (const [name, v] of [...sizes.map((s) => ['--sizes', s]), ...decodeSizes.map((s) => ['--decode', s]), ['--rounds', rounds], ['--probes', probes], ['--max-repeats', maxRepeats]]) {
  if (!Number.isInteger(v) || v < 1) fail(`${name} must hold positive integers, got ${v}`);
}
if (!(targetSeconds > 0)) fail(`--target-seconds must be > 0, got ${values['target-seconds']}`);
for (const e of engines) if (!ENGINES.includes(e)) fail(`unknown engine ${e}; choose from ${ENGINES.join(', ')}`);

// `runs` keeps the old JSON field: timed runs per engine, now one per round.
const timing = { targetSeconds, runs: rounds, rounds, probes, maxRepeats, order: 'round-robin, rotated each round' };
const fmtGflops = (g) => `${g < 0.01 ? g.toPrecision(2) : g.toFixed(g < 10 ? 3 : 1)} GFLOP/s`;
const fmt = (r) => (r.error ? 'n/a' : fmtGflops(r.gflops));
const fmtRatio = (x) => `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`;

/** Sorted-sample quantile, linear between neighbours (q in [0, 1]). */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (at - lo);
}
const spread = (xs) => ({ median: quantile(xs, 0.5), q1: quantile(xs, 0.25), q3: quantile(xs, 0.75), min: Math.min(...xs), max: Math.max(...xs), rounds: xs.length });
const fmtCpu = (c) =>
  `CPU-seconds ${fmtRatio(c.ratio)} over all rounds (per product ${c.oursPerProduct.toPrecision(2)} vs ${c.peerPerProduct.toPrecision(2)} s` +
  (c.rounds ? `; per round median ${c.median.toFixed(2)}, range ${c.min.toFixed(2)}-${c.max.toFixed(2)}, ${c.rounds} rounds)` : ')');
const fmtSpread = (s) => `${fmtRatio(s.median)} (IQR ${s.q1.toFixed(2)}-${s.q3.toFixed(2)}, range ${s.min.toFixed(2)}-${s.max.toFixed(2)}, ${s.rounds} rounds)`;

const opened = await openPage('/bench/matmul.html');
try {
  const error = await opened.page.evaluate(() => window.matmulBenchReady);
  if (error) throw new Error(error);
  const adapter = await opened.page.evaluate(() => window.matmulBench.adapter);
  console.log(`adapter: ${adapter.vendor} ${adapter.architecture}${adapter.isFallback ? ' (software)' : ''}`);
  // CPU-seconds only where the adapter's work is CPU work and /proc can be read.
  const executable = await chromiumExecutable();
  const countCpu = adapter.isFallback && procAvailable() && chromiumCpu(executable).byPid.size > 0;
  if (adapter.isFallback && !countCpu) console.log('  (software adapter, but Chromium\'s processes cannot be read from /proc here: no CPU-seconds)');
  const call = (fn, ...args) => opened.page.evaluate(([f, a]) => window.matmulBench[f](...a), [fn, args]);

  /**
   * Times `entries` ({ key, spec, flops }) against each other: warm-up, interleaved probes (the
   * median sets each entry's repeats), then `rounds` rounds of one timed block per entry, the
   * order rotated each round; CPU-seconds of Chromium around each block where counted.
   * Returns key -> { repeats, seconds, perProductSeconds, gflops (median round), gflopsBest, ... } or { error }.
   */
  async function compare(entries) {
    const out = {};
    const live = [];
    for (const e of entries) {
      const prepared = await call('prepare', e.key, e.spec);
      if (prepared.error) out[e.key] = { engine: e.spec.engine, error: prepared.error };
      else live.push({ ...e, prepared, probes: [], seconds: [], cpu: [], cpuByType: [] });
    }
    const drop = (e, error) => {
      out[e.key] = { engine: e.spec.engine, error };
      live.splice(live.indexOf(e), 1);
    };
    // One probe each at least (the warm-up also paid for compiling); a product that already takes
    // 10x the target (large sizes on a software adapter) needs no second one.
    for (let p = 0; p < probes; p++) {
      for (const e of [...live]) {
        if (p > 0 && e.probes[0] > 10 * targetSeconds) continue;
        const r = await call('timed', e.key, 1);
        if (r.error) drop(e, r.error);
        else e.probes.push(r.seconds);
      }
    }
    for (const e of live) {
      const probe = quantile(e.probes, 0.5);
      e.repeats = Math.max(1, Math.min(maxRepeats, Math.round(targetSeconds / Math.max(probe, 1e-4))));
    }
    for (let round = 0; round < rounds; round++) {
      const order = live.map((_, i) => live[(i + round) % live.length]);
      for (const e of order) {
        const before = countCpu ? chromiumCpu(executable) : null;
        const r = await call('timed', e.key, e.repeats);
        const cpu = before ? cpuBetween(before, chromiumCpu(executable)) : null;
        if (r.error) {
          drop(e, r.error);
          continue;
        }
        e.seconds.push(r.seconds);
        if (cpu) {
          e.cpu.push(cpu.total);
          e.cpuByType.push(cpu.byType);
        }
      }
    }
    for (const e of live) {
      await call('dispose', e.key);
      const perProduct = e.seconds.map((x) => x / e.repeats);
      const result = {
        engine: e.spec.engine,
        repeats: e.repeats,
        seconds: e.seconds,
        perProductSeconds: perProduct,
        gflops: e.flops / quantile(perProduct, 0.5) / 1e9,
        gflopsBest: e.flops / Math.min(...perProduct) / 1e9,
        warmSeconds: e.prepared.warmSeconds,
        probeSeconds: e.probes,
        ...(e.prepared.kernel ? { kernel: e.prepared.kernel } : {}),
      };
      if (e.cpu.length) {
        result.cpuSeconds = e.cpu;
        result.cpuSecondsPerProduct = quantile(e.cpu.map((x) => x / e.repeats), 0.5);
        // Which Chromium processes did the work (median round's split is noisy; the sum over rounds is not).
        const byType = {};
        for (const split of e.cpuByType) for (const [t, v] of Object.entries(split)) byType[t] = (byType[t] ?? 0) + v;
        result.cpuSecondsByProcessType = byType;
      }
      out[e.key] = result;
    }
    for (const e of entries) await call('dispose', e.key);
    return out;
  }

  /**
   * Per-round ratios ours/peer (peer seconds per product over ours, same round: above 1 means ours
   * is faster) and, with CPU-seconds, the same ratio of CPU-seconds per product.
   */
  function ratiosOf(results, oursKey, peerKey) {
    const ours = results[oursKey];
    const peer = results[peerKey];
    if (!ours || ours.error || !peer || peer.error) return null;
    const n = Math.min(ours.perProductSeconds.length, peer.perProductSeconds.length);
    const wall = Array.from({ length: n }, (_, i) => peer.perProductSeconds[i] / ours.perProductSeconds[i]);
    const out = { wall: spread(wall) };
    if (ours.cpuSeconds && peer.cpuSeconds) {
      // /proc counts in ticks (10 ms): a short block can read 0, so the headline is the ratio of the
      // CPU-seconds summed over all rounds, and the spread covers the rounds where both read > 0.
      const m = Math.min(ours.cpuSeconds.length, peer.cpuSeconds.length);
      const perProduct = (r, i) => r.cpuSeconds[i] / r.repeats;
      const sum = (r) => r.cpuSeconds.slice(0, m).reduce((a, b) => a + b, 0) / r.repeats;
      const rounds = Array.from({ length: m }, (_, i) => perProduct(peer, i) / perProduct(ours, i)).filter((x) => Number.isFinite(x) && x > 0);
      if (sum(ours) > 0 && sum(peer) > 0) out.cpu = { ratio: sum(peer) / sum(ours), ...(rounds.length ? spread(rounds) : { rounds: 0 }), oursPerProduct: sum(ours) / m, peerPerProduct: sum(peer) / m };
    }
    return out;
  }

  const engineLine = (name, r) => {
    const detail = r.error
      ? r.error
      : `median of ${r.seconds.length} rounds, best ${fmtGflops(r.gflopsBest)}, ${r.repeats} products/run` +
        `${r.cpuSecondsPerProduct === undefined ? '' : `, ${r.cpuSecondsPerProduct.toFixed(3)} CPU-s/product`}${r.kernel ? `, ${r.kernel}` : ''}`;
    return `${name}  ${fmt(r).padStart(16)}  (${detail})`;
  };

  const square = [];
  for (const size of sizes) {
    const entries = engines.map((engine) => ({ key: engine, spec: { m: size, size, engine }, flops: 2 * size ** 3 }));
    const results = await compare(entries);
    const row = { size, results, ratios: {}, ratioSpread: {}, cpuRatios: {}, cpuRatioSpread: {} };
    for (const engine of engines) console.log(`  ${String(size).padStart(4)}^3  ${engineLine(engine.padEnd(4), results[engine])}`);
    for (const peer of engines.filter((e) => e !== 'ours')) {
      const r = ratiosOf(results, 'ours', peer);
      if (!r) continue;
      row.ratios[`ours/${peer}`] = r.wall.median;
      row.ratioSpread[`ours/${peer}`] = r.wall;
      if (r.cpu) {
        row.cpuRatios[`ours/${peer}`] = r.cpu.ratio;
        row.cpuRatioSpread[`ours/${peer}`] = r.cpu;
      }
      console.log(`  ${String(size).padStart(4)}^3  ours/${peer.padEnd(4)} ${fmtSpread(r.wall)}${r.cpu ? `; ${fmtCpu(r.cpu)}` : ''}`);
    }
    square.push(row);
  }

  const decode = [];
  for (const size of decodeSizes) {
    for (const m of [1, 4]) {
      // Our kernel choice and the forced tile, then each peer asked for that supports a non-square product.
      const peers = engines.filter((e) => e === 'tfjs' || e === 'jax');
      const paths = ['auto', 'tiled', ...peers];
      const entries = paths.map((path) => ({
        key: path,
        spec: peers.includes(path) ? { m, size, engine: path } : { m, size, engine: 'ours', path },
        flops: 2 * m * size ** 2,
      }));
      const results = await compare(entries);
      const row = { m, size, results, ratios: {}, ratioSpread: {}, cpuRatios: {}, cpuRatioSpread: {} };
      for (const path of paths) {
        const r = results[path];
        const label = path === 'auto' ? `ours (${r.kernel ?? 'auto'})` : path === 'tiled' ? 'ours (forced tiled)' : path === 'jax' ? 'jax-js' : path;
        console.log(`  decode [${m},${size}]x[${size},${size}]  ${engineLine(label.padEnd(20), r)}`);
      }
      for (const other of paths.filter((p) => p !== 'auto')) {
        const r = ratiosOf(results, 'auto', other);
        if (!r) continue;
        row.ratios[`auto/${other}`] = r.wall.median;
        row.ratioSpread[`auto/${other}`] = r.wall;
        if (r.cpu) {
          row.cpuRatios[`auto/${other}`] = r.cpu.ratio;
          row.cpuRatioSpread[`auto/${other}`] = r.cpu;
        }
        console.log(`  decode [${m},${size}]  auto/${other.padEnd(5)} ${fmtSpread(r.wall)}${r.cpu ? `; ${fmtCpu(r.cpu)}` : ''}`);
      }
      decode.push(row);
    }
  }

  const shaped = [];
  for (const { m, n, k } of shapes) {
    const entries = ['auto', 'tiled'].map((path) => ({ key: path, spec: { m, size: k, n, k, engine: 'ours', path }, flops: 2 * m * n * k }));
    const results = await compare(entries);
    for (const path of ['auto', 'tiled']) {
      const r = results[path];
      console.log(`  [${m},${k}]x[${k},${n}]  ${engineLine((path === 'auto' ? `ours (${r.kernel ?? 'auto'})` : 'ours (forced tiled)').padEnd(20), r)}`);
    }
    const r = ratiosOf(results, 'auto', 'tiled');
    if (r) console.log(`  [${m},${k}]x[${k},${n}]  auto/tiled ${fmtSpread(r.wall)}${r.cpu ? `; ${fmtCpu(r.cpu)}` : ''}`);
    shaped.push({ m, n, k, results, ratio: r?.wall.median ?? null, ratioSpread: r?.wall ?? null, cpuRatio: r?.cpu?.ratio ?? null });
  }

  mkdirSync(join(values.out, '..'), { recursive: true });
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), benchmark: 'matmul', timing: { ...timing, cpuSeconds: countCpu }, adapter, square, decode, shapes: shaped }, null, 2));
  console.log(`wrote ${values.out}`);
} finally {
  await opened.close();
}
