import { describe, expect, it } from 'vitest';
import { POLICY_LOSS_SCALARS } from '../../../src/ops/policyLoss';
import { combineScalars, microBatchScale } from '../../../src/rl/update';

const scalars = (values: Partial<Record<(typeof POLICY_LOSS_SCALARS)[number], number>>) => Float32Array.from(POLICY_LOSS_SCALARS, (k) => values[k] ?? 0);

describe('micro-batch accumulation', () => {
  it('scales each micro-batch as TRL normalises under gradient accumulation', () => {
    expect(microBatchScale('grpo', 2, 8, 1)).toBe(1);
    expect(microBatchScale('grpo', 2, 8, 4)).toBe(0.25);
    expect(microBatchScale('dr_grpo', 3, 8, 3)).toBe(3 / 8);
    expect(microBatchScale('bnpo', 2, 8, 4)).toBe(0.25);
    // dapo divides by the whole batch's tokens (num_items_in_batch) in the kernel instead.
    expect(microBatchScale('dapo', 2, 8, 4)).toBe(1);
    // TRL normalises cispo as dapo and sapo as grpo.
    expect(microBatchScale('cispo', 2, 8, 4)).toBe(1);
    expect(microBatchScale('sapo', 2, 8, 4)).toBe(0.25);
  });

  it('adds scaled losses and weights ratios by active tokens', () => {
    const c = combineScalars([
      { scalars: scalars({ loss: 2, policyLoss: 1, clipRatioLow: 0.5, ratioMean: 1, maskSum: 10 }), scale: 0.5 },
      { scalars: scalars({ loss: 4, policyLoss: 3, clipRatioLow: 0, ratioMean: 2, maskSum: 30 }), scale: 0.5 },
    ]);
    expect(c.loss).toBe(3);
    expect(c.policyLoss).toBe(2);
    expect(c.maskSum).toBe(40);
    expect(c.clipRatioLow).toBeCloseTo(0.125, 12);
    expect(c.ratioMean).toBeCloseTo(1.75, 12);
  });

  it('one micro-batch passes its scalars through unchanged', () => {
    const one = scalars({ loss: 0.3, klMean: 0.01, maskSum: 5 });
    const c = combineScalars([{ scalars: one, scale: 1 }]);
    expect(c.loss).toBeCloseTo(0.3, 6);
    expect(c.klMean).toBeCloseTo(0.01, 6);
  });
});
