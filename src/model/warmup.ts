// Pipeline warm-up: the kernels a run will dispatch, compiled with createComputePipelineAsync
// right after the model loads, while the visitor reads the page, instead of on demand inside the
// first step (80-170 s of compilation on a software adapter). The kernel list comes from
// recording the run's own code paths in capture mode (GpuRuntime.captureKernels: nothing is
// encoded or submitted), so it follows the model's shapes and the matmul paths they choose.
import { optimizerKernels } from '../ops/adamw';
import type { KernelSpec } from '../gpu/pipelineCache';
import { recordLogprobsBackward, recordLogprobsForward } from '../ops/logprobs';
import { recordWeightedSum } from '../ops/reduce';
import { recordSample } from '../ops/sample';
import { createKvCache, recordDecodeStep, releaseKvCache } from './decode';
import { RecordingScratch } from './scratch';
import type { Transformer } from './transformer';

export interface WarmupShapes {
  /** A training micro-batch: forward, token log-probs, backward and the optimizer step. */
  train?: { batch: number; seqLen: number };
  /** Sampling: prefill of `promptLen` tokens, a decode step and the sampler, for `batch` rows; scoring (prefill of every position). */
  sample?: { batch: number; promptLen: number };
}

/** The kernels a run of these shapes dispatches (deduplicated), found without running anything. */
export function modelKernels(model: Transformer, shapes: WarmupShapes): KernelSpec[] {
  const { rt, config: c } = model;
  const specs = rt.captureKernels(() => {
    const rec = rt.recorder('warm-up capture');
    const V = c.vocabSize;
    if (shapes.train && model.params.trainable.length > 0) {
      const { batch } = shapes.train;
      const seqLen = Math.min(shapes.train.seqLen, c.maxPositions);
      const rows = batch * seqLen;
      model.params.recordZeroGrads(rec);
      const state = model.forward(rec, { batch, seqLen, ids: new Uint32Array(rows), pads: new Array<number>(batch).fill(0) });
      const targets = rt.upload(new Uint32Array(rows), 'warmup.targets');
      const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: V, temperature: 1 });
      const weights = rt.upload(new Float32Array(rows), 'warmup.weights');
      const scalars = rt.storage(16, 'warmup.scalars');
      recordWeightedSum(rt, rec, lp.logprobs, weights, scalars, rows);
      const dLogits = recordLogprobsBackward(rt, rec, lp, weights, null);
      model.backward(rec, state, dLogits);
      rec.releaseAfterSubmit(targets, weights, scalars, lp.logprobs, lp.entropy, lp.rowStats, dLogits);
      model.release(state);
    }
    if (shapes.sample) {
      const B = shapes.sample.batch;
      const P = Math.max(1, Math.min(shapes.sample.promptLen, c.maxPositions - 1));
      const pads = new Array<number>(B).fill(0);
      const ids = new Uint32Array(B * P);
      rec.releaseAfterSubmit(model.prefill(rec, { batch: B, seqLen: P, ids, pads }, { logits: 'all' }));
      const cache = createKvCache(model, B, P + 1);
      const padBuf = rt.upload(new Uint32Array(B), 'warmup.pads');
      const seen = rt.upload(new Uint32Array(B * Math.ceil(V / 32)), 'warmup.seen');
      const sampling = { temperature: 1, topK: 0, topP: 1, repetitionPenalty: 1, minP: 0, seed: 0, rowOffset: 0, rows: B, vocab: V };
      const last = model.prefill(rec, { batch: B, seqLen: P, ids, pads }, { cache });
      const first = recordSample(rt, rec, last, { ...sampling, step: 0 }, seen);
      const scratch = new RecordingScratch(rt, rec);
      const positions = rt.upload(new Uint32Array(B), 'warmup.positions');
      const logits = recordDecodeStep(model, rec, cache, { tokens: first.tokens, positions, pads: padBuf, length: P + 1 }, scratch);
      const next = recordSample(rt, rec, logits, { ...sampling, step: 1 }, seen);
      scratch.done(logits);
      scratch.finish();
      rec.releaseAfterSubmit(last, first.tokens, first.logprobs, next.tokens, next.logprobs, positions, padBuf, seen);
      releaseKvCache(model, cache);
    }
  });
  if (shapes.train && model.params.trainable.length > 0) specs.push(...optimizerKernels(rt.device.limits, model.params.trainable.length, 'arena', rt.info.isFallback));
  return [...new Set(specs)];
}

/**
 * Compiles the kernels of `shapes` ahead of the first step; resolves with how many it asked
 * for once they are built. Never rejects: warm-up is an optimisation, the first step compiles
 * whatever it lacks.
 */
export async function warmModelPipelines(model: Transformer, shapes: WarmupShapes): Promise<number> {
  try {
    const specs = modelKernels(model, shapes);
    await model.rt.warmPipelines(specs);
    return specs.length;
  } catch {
    return 0;
  }
}
