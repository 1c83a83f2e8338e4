// The optimizer's float64 twins (global grad norm + clip, AdamW) against hand-computed values
// and PyTorch's golden step (scripts/golden/make_golden.py: clip_grad_norm_ then
// torch.optim.AdamW, computed in float64 and stored as f32), and the learning-rate schedules
// against hand values of transformers' formulas.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSafetensors } from '../../src/model/safetensors';
import { adamwUpdateRef, optimizerStepRef } from '../../src/ops/adamw.reference';
import { gradNormRef } from '../../src/ops/gradNorm.reference';
import { learningRateAt, warmupStepsOf, type LrScheduleOptions } from '../../src/ops/lrSchedule';
import { expectClose } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

const one = (param: number) => ({ param: [param], m: [0], v: [0] });

describe('AdamW twin', () => {
  it('one step: m = 0.1 g, v = 0.001 g^2, p = 1 - lr * g / (|g| + eps)', () => {
    const s = adamwUpdateRef(one(1), [0.5], 1, { learning_rate: 0.1 });
    expect(s.m[0]).toBeCloseTo(0.05, 15);
    expect(s.v[0]).toBeCloseTo(0.00025, 15);
    expect(s.param[0]).toBeCloseTo(0.900000002, 14); // 1 - 0.1 * 0.5 / 0.50000001
  });

  it('two steps (g = 0.5 then -0.25) with bias corrections 0.19 and 0.001999', () => {
    const s1 = adamwUpdateRef(one(1), [0.5], 1, { learning_rate: 0.1 });
    const s2 = adamwUpdateRef(s1, [-0.25], 2, { learning_rate: 0.1 });
    expect(s2.m[0]).toBeCloseTo(0.02, 15); // 0.9 * 0.05 + 0.1 * -0.25
    expect(s2.v[0]).toBeCloseTo(0.00031225, 15); // 0.999 * 0.00025 + 0.001 * 0.0625
    // m_hat = 0.02 / 0.19, v_hat = 0.00031225 / 0.001999, p = p1 - 0.1 m_hat / (sqrt(v_hat) + 1e-8)
    expect(s2.param[0]).toBeCloseTo(0.8733662987078462, 14);
  });

  it('decays decoupled from the gradient, before the update: p (1 - lr wd)', () => {
    const s1 = adamwUpdateRef(one(1), [0.5], 1, { learning_rate: 0.1, weight_decay: 0.01 });
    expect(s1.param[0]).toBeCloseTo(0.899000002, 14);
    const s2 = adamwUpdateRef(s1, [-0.25], 2, { learning_rate: 0.1, weight_decay: 0.01 });
    expect(s2.param[0]).toBeCloseTo(0.8714672987058462, 14);
    // A per-tensor override wins over the global weight_decay.
    const s3 = adamwUpdateRef({ ...one(1), weight_decay: 0 }, [0.5], 1, { learning_rate: 0.1, weight_decay: 0.01 });
    expect(s3.param[0]).toBeCloseTo(0.900000002, 14);
    // With a zero gradient only the decay moves p.
    expect(adamwUpdateRef(one(2), [0], 1, { learning_rate: 0.1, weight_decay: 0.5 }).param[0]).toBeCloseTo(1.9, 15);
  });

  it('uses the given betas and epsilon', () => {
    // beta1 = 0.5, beta2 = 0.75, eps = 0.1: m = 0.5 g, v = 0.25 g^2, m_hat = g, v_hat = g^2.
    const s = adamwUpdateRef(one(0), [2], 1, { learning_rate: 1, adam_beta1: 0.5, adam_beta2: 0.75, adam_epsilon: 0.1 });
    expect(s.m[0]).toBeCloseTo(1, 15);
    expect(s.v[0]).toBeCloseTo(1, 15);
    expect(s.param[0]).toBeCloseTo(-2 / 2.1, 15);
  });
});

describe('global grad norm twin', () => {
  it('takes the norm over all tensors and the clip coefficient of clip_grad_norm_', () => {
    const s = gradNormRef([[3, 4], [12]], 1);
    expect(s.gradNorm).toBe(13);
    expect(s.clipScale).toBeCloseTo(1 / (13 + 1e-6), 15);
    expect(s.finite).toBe(true);
    expect(s.nonfiniteCount).toBe(0);
    expect(s.tensorSumSquares).toEqual([25, 144]);
    expect(gradNormRef([[3, 4], [12]], 100).clipScale).toBe(1);
    expect(gradNormRef([[3, 4], [12]], null).clipScale).toBe(1);
    expect(gradNormRef([[3, 4], [12]], 0).clipScale).toBe(1);
    expect(gradNormRef([[0, 0]], 1)).toMatchObject({ gradNorm: 0, clipScale: 1, finite: true });
  });

  it('flags NaN and infinite gradients (and f32 overflow) as not finite, clip scale 0', () => {
    const nan = gradNormRef([[1, NaN, Infinity], [2]], 1);
    expect(nan.gradNorm).toBeNaN();
    expect(nan).toMatchObject({ finite: false, clipScale: 0, nonfiniteCount: 2 });
    expect(nan.tensorSumSquares[0]).toBeNaN();
    expect(nan.tensorSumSquares[1]).toBe(4);
    const inf = gradNormRef([[1], [-Infinity, 3]], null);
    expect(inf).toMatchObject({ gradNorm: Infinity, finite: false, clipScale: 0, nonfiniteCount: 1 });
    // (2e19)^2 = 4e38 > the largest f32: the kernel's f32 sum overflows, and so does the twin.
    expect(gradNormRef([[2e19]], 1)).toMatchObject({ gradNorm: Infinity, finite: false, nonfiniteCount: 0 });
    // Two tensors each within range whose total is not.
    expect(gradNormRef([[1.5e19], [1.5e19]], 1)).toMatchObject({ gradNorm: Infinity, finite: false });
  });
});

describe('optimizer step twin (clip, then AdamW; skip when not finite)', () => {
  it('scales every gradient by the clip coefficient before AdamW', () => {
    const rand = rng(3);
    const tensors = [5, 17].map((n) => ({ param: normal(rand, n), m: normal(rand, n, 0.1), v: normal(rand, n, 0.1).map(Math.abs) }));
    const grads = [normal(rand, 5, 3), normal(rand, 17, 3)];
    const clipped = optimizerStepRef(tensors, grads, 4, { learning_rate: 0.01, weight_decay: 0.1, max_grad_norm: 0.5 });
    const scale = clipped.state.clipScale;
    expect(scale).toBeLessThan(0.1);
    const manual = optimizerStepRef(
      tensors,
      grads.map((g) => g.map((x) => x * scale)),
      4,
      { learning_rate: 0.01, weight_decay: 0.1, max_grad_norm: null },
    );
    for (let k = 0; k < 2; k++) {
      expectClose(clipped.tensors[k].param, manual.tensors[k].param, { atol: 1e-15, rtol: 1e-13 }, `param ${k}`);
      expectClose(clipped.tensors[k].v, manual.tensors[k].v, { atol: 1e-15, rtol: 1e-13 }, `v ${k}`);
    }
    // Trainer's default max_grad_norm is 1.0.
    expect(optimizerStepRef(tensors, grads, 1, { learning_rate: 0.01 }).state.clipScale).toBeCloseTo(
      1 / (gradNormRef(grads, null).gradNorm + 1e-6),
      15,
    );
  });

  it('skips the whole step (every tensor untouched) when one gradient holds a NaN', () => {
    const tensors = [
      { param: [1, 2], m: [0.1, 0.2], v: [0.01, 0.02] },
      { param: [3], m: [0.3], v: [0.03] },
    ];
    const out = optimizerStepRef(tensors, [[0.5, 0.5], [NaN]], 2, { learning_rate: 0.1, weight_decay: 0.1 });
    expect(out.state.finite).toBe(false);
    expect(out.state.nonfiniteCount).toBe(1);
    for (let k = 0; k < 2; k++) {
      expect(Array.from(out.tensors[k].param)).toEqual(tensors[k].param);
      expect(Array.from(out.tensors[k].m)).toEqual(tensors[k].m);
      expect(Array.from(out.tensors[k].v)).toEqual(tensors[k].v);
    }
  });

  for (const model of ['gpt2-tiny', 'llama-tiny']) {
    it(`matches PyTorch's clip_grad_norm_ + AdamW step on ${model}`, () => {
      const read = (file: string) => {
        const bytes = readFileSync(new URL(`../golden/${model}/${file}`, import.meta.url));
        return readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, file);
      };
      const settings = JSON.parse(readFileSync(new URL(`../golden/${model}/golden.json`, import.meta.url), 'utf8'));
      const init = read('model.safetensors').tensors;
      const golden = read('golden.safetensors').tensors;
      const names = [...init.keys()].sort();
      const tensors = names.map((n) => ({ param: init.get(n)!.data, m: new Float64Array(init.get(n)!.data.length), v: new Float64Array(init.get(n)!.data.length) }));
      const grads = names.map((n) => golden.get(`grad.${n}`)!.data);
      const out = optimizerStepRef(tensors, grads, 1, settings.adamw);
      // Inputs and expectations are f32 roundings of torch's float64 values.
      expect(out.state.gradNorm).toBeCloseTo(golden.get('grad_norm')!.data[0], 5);
      expect(out.state.clipScale).toBeLessThan(1); // the golden step does clip
      names.forEach((n, k) => expectClose(out.tensors[k].param, golden.get(`adamw.${n}`)!.data, { atol: 2e-7, rtol: 1e-6 }, n));
    });
  }
});

describe('learning-rate schedules (transformers get_scheduler)', () => {
  const base = { learning_rate: 1e-3, num_training_steps: 100 };
  const at = (step: number, o: Partial<LrScheduleOptions>) => learningRateAt(step, { ...base, ...o });

  it('linear: warmup from 0, then linear decay to 0 at num_training_steps (the default type)', () => {
    const o = { lr_scheduler_type: 'linear', warmup_steps: 10 } as const;
    expect(at(0, o)).toBe(0);
    expect(at(5, o)).toBeCloseTo(5e-4, 15);
    expect(at(10, o)).toBeCloseTo(1e-3, 15);
    expect(at(55, o)).toBeCloseTo(5e-4, 15); // 1e-3 * 45 / 90
    expect(at(99, o)).toBeCloseTo(1e-3 / 90, 15);
    expect(at(100, o)).toBe(0);
    expect(at(130, o)).toBe(0);
    expect(at(55, { warmup_steps: 10 })).toBeCloseTo(5e-4, 15);
  });

  it('cosine: 0.5 (1 + cos(pi progress)) after warmup', () => {
    const o = { lr_scheduler_type: 'cosine' } as const;
    expect(at(0, o)).toBeCloseTo(1e-3, 15);
    expect(at(25, o)).toBeCloseTo(1e-3 * 0.5 * (1 + Math.SQRT1_2), 15);
    expect(at(50, o)).toBeCloseTo(5e-4, 15);
    expect(at(100, o)).toBeCloseTo(0, 15);
    // As in transformers, nothing clamps past the end: the cosine rises again.
    expect(at(150, o)).toBeCloseTo(5e-4, 15);
    // warmup_ratio 0.1 of 95 steps = ceil(9.5) = 10 warmup steps; progress at 52 = 42 / 85.
    const w = { lr_scheduler_type: 'cosine', warmup_ratio: 0.1, num_training_steps: 95 } as const;
    expect(warmupStepsOf({ ...base, ...w })).toBe(10);
    expect(at(4, w)).toBeCloseTo(4e-4, 15);
    expect(at(10, w)).toBeCloseTo(1e-3, 15);
    expect(at(52, w)).toBeCloseTo(1e-3 * 0.5 * (1 + Math.cos((Math.PI * 42) / 85)), 15);
  });

  it('constant_with_warmup ramps then stays; constant ignores warmup', () => {
    const o = { lr_scheduler_type: 'constant_with_warmup', warmup_steps: 4 } as const;
    expect([0, 1, 2, 3, 4, 1000].map((s) => at(s, o) / 1e-3)).toEqual([0, 0.25, 0.5, 0.75, 1, 1]);
    expect(at(0, { lr_scheduler_type: 'constant', warmup_steps: 4 })).toBe(1e-3);
    expect(at(500, { lr_scheduler_type: 'constant' })).toBe(1e-3);
  });

  it('warmup_steps wins over warmup_ratio', () => {
    expect(warmupStepsOf({ ...base, warmup_steps: 3, warmup_ratio: 0.5 })).toBe(3);
    expect(warmupStepsOf({ ...base, warmup_ratio: 0.5 })).toBe(50);
    expect(warmupStepsOf(base)).toBe(0);
  });

  it('rejects bad options with an error naming them', () => {
    expect(() => at(-1, {})).toThrow(/step must be an integer >= 0/);
    expect(() => at(1.5, {})).toThrow(/step must be an integer/);
    expect(() => at(0, { lr_scheduler_type: 'cosine_with_restarts' as 'cosine' })).toThrow(/lr_scheduler_type/);
    expect(() => at(0, { num_training_steps: 0 })).toThrow(/num_training_steps/);
    expect(() => at(0, { warmup_ratio: 1.5 })).toThrow(/warmup_ratio/);
    expect(() => at(0, { warmup_steps: -2 })).toThrow(/warmup_steps/);
    expect(() => at(0, { learning_rate: NaN })).toThrow(/learning_rate/);
  });
});
