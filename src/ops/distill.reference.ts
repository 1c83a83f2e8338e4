// Float64 reference twin of shaders/distill.wgsl: per-token generalized JSD / KL between teacher
// and student next-token distributions (TRL's `generalized_jsd_loss`), and its gradient with
// respect to the student logits. Plain loops over sorted supports, written for clarity; the
// tests compare the WGSL kernel against it. Conventions (the kernel's): 0 log 0 = 0; mass on one
// side where the other is -inf makes the divergence +inf; a row with a NaN or +inf logit, an
// overflowing logit / temperature, or no unmasked student or teacher entry on the support is NaN.

export interface DistillProblem {
  /** Row-major [rows, vocab]; -Infinity marks a masked vocabulary entry. */
  student: ArrayLike<number>;
  teacher: ArrayLike<number>;
  rows: number;
  vocab: number;
  /** 0: KL(teacher || student); 1: KL(student || teacher); otherwise the generalized JSD. */
  beta: number;
  temperature: number;
  /** Renormalise both distributions on the teacher's top K (ties to the lower id); null: whole vocabulary. */
  topK: number | null;
  /** Token ids never in the top-K support (special tokens). */
  excludedIds?: ArrayLike<number>;
  /** Per row, 0 = masked token (loss 0, no gradient); default all 1. */
  mask?: ArrayLike<number>;
  /** Per row loss weight; default all 1. */
  weights?: ArrayLike<number>;
}

export interface DistillResult {
  /** weight * divergence, 0 on masked tokens. */
  loss: Float64Array;
  /** The unweighted divergence of every row, masked or not. */
  divergence: Float64Array;
  /** Mean of `loss` over unmasked tokens; 0 when every token is masked. */
  meanLoss: number;
}

export type DistillMode = 'forward_kl' | 'reverse_kl' | 'jsd';

export function distillMode(beta: number): DistillMode {
  return beta === 0 ? 'forward_kl' : beta === 1 ? 'reverse_kl' : 'jsd';
}

/** Ids of the support of row r, ascending. */
export function distillSupport(p: DistillProblem, r: number): number[] {
  const ids = Array.from({ length: p.vocab }, (_, i) => i);
  if (p.topK === null) return ids;
  const excluded = new Set(Array.from(p.excludedIds ?? []));
  const t = (i: number) => p.teacher[r * p.vocab + i];
  const eligible = ids.filter((i) => t(i) !== -Infinity && !Number.isNaN(t(i)) && !excluded.has(i));
  eligible.sort((x, y) => t(y) - t(x) || x - y);
  return eligible.slice(0, p.topK).sort((x, y) => x - y);
}

interface RowTerms {
  support: number[];
  /** log p and log q on the support (-Infinity where masked). */
  a: number[];
  b: number[];
  /** log m (jsd only). */
  logM: number[];
  divergence: number;
  klStudentMixture: number;
  poisoned: boolean;
}

function logSumExp(values: number[]): number {
  let max = -Infinity; // a loop: spreading 151,936 values overflows the call stack
  for (const v of values) if (v > max) max = v;
  if (max === -Infinity) return NaN; // nothing unmasked: undefined
  let s = 0;
  for (const v of values) if (v !== -Infinity) s += Math.exp(v - max);
  return max + Math.log(s);
}

function rowTerms(p: DistillProblem, r: number): RowTerms {
  const invT = Math.fround(1 / p.temperature);
  let poisoned = false;
  for (let i = 0; i < p.vocab; i++) {
    for (const raw of [p.student[r * p.vocab + i], p.teacher[r * p.vocab + i]]) {
      if (raw !== -Infinity && !Number.isFinite(Math.fround(raw * invT))) poisoned = true;
    }
  }
  const support = distillSupport(p, r);
  const zs = support.map((i) => p.student[r * p.vocab + i] / p.temperature);
  const zt = support.map((i) => p.teacher[r * p.vocab + i] / p.temperature);
  const ls = logSumExp(zs);
  const lt = logSumExp(zt);
  if (poisoned || Number.isNaN(ls) || Number.isNaN(lt)) {
    return { support, a: [], b: [], logM: [], divergence: NaN, klStudentMixture: NaN, poisoned: true };
  }
  const a = zs.map((z) => z - ls);
  const b = zt.map((z) => z - lt);
  const beta = p.beta;
  const mode = distillMode(beta);
  // KL(x || y) over the support with 0 log 0 = 0 and x > 0 where y = 0 giving +inf.
  const kl = (x: number[], y: number[]) => {
    let s = 0;
    x.forEach((lx, k) => {
      if (lx === -Infinity) return;
      s += y[k] === -Infinity ? Infinity : Math.exp(lx) * (lx - y[k]);
    });
    return s;
  };
  if (mode === 'forward_kl') return { support, a, b, logM: [], divergence: kl(b, a), klStudentMixture: 0, poisoned };
  if (mode === 'reverse_kl') return { support, a, b, logM: [], divergence: kl(a, b), klStudentMixture: 0, poisoned };
  // TRL: logsumexp([log p + log(1 - beta), log q + log beta]).
  const logM = a.map((x, k) => logSumExp([x + Math.log(1 - beta), b[k] + Math.log(beta)]));
  const klS = kl(a, logM);
  return { support, a, b, logM, divergence: beta * kl(b, logM) + (1 - beta) * klS, klStudentMixture: klS, poisoned };
}

const maskOf = (p: DistillProblem, r: number) => (p.mask ? p.mask[r] : 1);
const weightOf = (p: DistillProblem, r: number) => (maskOf(p, r) === 0 ? 0 : p.weights ? p.weights[r] : 1);

export function distillForwardRef(p: DistillProblem): DistillResult {
  const loss = new Float64Array(p.rows);
  const divergence = new Float64Array(p.rows);
  let sum = 0;
  let count = 0;
  for (let r = 0; r < p.rows; r++) {
    divergence[r] = rowTerms(p, r).divergence;
    const w = weightOf(p, r);
    loss[r] = w === 0 ? 0 : w * divergence[r];
    if (maskOf(p, r) !== 0) {
      sum += loss[r];
      count++;
    }
  }
  return { loss, divergence, meanLoss: count === 0 ? 0 : sum / count };
}

/** Gradient of sum_r gradLoss[r] * loss[r] with respect to the raw student logits. */
export function distillBackwardRef(p: DistillProblem, gradLoss: ArrayLike<number>): Float64Array {
  const grad = new Float64Array(p.rows * p.vocab);
  const mode = distillMode(p.beta);
  for (let r = 0; r < p.rows; r++) {
    const c = gradLoss[r] * weightOf(p, r);
    if (c === 0) continue;
    const t = rowTerms(p, r);
    const undefinedRow = t.poisoned || t.divergence === Infinity;
    t.support.forEach((i, k) => {
      if (p.student[r * p.vocab + i] === -Infinity) return;
      if (undefinedRow) {
        grad[r * p.vocab + i] = NaN;
        return;
      }
      const prob = Math.exp(t.a[k]);
      let g: number;
      if (mode === 'forward_kl') g = prob - Math.exp(t.b[k]);
      else if (mode === 'reverse_kl') g = prob * (t.a[k] - t.b[k] - t.divergence);
      else g = (1 - p.beta) * prob * (t.a[k] - t.logM[k] - t.klStudentMixture);
      grad[r * p.vocab + i] = (c * g) / p.temperature;
    });
  }
  return grad;
}
