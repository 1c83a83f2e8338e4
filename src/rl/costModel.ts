// Seconds a recording should take on this adapter, from what it records (counted, never run:
// src/rl/stepCommands.ts) and what this adapter was measured to cost (src/rl/calibration.ts):
// a fixed cost per dispatch and per submission, a cost per workgroup (on a software adapter the
// workgroups of the engine's kernels, with their barriers, are what costs), and matrix products
// by their FLOPs. Pure arithmetic, unit-tested by hand; the calibration turns it into the
// per-row and per-token costs src/rl/stepTime.ts works with.
import type { ModelConfig } from '../model/config';
import { modelNames, parameterSpecs } from '../model/weights';
import type { StepCosts } from './stepTime';

export interface CommandCount {
  dispatches: number;
  /** Workgroups of every dispatch, matmul's included. */
  workgroups: number;
}

/** What the calibration measured on this adapter (seconds; FLOPs per second). */
export interface AdapterSpeed {
  perDispatch: number;
  perWorkgroup: number;
  /** Matrix products of many rows (the training passes' tiled matmul). */
  flopsPerSecond: number;
  /** Matrix products of a few rows (the decode steps' small-row matmul: far fewer FLOPs a second). */
  rowFlopsPerSecond: number;
  /** A submission and a small readback, waited for. */
  roundTrip: number;
}

/** `rows`: the products are decode steps' (a few rows each), priced at rowFlopsPerSecond. */
export function commandSeconds(speed: AdapterSpeed, count: CommandCount, flops: number, submits = 0, rows = false): number {
  const rate = rows ? speed.rowFlopsPerSecond : speed.flopsPerSecond;
  return count.dispatches * speed.perDispatch + count.workgroups * speed.perWorkgroup + flops / rate + submits * speed.roundTrip;
}

/** n(L) = n(1) + (L - 1)·(n(2) - n(1)): what `layers` layers record, from what one and two do. */
export function extendToLayers(one: CommandCount, two: CommandCount, layers: number): CommandCount {
  return { dispatches: one.dispatches + (layers - 1) * (two.dispatches - one.dispatches), workgroups: one.workgroups + (layers - 1) * (two.workgroups - one.workgroups) };
}

/**
 * The cost per workgroup that explains measured times of decode steps whose dispatches, FLOPs
 * (a few rows each) and submissions are known (least squares through zero over the
 * recordings); 0 when the other costs explain everything (a fast GPU).
 */
export function fitPerWorkgroup(speed: Omit<AdapterSpeed, 'perWorkgroup'>, measured: readonly { seconds: number; count: CommandCount; flops: number; submits: number }[]): number {
  let num = 0;
  let den = 0;
  for (const m of measured) {
    const rest = m.seconds - commandSeconds({ ...speed, perWorkgroup: 0 }, m.count, m.flops, m.submits, true);
    num += rest * m.count.workgroups;
    den += m.count.workgroups * m.count.workgroups;
  }
  return den > 0 ? Math.max(0, num / den) : 0;
}

/** Weights a token's forward pass multiplies by: every matrix but the position table (the head's D×V included). */
export function computeWeights(c: ModelConfig): number {
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

/** FLOPs of one token's forward pass attending to `context` positions: 2 per weight, plus QKᵀ and AV. */
export function forwardFlopsPerToken(c: ModelConfig, context: number): number {
  return 2 * computeWeights(c) + 4 * c.numLayers * c.numHeads * c.headDim * context;
}

/** FLOPs of a training pass (forward + backward, about 3 forwards) over `batch` rows of `seqLen` tokens (causal: half the context on average). */
export function passFlops(c: ModelConfig, batch: number, seqLen: number): number {
  return 3 * batch * seqLen * forwardFlopsPerToken(c, seqLen / 2);
}

/** The commands of the pieces of a step, counted for the model (src/rl/stepCommands.ts). */
export interface StepCommands {
  /** One decode step (with its sampler) at two row counts, context `context`. */
  decode: readonly [{ rows: number; count: CommandCount }, { rows: number; count: CommandCount }];
  context: number;
  /** One training pass at two token counts (batch × seqLen). */
  pass: readonly [{ batch: number; seqLen: number; count: CommandCount }, { batch: number; seqLen: number; count: CommandCount }];
  optimizer: CommandCount;
}

/** generate() submits this many decode steps at a time: each submission is a round trip. */
export const DECODE_STEPS_PER_SUBMIT = 16;

function line(x1: number, y1: number, x2: number, y2: number): { fixed: number; per: number } {
  let per = (y2 - y1) / (x2 - x1);
  if (!(per > 0)) per = Math.max(0, y2) / x2;
  return { fixed: Math.max(0, y1 - per * x1), per };
}

/**
 * The per-row and per-token costs of `c` on an adapter of `speed`: each piece of the step priced
 * at its two sizes, and the line through them. `scale` multiplies the counted commands (counted
 * on fewer layers than the model has: see calibrationShape).
 */
export function predictStepCosts(speed: AdapterSpeed, c: ModelConfig, cmd: StepCommands, scale = 1): StepCosts {
  const scaled = (n: CommandCount): CommandCount => ({ dispatches: n.dispatches * scale, workgroups: n.workgroups * scale });
  const [d1, d2] = cmd.decode.map((d) => commandSeconds(speed, scaled(d.count), d.rows * forwardFlopsPerToken(c, cmd.context), 1 / DECODE_STEPS_PER_SUBMIT, true));
  const decode = line(cmd.decode[0].rows, d1, cmd.decode[1].rows, d2);
  const [p1, p2] = cmd.pass.map((p) => commandSeconds(speed, scaled(p.count), passFlops(c, p.batch, p.seqLen), 1));
  const train = line(cmd.pass[0].batch * cmd.pass[0].seqLen, p1, cmd.pass[1].batch * cmd.pass[1].seqLen, p2);
  return {
    decodeOverhead: decode.fixed,
    decodePerRow: decode.per,
    trainOverhead: train.fixed,
    trainPerToken: train.per,
    optimizerStep: commandSeconds(speed, scaled(cmd.optimizer), 0),
  };
}
