// The WGSL policy-loss kernel against its float64 twin, run in headless Chromium (WebGPU).
// Inputs are rounded to f32 before both run, and old log-probs are nudged so no ratio lies
// within 1e-4 of a clip or dual-clip kink (f32 rounding of rho is ~1e-7, so every discrete
// decision is the same in both). Tolerances (f32 kernel vs f64 twin):
//   loss, policy_loss: atol 2e-5 * sum c(|w l| + |beta D| + |coef H|) (the terms summed; f32 tree
//     sums of <= 32k terms lose ~1e-6 of that), + 1e-7;
//   grad_logprobs, grad_entropy: atol 1e-5 * max|g| + rtol 1e-4 (exp of an f32 log-ratio and f32
//     sums of the sequence log-ratio are good to a few 1e-6);
//   clip ratios, dual_clip_ratio: atol 1e-6 (same decisions, f32 sums); ratio/kl/entropy means: rtol 2e-5.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import {
  CLIPPED_LOSS_TYPES,
  IMPORTANCE_SAMPLING_LEVELS,
  KL_ESTIMATORS,
  policyLossRef,
  resolvePolicyLossOptions,
  type ImportanceSamplingLevel,
  type LossType,
  type PolicyLossOptions,
  type PolicyLossProblem,
  type PolicyLossRefResult,
} from '../../src/ops/policyLoss.reference';
import { expectClose } from '../helpers/compare';
import { chunk, normal, rng, uniform } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const f32 = (values: number[]): number[] => Array.from(new Float32Array(values));

interface Case {
  n: number;
  l: number;
  logprobs: number[];
  old: number[] | null;
  ref: number[] | null;
  mask: number[];
  advantages: number[];
  weights: number[] | null;
  entropy: number[] | null;
  options: Partial<PolicyLossOptions>;
}

interface CaseSpec {
  old?: boolean;
  ref?: boolean;
  weights?: boolean;
  entropy?: boolean;
  /** Log-ratio noise (old = logp + noise); 0.3 makes both clip sides trigger. */
  noise?: number;
  /** Row 0 gets an all-zero mask when n > 1. */
  emptyRow?: boolean;
}

/** Random f32 inputs: ragged masks with a few fractional entries, advantages of both signs. */
function makeCase(seed: number, n: number, l: number, options: Partial<PolicyLossOptions>, spec: CaseSpec = {}): Case {
  const rand = rng(seed);
  const noise = spec.noise ?? 0.3;
  const logprobs = f32(uniform(rand, n * l, -5, -0.05));
  const oldNoise = normal(rand, n * l, noise);
  const refNoise = normal(rand, n * l, 0.3);
  const mask = new Array<number>(n * l).fill(0);
  for (let i = 0; i < n; i++) {
    if (spec.emptyRow !== false && n > 1 && i === 0) continue;
    const len = 1 + Math.floor(rand() * l);
    for (let t = 0; t < len; t++) mask[i * l + t] = rand() < 0.05 ? 0.5 : 1;
  }
  const c: Case = {
    n,
    l,
    logprobs,
    old: spec.old === false ? null : f32(logprobs.map((x, k) => x + oldNoise[k])),
    ref: spec.ref === false ? null : f32(logprobs.map((x, k) => x + refNoise[k])),
    mask,
    advantages: f32(normal(rand, n)),
    weights: spec.weights ? f32(uniform(rand, n * l, 0.25, 2)) : null,
    entropy: spec.entropy === false ? null : f32(uniform(rand, n * l, 0, 4)),
    options,
  };
  nudgeAwayFromKinks(c);
  return c;
}

function problem(c: Case): PolicyLossProblem {
  return {
    n: c.n,
    l: c.l,
    logprobs: c.logprobs,
    oldLogprobs: c.old,
    refLogprobs: c.ref,
    mask: c.mask,
    advantages: c.advantages,
    tokenWeights: c.weights,
    entropy: c.entropy,
    options: c.options,
  };
}

/** Moves old log-probs (re-rounded to f32) until every ratio is >= gap away from a kink. */
function nudgeAwayFromKinks(c: Case, gap = 1e-4): void {
  if (!c.old) return;
  const o = resolvePolicyLossOptions(c.options, c.l);
  const kinks =
    o.lossType === 'sapo'
      ? []
      : o.lossType === 'cispo'
        ? [o.epsilonHigh]
        : [1 - o.epsilon, 1 + o.epsilonHigh, ...(o.dualClip !== null ? [o.dualClip] : []), ...(o.delta !== null ? [o.delta] : [])];
  const sequence = o.importanceSamplingLevel === 'sequence';
  for (let guard = 0; guard < 1000; guard++) {
    const ratio = policyLossRef(problem(c)).ratio;
    let moved = false;
    for (let k = 0; k < c.mask.length; k++) {
      if (c.mask[k] === 0 || !kinks.some((kink) => Math.abs(ratio[k] - kink) < gap)) continue;
      const row = Math.floor(k / c.l);
      const range = sequence ? [row * c.l, (row + 1) * c.l] : [k, k + 1];
      for (let u = range[0]; u < range[1]; u++) c.old[u] = Math.fround(c.old[u] - 1e-2);
      moved = true;
      if (sequence) k = (row + 1) * c.l - 1;
    }
    if (!moved) return;
  }
  throw new Error('could not move the ratios away from the kinks');
}

function request(c: Case): Record<string, unknown> {
  const o = c.options;
  const rows = (x: number[] | null) => (x ? chunk(x, c.l) : undefined);
  const req: Record<string, unknown> = {
    logprobs: rows(c.logprobs),
    old_logprobs: rows(c.old),
    ref_logprobs: rows(c.ref),
    mask: rows(c.mask),
    advantages: c.advantages,
    token_weights: rows(c.weights),
    entropy: rows(c.entropy),
    epsilon: o.epsilon,
    epsilon_high: o.epsilonHigh,
    dual_clip: o.dualClip,
    beta: o.beta,
    kl_estimator: o.klEstimator,
    entropy_coef: o.entropyCoef,
    loss_type: o.lossType,
    importance_sampling_level: o.importanceSamplingLevel,
    max_completion_length: o.maxCompletionLength,
    num_items_in_batch: o.numItemsInBatch,
    delta: o.delta,
    sapo_temperature_pos: o.sapoTemperaturePos,
    sapo_temperature_neg: o.sapoTemperatureNeg,
    use_bias_correction_kl: o.useBiasCorrectionKl,
  };
  for (const key of Object.keys(req)) if (req[key] === undefined) delete req[key];
  return req;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function compare(out: any, ref: PolicyLossRefResult, c: Case, label: string): void {
  const lossTol = { atol: 2e-5 * ref.absLossSum + 1e-7, rtol: 0 };
  expectClose([out.loss], [ref.loss], lossTol, `${label} loss`);
  expectClose([out.policy_loss], [ref.policyLoss], lossTol, `${label} policy_loss`);
  const maxGrad = ref.gradLogprobs.reduce((m, g) => Math.max(m, Math.abs(g)), 0);
  expectClose(out.grad_logprobs.flat(), ref.gradLogprobs, { atol: 1e-5 * maxGrad + 1e-12, rtol: 1e-4 }, `${label} grad_logprobs`);
  if (ref.gradEntropy) {
    const maxGe = ref.gradEntropy.reduce((m, g) => Math.max(m, Math.abs(g)), 0);
    expectClose(out.grad_entropy.flat(), ref.gradEntropy, { atol: 1e-5 * maxGe, rtol: 1e-4 }, `${label} grad_entropy`);
  } else {
    expect(out.grad_entropy, `${label} grad_entropy`).toBeUndefined();
  }
  const fraction = { atol: 1e-6, rtol: 0 };
  expectClose([out.clip_ratio_low], [ref.clipRatioLow], fraction, `${label} clip_ratio_low`);
  expectClose([out.clip_ratio_high], [ref.clipRatioHigh], fraction, `${label} clip_ratio_high`);
  expectClose([out.clip_ratio_region], [ref.clipRatioRegion], fraction, `${label} clip_ratio_region`);
  expectClose([out.dual_clip_ratio], [ref.dualClipRatio], fraction, `${label} dual_clip_ratio`);
  const mean = { atol: 1e-7, rtol: 2e-5 };
  expectClose([out.ratio_mean], [ref.ratioMean], mean, `${label} ratio_mean`);
  if (ref.klMean === null) expect(out.kl_mean, `${label} kl_mean`).toBeNull();
  else expectClose([out.kl_mean], [ref.klMean], { atol: 1e-7, rtol: 1e-4 }, `${label} kl_mean`);
  if (ref.entropyMean === null) expect(out.entropy_mean, `${label} entropy_mean`).toBeNull();
  else expectClose([out.entropy_mean], [ref.entropyMean], mean, `${label} entropy_mean`);
  // Masked tokens never get a gradient.
  const grad = out.grad_logprobs.flat() as number[];
  c.mask.forEach((m, k) => {
    if (m === 0) expect(grad[k], `${label} grad_logprobs[${k}] (masked)`).toBe(0);
  });
}

async function check(c: Case, label: string): Promise<PolicyLossRefResult> {
  const out = await harness.run('policy_loss', request(c));
  const ref = policyLossRef(problem(c));
  compare(out, ref, c, label);
  return ref;
}

const SHAPES: [number, number][] = [
  [1, 1],
  [3, 7],
  [8, 64],
  [32, 300],
  [64, 512],
];

describe('policy_loss kernel (WGSL) vs float64 twin', () => {
  let seed = 1;
  // cispo and sapo have their own small cases below.
  for (const lossType of CLIPPED_LOSS_TYPES) {
    for (const importanceSamplingLevel of IMPORTANCE_SAMPLING_LEVELS) {
      const base = seed;
      seed += 100;
      it(`${lossType} / ${importanceSamplingLevel}: random inputs over ${SHAPES.length} shapes`, async () => {
        for (const [j, [n, l]] of SHAPES.entries()) {
          // Each shape rotates the other options so every combination shows up somewhere.
          const options = rotatedOptions(lossType, importanceSamplingLevel, j, l);
          const c = makeCase(base + j, n, l, options, { weights: j % 2 === 1, entropy: j !== 3 });
          const label = `${n}x${l} ${JSON.stringify(options)}`;
          const ref = await check(c, label);
          if (n * l >= 2000 && importanceSamplingLevel === 'token') {
            // The inputs must reach every branch for the comparison to mean something.
            expect(ref.clipRatioLow, label).toBeGreaterThan(0);
            expect(ref.clipRatioHigh, label).toBeGreaterThan(0);
            if (options.dualClip) expect(ref.dualClipRatio, label).toBeGreaterThan(0);
          }
        }
      });
    }
  }

  for (const klEstimator of KL_ESTIMATORS) {
    it(`beta > 0 with ${klEstimator} (KL gradient dominates: ratio 1, small advantages)`, async () => {
      const options: Partial<PolicyLossOptions> = { beta: 0.5, klEstimator, lossType: 'bnpo' };
      const c = makeCase(40 + KL_ESTIMATORS.indexOf(klEstimator), 16, 100, options, { old: false });
      c.advantages = c.advantages.map((a) => Math.fround(a * 1e-3));
      const ref = await check(c, klEstimator);
      expect(Math.abs(ref.klMean!)).toBeGreaterThan(1e-3);
    });
  }

  it('TRL defaults: no old/ref/weights/entropy, dapo, token level (ratio 1)', async () => {
    const c = makeCase(50, 8, 33, {}, { old: false, ref: false, entropy: false });
    await check(c, 'defaults');
  });

  it('GSPO with a narrow clip range: sequence ratios clip on both sides', async () => {
    const options: Partial<PolicyLossOptions> = { importanceSamplingLevel: 'sequence', epsilon: 3e-4, epsilonHigh: 4e-4, lossType: 'grpo' };
    const c = makeCase(51, 64, 40, options, { noise: 0.05 });
    const ref = await check(c, 'gspo');
    expect(ref.clipRatioLow).toBeGreaterThan(0);
    expect(ref.clipRatioHigh).toBeGreaterThan(0);
  });

  it('token_weights, entropy_coef < 0 and fractional masks everywhere', async () => {
    const options: Partial<PolicyLossOptions> = { entropyCoef: -0.02, beta: 0.01, dualClip: 1.3 };
    const c = makeCase(52, 5, 260, options, { weights: true });
    c.mask = c.mask.map((m, k) => (m === 0 ? 0 : Math.fround(0.1 + 0.9 * ((k * 0.618) % 1))));
    nudgeAwayFromKinks(c);
    await check(c, 'fractional');
  });

  it('L longer than a workgroup and N not a multiple of anything (7 x 1000)', async () => {
    const c = makeCase(53, 7, 1000, { lossType: 'grpo', beta: 0.1, entropyCoef: 0.01 }, { weights: true });
    await check(c, '7x1000');
  });

  it('2-D workgroup grids (N > 65535 on a real device): forced here with a 7-per-dimension limit', async () => {
    // A real N > 65535 run takes minutes on SwiftShader, so shrink rt.grid's per-dimension limit
    // in the page instead: every dispatch then spans (x, y) grids with idle spare workgroups.
    await harness.evaluate((max: number) => {
      const rt = window.harness.runtime as unknown as { grid(count: number): [number, number] };
      rt.grid = (count: number) => {
        if (count <= max) return [Math.max(count, 1), 1];
        const y = Math.ceil(count / max);
        return [Math.ceil(count / y), y];
      };
    }, 7);
    try {
      // 41 sequences -> (7, 6) = 42 workgroups; 11 tiles -> (6, 2); 41 entropy groups -> (7, 6).
      const c = makeCase(54, 41, 250, { lossType: 'grpo', beta: 0.05, entropyCoef: 0.01 }, { weights: true });
      await check(c, '41x250 grid');
      const s = makeCase(55, 41, 250, { importanceSamplingLevel: 'sequence', lossType: 'bnpo', entropyCoef: 0.01 });
      await check(s, '41x250 grid sequence');
    } finally {
      await harness.evaluate(() => {
        delete (window.harness.runtime as unknown as { grid?: unknown }).grid; // back to the prototype's
      }, null);
    }
  });

  it('an all-zero mask gives loss 0, metrics 0 and zero gradients', async () => {
    const out = await harness.run('policy_loss', {
      logprobs: [[-1, -2], [-3, -4]],
      mask: [[0, 0], [0, 0]],
      advantages: [1, -1],
      entropy: [[1, 1], [1, 1]],
      entropy_coef: 0.1,
      loss_type: 'grpo',
    });
    expect(out.loss).toBe(0);
    expect(out.ratio_mean).toBe(0);
    expect(out.entropy_mean).toBe(0);
    expect(out.grad_logprobs).toEqual([[0, 0], [0, 0]]);
    expect(out.grad_entropy.flat().map(Math.abs)).toEqual([0, 0, 0, 0]);
  });

  it('hand-computed clip case (same numbers as the unit test)', async () => {
    const out = await harness.run('policy_loss', {
      logprobs: [[-1], [-1], [-1], [-1]],
      old_logprobs: [[-1 - Math.log(1.5)], [-1 - Math.log(0.5)], [-1 - Math.log(0.5)], [-1 - Math.log(1.5)]],
      mask: [[1], [1], [1], [1]],
      advantages: [1, -1, 1, -1],
      epsilon_high: 0.28,
    });
    expect(out.loss).toBeCloseTo(0.13, 5);
    expectClose(out.grad_logprobs.flat(), [0, 0, -0.125, 0.375], { atol: 1e-6, rtol: 1e-5 }, 'grad');
    expect(out.clip_ratio_low).toBeCloseTo(0.25, 6);
    expect(out.clip_ratio_high).toBeCloseTo(0.25, 6);
    expect(out.kl_mean).toBeNull();
    expect(out.entropy_mean).toBeNull();
  });

  it('TRL options of issue 16 (delta, cispo, sapo, use_bias_correction_kl), token and sequence level, on small shapes', async () => {
    const variants: Partial<PolicyLossOptions>[] = [
      { lossType: 'grpo', delta: 1.25, beta: 0.04, entropyCoef: 0.01 },
      { lossType: 'dapo', delta: 1.25, dualClip: 1.6, epsilonHigh: 0.28 },
      { lossType: 'cispo', epsilonHigh: 1.1, beta: 0.04, useBiasCorrectionKl: true, entropyCoef: 0.01 },
      { lossType: 'cispo', epsilonHigh: 5, numItemsInBatch: 300 },
      { lossType: 'sapo', beta: 0.04, klEstimator: 'k2' },
      { lossType: 'sapo', sapoTemperaturePos: 2.5, sapoTemperatureNeg: 0.7, entropyCoef: 0.01 },
      { lossType: 'bnpo', beta: 0.1, useBiasCorrectionKl: true, klEstimator: 'k3' },
    ];
    let s = 60;
    for (const variant of variants) {
      for (const importanceSamplingLevel of IMPORTANCE_SAMPLING_LEVELS) {
        for (const [n, l] of [[3, 7], [8, 64]] as const) {
          const options = { ...variant, importanceSamplingLevel };
          const c = makeCase(s++, n, l, options, { weights: n === 8 });
          const label = `${n}x${l} ${JSON.stringify(options)}`;
          const ref = await check(c, label);
          if (n === 8 && importanceSamplingLevel === 'token') {
            // The inputs must reach the cap / the delta branch for the comparison to mean something.
            if (variant.delta) expect(ref.clipRatioRegion, label).toBeGreaterThan(0);
            if (variant.lossType === 'cispo' && variant.epsilonHigh === 1.1) expect(ref.clipRatioHigh, label).toBeGreaterThan(0);
          }
        }
      }
    }
  });

  it('hand-computed cispo and sapo cases (same numbers as the unit test)', async () => {
    const cispo = await harness.run('policy_loss', {
      logprobs: [[-1], [-1], [-1]],
      old_logprobs: [[-1 - Math.log(6)], [-1 - Math.log(0.5)], [-1 - Math.log(7)]],
      mask: [[1], [1], [1]],
      advantages: [1, -2, -1],
      loss_type: 'cispo',
      epsilon_high: 5,
    });
    expect(cispo.loss).toBeCloseTo(-1 / 3, 5);
    expectClose(cispo.grad_logprobs.flat(), [-5 / 3, 1 / 3, 5 / 3], { atol: 1e-6, rtol: 1e-5 }, 'cispo grad');
    expect(cispo.clip_ratio_high).toBeCloseTo(1 / 3, 6);
    expect(cispo.clip_ratio_low).toBe(0);
    const sapo = await harness.run('policy_loss', { logprobs: [[-1], [-1]], mask: [[1], [1]], advantages: [1, -1], loss_type: 'sapo' });
    expect(sapo.loss).toBeCloseTo((-2 + 2 / 1.05) / 2, 5);
    expectClose(sapo.grad_logprobs.flat(), [-0.5, 0.5], { atol: 1e-6, rtol: 1e-5 }, 'sapo grad');
  });

  it('rejects bad requests with an error naming the field', async () => {
    const ok = { logprobs: [[-1, -2]], mask: [[1, 1]], advantages: [1] };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...ok, epsilonn: 0.1 }, /epsilonn: unknown field/],
      [{ ...ok, mask: [[1, 1.5]] }, /mask\[0\]\[1\]/],
      [{ ...ok, mask: [[1, -0.5]] }, /mask\[0\]\[1\]/],
      [{ ...ok, mask: [[1, 1, 1]] }, /mask: expected 2 columns/],
      [{ ...ok, old_logprobs: [[-1, -2], [-1, -2]] }, /old_logprobs: expected 1 rows/],
      [{ ...ok, token_weights: [[1]] }, /token_weights: expected 2 columns/],
      [{ ...ok, advantages: [1, 2] }, /advantages: expected 1 values/],
      [{ ...ok, logprobs: [[-1, 'x']] }, /logprobs\[0\]\[1\]/],
      [{ ...ok, epsilon: -0.1 }, /(^|\s)epsilon: must/],
      [{ ...ok, epsilon_high: -1 }, /epsilon_high:/],
      [{ ...ok, dual_clip: 0.5 }, /dual_clip:/],
      [{ ...ok, beta: 0.1 }, /ref_logprobs: is required when beta/],
      [{ ...ok, beta: -0.1, ref_logprobs: [[-1, -2]] }, /beta:/],
      [{ ...ok, entropy_coef: 0.1 }, /entropy: is required when entropy_coef/],
      [{ ...ok, loss_type: 'ppo' }, /loss_type:/],
      [{ ...ok, kl_estimator: 'k4' }, /kl_estimator:/],
      [{ ...ok, importance_sampling_level: 'seq' }, /importance_sampling_level:/],
      [{ ...ok, max_completion_length: 0 }, /max_completion_length:/],
      [{ ...ok, num_items_in_batch: -1 }, /num_items_in_batch:/],
      [{ ...ok, delta: 1 }, /delta: must be null \(off\) or a number > 1/],
      [{ ...ok, delta: 4, loss_type: 'sapo' }, /delta: applies only to loss_type/],
      [{ ...ok, dual_clip: 3, loss_type: 'cispo' }, /dual_clip: applies only to loss_type/],
      [{ ...ok, sapo_temperature_pos: 0 }, /sapo_temperature_pos:/],
      [{ ...ok, sapo_temperature_neg: 'hot' }, /sapo_temperature_neg:/],
      [{ ...ok, use_bias_correction_kl: 1 }, /use_bias_correction_kl: must be true or false/],
    ];
    for (const [req, pattern] of bad) {
      await expect(harness.run('policy_loss', req), JSON.stringify(req)).rejects.toThrow(pattern);
    }
  });
});

describe('policy_loss: NaN and inf inputs reach the loss and the gradients, as the twin', () => {
  const CASES = '/test/harness/cases/policyLoss.ts';
  // n = 3 sequences x l = 4; sequence 2's last token is masked.
  const mask = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
  const base = f32([-1.2, -0.4, -2, -0.9, -0.3, -1.1, -0.7, -1.6, -0.5, -0.8, -1.3, -2.2]);
  const old = f32(base.map((x, k) => x + 0.1 * Math.sin(k)));
  const withNaN = (values: number[], at: Record<number, number>) => values.map((x, k) => (k in at ? at[k] : x));

  async function check(label: string, c: { logprobs: number[]; oldLogprobs?: number[]; advantages: number[]; options: Partial<PolicyLossOptions> }) {
    const out = await harness.runModule(CASES, 'policyLoss', { n: 3, l: 4, mask, ...c });
    const ref = policyLossRef({ n: 3, l: 4, mask, logprobs: c.logprobs, oldLogprobs: c.oldLogprobs, advantages: c.advantages, options: c.options });
    expectClose([out.loss, out.policyLoss], [ref.loss, ref.policyLoss], { atol: 1e-6, rtol: 1e-5 }, `${label} loss`);
    expectClose(out.gradLogprobs, ref.gradLogprobs, { atol: 1e-6, rtol: 1e-4 }, `${label} grad_logprobs`);
    return { out, ref };
  }
  const nanAt = (g: ArrayLike<number>) => Array.from(g, (x) => Number.isNaN(x));

  it('token level without old log-probs: a NaN or -inf log-prob gives NaN (logp - logp.detach() is NaN)', async () => {
    // The kernel used to take the ratio as exactly 1 here, whatever logp was.
    const logprobs = withNaN(base, { 1: NaN, 6: -Infinity, 11: NaN /* masked: ignored */ });
    const { out } = await check('no old', { logprobs, advantages: [0.5, -1, 2], options: {} });
    expect(Number.isNaN(out.loss)).toBe(true);
    expect(nanAt(out.gradLogprobs)).toEqual(mask.map((_, k) => k === 1 || k === 6));
    expect(out.gradLogprobs[11]).toBe(0);
  });

  it('token level with old log-probs and the dual clip: a NaN log-prob, old log-prob or advantage gives NaN', async () => {
    // min/max/clamp of a NaN ratio picked a finite branch, and SwiftShader's exp(NaN) is +inf.
    const logprobs = withNaN(base, { 2: NaN });
    const oldLogprobs = withNaN(old, { 5: NaN });
    const { out } = await check('old', { logprobs, oldLogprobs, advantages: [0.5, -1, NaN], options: { dualClip: 3, epsilonHigh: 0.28 } });
    expect(Number.isNaN(out.loss)).toBe(true);
    expect(nanAt(out.gradLogprobs)).toEqual(mask.map((m, k) => k === 2 || k === 5 || (k >= 8 && m === 1)));
  });

  it('sequence level (GSPO): one NaN log-prob poisons its whole sequence, with or without old log-probs', async () => {
    const logprobs = withNaN(base, { 4: NaN });
    for (const oldLogprobs of [undefined, old]) {
      const { out } = await check(`gspo old=${!!oldLogprobs}`, { logprobs, oldLogprobs, advantages: [0.5, -1, 2], options: { importanceSamplingLevel: 'sequence' } });
      expect(Number.isNaN(out.loss)).toBe(true);
      expect(nanAt(out.gradLogprobs)).toEqual(mask.map((_, k) => k >= 4 && k < 8));
    }
  });

  it('cispo and sapo: a NaN log-prob or advantage gives NaN (min and the sigmoid keep it)', async () => {
    const logprobs = withNaN(base, { 2: NaN });
    for (const options of [{ lossType: 'cispo', epsilonHigh: 5 }, { lossType: 'sapo' }] as const) {
      const { out } = await check(options.lossType, { logprobs, oldLogprobs: old, advantages: [0.5, -1, NaN], options });
      expect(Number.isNaN(out.loss)).toBe(true);
      expect(nanAt(out.gradLogprobs)).toEqual(mask.map((m, k) => k === 2 || (k >= 8 && m === 1)));
    }
  });

  it('finite inputs with a NaN only at masked tokens stay finite (masked tokens are skipped)', async () => {
    const logprobs = withNaN(base, { 11: NaN });
    const { out } = await check('masked NaN', { logprobs, oldLogprobs: withNaN(old, { 11: NaN }), advantages: [0.5, -1, 2], options: {} });
    expect(Number.isFinite(out.loss)).toBe(true);
    expect(out.gradLogprobs.every((g: number) => Number.isFinite(g))).toBe(true);
  });
});

function rotatedOptions(lossType: LossType, level: ImportanceSamplingLevel, j: number, l: number): Partial<PolicyLossOptions> {
  return {
    lossType,
    importanceSamplingLevel: level,
    epsilon: 0.2,
    epsilonHigh: 0.28,
    klEstimator: KL_ESTIMATORS[j % 3],
    beta: j % 4 === 3 ? 0 : 0.04,
    entropyCoef: j % 3 === 0 ? 0 : 0.01,
    dualClip: j % 2 === 0 ? 1.5 : null,
    ...(lossType === 'dr_grpo' && j % 2 === 1 ? { maxCompletionLength: l + 3 } : {}),
    ...(lossType === 'dapo' && j % 2 === 1 ? { numItemsInBatch: 1000 } : {}),
  };
}
