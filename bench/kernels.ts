// In-page side of bench/kernels.mjs: times the WGSL log-prob and distillation kernels (forward +
// backward) and their plain-JS float64 twins on the same page, so the ratio compares like with like.
import { GpuRuntime } from '../src/gpu/runtime';
import { recordDistillBackward, recordDistillForward } from '../src/ops/distill';
import { distillBackwardRef, distillForwardRef } from '../src/ops/distill.reference';
import { recordLogprobsBackward, recordLogprobsForward } from '../src/ops/logprobs';
import { logprobsBackwardRef, logprobsForwardRef } from '../src/ops/logprobs.reference';
import { logprobsF32 } from './logprobsF32';

export interface LogprobsBenchConfig {
  vocab: number;
  tokens: number;
  /** Rows the JS twin runs (it is far slower); its rate is tokens/s over these rows. */
  twinTokens: number;
  repeats: number;
}

export interface LogprobsBenchResult {
  vocab: number;
  tokens: number;
  rowsPerChunk: number;
  wgsl: { seconds: number[]; tokensPerSecond: number; submitsPerRun: number; readbacksPerRun: number };
  twin: { tokens: number; seconds: number; tokensPerSecond: number };
  ratio: number;
  /**
   * Log-prob bench only: the plain-JS float32 baseline written for speed (bench/logprobsF32.ts) on
   * the twin's rows, warmed up, best of `repeats` (seconds per pass); maxLogprobDiff is its largest |logprob - twin's|.
   */
  jsF32?: { tokens: number; seconds: number[]; tokensPerSecond: number; maxLogprobDiff: number };
  /** WGSL tokens/s over the float32 baseline's. */
  ratioJsF32?: number;
  adapter: GpuRuntime['info'];
}

function randomLogits(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296 - 0.5) * 8;
  }
  return out;
}

async function benchLogprobs(rt: GpuRuntime, cfg: LogprobsBenchConfig): Promise<LogprobsBenchResult> {
  const { vocab, tokens } = cfg;
  // Logits of 2048 x 151,936 floats (1.2 GB) exceed one storage binding, as they would in a
  // real model's chunked LM head: process rows in chunks that fit, all in one submission.
  const budget = Math.min(rt.device.limits.maxStorageBufferBindingSize, 256 * 1024 * 1024);
  const rowsPerChunk = Math.max(1, Math.min(tokens, Math.floor(budget / (vocab * 4))));
  const chunks = Math.ceil(tokens / rowsPerChunk);
  const logits = rt.upload(randomLogits(rowsPerChunk * vocab, 1), 'bench.logits');
  const ids = new Uint32Array(rowsPerChunk).map((_, i) => (i * 7919) % vocab);
  const tokenBuf = rt.upload(ids, 'bench.tokens');
  const gradLp = rt.upload(new Float32Array(rowsPerChunk).fill(1), 'bench.grad_logprobs');
  const gradH = rt.upload(new Float32Array(rowsPerChunk).fill(0.1), 'bench.grad_entropy');

  const runOnce = async () => {
    const before = { ...rt.counters };
    const rec = rt.recorder('bench.logprobs');
    const produced: GPUBuffer[] = [];
    let lastGrad: GPUBuffer | null = null;
    for (let c = 0; c < chunks; c++) {
      const rows = Math.min(rowsPerChunk, tokens - c * rowsPerChunk);
      const fwd = recordLogprobsForward(rt, rec, logits, tokenBuf, { rows, vocab, temperature: 1 });
      lastGrad = recordLogprobsBackward(rt, rec, fwd, gradLp, gradH);
      produced.push(fwd.logprobs, fwd.entropy, fwd.rowStats, lastGrad);
    }
    // Read back one scalar: the submission is done when it arrives.
    const probe = rec.readF32(lastGrad!, 1);
    const t0 = performance.now();
    await rec.submit();
    await probe;
    const seconds = (performance.now() - t0) / 1000;
    rt.release(...produced);
    return { seconds, submits: rt.counters.submits - before.submits, readbacks: rt.counters.readbacks - before.readbacks };
  };

  await runOnce(); // warm-up: pipeline compilation and buffer allocation
  const seconds: number[] = [];
  let last = { submits: 0, readbacks: 0 };
  for (let r = 0; r < cfg.repeats; r++) {
    const run = await runOnce();
    seconds.push(run.seconds);
    last = run;
  }
  rt.release(logits, tokenBuf, gradLp, gradH);
  const best = Math.min(...seconds);

  const twinRows = Math.min(cfg.twinTokens, tokens);
  const host = randomLogits(twinRows * vocab, 2);
  const problem = { logits: host, tokens: Array.from(ids.slice(0, twinRows)), rows: twinRows, vocab, temperature: 1 };
  const t0 = performance.now();
  const twinOut = logprobsForwardRef(problem);
  logprobsBackwardRef(problem, new Float64Array(twinRows).fill(1), new Float64Array(twinRows).fill(0.1));
  const twinSeconds = (performance.now() - t0) / 1000;

  // The float32 baseline on the same rows: one untimed run (JIT warm-up, pages touched), then best of
  // `repeats` timed samples; a sample repeats the whole pass until 50 ms have passed (the page's clock
  // is coarse) and keeps the seconds per pass.
  const fast = logprobsF32(host, ids.slice(0, twinRows), twinRows, vocab, 1, new Float32Array(twinRows).fill(1), new Float32Array(twinRows).fill(0.1));
  fast.run();
  const fastSeconds: number[] = [];
  for (let r = 0; r < cfg.repeats; r++) {
    const t1 = performance.now();
    let passes = 0;
    do {
      fast.run();
      passes++;
    } while (performance.now() - t1 < 50);
    fastSeconds.push((performance.now() - t1) / 1000 / passes);
  }
  let maxLogprobDiff = 0;
  for (let r = 0; r < twinRows; r++) maxLogprobDiff = Math.max(maxLogprobDiff, Math.abs(fast.logprobs[r] - twinOut.logprobs[r]));

  const wgslRate = tokens / best;
  const twinRate = twinRows / twinSeconds;
  const fastRate = twinRows / Math.min(...fastSeconds);
  return {
    vocab,
    tokens,
    rowsPerChunk,
    wgsl: { seconds, tokensPerSecond: wgslRate, submitsPerRun: last.submits, readbacksPerRun: last.readbacks },
    twin: { tokens: twinRows, seconds: twinSeconds, tokensPerSecond: twinRate },
    ratio: wgslRate / twinRate,
    jsF32: { tokens: twinRows, seconds: fastSeconds, tokensPerSecond: fastRate, maxLogprobDiff },
    ratioJsF32: wgslRate / fastRate,
    adapter: rt.info,
  };
}

export interface DistillBenchConfig extends LogprobsBenchConfig {
  beta: number;
  topK: number | null;
}

/** Student and teacher logits per chunk, forward + backward of the divergence, one submission. */
async function benchDistill(rt: GpuRuntime, cfg: DistillBenchConfig): Promise<LogprobsBenchResult & { beta: number; topK: number | null }> {
  const { vocab, tokens, beta, topK } = cfg;
  // Two [rows, vocab] inputs plus the gradient: a third of the log-prob bench's budget per buffer.
  const budget = Math.min(rt.device.limits.maxStorageBufferBindingSize, 128 * 1024 * 1024);
  const rowsPerChunk = Math.max(1, Math.min(tokens, Math.floor(budget / (vocab * 4))));
  const chunks = Math.ceil(tokens / rowsPerChunk);
  const inputs = {
    student: rt.upload(randomLogits(rowsPerChunk * vocab, 1), 'bench.student'),
    teacher: rt.upload(randomLogits(rowsPerChunk * vocab, 3), 'bench.teacher'),
    excluded: rt.upload(new Uint32Array(vocab), 'bench.excluded'),
    tokenWeight: rt.upload(new Float32Array(rowsPerChunk).fill(1), 'bench.token_weight'),
  };
  const gradLoss = rt.upload(new Float32Array(rowsPerChunk).fill(1), 'bench.grad_loss');
  const shape = { vocab, temperature: 1, beta, topK };

  const runOnce = async () => {
    const before = { ...rt.counters };
    const rec = rt.recorder('bench.distill');
    const produced: GPUBuffer[] = [];
    let lastGrad: GPUBuffer | null = null;
    for (let c = 0; c < chunks; c++) {
      const rows = Math.min(rowsPerChunk, tokens - c * rowsPerChunk);
      const fwd = recordDistillForward(rt, rec, inputs, { ...shape, rows });
      lastGrad = recordDistillBackward(rt, rec, fwd, gradLoss);
      produced.push(fwd.loss, fwd.rowStats, fwd.rowSelect, lastGrad);
    }
    const probe = rec.readF32(lastGrad!, 1);
    const t0 = performance.now();
    await rec.submit();
    await probe;
    const seconds = (performance.now() - t0) / 1000;
    rt.release(...produced);
    return { seconds, submits: rt.counters.submits - before.submits, readbacks: rt.counters.readbacks - before.readbacks };
  };

  await runOnce(); // warm-up
  const seconds: number[] = [];
  let last = { submits: 0, readbacks: 0 };
  for (let r = 0; r < cfg.repeats; r++) {
    const run = await runOnce();
    seconds.push(run.seconds);
    last = run;
  }
  rt.release(...Object.values(inputs), gradLoss);
  const best = Math.min(...seconds);

  const twinRows = Math.min(cfg.twinTokens, tokens);
  const problem = {
    ...shape,
    rows: twinRows,
    student: randomLogits(twinRows * vocab, 1),
    teacher: randomLogits(twinRows * vocab, 3),
  };
  const t0 = performance.now();
  distillForwardRef(problem);
  distillBackwardRef(problem, new Float64Array(twinRows).fill(1));
  const twinSeconds = (performance.now() - t0) / 1000;

  const wgslRate = tokens / best;
  const twinRate = twinRows / twinSeconds;
  return {
    vocab,
    tokens,
    beta,
    topK,
    rowsPerChunk,
    wgsl: { seconds, tokensPerSecond: wgslRate, submitsPerRun: last.submits, readbacksPerRun: last.readbacks },
    twin: { tokens: twinRows, seconds: twinSeconds, tokensPerSecond: twinRate },
    ratio: wgslRate / twinRate,
    adapter: rt.info,
  };
}

declare global {
  interface Window {
    bench: {
      logprobs(cfg: LogprobsBenchConfig): Promise<LogprobsBenchResult>;
      distill(cfg: DistillBenchConfig): Promise<LogprobsBenchResult & { beta: number; topK: number | null }>;
    };
    benchReady: Promise<string | null>;
  }
}

window.benchReady = GpuRuntime.create().then(
  (rt) => {
    window.bench = { logprobs: (cfg) => benchLogprobs(rt, cfg), distill: (cfg) => benchDistill(rt, cfg) };
    return null;
  },
  (err: Error) => err.message,
);
