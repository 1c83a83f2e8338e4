// Calibration before Train: a few real kernel runs of the experiment's model shape (random
// weights: nothing is downloaded but config.json) timed on this adapter, giving the per-token
// costs src/rl/stepTime.ts turns into seconds per step. Decode steps are timed at two batch
// sizes, training passes (forward + backward) at two token counts; the differences give the
// per-row / per-token cost and what remains is the fixed cost per step or pass (dispatches,
// submission). A model too big to build in a moment is measured on fewer layers (and a capped
// vocabulary) and scaled up by its parameter count (compute) and its layer count (dispatches).
import type { GpuRuntime } from '../gpu/runtime';
import type { ModelConfig } from '../model/config';
import { generate } from '../model/generate';
import { initialWeights } from '../model/init';
import { ParameterStore } from '../model/parameters';
import { Transformer } from '../model/transformer';
import { modelNames, parameterSpecs } from '../model/weights';
import type { StepCosts } from './stepTime';

export interface Calibration extends StepCosts {
  /** Layers and vocabulary actually built (less than the model's when it was scaled). */
  measuredLayers: number;
  measuredVocab: number;
  modelLayers: number;
  /** Wall time of the whole calibration, shader compilation included (seconds). */
  seconds: number;
}

/** At most this many weights are built for a calibration (CPU init and upload stay quick). */
const MAX_CALIBRATION_WEIGHTS = 4_000_000;
const PROMPT = 8;
/** Decode steps per timed submission. */
const DECODE_CHUNK = 4;
const WIDE_ROWS = 8;

/** Weights a token's forward pass multiplies by: every matrix but the position table (the head's D×V included). */
function computeWeights(c: ModelConfig): number {
  const names = modelNames(c);
  let n = 0;
  for (const spec of parameterSpecs(c)) {
    if (spec.shape.length < 2 || spec.name === names.positions) continue;
    // The token lookup is no matmul; the head is (the same tensor when tied).
    if (spec.name === names.tokens && names.head !== names.tokens) continue;
    n += spec.shape.reduce((a, b) => a * b, 1);
  }
  return n;
}

function totalWeights(c: ModelConfig): number {
  return parameterSpecs(c).reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** The shape measured: the model itself when small, else fewer layers and (if need be) fewer tokens. */
export function calibrationShape(c: ModelConfig): ModelConfig {
  let shape: ModelConfig = { ...c, maxPositions: Math.min(c.maxPositions, 64) };
  for (let layers = c.numLayers; layers > 1 && totalWeights(shape) > MAX_CALIBRATION_WEIGHTS; layers--) shape = { ...shape, numLayers: layers - 1 };
  if (totalWeights(shape) > MAX_CALIBRATION_WEIGHTS) {
    const perToken = c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2);
    const vocab = Math.max(256, Math.floor((MAX_CALIBRATION_WEIGHTS - totalWeights({ ...shape, vocabSize: 0 })) / perToken));
    shape = { ...shape, vocabSize: Math.min(c.vocabSize, vocab), bosTokenId: null, eosTokenId: null };
  }
  return shape;
}

async function seconds(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return (performance.now() - t0) / 1000;
}

/**
 * Measures `c`'s costs on `rt`: about a second on a GPU. On a software adapter most of the time
 * is compiling the kernels (seconds each; tens of seconds on a busy 2-core machine), which the
 * runtime keeps, so the run's first step compiles less.
 */
export async function calibrate(rt: GpuRuntime, c: ModelConfig, signal?: AbortSignal): Promise<Calibration> {
  const t0 = performance.now();
  // Between runs: a run being opened stops the calibration rather than share the GPU with it.
  const check = () => {
    if (signal?.aborted) throw new DOMException('the calibration was stopped: a run is opening', 'AbortError');
  };
  const shape = calibrationShape(c);
  const model = new Transformer(rt, shape, ParameterStore.create(rt, shape, initialWeights(shape, 1)));
  const prompt = Array.from({ length: PROMPT }, (_, i) => i % shape.vocabSize);
  /**
   * Seconds per decode step at `rows` rows: generate() reports each submission (onChunk), so the
   * last submission's decode steps are timed alone, after the prefill and the first submission
   * compiled what they needed. eosTokenId -1: no row stops early.
   */
  const decodeStep = async (rows: number): Promise<number> => {
    const marks: { steps: number; at: number }[] = [];
    await generate(
      model,
      Array.from({ length: rows }, () => prompt),
      { max_completion_length: 1 + 2 * DECODE_CHUNK, temperature: 1, top_k: 0, top_p: 1, seed: 1 },
      { eosTokenId: -1, stepsPerSubmit: DECODE_CHUNK, onChunk: (steps) => marks.push({ steps, at: performance.now() }) },
    );
    const [a, b] = marks.slice(-2);
    return (b.at - a.at) / 1000 / (b.steps - a.steps);
  };
  const pass = (batch: number, seqLen: number) =>
    seconds(async () => {
      const rec = rt.recorder('calibration.pass');
      const state = model.forward(rec, { batch, seqLen, ids: new Uint32Array(batch * seqLen).map((_, i) => i % shape.vocabSize), pads: new Array(batch).fill(0) });
      const dLogits = rt.upload(new Float32Array(batch * seqLen * shape.vocabSize), 'calibration.dlogits');
      model.backward(rec, state, dLogits);
      // A read waits for the queue: the pass is timed to its end, not its submission.
      const done = rec.readF32(dLogits, 1);
      await rec.submit();
      await done;
      model.release(state);
      rt.release(dLogits);
    });
  try {
    const narrow = await decodeStep(1);
    check();
    const wide = await decodeStep(WIDE_ROWS);
    check();
    // Both passes have more than 8 rows, so they use the same matmul kernels: the first compiles them.
    const [smallBatch, smallLen, bigBatch, bigLen] = [1, 16, 4, 32];
    await pass(smallBatch, smallLen);
    check();
    const small = await pass(smallBatch, smallLen);
    check();
    const big = await pass(bigBatch, bigLen);
    const smallTokens = smallBatch * smallLen;
    const bigTokens = bigBatch * bigLen;
    // Timing noise can make a difference negative: then the wide run's average is the per-row cost.
    let decodePerRow = (wide - narrow) / (WIDE_ROWS - 1);
    if (!(decodePerRow > 0)) decodePerRow = Math.max(0, wide) / WIDE_ROWS;
    const decodeOverhead = Math.max(0, narrow - decodePerRow);
    let trainPerToken = (big - small) / (bigTokens - smallTokens);
    if (!(trainPerToken > 0)) trainPerToken = Math.max(0, big) / bigTokens;
    const trainOverhead = Math.max(0, small - trainPerToken * smallTokens);
    // Scale to the model: compute by the weights multiplied, fixed costs by the layers' dispatches.
    const compute = computeWeights(c) / computeWeights(shape);
    const dispatches = (c.numLayers + 1) / (shape.numLayers + 1);
    return {
      decodeOverhead: decodeOverhead * dispatches,
      decodePerRow: decodePerRow * compute,
      trainOverhead: trainOverhead * dispatches,
      trainPerToken: trainPerToken * compute,
      measuredLayers: shape.numLayers,
      measuredVocab: shape.vocabSize,
      modelLayers: c.numLayers,
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    model.params.destroy();
    if (model.rope) rt.release(model.rope.buffer);
  }
}

/** A CPU implementation of WebGPU (SwiftShader, WARP, lavapipe): correct, but slow. */
export function isSoftwareAdapter(info: { isFallback?: boolean; description?: string; vendor?: string; architecture?: string }): boolean {
  if (info.isFallback) return true;
  return /swiftshader|lavapipe|llvmpipe|\bwarp\b|microsoft basic render/i.test(`${info.description ?? ''} ${info.vendor ?? ''} ${info.architecture ?? ''}`);
}
