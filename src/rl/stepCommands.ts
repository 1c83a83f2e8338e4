// The commands a GRPO step of a model records, counted without compiling or running anything
// (GpuRuntime.captureDispatches): a decode step of the sampler, a training pass (forward, token
// log-probs, backward) and the optimizer step, each as dispatches and workgroups. The
// calibration (src/rl/calibration.ts) prices them with what a few small kernels cost on this
// adapter (src/rl/costModel.ts), instead of compiling and running the model's own kernels,
// which takes a minute or more on a software adapter.
import type { CapturedDispatch } from '../gpu/recorder';
import { recordLogprobsBackward, recordLogprobsForward } from '../ops/logprobs';
import { recordOptimizerStep } from '../ops/adamw';
import { recordWeightedSum } from '../ops/reduce';
import { recordSample } from '../ops/sample';
import { createKvCache, recordDecodeStep, releaseKvCache } from '../model/decode';
import { RecordingScratch } from '../model/scratch';
import type { Transformer } from '../model/transformer';
import type { CommandCount } from './costModel';

/** Dispatches and workgroups of a captured recording. */
export function tally(dispatches: readonly CapturedDispatch[]): CommandCount {
  return { dispatches: dispatches.length, workgroups: dispatches.reduce((s, d) => s + d.workgroups, 0) };
}

/** One decode step of `rows` rows at context length `length`, with its sampler (unless `sampler` is false). */
export function decodeCommands(model: Transformer, rows: number, length: number, sampler = true): CommandCount {
  return tally(decodeDispatches(model, rows, length, sampler));
}

export function decodeDispatches(model: Transformer, rows: number, length: number, sampler = true): CapturedDispatch[] {
  const { rt, config: c } = model;
  const V = c.vocabSize;
  return rt.captureDispatches(() => {
    const rec = rt.recorder('calibration.decode');
    const cache = createKvCache(model, rows, length);
    const tokens = rt.upload(new Uint32Array(rows), 'calibration.tokens');
    const positions = rt.upload(new Uint32Array(rows), 'calibration.positions');
    const pads = rt.upload(new Uint32Array(rows), 'calibration.pads');
    const seen = rt.upload(new Uint32Array(rows * Math.ceil(V / 32)), 'calibration.seen');
    const scratch = new RecordingScratch(rt, rec);
    const logits = recordDecodeStep(model, rec, cache, { tokens, positions, pads, length }, scratch);
    if (sampler) {
      const next = recordSample(rt, rec, logits, { temperature: 1, topK: 0, topP: 1, repetitionPenalty: 1, minP: 0, seed: 0, rowOffset: 0, rows, vocab: V, step: 1 }, seen);
      rec.releaseAfterSubmit(next.tokens, next.logprobs);
    }
    scratch.done(logits);
    scratch.finish();
    rec.releaseAfterSubmit(tokens, positions, pads, seen);
    releaseKvCache(model, cache);
  });
}

/** One training pass over `batch` rows of `seqLen` tokens: forward, token log-probs, backward. */
export function passCommands(model: Transformer, batch: number, seqLen: number): CommandCount {
  return tally(passDispatches(model, batch, seqLen));
}

export function passDispatches(model: Transformer, batch: number, seqLen: number): CapturedDispatch[] {
  const { rt, config: c } = model;
  const rows = batch * seqLen;
  return rt.captureDispatches(() => {
    const rec = rt.recorder('calibration.pass');
    const state = model.forward(rec, { batch, seqLen, ids: new Uint32Array(rows), pads: new Array<number>(batch).fill(0) });
    const targets = rt.upload(new Uint32Array(rows), 'calibration.targets');
    const lp = recordLogprobsForward(rt, rec, state.logits, targets, { rows, vocab: c.vocabSize, temperature: 1 });
    const weights = rt.upload(new Float32Array(rows), 'calibration.weights');
    const scalars = rt.storage(16, 'calibration.scalars');
    recordWeightedSum(rt, rec, lp.logprobs, weights, scalars, rows);
    const dLogits = recordLogprobsBackward(rt, rec, lp, weights, null);
    model.backward(rec, state, dLogits);
    rec.releaseAfterSubmit(targets, weights, scalars, lp.logprobs, lp.entropy, lp.rowStats, dLogits);
    model.release(state);
  });
}

/** The optimizer step: gradient norm and AdamW over every trainable tensor. */
export function optimizerCommands(model: Transformer): CommandCount {
  return tally(optimizerDispatches(model));
}

export function optimizerDispatches(model: Transformer): CapturedDispatch[] {
  const { rt } = model;
  return rt.captureDispatches(() => {
    const rec = rt.recorder('calibration.optimizer');
    const opt = recordOptimizerStep(rt, rec, model.params.optimizerTensors(rec), {
      step: 1,
      learning_rate: 1e-5,
      adam_beta1: 0.9,
      adam_beta2: 0.999,
      adam_epsilon: 1e-8,
      weight_decay: 0,
      max_grad_norm: 1,
    });
    rec.releaseAfterSubmit(opt.stepState, opt.tensorStats);
  });
}

