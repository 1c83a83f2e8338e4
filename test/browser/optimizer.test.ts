// The WGSL optimizer (global grad norm + clip + AdamW) against its float64 twins, run in headless
// Chromium (WebGPU), and against PyTorch's golden AdamW step.
// Tolerances (f32 kernel vs f64 twin on f32-rounded inputs):
//   grad_norm, per-tensor sums of squares, clip_scale: rtol 1e-5 (f32 tree sums of <= 70k
//     squares lose ~1e-6);
//   params: atol 1e-6 + rtol 1e-5 (each step rounds p to f32, ~6e-8 relative; the update's
//     m_hat / sqrt(v_hat) ratio is good to ~1e-6 relative, times lr <= 0.05);
//   m, v: rtol 1e-5 + atol 1e-6 of the largest |m| (|v|) (they scale with the f32 clip scale,
//     and m can cancel to ~0 across steps).
// Updates are >= 1e-3 of the parameters here, so a wrong formula cannot hide under these.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { readSafetensors } from '../../src/model/safetensors';
import { optimizerStepRef, type AdamWStateRef, type AdamWTensorRef } from '../../src/ops/adamw.reference';
import { gradNormRef } from '../../src/ops/gradNorm.reference';
import { expectClose } from '../helpers/compare';
import { normal, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const CASES = '/test/harness/cases/optimizer.ts';
const SIZES = [1, 3, 1000, 70000];
const NORM_TOL = { atol: 0, rtol: 1e-5 };
const PARAM_TOL = { atol: 1e-6, rtol: 1e-5 };

const f32 = (values: number[]): number[] => Array.from(new Float32Array(values));
const maxAbs = (a: ArrayLike<number>) => Array.from(a).reduce((m, x) => Math.max(m, Math.abs(x)), 0);

interface StepSpec {
  grads: number[][];
  step: number;
  learning_rate: number;
}

interface Options {
  adam_beta1?: number;
  adam_beta2?: number;
  adam_epsilon?: number;
  weight_decay?: number;
  max_grad_norm?: number | null;
}

/** The twin run over the same steps; skipped steps leave the state as it was. */
function twinSteps(init: AdamWTensorRef[], steps: StepSpec[], options: Options) {
  let tensors: AdamWTensorRef[] = init;
  const states = [];
  for (const s of steps) {
    const out = optimizerStepRef(tensors, s.grads, s.step, { ...options, learning_rate: s.learning_rate });
    tensors = out.tensors.map((t: AdamWStateRef, k) => ({ ...t, weight_decay: init[k].weight_decay }));
    states.push(out.state);
  }
  return { tensors, states };
}

function expectTensorsClose(got: { params: number[][]; m: number[][]; v: number[][] }, want: AdamWTensorRef[], label: string) {
  want.forEach((t, k) => {
    expectClose(got.params[k], t.param, PARAM_TOL, `${label} param[${k}]`);
    expectClose(got.m[k], t.m, { atol: 1e-6 * maxAbs(t.m), rtol: 1e-5 }, `${label} m[${k}]`);
    expectClose(got.v[k], t.v, { atol: 1e-6 * maxAbs(t.v), rtol: 1e-5 }, `${label} v[${k}]`);
  });
}

function problem(seed: number, sizes: number[], gradScale: number, steps: number, lrs: number[]) {
  const rand = rng(seed);
  const tensors = sizes.map((n) => ({ param: f32(normal(rand, n)), m: new Array<number>(n).fill(0), v: new Array<number>(n).fill(0) }));
  const specs: StepSpec[] = Array.from({ length: steps }, (_, s) => ({
    grads: sizes.map((n) => f32(normal(rand, n, gradScale))),
    step: s + 1,
    learning_rate: lrs[s],
  }));
  return { tensors, specs };
}

describe('global grad norm kernel vs float64 twin', () => {
  it('tensors of 1, 3, 1000 and 70000 values: norm, clip scale, per-tensor sums; bit-identical reruns', async () => {
    const rand = rng(1);
    const grads = SIZES.map((n) => f32(normal(rand, n, 0.01)));
    const runs = await harness.runModule(CASES, 'gradNorm', { grads, max_grad_norm: 1, repeat: 2 });
    const ref = gradNormRef(grads, 1);
    const { state, tensorSumSquares, tensorNonfinite } = runs[0];
    expectClose([state.gradNorm], [ref.gradNorm], NORM_TOL, 'grad_norm');
    expect(ref.clipScale).toBeLessThan(1); // norm ~2.6: clipping is active
    expectClose([state.clipScale], [ref.clipScale], NORM_TOL, 'clip_scale');
    expect(state.finite).toBe(true);
    expect(state.nonfiniteCount).toBe(0);
    expectClose(tensorSumSquares, ref.tensorSumSquares, NORM_TOL, 'tensor sums of squares');
    expect(tensorNonfinite).toEqual([0, 0, 0, 0]);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('clip scale is exactly 1 below max_grad_norm and with clipping off (null or 0)', async () => {
    const grads = [[0.3, -0.4], [0]];
    for (const max_grad_norm of [1, null, 0]) {
      const [{ state }] = await harness.runModule(CASES, 'gradNorm', { grads, max_grad_norm });
      expectClose([state.gradNorm], [0.5], NORM_TOL, 'grad_norm');
      expect(state.clipScale).toBe(1);
    }
    // Default max_grad_norm is 1.0 (Trainer's): norm 5 clips to 1 / (5 + 1e-6).
    const [{ state }] = await harness.runModule(CASES, 'gradNorm', { grads: [[3, 4]] });
    expectClose([state.clipScale], [1 / (5 + 1e-6)], NORM_TOL, 'clip_scale');
  });

  it('a tensor past the partial-sum cap (600,000 values: threads stride further) and many small tensors', async () => {
    const pattern = (count: number) => Array.from({ length: count }, (_, i) => ((i % 97) - 48) / 64);
    const small = Array.from({ length: 300 }, (_, k) => [k / 300, -0.5]);
    const [{ state, tensorSumSquares }] = await harness.runModule(CASES, 'gradNorm', {
      grads: small,
      patterned: [600_000, 524_289],
      max_grad_norm: 1e6,
    });
    const ref = gradNormRef([...small, pattern(600_000), pattern(524_289)], 1e6);
    expectClose([state.gradNorm], [ref.gradNorm], NORM_TOL, 'grad_norm');
    expectClose(tensorSumSquares, ref.tensorSumSquares, NORM_TOL, 'tensor sums of squares');
    expect(state.clipScale).toBe(1);
  });

  it('NaN, Inf and f32 overflow: flag 0, clip scale 0, counts of non-finite entries', async () => {
    const grads = [[1, 2], new Array(700).fill(0.5), [3]];
    grads[1][600] = NaN;
    grads[1][601] = Infinity;
    let [{ state, tensorSumSquares, tensorNonfinite }] = await harness.runModule(CASES, 'gradNorm', { grads });
    expect(state.gradNorm).toBeNaN();
    expect(state).toMatchObject({ finite: false, clipScale: 0, nonfiniteCount: 2 });
    expect(tensorSumSquares[0]).toBe(5);
    expect(tensorSumSquares[1]).toBeNaN();
    expect(tensorNonfinite).toEqual([0, 2, 0]);

    grads[1][600] = -Infinity;
    [{ state, tensorSumSquares }] = await harness.runModule(CASES, 'gradNorm', { grads });
    expect(state).toMatchObject({ gradNorm: Infinity, finite: false, clipScale: 0, nonfiniteCount: 2 });
    expect(tensorSumSquares[1]).toBe(Infinity);

    // Finite entries whose squares overflow f32: the norm is +Inf, as torch's f32 norm gives.
    [{ state }] = await harness.runModule(CASES, 'gradNorm', { grads: [[1], [2e19, 3e19]] });
    expect(state).toMatchObject({ gradNorm: Infinity, finite: false, clipScale: 0, nonfiniteCount: 0 });
  });
});

describe('optimizer step (grad norm + AdamW) vs float64 twin', () => {
  const configs: [string, number, Options, (number | undefined)[]][] = [
    ['clipping active, weight decay 0.1 (0 for the 3-value tensor)', 2, { weight_decay: 0.1, max_grad_norm: 1 }, [undefined, 0]],
    ['clipping inactive, no weight decay, betas 0.8/0.99, eps 1e-6', 3, { adam_beta1: 0.8, adam_beta2: 0.99, adam_epsilon: 1e-6, max_grad_norm: 1e4 }, []],
  ];
  for (const [name, seed, options, decays] of configs) {
    it(`3 consecutive steps on tensors of ${SIZES.join(', ')} values: ${name}`, async () => {
      const { tensors, specs } = problem(seed, SIZES, 1, 3, [0.05, 0.04, 0.03]);
      const init = tensors.map((t, k) => ({ ...t, weight_decay: decays[k] }));
      const out = await harness.runModule(CASES, 'optimizerSteps', { tensors: init, steps: specs, options });
      const ref = twinSteps(init, specs, options);
      out.steps.forEach((s: { state: { gradNorm: number; clipScale: number; finite: boolean } }, i: number) => {
        expectClose([s.state.gradNorm], [ref.states[i].gradNorm], NORM_TOL, `step ${i + 1} grad_norm`);
        expectClose([s.state.clipScale], [ref.states[i].clipScale], NORM_TOL, `step ${i + 1} clip_scale`);
        expect(s.state.finite).toBe(true);
      });
      expect(ref.states[0].clipScale < 1).toBe(options.max_grad_norm === 1);
      expectTensorsClose(out.final, ref.tensors, 'after 3 steps');
      // The updates are far above the tolerance: the test would see a wrong formula.
      expect(maxAbs(out.final.params[3].map((p: number, i: number) => p - tensors[3].param[i]))).toBeGreaterThan(0.05);
      // Moments in one shared buffer (ParameterStore's layout, adamw_moments.wgsl; its padding
      // starts as NaN): the same arithmetic, so the same bits as a buffer per moment.
      const shared = await harness.runModule(CASES, 'optimizerSteps', { tensors: init, steps: specs, options, sharedMoments: true });
      expect(shared.final).toEqual(out.final);
      expect(shared.steps.map((s: { state: unknown }) => s.state)).toEqual(out.steps.map((s: { state: unknown }) => s.state));
      // Several tensors per dispatch (grad_norm_multi, adamw_multi / adamw_moments; a software
      // adapter's default is one a dispatch): the same bits as well.
      for (const sharedMoments of [false, true]) {
        const multi = await harness.runModule(CASES, 'optimizerSteps', { tensors: init, steps: specs, options: { ...options, tensorsPerDispatch: 8 }, sharedMoments });
        expect(multi.final).toEqual(out.final);
        expect(multi.steps.map((s: { state: unknown }) => s.state)).toEqual(out.steps.map((s: { state: unknown }) => s.state));
      }
      // Params, grads and moments each in one buffer (ParameterStore's arenas, NaN between the
      // tensors): the flat kernels, one dispatch per pass, still the same bits (tensors of 1, 3,
      // 1000 values end inside a vec4; the NaN padding must stay out of the norm and the updates).
      // Both variants on any adapter: vec4 (a software adapter's) and a thread an element (a GPU's).
      for (const [tensorsPerDispatch, flatVariant] of [[undefined, 'vec4'], [3, 'vec4'], [undefined, 'scalar'], [3, 'scalar']] as const) {
        const flat = await harness.runModule(CASES, 'optimizerSteps', { tensors: init, steps: specs, options: { ...options, tensorsPerDispatch, flatVariant }, arena: true });
        expect(flat.final).toEqual(out.final);
        expect(flat.steps.map((s: { state: unknown }) => s.state)).toEqual(out.steps.map((s: { state: unknown }) => s.state));
        // Partial sums (one flat dispatch, or a flat run of 3 and a lone tensor) + finish + AdamW.
        // The run and the lone tensor write disjoint ranges of the partials, so they pair where
        // their kernels share a workgroup size: the lone 70,000-value tensor takes the vec4
        // kernel on a software adapter, the scalar one elsewhere.
        const paired = tensorsPerDispatch !== undefined && (flatVariant === 'vec4') === flat.software;
        for (const s of flat.steps) expect(s.dispatches).toBe(tensorsPerDispatch === undefined ? 3 : paired ? 4 : 5);
      }
    });
  }

  it('one step is exactly one submission and reads back only the 16-byte step state', async () => {
    const sizes = [1, 3, 1000, 5000];
    const { tensors, specs } = problem(4, sizes, 1, 2, [0.01, 0.01]);
    // The device's default: on a software adapter one tensor a dispatch (its multi-tensor
    // kernels run every tensor's case for every thread), else as many as the bindings allow.
    // Dispatch pairing (src/gpu/dispatchPair.ts) runs two tensors' AdamW as one dispatch (each
    // binds its own buffers); the partial sums all write one buffer of partials, so they stay apart.
    const byDefault = await harness.runModule(CASES, 'optimizerSteps', { tensors, steps: specs, options: {} });
    if (byDefault.software) for (const s of byDefault.steps) expect(s.dispatches).toBe(sizes.length + 1 + sizes.length / 2);
    const out = await harness.runModule(CASES, 'optimizerSteps', { tensors, steps: specs, options: { tensorsPerDispatch: 8 } });
    expect(out.final).toEqual(byDefault.final);
    // Multi-tensor dispatches: up to 8 gradients per partial-sum pass (one storage binding
    // each, plus the partials) and up to 4 tensors per AdamW update (four bindings each, plus
    // the step state), within the device's storage-binding limit (10 on SwiftShader: 1 + 2).
    const limit = out.maxStorageBuffers;
    const perNorm = Math.min(8, limit - 1);
    const perAdam = Math.max(1, Math.min(4, Math.floor((limit - 1) / 4)));
    for (const s of out.steps) {
      expect(s.submits).toBe(1);
      expect(s.readbacks).toBe(1);
      expect(s.bytesRead).toBe(16);
      // Partial-sum passes + per-tensor sums and finish (one dispatch) + AdamW updates.
      expect(s.dispatches).toBe(Math.ceil(sizes.length / perNorm) + 1 + Math.ceil(sizes.length / perAdam));
      expect(s.dispatches).toBeLessThan(2 * sizes.length + 2);
    }
    // Moments in one shared buffer: two bindings a tensor (grad, param), plus the step state and
    // the moments, so twice as many tensors per AdamW dispatch (4 on SwiftShader).
    const shared = await harness.runModule(CASES, 'optimizerSteps', { tensors, steps: specs, options: { tensorsPerDispatch: 8 }, sharedMoments: true });
    const perShared = Math.max(1, Math.min(8, Math.floor((limit - 2) / 2)));
    expect(perShared).toBeGreaterThanOrEqual(2 * perAdam);
    for (const s of shared.steps) {
      expect(s).toMatchObject({ submits: 1, readbacks: 1, bytesRead: 16 });
      expect(s.dispatches).toBe(Math.ceil(sizes.length / perNorm) + 1 + Math.ceil(sizes.length / perShared));
    }
    expect(shared.final).toEqual(out.final);
  });

  it('a NaN in one gradient skips the step: params, m, v bit-identical, flag reads 0; the next step proceeds', async () => {
    const sizes = [1, 3, 1000];
    const { tensors, specs } = problem(5, sizes, 1, 3, [0.05, 0.05, 0.05]);
    specs[1].grads[2][500] = NaN;
    specs[2].step = 2; // the skipped step is not counted, as with torch's GradScaler
    const options = { weight_decay: 0.1, max_grad_norm: 1 };
    const out = await harness.runModule(CASES, 'optimizerSteps', { tensors, steps: specs, options, snapshots: true });
    const [first, skipped, third] = out.steps;
    expect(first.state.finite).toBe(true);
    expect(skipped.state.finite).toBe(false);
    expect(skipped.state.gradNorm).toBeNaN();
    expect(skipped.state.nonfiniteCount).toBe(1);
    expect(skipped.after).toEqual(first.after);
    expect(third.state.finite).toBe(true);
    const ref = twinSteps(tensors, [specs[0], specs[2]], options);
    expectTensorsClose(third.after, ref.tensors, 'after the skip');
  });

  it('an infinite gradient or an overflowing norm also skips the step', async () => {
    const params = [f32([0.5, -1, 2]), f32([3])];
    const steps = [
      { grads: [[0.1, Infinity, 0.2], [1]], step: 1, learning_rate: 0.1 },
      { grads: [[1e20, 0, 0], [1]], step: 1, learning_rate: 0.1 },
    ];
    const out = await harness.runModule(CASES, 'optimizerSteps', {
      tensors: params.map((param) => ({ param })),
      steps,
      options: { weight_decay: 0.5 },
    });
    expect(out.steps.map((s: { state: { finite: boolean; gradNorm: number } }) => [s.state.finite, s.state.gradNorm])).toEqual([
      [false, Infinity],
      [false, Infinity],
    ]);
    expect(out.final.params).toEqual(params);
    expect(out.final.m).toEqual([[0, 0, 0], [0]]);
  });

  it("matches PyTorch's clip_grad_norm_ + AdamW golden step on gpt2-tiny (host helper, one submission)", async () => {
    const read = (file: string) => {
      const bytes = readFileSync(new URL(`../golden/gpt2-tiny/${file}`, import.meta.url));
      return readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, file).tensors;
    };
    const settings = JSON.parse(readFileSync(new URL('../golden/gpt2-tiny/golden.json', import.meta.url), 'utf8')).adamw;
    const init = read('model.safetensors');
    const golden = read('golden.safetensors');
    const names = [...init.keys()].sort();
    const out = await harness.runModule(CASES, 'hostStep', {
      tensors: names.map((n) => ({ param: Array.from(init.get(n)!.data), grad: Array.from(golden.get(`grad.${n}`)!.data) })),
      options: { ...settings, step: 1 },
    });
    expectClose([out.state.gradNorm], [golden.get('grad_norm')!.data[0]], NORM_TOL, 'grad_norm');
    names.forEach((n, k) => expectClose(out.params[k], golden.get(`adamw.${n}`)!.data, PARAM_TOL, n));
    // The same step with the moments in one shared buffer (as ParameterStore keeps them): the same bits.
    const shared = await harness.runModule(CASES, 'hostStep', {
      tensors: names.map((n) => ({ param: Array.from(init.get(n)!.data), grad: Array.from(golden.get(`grad.${n}`)!.data) })),
      options: { ...settings, step: 1 },
      sharedMoments: true,
    });
    expect(shared.params).toEqual(out.params);
    expect(shared.m).toEqual(out.m);
    expect(shared.v).toEqual(out.v);
  });

  it('a software adapter takes the vec4 kernels for tensors of a multiple of 4 values (same bits: the cases above), a GPU the scalar ones', async () => {
    for (const sharedMoments of [false, true]) {
      const { software, entryPoints } = await harness.runModule(CASES, 'loneTensorKernels', { sizes: SIZES, sharedMoments });
      // SIZES: 1, 3, 1000, 70000 values.
      const vec4 = (scalar: string) => (software ? [scalar, scalar, `${scalar}4`, `${scalar}4`] : Array(4).fill(scalar));
      expect(entryPoints, `sharedMoments ${sharedMoments}`).toEqual([...vec4('partial_sums'), 'sums_finish', ...vec4('adamw_step')]);
    }
  });

  it('rejects bad calls with a RangeError naming the argument, recording nothing', async () => {
    const { errors, dispatches } = await harness.runModule(CASES, 'badCalls', null);
    expect(dispatches).toBe(0);
    const expected: Record<string, RegExp> = {
      'count too large': /^RangeError: tensors\[0\]\.param: 100 f32 values need 400 bytes, the binding has 256/,
      'count zero': /^RangeError: tensors\[0\]\.param: count must be a positive integer/,
      'step zero': /^RangeError: step must be an integer >= 1/,
      'beta2 one': /^RangeError: adam_beta2 must be in \[0, 1\)/,
      'negative lr': /^RangeError: learning_rate/,
      'negative eps': /^RangeError: adam_epsilon/,
      'negative max_grad_norm': /^RangeError: max_grad_norm/,
      'no tensors': /^RangeError: tensors must list at least one/,
      'bad tensor weight_decay': /^RangeError: tensors\[1\]\.weight_decay/,
      'short m': /^RangeError: tensors\[0\]\.m: 16 f32 values need 64 bytes, the binding has 32/,
      'misaligned grad': /^RangeError: tensors\[0\]\.grad: binding offset 4 is not a multiple/,
      'small step state': /^RangeError: stepState/,
      'grad norm of nothing': /^RangeError: tensors must list at least one gradient tensor/,
      'host length mismatch': /^RangeError: tensors\[0\]\.grad has 3 values, param has 4/,
    };
    expect(Object.keys(errors).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, re] of Object.entries(expected)) expect(errors[name], name).toMatch(re);
  });
});
