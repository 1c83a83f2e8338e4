// Page side of the calibration's browser checks: calibrate() on a model config (a fresh runtime:
// nothing compiled before), what it measured and how long it took; and, for the figures in the
// README, the same model's real decode steps and training passes with every kernel compiled.
import { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { calibrate } from '../../../src/rl/calibration';

export async function calibrateConfig(_rt: GpuRuntime, input: { hf: Record<string, unknown>; runs?: number }) {
  const rt = await GpuRuntime.create();
  try {
    const c = configFromHf(input.hf);
    const runs = [];
    for (let i = 0; i < (input.runs ?? 1); i++) {
      const before = rt.snapshotCounters();
      const t0 = performance.now();
      const result = await calibrate(rt, c);
      runs.push({ result, wallSeconds: (performance.now() - t0) / 1000, counters: rt.countersSince(before) });
    }
    return runs;
  } finally {
    rt.destroy();
  }
}

/**
 * The commands the calibration counts are the commands the engine records: a decode step's
 * dispatches and workgroups, captured, against the same step recorded and run (its counters).
 */
export async function countedAsRun(_rt: GpuRuntime, input: { hf: Record<string, unknown>; rows: number }) {
  const rt = await GpuRuntime.create();
  const { decodeCommands } = await import('../../../src/rl/stepCommands');
  const { createKvCache, recordDecodeStep, releaseKvCache } = await import('../../../src/model/decode');
  const { RecordingScratch } = await import('../../../src/model/scratch');
  const { ParameterStore } = await import('../../../src/model/parameters');
  const { Transformer } = await import('../../../src/model/transformer');
  const { initialWeights } = await import('../../../src/model/init');
  try {
    const c = configFromHf(input.hf);
    const model = new Transformer(rt, c, ParameterStore.create(rt, c, initialWeights(c, 1)));
    const counted = decodeCommands(model, input.rows, 16, false);
    const cache = createKvCache(model, input.rows, 16);
    const buffers = [new Uint32Array(input.rows), new Uint32Array(input.rows).fill(15), new Uint32Array(input.rows)].map((a) => rt.upload(a));
    const before = rt.snapshotCounters();
    const rec = rt.recorder('decode');
    const scratch = new RecordingScratch(rt, rec);
    const logits = recordDecodeStep(model, rec, cache, { tokens: buffers[0], positions: buffers[1], pads: buffers[2], length: 16 }, scratch);
    const read = rec.readF32(logits, c.vocabSize);
    scratch.done(logits);
    scratch.finish();
    await rec.submit();
    const values = await read;
    const ran = rt.countersSince(before);
    releaseKvCache(model, cache);
    rt.release(...buffers);
    model.params.destroy();
    return { counted, ran: { dispatches: ran.dispatches }, finite: values.every(Number.isFinite) };
  } finally {
    rt.destroy();
  }
}

/** estimateStepTime on the page for an experiment's GRPO settings (TRL defaults filled in), for scripts/calibration-check.mjs. */
export async function estimate(_rt: GpuRuntime, input: { costs: import('../../../src/rl/stepTime').StepCosts; config: Record<string, unknown>; promptTokens: number }) {
  const { estimateStepTime, stepShapeOf } = await import('../../../src/rl/stepTime');
  const { parseGrpoConfig } = await import('../../../src/rl/config');
  return estimateStepTime(input.costs, stepShapeOf(parseGrpoConfig(input.config)), input.promptTokens);
}
