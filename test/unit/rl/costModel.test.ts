import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../../src/model/config';
import { commandSeconds, computeWeights, extendToLayers, DECODE_STEPS_PER_SUBMIT, fitPerWorkgroup, forwardFlopsPerToken, passFlops, predictStepCosts, type AdapterSpeed, type StepCommands } from '../../../src/rl/costModel';
import { estimateStepTime } from '../../../src/rl/stepTime';

// The embedded model's shape: 4 layers of 128, an MLP of 512, 259 byte tokens, tied head.
const TINY = configFromHf({ model_type: 'gpt2', vocab_size: 259, n_embd: 128, n_layer: 4, n_head: 4, n_inner: 512, n_positions: 256, tie_word_embeddings: true });
const SPEED: AdapterSpeed = { perDispatch: 1e-4, perWorkgroup: 1e-5, flopsPerSecond: 1e9, rowFlopsPerSecond: 2e8, roundTrip: 1e-3 };

describe('FLOPs of the model', () => {
  it('counts the matrices a token multiplies by, the tied head once and no position table', () => {
    // Per layer: c_attn 128×384, c_proj 128×128, c_fc 128×512, mlp c_proj 512×128; the head 259×128.
    const perLayer = 128 * 384 + 128 * 128 + 128 * 512 + 512 * 128;
    expect(computeWeights(TINY)).toBe(4 * perLayer + 259 * 128);
    // Attention: QKᵀ and AV, 2 FLOPs each per head dimension and position attended to.
    expect(forwardFlopsPerToken(TINY, 10)).toBe(2 * (4 * perLayer + 259 * 128) + 4 * 4 * 4 * 32 * 10);
    // Forward + backward ≈ 3 forwards; causal: half the sequence attended to on average.
    expect(passFlops(TINY, 2, 16)).toBe(3 * 32 * forwardFlopsPerToken(TINY, 8));
  });
});

describe('commandSeconds', () => {
  it('adds dispatches, workgroups, FLOPs and round trips at their measured costs', () => {
    // 10 × 0.1 ms + 200 × 10 µs + 5e8 / 1e9 + 2 × 1 ms = 1 + 2 + 500 + 2 ms
    expect(commandSeconds(SPEED, { dispatches: 10, workgroups: 200 }, 5e8, 2)).toBeCloseTo(0.505, 12);
    expect(commandSeconds(SPEED, { dispatches: 0, workgroups: 0 }, 0)).toBe(0);
    // A few rows a product (decode): 5e8 / 2e8 = 2.5 s.
    expect(commandSeconds(SPEED, { dispatches: 10, workgroups: 200 }, 5e8, 2, true)).toBeCloseTo(2.505, 12);
  });
});

describe('extendToLayers', () => {
  it('adds what the second layer added once per further layer', () => {
    expect(extendToLayers({ dispatches: 30, workgroups: 200 }, { dispatches: 41, workgroups: 260 }, 4)).toEqual({ dispatches: 63, workgroups: 380 });
    expect(extendToLayers({ dispatches: 30, workgroups: 200 }, { dispatches: 41, workgroups: 260 }, 1)).toEqual({ dispatches: 30, workgroups: 200 });
  });
});

describe('fitPerWorkgroup', () => {
  const known = { perDispatch: 1e-4, flopsPerSecond: 1e9, rowFlopsPerSecond: 2e8, roundTrip: 1e-3 };
  it('recovers the cost per workgroup that produced the times', () => {
    const measured = [
      { count: { dispatches: 50, workgroups: 400 }, flops: 2e6, submits: 1 },
      { count: { dispatches: 50, workgroups: 1000 }, flops: 1.6e7, submits: 1 },
    ].map((m) => ({ ...m, seconds: commandSeconds({ ...known, perWorkgroup: 3e-4 }, m.count, m.flops, m.submits, true) }));
    expect(fitPerWorkgroup(known, measured)).toBeCloseTo(3e-4, 12);
  });

  it('is the least-squares slope through zero of what the other costs leave, never negative', () => {
    // Left over: 0.1 s over 100 workgroups and 0.3 s over 200: (0.1·100 + 0.3·200) / (100² + 200²) = 70 / 50000.
    const zero = { perDispatch: 0, flopsPerSecond: Infinity, rowFlopsPerSecond: Infinity, roundTrip: 0 };
    const measured = [
      { seconds: 0.1, count: { dispatches: 1, workgroups: 100 }, flops: 0, submits: 0 },
      { seconds: 0.3, count: { dispatches: 1, workgroups: 200 }, flops: 0, submits: 0 },
    ];
    expect(fitPerWorkgroup(zero, measured)).toBeCloseTo(70 / 50000, 12);
    // A fast GPU: dispatches explain more than the time measured.
    expect(fitPerWorkgroup({ ...zero, perDispatch: 1 }, measured)).toBe(0);
    expect(fitPerWorkgroup(zero, [])).toBe(0);
  });
});

describe('predictStepCosts', () => {
  const cmd: StepCommands = {
    decode: [
      { rows: 1, count: { dispatches: 52, workgroups: 364 } },
      { rows: 8, count: { dispatches: 52, workgroups: 633 } },
    ],
    context: 32,
    pass: [
      { batch: 1, seqLen: 16, count: { dispatches: 181, workgroups: 900 } },
      { batch: 4, seqLen: 32, count: { dispatches: 181, workgroups: 6900 } },
    ],
    optimizer: { dispatches: 45, workgroups: 3900 },
  };

  it('prices each piece at its two sizes and fits a line through them, by hand', () => {
    const costs = predictStepCosts(SPEED, TINY, cmd);
    const f = forwardFlopsPerToken(TINY, 32);
    const trip = 1e-3 / DECODE_STEPS_PER_SUBMIT;
    const d1 = 52e-4 + 364e-5 + f / 2e8 + trip;
    const d8 = 52e-4 + 633e-5 + (8 * f) / 2e8 + trip;
    expect(costs.decodePerRow).toBeCloseTo((d8 - d1) / 7, 12);
    expect(costs.decodeOverhead).toBeCloseTo(d1 - (d8 - d1) / 7, 12);
    const p1 = 181e-4 + 900e-5 + passFlops(TINY, 1, 16) / 1e9 + 1e-3;
    const p2 = 181e-4 + 6900e-5 + passFlops(TINY, 4, 32) / 1e9 + 1e-3;
    expect(costs.trainPerToken).toBeCloseTo((p2 - p1) / (128 - 16), 12);
    expect(costs.trainOverhead).toBeCloseTo(p1 - 16 * ((p2 - p1) / 112), 12);
    expect(costs.optimizerStep).toBeCloseTo(45e-4 + 3900e-5, 12);
  });

  it('scales the counted commands (fewer layers counted) but not the FLOPs', () => {
    const once = predictStepCosts({ ...SPEED, flopsPerSecond: Infinity, rowFlopsPerSecond: Infinity }, TINY, cmd);
    const twice = predictStepCosts({ ...SPEED, flopsPerSecond: Infinity, rowFlopsPerSecond: Infinity }, TINY, cmd, 2);
    expect(twice.optimizerStep).toBeCloseTo(2 * once.optimizerStep!, 12);
    expect(twice.trainPerToken).toBeCloseTo(2 * once.trainPerToken, 12);
    const flopsOnly = predictStepCosts({ perDispatch: 0, perWorkgroup: 0, roundTrip: 0, flopsPerSecond: 1e9, rowFlopsPerSecond: 2e8 }, TINY, cmd, 5);
    expect(flopsOnly.decodePerRow).toBeCloseTo(forwardFlopsPerToken(TINY, 32) / 2e8, 12);
    expect(flopsOnly.trainPerToken).toBeGreaterThan(0);
    expect(flopsOnly.decodeOverhead).toBeCloseTo(0, 12);
  });

  it('an optimizer step counts once per iteration in the step estimate', () => {
    const costs = { decodeOverhead: 0, decodePerRow: 0, trainOverhead: 0, trainPerToken: 0, optimizerStep: 0.5 };
    const shape = { generation_batch_size: 8, num_generations: 4, max_completion_length: 8, num_iterations: 2, per_device_train_batch_size: 4, beta: 0, max_steps: 10 };
    expect(estimateStepTime(costs, shape, 10).update).toBeCloseTo(1, 12);
    expect(estimateStepTime(costs, shape, 10).run).toBeCloseTo(10, 12);
  });
});
