// Calibration before Train, in about a second even on a software adapter: instead of compiling
// and running the experiment's model (a minute or more of shader compilation on SwiftShader),
// it counts what a step records (src/rl/stepCommands.ts: dispatches and workgroups of a decode
// step, a training pass and the optimizer step, captured without compiling or running
// anything) and prices the counts with what this adapter was measured to cost
// (src/rl/costModel.ts): a trivial kernel gives the cost of a dispatch and of a submission, the
// engine's small-row matmul at two depths gives the FLOP rates, and a few real decode steps of a
// one-layer model of the experiment's width give the cost of a workgroup of the engine's own
// kernels. Those decode kernels are the run's own, so the pipelines compiled here are the first
// step's too. Weights are zeros (nothing is downloaded but config.json; the values do not change
// the time). Commands are counted on one and two layers and extended to the model's layers.
import type { KernelSpec } from '../gpu/pipelineCache';
import type { GpuRuntime } from '../gpu/runtime';
import type { ModelConfig } from '../model/config';
import { createKvCache, recordDecodeStep, releaseKvCache } from '../model/decode';
import { ParameterStore } from '../model/parameters';
import { RecordingScratch } from '../model/scratch';
import { Transformer } from '../model/transformer';
import { parameterSpecs } from '../model/weights';
import { optimizerKernels } from '../ops/adamw';
import { recordMatmul } from '../ops/matmul';
import { extendToLayers, fitPerWorkgroup, forwardFlopsPerToken, predictStepCosts, type AdapterSpeed, type CommandCount, type StepCommands } from './costModel';
import { decodeDispatches, optimizerDispatches, passDispatches, tally } from './stepCommands';
import type { StepCosts } from './stepTime';

export interface Calibration extends StepCosts {
  /** Vocabulary of the models built to count and time (capped for a big one: its vocabulary-sized kernels are counted smaller). */
  measuredVocab: number;
  modelLayers: number;
  /** What this adapter was measured to cost. */
  speed: AdapterSpeed;
  /** Kernels (pipelines) the calibration compiled; the run reuses them. */
  kernelsCompiled: number;
  /** Distinct kernels of a step the first step still has to compile (the page compiles them when Train is pressed). */
  kernelsLeft: number;
  /** Wall time of the whole calibration, its compilation included (seconds). */
  seconds: number;
  /** Seconds of each part: counting, dispatch costs, compiling, FLOP rate, decode steps. */
  parts: Record<'count' | 'dispatch' | 'compile' | 'flops' | 'decode', number>;
}

/** At most this many weights are built for a calibration model (zeros: allocation and upload stay quick). */
const MAX_CALIBRATION_WEIGHTS = 4_000_000;
/**
 * Context length the decode steps are counted and timed at (a prompt and part of a completion:
 * attention's workgroups take longer on a longer context), at most the model's.
 */
const CONTEXT = 64;
const WIDE_ROWS = 8;
/**
 * The training passes' products run the tiled matmul, several times faster per FLOP than the
 * small-row one measured here (whose pipeline compiles in a fraction of a second, the tiled
 * one's in about 5 s on SwiftShader): 4-22x on SwiftShader on a busy 2-core machine (noisy).
 */
const TILED_OVER_SMALL = 10;
/** Decode steps per timed submission. */
const TIMED_STEPS = 1;
/**
 * Rounds of timed decode steps (1 and WIDE_ROWS rows each): the median round's cost per
 * workgroup is kept, so one burst of another program's CPU use does not set the estimate.
 */
const TIMED_ROUNDS = 3;
/** The two training passes counted (batch × seqLen; a prompt and a completion are tens of tokens each). */
const PASSES = [
  [1, 32],
  [4, 64],
] as const;

function totalWeights(c: ModelConfig): number {
  return parameterSpecs(c).reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** The shape counted and timed: the model's width on one layer, short positions, and a vocabulary capped to fit MAX_CALIBRATION_WEIGHTS. */
export function calibrationShape(c: ModelConfig, layers = 1): ModelConfig {
  let shape: ModelConfig = { ...c, numLayers: Math.min(layers, c.numLayers), maxPositions: Math.min(c.maxPositions, CONTEXT) };
  if (totalWeights(shape) > MAX_CALIBRATION_WEIGHTS) {
    const perToken = c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2);
    const vocab = Math.max(256, Math.floor((MAX_CALIBRATION_WEIGHTS - totalWeights({ ...shape, vocabSize: 0 })) / perToken));
    shape = { ...shape, vocabSize: Math.min(c.vocabSize, vocab), bosTokenId: null, eosTokenId: null };
  }
  return shape;
}

function zeroModel(rt: GpuRuntime, c: ModelConfig): Transformer {
  const tensors = new Map(parameterSpecs(c).map((s) => [s.name, { shape: s.shape, data: new Float32Array(s.shape.reduce((a, b) => a * b, 1)) }]));
  return new Transformer(rt, c, ParameterStore.create(rt, c, tensors));
}

function destroyModel(model: Transformer): void {
  model.params.destroy();
  if (model.rope) model.rt.release(model.rope.buffer);
}

/** Seconds from submission to a small readback of what `record` recorded. */
async function timed(rt: GpuRuntime, record: (rec: ReturnType<GpuRuntime['recorder']>) => GPUBuffer): Promise<number> {
  const rec = rt.recorder('calibration');
  const done = rec.readF32(record(rec), 1);
  const t0 = performance.now();
  await rec.submit();
  await done;
  return (performance.now() - t0) / 1000;
}

const TOUCH: KernelSpec = {
  name: 'calibration',
  code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn touch(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * 0.5 + 1.0; }
}`,
  entryPoint: 'touch',
  bindings: ['storage'],
};

/** A submission's round trip and a dispatch's fixed cost, from a trivial kernel (it compiles in milliseconds). */
async function dispatchCosts(rt: GpuRuntime): Promise<{ roundTrip: number; perDispatch: number }> {
  await rt.warmPipelines([TOUCH]);
  const kernel = rt.pipeline(TOUCH);
  const buffer = rt.storage(256);
  try {
    const run = (n: number) =>
      timed(rt, (rec) => {
        for (let i = 0; i < n; i++) rec.dispatch(kernel, [buffer], 1);
        return buffer;
      });
    await run(1);
    const trips = [await run(1), await run(1), await run(1)];
    const roundTrip = Math.min(...trips);
    const N = 100;
    const many = Math.min(await run(N), await run(N));
    return { roundTrip, perDispatch: Math.max(0, many - roundTrip) / N };
  } finally {
    rt.release(buffer);
  }
}

/**
 * FLOPs per second of the engine's small-row matmul (the decode steps' products): the same
 * workgroups at two depths, so only the arithmetic differs. Its pipeline is a decode step's.
 * The training passes' rate is taken as TILED_OVER_SMALL times that.
 */
async function flopRates(rt: GpuRuntime, perDispatch: number): Promise<{ rowFlopsPerSecond: number; flopsPerSecond: number }> {
  const [m, n, shallow, deep, reps] = [WIDE_ROWS, 128, 128, 1024, 2];
  const a = rt.storage(4 * m * deep);
  const b = rt.storage(4 * n * deep);
  const c = rt.storage(4 * m * n);
  try {
    const run = (k: number) =>
      timed(rt, (rec) => {
        for (let i = 0; i < reps; i++) recordMatmul(rt, rec, { a, b, c }, { m, n, k, transB: true });
        return c;
      });
    await run(shallow);
    const deepSeconds = await run(deep);
    const extra = deepSeconds - (await run(shallow));
    const flops = 2 * m * n * (deep - shallow) * reps;
    // Noise can make the difference vanish: then the deep run's whole time bounds the rate.
    const small = flops / (extra > 0 ? extra : Math.max(1e-6, deepSeconds - reps * perDispatch));
    return { rowFlopsPerSecond: small, flopsPerSecond: small * TILED_OVER_SMALL };
  } finally {
    rt.release(a, b, c);
  }
}

/** Seconds per decode step (no sampler) of `rows` rows: TIMED_STEPS steps in one submission. */
function decodeSteps(model: Transformer, rows: number, context: number): Promise<number> {
  const { rt } = model;
  const cache = createKvCache(model, rows, context);
  const tokens = rt.upload(new Uint32Array(rows), 'calibration.tokens');
  const positions = rt.upload(new Uint32Array(rows).fill(context - 1), 'calibration.positions');
  const pads = rt.upload(new Uint32Array(rows), 'calibration.pads');
  return timed(rt, (rec) => {
    const scratch = new RecordingScratch(rt, rec);
    let logits: GPUBuffer | null = null;
    for (let i = 0; i < TIMED_STEPS; i++) {
      if (logits) scratch.done(logits);
      logits = recordDecodeStep(model, rec, cache, { tokens, positions, pads, length: context }, scratch);
    }
    rec.releaseAfterSubmit(tokens, positions, pads);
    const out = rt.storage(16, 'calibration.out');
    rec.copy(logits!, out, 4);
    scratch.done(logits!);
    scratch.finish();
    rec.releaseAfterSubmit(out);
    return out;
  }).finally(() => releaseKvCache(model, cache));
}

/**
 * Measures `c`'s step costs on `rt` (about a second on a 2-core software adapter, far less on a
 * GPU). Stops between its parts when `signal` aborts (a run is opening).
 */
export async function calibrate(rt: GpuRuntime, c: ModelConfig, signal?: AbortSignal): Promise<Calibration> {
  const t0 = performance.now();
  const check = () => {
    if (signal?.aborted) throw new DOMException('the calibration was stopped: a run is opening', 'AbortError');
  };
  const parts = { count: 0, dispatch: 0, compile: 0, flops: 0, decode: 0 };
  let mark = performance.now();
  const lap = (part: keyof typeof parts) => {
    const t = performance.now();
    parts[part] += (t - mark) / 1000;
    mark = t;
  };
  const one = zeroModel(rt, calibrationShape(c, 1));
  const two = c.numLayers > 1 ? zeroModel(rt, calibrationShape(c, 2)) : null;
  try {
    // What a step records, on one and two layers (nothing compiled or run).
    const count = (f: (m: Transformer) => ReturnType<typeof decodeDispatches>) => {
      const a = f(one);
      const b = two ? f(two) : a;
      return { count: extendToLayers(tally(a), tally(b), c.numLayers), specs: [...a, ...b].map((d) => d.spec) };
    };
    // The calibration shape's positions: CONTEXT, or fewer when the model has fewer.
    const context = one.config.maxPositions;
    const passes = PASSES.map(([batch, seqLen]) => [batch, Math.min(seqLen, context)] as const);
    const decode = [count((m) => decodeDispatches(m, 1, context)), count((m) => decodeDispatches(m, WIDE_ROWS, context))];
    const pass = passes.map(([batch, seqLen]) => count((m) => passDispatches(m, batch, seqLen)));
    const optimizer = count((m) => optimizerDispatches(m));
    const commands: StepCommands = {
      decode: [
        { rows: 1, count: decode[0].count },
        { rows: WIDE_ROWS, count: decode[1].count },
      ],
      context,
      pass: [
        { batch: passes[0][0], seqLen: passes[0][1], count: pass[0].count },
        { batch: passes[1][0], seqLen: passes[1][1], count: pass[1].count },
      ],
      optimizer: optimizer.count,
    };
    lap('count');
    check();
    const { roundTrip, perDispatch } = await dispatchCosts(rt);
    lap('dispatch');
    check();
    // The decode step's kernels but the sampler (its pipeline alone takes about a second to
    // compile on SwiftShader): the run's own, so its first step compiles them no more. Both row
    // counts timed: the small-row matmuls are a pipeline per row count.
    const timedDispatches = (rows: number) => decodeDispatches(one, rows, context, false);
    const decodeSpecs = [...new Set([...timedDispatches(1), ...timedDispatches(WIDE_ROWS)].map((d) => d.spec))];
    await rt.warmPipelines(decodeSpecs);
    lap('compile');
    check();
    const rates = await flopRates(rt, perDispatch);
    lap('flops');
    check();
    // One untimed step creates the bind groups and buffers; then 1 and WIDE_ROWS rows.
    await decodeSteps(one, WIDE_ROWS, context);
    check();
    const fits: number[] = [];
    for (let round = 0; round < TIMED_ROUNDS; round++) {
      const measured = [];
      for (const rows of [1, WIDE_ROWS]) {
        const seconds = await decodeSteps(one, rows, context);
        const step = tally(timedDispatches(rows));
        measured.push({ seconds, count: { dispatches: step.dispatches * TIMED_STEPS, workgroups: step.workgroups * TIMED_STEPS }, flops: TIMED_STEPS * rows * forwardFlopsPerToken(one.config, context), submits: 1 });
        check();
      }
      fits.push(fitPerWorkgroup({ perDispatch, roundTrip, ...rates }, measured));
    }
    lap('decode');
    const perWorkgroup = fits.sort((a, b) => a - b)[Math.floor(fits.length / 2)];
    const speed: AdapterSpeed = { perDispatch, perWorkgroup, roundTrip, ...rates };
    // Kernels by what makes a pipeline (launchers may build equal specs as separate objects).
    const key = (k: KernelSpec) => `${k.name}:${k.entryPoint}:${JSON.stringify(k.constants ?? {})}:${k.code.length}`;
    const stepSpecs = new Set([...decode[1].specs, ...pass[1].specs, ...optimizer.specs, ...optimizerKernels(rt.device.limits, one.params.trainable.length, 'arena', rt.info.isFallback)].map(key));
    const compiled = new Set(decodeSpecs.map(key));
    return {
      ...predictStepCosts(speed, c, commands),
      measuredVocab: one.config.vocabSize,
      modelLayers: c.numLayers,
      speed,
      kernelsCompiled: decodeSpecs.length + 1,
      kernelsLeft: [...stepSpecs].filter((s) => !compiled.has(s)).length,
      seconds: (performance.now() - t0) / 1000,
      parts,
    };
  } finally {
    destroyModel(one);
    if (two) destroyModel(two);
  }
}

/** A CPU implementation of WebGPU (SwiftShader, WARP, lavapipe): correct, but slow. */
export function isSoftwareAdapter(info: { isFallback?: boolean; description?: string; vendor?: string; architecture?: string }): boolean {
  if (info.isFallback) return true;
  return /swiftshader|lavapipe|llvmpipe|\bwarp\b|microsoft basic render/i.test(`${info.description ?? ''} ${info.vendor ?? ''} ${info.architecture ?? ''}`);
}
