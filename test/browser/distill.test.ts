// The WGSL distillation kernel against its float64 twin, run in headless Chromium (WebGPU).
// Tolerances: f32 kernel vs f64 twin. Per-token loss atol 2e-5 + rtol 1e-4 (the divergence is a
// sum of V terms); gradients atol 1e-6 + rtol 1e-4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import { distillBackwardRef, distillForwardRef, distillSupport, type DistillProblem } from '../../src/ops/distill.reference';
import { expectClose } from '../helpers/compare';
import { chunk, normal, rng } from '../helpers/random';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const TOL = { atol: 2e-5, rtol: 1e-4 };
const GRAD_TOL = { atol: 1e-6, rtol: 1e-4 };

/** f32-rounded inputs, so kernel and twin see the same numbers. */
function f32(values: number[]): number[] {
  return Array.from(new Float32Array(values));
}

interface Case {
  seed: number;
  rows: number;
  vocab: number;
  beta: number;
  temperature: number;
  topK?: number;
  special?: number[];
  /** Fraction of logits set to -inf in the student / teacher. */
  studentMasked?: number;
  teacherMasked?: number;
  /** Round teacher logits to this step, so the top-K selection meets ties. */
  teacherStep?: number;
}

async function compare(c: Case) {
  const rand = rng(c.seed);
  const n = c.rows * c.vocab;
  let teacher = f32(normal(rand, n, 3));
  if (c.teacherStep) teacher = teacher.map((x) => Math.round(x / c.teacherStep!) * c.teacherStep!);
  const student = f32(normal(rand, n, 3));
  // Masks shared by both sides keep the divergence finite; one-sided masks are where each mode allows them.
  for (let i = 0; i < n; i++) {
    const u = rand();
    if (u < (c.studentMasked ?? 0)) student[i] = -Infinity;
    if (u < (c.teacherMasked ?? 0)) teacher[i] = -Infinity;
  }
  const mask = Array.from({ length: c.rows }, (_, r) => (r % 3 === 2 ? 0 : 1));
  const weights = f32(Array.from({ length: c.rows }, () => 0.5 + rand()));
  const gradLoss = f32(normal(rand, c.rows));
  const out = await harness.run('distill', {
    student_logits: chunk(student, c.vocab),
    teacher_logits: chunk(teacher, c.vocab),
    beta: c.beta,
    temperature: c.temperature,
    top_k: c.topK ?? null,
    ...(c.special ? { special_token_ids: c.special } : {}),
    mask,
    weights,
    grad_loss: gradLoss,
  });
  const problem: DistillProblem = {
    student,
    teacher,
    rows: c.rows,
    vocab: c.vocab,
    beta: c.beta,
    temperature: c.temperature,
    topK: c.topK ?? null,
    excludedIds: c.special,
    mask,
    weights,
  };
  const ref = distillForwardRef(problem);
  expectClose(out.loss, ref.loss, TOL, 'loss');
  expect(out.mean_loss).toBeCloseTo(ref.meanLoss, 4);
  const grad = out.grad_student_logits.flat();
  expectClose(grad, distillBackwardRef(problem, gradLoss), GRAD_TOL, 'grad_student_logits');
  return { out, ref, problem, grad };
}

describe('distill kernel (WGSL) vs float64 twin', () => {
  for (const c of [
    { seed: 1, rows: 4, vocab: 2, beta: 0, temperature: 1 },
    { seed: 2, rows: 5, vocab: 33, beta: 1, temperature: 0.7 },
    { seed: 3, rows: 3, vocab: 257, beta: 0.3, temperature: 1.3 },
    { seed: 4, rows: 6, vocab: 1000, beta: 0.5, temperature: 1, studentMasked: 0.05, teacherMasked: 0.05 },
    { seed: 5, rows: 3, vocab: 300, beta: 0, temperature: 0.9, studentMasked: 0.1, teacherMasked: 0.2 },
    { seed: 6, rows: 3, vocab: 300, beta: 1, temperature: 1.1, studentMasked: 0.2, teacherMasked: 0.1 },
    { seed: 7, rows: 4, vocab: 500, beta: 0.3, temperature: 1, studentMasked: 0.1 },
  ] as Case[]) {
    it(`random logits: seed ${c.seed}, ${c.rows} x V=${c.vocab}, beta ${c.beta}, T ${c.temperature}`, async () => {
      const { ref } = await compare(c);
      // Masked tokens (every third row) give 0, the others a positive divergence.
      ref.loss.forEach((l, r) => (r % 3 === 2 ? expect(l).toBe(0) : expect(l).toBeGreaterThan(0)));
    });
  }

  for (const c of [
    { seed: 8, rows: 3, vocab: 50, beta: 1, temperature: 1, topK: 1 },
    { seed: 9, rows: 4, vocab: 700, beta: 1, temperature: 0.8, topK: 5, teacherStep: 1, special: [0, 3, 17] },
    { seed: 10, rows: 3, vocab: 1000, beta: 0.3, temperature: 1, topK: 64, teacherStep: 0.5, teacherMasked: 0.1 },
    { seed: 11, rows: 2, vocab: 40, beta: 0, temperature: 1, topK: 40, teacherMasked: 0.3 },
  ] as Case[]) {
    it(`top-K ${c.topK}: seed ${c.seed}, ${c.rows} x V=${c.vocab}, beta ${c.beta}, ties ${c.teacherStep ?? 'none'}`, async () => {
      const { grad, problem } = await compare(c);
      // The gradient lives on the support only (ties to the lower id, special ids excluded).
      for (let r = 0; r < c.rows; r += 3) {
        const support = new Set(distillSupport(problem, r));
        const special = new Set(c.special ?? []);
        const eligible = Array.prototype.slice.call(problem.teacher, r * c.vocab, (r + 1) * c.vocab).filter((t: number, i: number) => t !== -Infinity && !special.has(i));
        expect(support.size).toBe(Math.min(c.topK!, eligible.length));
        for (let i = 0; i < c.vocab; i++) if (!support.has(i)) expect(grad[r * c.vocab + i]).toBe(0);
      }
    });
  }

  it('Qwen-sized vocabulary V=151936, JSD and top-256 reverse KL (one row each: SwiftShader runs a row on one core)', async () => {
    await compare({ seed: 12, rows: 1, vocab: 151936, beta: 0.3, temperature: 1.2, teacherMasked: 0.01 });
    await compare({ seed: 13, rows: 1, vocab: 151936, beta: 1, temperature: 1, topK: 256, teacherStep: 0.25, special: [151643, 151645] });
  });

  it('logits offset by +-1e4 give the divergence of the un-offset logits (softmax is shift-invariant)', async () => {
    const vocab = 64;
    const rand = rng(14);
    const s = f32(normal(rand, vocab, 2));
    const t = f32(normal(rand, vocab, 2));
    const run = (student: number[], teacher: number[], beta: number) =>
      harness.run('distill', { student_logits: [student], teacher_logits: [teacher], beta, top_k: 16, grad_loss: [1] });
    for (const beta of [0, 1, 0.3]) {
      const far = await run(f32(s.map((x) => x + 1e4)), f32(t.map((x) => x - 1e4)), beta);
      const near = await run(s, t, beta);
      // One f32 ulp of 1e4 is ~1e-3: the offset logits are the un-offset ones to within that.
      expectClose(far.loss, near.loss, { atol: 5e-3, rtol: 1e-2 }, `beta ${beta} loss`);
      expectClose(far.grad_student_logits[0], near.grad_student_logits[0], { atol: 1e-3, rtol: 1e-2 }, `beta ${beta} grad`);
      expect(near.loss[0]).toBeGreaterThan(0.01);
    }
  });

  it('one-sided -inf: +inf where the other side has mass, NaN for NaN/+inf logits, 0 for masked tokens', async () => {
    const vocab = 5;
    const rows = [
      // [student, teacher, beta]
      [[0.3, -Infinity, 2, 0.1, -1], [1, 0.5, -0.4, 0.2, 0], 0], // teacher mass where the student is -inf: +inf
      [[0.3, 0.5, 2, 0.1, -1], [1, -Infinity, -0.4, 0.2, 0], 1], // student mass where the teacher is -inf: +inf
      [[0.3, -Infinity, 2, 0.1, -1], [1, 0.5, -0.4, 0.2, 0], 1], // reverse KL there is finite
      [[0.3, NaN, 2, 0.1, -1], [1, 0.5, -0.4, 0.2, 0], 0], // NaN: NaN
      [[0.3, 0.5, 2, 0.1, -1], [1, 0.5, Infinity, 0.2, 0], 0.5], // +inf: NaN
      [[0.3, -Infinity, 2, 0.1, -1], [1, 0.5, -0.4, 0.2, 0], 0], // infinite but masked: 0
    ] as const;
    const results = [];
    for (const [r, [s, t, beta]] of rows.entries()) {
      const c = { student: f32([...s]), teacher: f32([...t]), rows: 1, vocab, beta, temperature: 1, topK: null, mask: [r === 5 ? 0 : 1], gradLoss: [1] };
      const out = (await harness.runModule('/test/harness/cases/distill.ts', 'distill', c)) as { loss: number[]; grad: number[] };
      const ref = distillForwardRef(c);
      expectClose(out.loss, ref.loss, TOL, `row ${r} loss`);
      expectClose(out.grad, distillBackwardRef(c, c.gradLoss), GRAD_TOL, `row ${r} grad`);
      results.push(out);
    }
    expect(results.map((o) => o.loss[0])).toEqual([Infinity, Infinity, expect.any(Number), NaN, NaN, 0]);
    expect(Number.isFinite(results[2].loss[0])).toBe(true);
    // An infinite or NaN loss has a NaN gradient on unmasked student entries, 0 on -inf ones.
    expect(results[0].grad).toEqual([NaN, 0, NaN, NaN, NaN]);
    expect(results[5].grad).toEqual([0, 0, 0, 0, 0]);
  });

  it('accepts the JSON spellings of -inf and rejects bad requests naming the field', async () => {
    const out = await harness.run('distill', { student_logits: [[0, '-inf', null]], teacher_logits: [[0, null, '-inf']], beta: 0 });
    expect(out.loss[0]).toBeCloseTo(0, 6);
    const ok = { student_logits: [[0, 1]], teacher_logits: [[1, 0]] };
    await expect(harness.run('distill', { ...ok, teacher_logits: [[1, 0, 2]] })).rejects.toThrow(/teacher_logits: expected 2 columns/);
    await expect(harness.run('distill', { ...ok, beta: 1.5 })).rejects.toThrow(/beta: must be between 0 and 1/);
    await expect(harness.run('distill', { ...ok, top_k: 3 })).rejects.toThrow(/top_k: expected an integer from 1 to the vocabulary size 2/);
    await expect(harness.run('distill', { ...ok, special_token_ids: [0] })).rejects.toThrow(/special_token_ids: only applies with top_k/);
    await expect(harness.run('distill', { ...ok, mask: [0.5] })).rejects.toThrow(/mask\[0\]: expected 0 \(masked\) or 1/);
    await expect(harness.run('distill', { ...ok, grad_loss: [1, 2] })).rejects.toThrow(/grad_loss: expected 1 values/);
  });
});
