// In-page side of bench/model.mjs: whole-model figures of our engine (a full SFT training
// step, forward + backward alone, KV-cache sampling), and the same GPT-2's forward + backward
// in TensorFlow.js (WebGPU) and jax-js (WebGPU), all in this one page on the adapter each
// library finds (they ask navigator.gpu for the same default adapter).
//
// One model is loaded at a time (load → measure → unload). The peers get the very tensors our
// engine was loaded with, so every engine computes the same loss on the same batch; losses
// and gradient norms are returned so the driver can print them side by side.
import { GpuRuntime, type EngineCounters } from '../src/gpu/runtime';
import type { PoolStats } from '../src/gpu/bufferPool';
import { configFromHf, type ModelConfig } from '../src/model/config';
import { generate, type GenerationConfig } from '../src/model/generate';
import { initialWeights } from '../src/model/init';
import { ParameterStore } from '../src/model/parameters';
import { readSafetensors, type Tensor } from '../src/model/safetensors';
import { SftTrainer } from '../src/model/sft';
import type { SftExample } from '../src/model/sftBatch';
import { Transformer, type TokenBatch } from '../src/model/transformer';
import { fromHfTensors } from '../src/model/weights';
import { recordLogprobsBackward, recordLogprobsForward } from '../src/ops/logprobs';
import { recordWeightedSum } from '../src/ops/reduce';
import { jaxGpt2Runner } from './peers/jaxGpt2';
import { tfjsGpt2Runner, tfjsWebGpu, type PeerBatch, type PeerRunner, type PeerTrainConfig, type TfApi } from './peers/tfjsGpt2';

/** Where the embedded default policy lives (served from public/ by Vite). */
export const EMBEDDED_DIR = '/models/tiny-gpt2-byte';

export interface LoadRequest {
  /** An HF config.json for a random model; ignored when `embedded` is true. */
  config: Record<string, unknown>;
  /** Load config.json + model.safetensors from EMBEDDED_DIR instead. */
  embedded: boolean;
  seed: number;
}

export interface LoadResult {
  source: string;
  config: ModelConfig;
  parameters: number;
  /** Seconds to make or fetch the weights and upload them. */
  seconds: number;
}

export interface TimingRequest {
  batch: number;
  seqLen: number;
  /** Untimed steps first (pipeline compilation, buffer allocation). */
  warmup: number;
  steps: number;
  seed: number;
}

/** Submissions, readbacks, dispatches, bind groups and pipelines created/reused, buffers created. */
export type StepCounters = EngineCounters;

export interface TimingResult {
  tokens: number;
  seconds: number[];
  medianSeconds: number;
  tokensPerSecond: number;
  /** Loss of the first timed step. */
  loss: number;
  /** Per step (the last timed one). */
  counters: StepCounters;
  /** The first step of the run (warm-up included), which pays for pipelines and bind groups. */
  firstCounters?: StepCounters;
}

export interface ForwardBackwardResult extends TimingResult {
  /** Global L2 norm of every parameter's gradient (from an untimed pass), to compare engines. */
  gradNorm: number;
}

export interface TrainResult extends TimingResult {
  gradNorm: number;
  skipped: number;
  memory: { parameterBytes: number; pool: PoolStats };
  /** Each peer asked for: its full train step (AdamW) beside ours, or why it could not run. */
  peers?: Partial<Record<Peer, PeerTrainResult | { engine: Peer; error: string }>>;
}

export interface SampleRequest {
  batch: number;
  promptLen: number;
  newTokens: number;
  /** Sample two tokens first, untimed (pipeline compilation, buffer allocation). */
  warmup: boolean;
  runs: number;
  seed: number;
}

export interface SampleResult {
  batch: number;
  promptLen: number;
  newTokens: number;
  seconds: number[];
  /** batch × newTokens / best seconds (prefill included in the time). */
  tokensPerSecond: number;
  submits: number;
  readbacks: number;
  bytesRead: number;
  /** The last run's counters (dispatches, bind groups, pipelines). */
  counters: StepCounters;
}

/** 'jax' is jax-js under jit; 'jax-eager' the same code without jit (see peers/jaxGpt2.ts). */
export type Peer = 'tfjs' | 'jax' | 'jax-eager';
type Engine = 'ours' | Peer;

export interface CompareRequest extends TimingRequest {
  peers: Peer[];
}

export interface PeerResult extends Omit<ForwardBackwardResult, 'counters'> {
  engine: Peer;
  notes: string;
}

export interface CompareResult {
  ours: ForwardBackwardResult & { notes: string };
  /** Per peer asked for: its figures, or why it could not run. */
  peers: Partial<Record<Peer, PeerResult | { engine: Peer; error: string }>>;
}

interface Loaded {
  model: Transformer;
  /** The engine's tensors the model was loaded with (the peers start from these). */
  weights: Map<string, Tensor>;
}

let loaded: Loaded | null = null;

function current(): Loaded {
  if (!loaded) throw new Error('no model is loaded (call load first)');
  return loaded;
}

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res;
}

async function load(rt: GpuRuntime, req: LoadRequest): Promise<LoadResult> {
  unload();
  const t0 = performance.now();
  let config: ModelConfig;
  let weights: Map<string, Tensor>;
  let source: string;
  if (req.embedded) {
    config = configFromHf(await (await fetchOk(`${EMBEDDED_DIR}/config.json`)).json());
    weights = fromHfTensors(config, readSafetensors(await (await fetchOk(`${EMBEDDED_DIR}/model.safetensors`)).arrayBuffer()).tensors);
    source = `embedded ${EMBEDDED_DIR.slice(1)}`;
  } else {
    config = configFromHf(req.config);
    weights = initialWeights(config, req.seed);
    source = `random (HF init, seed ${req.seed})`;
  }
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, weights));
  loaded = { model, weights };
  return { source, config, parameters: model.params.size, seconds: (performance.now() - t0) / 1000 };
}

function unload(): void {
  if (!loaded) return;
  loaded.model.params.destroy();
  loaded = null;
}

/** Deterministic token ids in [0, vocab) (LCG). */
function randomIds(count: number, vocab: number, seed: number): Uint32Array {
  const out = new Uint32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = Math.floor((s / 4294967296) * vocab);
  }
  return out;
}

/**
 * The benchmark batch: `batch` unpadded rows of `seqLen` random tokens; position t predicts
 * token t + 1, so every position but the last counts (batch × (seqLen − 1) predictions). As
 * SFT examples: a one-token prompt and a seqLen − 1 token completion, which gives the same mask.
 */
function benchBatch(config: ModelConfig, req: TimingRequest): { peer: PeerBatch; examples: SftExample[] } {
  const { batch, seqLen } = req;
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
  if (!Number.isInteger(seqLen) || seqLen < 2) throw new RangeError(`seqLen must be an integer >= 2, got ${seqLen}`);
  if (seqLen > config.maxPositions) throw new RangeError(`seqLen ${seqLen} exceeds the model's context of ${config.maxPositions}`);
  if (!Number.isInteger(req.steps) || req.steps < 1) throw new RangeError(`steps must be a positive integer, got ${req.steps}`);
  if (!Number.isInteger(req.warmup) || req.warmup < 0) throw new RangeError(`warmup must be an integer >= 0, got ${req.warmup}`);
  const ids = randomIds(batch * seqLen, config.vocabSize, req.seed);
  const targets = new Uint32Array(batch * seqLen);
  const mask = new Float32Array(batch * seqLen);
  const examples: SftExample[] = [];
  for (let b = 0; b < batch; b++) {
    const row = Array.from(ids.subarray(b * seqLen, (b + 1) * seqLen));
    examples.push({ prompt: row.slice(0, 1), completion: row.slice(1) });
    for (let t = 0; t + 1 < seqLen; t++) {
      targets[b * seqLen + t] = row[t + 1];
      mask[b * seqLen + t] = 1;
    }
  }
  return { peer: { batch, seqLen, ids, targets, mask }, examples };
}

function checkLogitsFit(rt: GpuRuntime, config: ModelConfig, rows: number): void {
  const bytes = rows * config.vocabSize * 4;
  const max = rt.device.limits.maxStorageBufferBindingSize;
  if (bytes > max) {
    throw new RangeError(`batch x seqLen = ${rows} rows of ${config.vocabSize} logits need ${bytes} bytes, over this GPU's maxStorageBufferBindingSize (${max}): use a smaller --train-size`);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function diff(rt: GpuRuntime, before: StepCounters): StepCounters {
  return rt.countersSince(before);
}

const NO_COUNTERS: StepCounters = {
  submits: 0,
  readbacks: 0,
  bytesRead: 0,
  dispatches: 0,
  bindGroupsCreated: 0,
  bindGroupsReused: 0,
  pipelinesCreated: 0,
  pipelinesWarmed: 0,
  buffersCreated: 0,
};

export interface TrainRequest extends TimingRequest {
  /** Peers whose full train step runs beside ours, step by step (ours, peer 1, ..., ours, ...). */
  peers?: Peer[];
}

/** A peer's full train step: loss and pre-clip gradient norm of its first timed step, as ours reports. */
export interface PeerTrainResult extends Omit<TimingResult, 'counters'> {
  engine: Peer;
  gradNorm: number;
  notes: string;
}

/**
 * The peers' full train steps (forward + backward + clipping + AdamW with ours' hyperparameters),
 * each on its own copy of the weights our model was loaded with, so after the same number of
 * updates every engine's loss and gradient norm should agree with ours.
 */
async function peerTrainers(model: Transformer, weights: Map<string, Tensor>, batch: PeerBatch, engines: Peer[], hp: PeerTrainConfig, warmup: number, oneAtATime = false) {
  const runners = new Map<Peer, PeerRunner>();
  const errors = new Map<Peer, string>();
  const notes = new Map<Peer, string>();
  const build = async (engine: Peer) => {
    try {
      const runner = await peerRunner(engine, model, weights, batch);
      if (!runner.trainStep) throw new Error(`${engine} has no train step`);
      runners.set(engine, runner);
      notes.set(engine, runner.notes);
    } catch (err) {
      errors.set(engine, message(err));
    }
  };
  if (!oneAtATime) for (const engine of engines) await build(engine);
  const seconds = new Map<Peer, number[]>(engines.map((e) => [e, []]));
  const first = new Map<Peer, { loss: number; gradNorm: number }>();
  const stepOne = async (engine: Peer, runner: PeerRunner, i: number) => {
    try {
      const r = await runner.trainStep!(hp);
      if (i < warmup) return;
      seconds.get(engine)!.push(r.seconds);
      if (!first.has(engine)) first.set(engine, { loss: r.loss, gradNorm: r.gradNorm });
    } catch (err) {
      errors.set(engine, message(err));
      runner.dispose();
      runners.delete(engine);
    }
  };
  return {
    /** Step `i` (counting warm-up steps) of every peer still running (none when oneAtATime). */
    async step(i: number) {
      for (const [engine, runner] of [...runners]) await stepOne(engine, runner, i);
    },
    /** oneAtATime: each peer in turn built, stepped `steps` times (warm-up included) and disposed. */
    async runEachAlone(steps: number) {
      if (!oneAtATime) return;
      for (const engine of engines) {
        await build(engine);
        for (let i = 0; i < steps; i++) {
          const runner = runners.get(engine);
          if (runner) await stepOne(engine, runner, i);
        }
        runners.get(engine)?.dispose();
        runners.delete(engine);
      }
    },
    /** Every peer's figures (or error); disposes the runners. */
    finish(tokens: number): NonNullable<TrainResult['peers']> {
      const out: NonNullable<TrainResult['peers']> = {};
      for (const engine of engines) {
        const s = seconds.get(engine)!;
        const f = first.get(engine);
        const error = errors.get(engine);
        if (error !== undefined || !f) out[engine] = { engine, error: error ?? 'no timed step' };
        else out[engine] = { engine, tokens, seconds: s, medianSeconds: median(s), tokensPerSecond: tokens / median(s), loss: f.loss, gradNorm: f.gradNorm, notes: notes.get(engine) ?? '' };
        runners.get(engine)?.dispose();
      }
      return out;
    },
  };
}

/** Our SFT trainer for the bench, and the same hyperparameters for the peers. */
function benchTrainer(rt: GpuRuntime, model: Transformer): { trainer: SftTrainer; hp: PeerTrainConfig } {
  // A tiny learning rate: the figures are about speed, the weights should stay sane.
  const trainer = new SftTrainer(rt, model, 0, { learning_rate: 1e-5, lr_scheduler_type: 'constant', warmup_steps: 0 });
  const c = trainer.config;
  return { trainer, hp: { learning_rate: c.learning_rate, adam_beta1: c.adam_beta1, adam_beta2: c.adam_beta2, adam_epsilon: c.adam_epsilon, weight_decay: c.weight_decay, max_grad_norm: c.max_grad_norm } };
}

/** One SFT step per timed step: forward + cross-entropy + backward + clipped AdamW, one submission. */
async function train(rt: GpuRuntime, req: TrainRequest): Promise<TrainResult> {
  const { model, weights } = current();
  checkLogitsFit(rt, model.config, req.batch * req.seqLen);
  const { examples, peer: batch } = benchBatch(model.config, req);
  const { trainer, hp } = benchTrainer(rt, model);
  const peers = await peerTrainers(model, weights, batch, req.peers ?? [], hp, req.warmup);
  let firstCounters: StepCounters | undefined;
  for (let i = 0; i < req.warmup; i++) {
    const before = rt.snapshotCounters();
    await trainer.trainStep(examples);
    firstCounters ??= diff(rt, before);
    await peers.step(i);
  }
  const seconds: number[] = [];
  let loss = NaN;
  let gradNorm = NaN;
  let skipped = 0;
  let counters: StepCounters = NO_COUNTERS;
  for (let i = 0; i < req.steps; i++) {
    const before = rt.snapshotCounters();
    const t0 = performance.now();
    const r = await trainer.trainStep(examples);
    seconds.push((performance.now() - t0) / 1000);
    counters = diff(rt, before);
    firstCounters ??= counters;
    await peers.step(req.warmup + i);
    if (i === 0) {
      loss = r.loss;
      gradNorm = r.gradNorm;
    }
    if (r.skipped) skipped++;
  }
  const tokens = req.batch * req.seqLen;
  const m = median(seconds);
  return {
    tokens,
    seconds,
    medianSeconds: m,
    tokensPerSecond: tokens / m,
    loss,
    gradNorm,
    skipped,
    counters,
    firstCounters,
    memory: { parameterBytes: model.params.bytes, pool: rt.pool.snapshot() },
    ...(req.peers?.length ? { peers: peers.finish(tokens) } : {}),
  };
}

/**
 * The peers' full train steps without ours, one peer after another, each stepped warm-up + steps
 * times from the loaded weights (as ours is in train). For a model too large for our trainer and
 * a peer's in one page (GPT-2 small: SwiftShader lost its device), bench/model.mjs gives each peer
 * a fresh page with the same seeded weights.
 */
async function trainPeersAlone(rt: GpuRuntime, req: TrainRequest): Promise<NonNullable<TrainResult['peers']>> {
  const { model, weights } = current();
  const { peer: batch } = benchBatch(model.config, req);
  const { hp } = benchTrainer(rt, model);
  const peers = await peerTrainers(model, weights, batch, req.peers ?? [], hp, req.warmup, true);
  await peers.runEachAlone(req.warmup + req.steps);
  return peers.finish(req.batch * req.seqLen);
}

/**
 * Our forward + loss + backward into the gradient buffers, no optimizer (what the peers
 * compute): one submission, the loss read back.
 */
function oursRunner(rt: GpuRuntime, model: Transformer, b: PeerBatch): PeerRunner & { counters: StepCounters } {
  const rows = b.batch * b.seqLen;
  const tokens: TokenBatch = { batch: b.batch, seqLen: b.seqLen, ids: b.ids, pads: new Array<number>(b.batch).fill(0) };
  const predicted = b.mask.reduce((s, m) => s + m, 0);
  const runner = {
    notes: 'one submission: zero grads, forward, log-prob + weighted-sum loss, backward',
    counters: NO_COUNTERS,
    async step() {
      const before = rt.snapshotCounters();
      const t0 = performance.now();
      const rec = rt.recorder('bench fwd+bwd');
      model.params.recordZeroGrads(rec);
      const state = model.forward(rec, tokens);
      const targets = rt.upload(b.targets, 'bench.targets');
      const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: model.config.vocabSize, temperature: 1 });
      const weights = rt.upload(b.mask.map((m) => -m / predicted), 'bench.loss_weights');
      const scalars = rt.storage(16, 'bench.scalars');
      recordWeightedSum(rt, rec, lp.logprobs, weights, scalars, rows);
      const dLogits = recordLogprobsBackward(rt, rec, lp, weights, null);
      model.backward(rec, state, dLogits);
      const lossRead = rec.readF32(scalars, 1);
      rec.releaseAfterSubmit(targets, weights, scalars, lp.logprobs, lp.entropy, lp.rowStats, dLogits);
      try {
        await rec.submit();
      } finally {
        model.release(state);
      }
      const loss = (await lossRead)[0];
      const seconds = (performance.now() - t0) / 1000;
      runner.counters = diff(rt, before);
      return { seconds, loss };
    },
    async gradNorm() {
      await runner.step();
      let sum = 0;
      for (const t of (await model.params.read('grad')).values()) for (const g of t.data) sum += g * g;
      return Math.sqrt(sum);
    },
    dispose() {},
  };
  return runner;
}

async function peerRunner(engine: Peer, model: Transformer, weights: Map<string, Tensor>, b: PeerBatch): Promise<PeerRunner> {
  if (engine === 'jax') return jaxGpt2Runner(model.config, weights, b, 'jit');
  if (engine === 'jax-eager') return jaxGpt2Runner(model.config, weights, b, 'eager');
  const tf = window.modelPeers?.tf;
  const error = await tfjsWebGpu(tf);
  if (error) throw new Error(error);
  return tfjsGpt2Runner(tf!, model.config, weights, b);
}

const message = (err: unknown) => (err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err));

/**
 * Forward + backward of ours and each peer on the same weights and batch. The timed steps are
 * interleaved (ours, peer 1, peer 2, ours, ...), so a machine that slows down midway slows
 * every engine alike. A peer that fails is reported with its error; the others go on.
 */
async function forwardBackward(rt: GpuRuntime, req: CompareRequest): Promise<CompareResult> {
  const { model, weights } = current();
  checkLogitsFit(rt, model.config, req.batch * req.seqLen);
  const { peer: batch } = benchBatch(model.config, req);
  const ours = oursRunner(rt, model, batch);
  const runners = new Map<Engine, PeerRunner>([['ours', ours]]);
  const errors = new Map<Peer, string>();
  for (const engine of req.peers) {
    try {
      runners.set(engine, await peerRunner(engine, model, weights, batch));
    } catch (err) {
      errors.set(engine, message(err));
    }
  }
  const seconds = new Map<Engine, number[]>([...runners.keys()].map((e) => [e, []]));
  const losses = new Map<Engine, number>();
  const norms = new Map<Engine, number>();
  const fail = (engine: Engine, err: unknown) => {
    if (engine === 'ours') throw err;
    errors.set(engine as Peer, message(err));
    runners.get(engine)!.dispose();
    runners.delete(engine);
  };
  try {
    for (let i = 0; i < req.warmup + req.steps; i++) {
      for (const [engine, runner] of [...runners]) {
        try {
          const r = await runner.step();
          if (i < req.warmup) continue;
          seconds.get(engine)!.push(r.seconds);
          if (!losses.has(engine)) losses.set(engine, r.loss);
        } catch (err) {
          fail(engine, err);
        }
      }
    }
    for (const [engine, runner] of [...runners]) {
      try {
        norms.set(engine, await runner.gradNorm());
      } catch (err) {
        fail(engine, err);
      }
    }
  } finally {
    for (const runner of runners.values()) runner.dispose();
  }
  const tokens = req.batch * req.seqLen;
  const result = (engine: Engine) => {
    const s = seconds.get(engine)!;
    const m = median(s);
    const runner = runners.get(engine)!;
    return { tokens, seconds: s, medianSeconds: m, tokensPerSecond: tokens / m, loss: losses.get(engine)!, gradNorm: norms.get(engine)!, notes: runner.notes };
  };
  const peers: CompareResult['peers'] = {};
  for (const engine of req.peers) {
    const error = errors.get(engine);
    peers[engine] = error === undefined ? { engine, ...result(engine) } : { engine, error };
  }
  return { ours: { ...result('ours'), counters: ours.counters }, peers };
}

/** KV-cache sampling of batch × newTokens tokens; EOS is disabled so every row runs to the end. */
async function sample(rt: GpuRuntime, req: SampleRequest): Promise<SampleResult> {
  const { model } = current();
  const prompts = Array.from({ length: req.batch }, (_, b) => Array.from(randomIds(req.promptLen, model.config.vocabSize, req.seed + b)));
  const cfg: GenerationConfig = { max_completion_length: req.newTokens, temperature: 1, top_k: 0, top_p: 1, seed: req.seed };
  // An id no u32 token equals: nothing stops early.
  const options = { eosTokenId: -1, stepsPerSubmit: 16 };
  if (req.warmup) await generate(model, prompts, { ...cfg, max_completion_length: Math.min(2, req.newTokens) }, options);
  const seconds: number[] = [];
  let counters: StepCounters = NO_COUNTERS;
  for (let r = 0; r < req.runs; r++) {
    const before = rt.snapshotCounters();
    const out = await generate(model, prompts, cfg, options);
    counters = diff(rt, before);
    const produced = out.completions.reduce((s, c) => s + c.length, 0);
    if (produced !== req.batch * req.newTokens) throw new Error(`generate produced ${produced} tokens, expected ${req.batch * req.newTokens}`);
    seconds.push(out.seconds);
  }
  return {
    batch: req.batch,
    promptLen: req.promptLen,
    newTokens: req.newTokens,
    seconds,
    tokensPerSecond: (req.batch * req.newTokens) / Math.min(...seconds),
    submits: counters.submits,
    readbacks: counters.readbacks,
    bytesRead: counters.bytesRead,
    counters,
  };
}

declare global {
  interface Window {
    /** Set by bench/model.html's inline script (TensorFlow.js is not imported from TS). */
    modelPeers?: { tf: TfApi };
    modelBench: {
      adapter: GpuRuntime['info'];
      load(req: LoadRequest): Promise<LoadResult>;
      unload(): void;
      train(req: TrainRequest): Promise<TrainResult>;
      trainPeersAlone(req: TrainRequest): Promise<NonNullable<TrainResult['peers']>>;
      forwardBackward(req: CompareRequest): Promise<CompareResult>;
      sample(req: SampleRequest): Promise<SampleResult>;
    };
    modelBenchReady: Promise<string | null>;
  }
}

window.modelBenchReady = GpuRuntime.create().then(
  (rt) => {
    window.modelBench = {
      adapter: rt.info,
      load: (req) => load(rt, req),
      unload,
      train: (req) => train(rt, req),
      trainPeersAlone: (req) => trainPeersAlone(rt, req),
      forwardBackward: (req) => forwardBackward(rt, req),
      sample: (req) => sample(rt, req),
    };
    return null;
  },
  (err: Error) => err.message,
);
