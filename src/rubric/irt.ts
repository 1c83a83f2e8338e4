// Item response theory over rubric criteria (RRT, seed 000 #63; the model is standard 2PL IRT,
// the fitting is ours): each rollout i has a latent quality θ_i, each criterion j a
// discrimination a_j and a difficulty b_j, and
//     P(x_ij = 1 | θ_i) = σ(a_j (θ_i − b_j)) = σ(a_j θ_i + c_j),   c_j = −a_j b_j,
// where x_ij = 1 when rollout i passes criterion j (met, or for a pitfall not met).
//
// Fit: marginal maximum a posteriori by EM (Bock–Aitkin). θ ~ N(0, 1) is integrated out on a
// fixed grid of Q = 61 points on [−6, 6] with weights ∝ φ(θ_q) (summing to 1), and the item
// parameters get weak priors a_j ~ N(1, 1), c_j ~ N(0, 2²) (they keep an item that separates the
// rollouts perfectly finite). The objective, maximised over every (a_j, c_j):
//     F = Σ_i log Σ_q w_q Π_{j: x_ij known} p_jq^x_ij (1 − p_jq)^(1 − x_ij)
//         − Σ_j [ (a_j − 1)² / 2 + c_j² / 8 ]
// E-step: each rollout's posterior over the grid. M-step: per item, Newton on the expected
// complete-data log-posterior (a weighted logistic regression in (a, c): concave). EM never
// decreases F; it stops when F changes by < tol or after maxIterations.
// Criteria without both a pass and a fail among the known verdicts carry no information about θ
// and are left out (item null).
//
// Ability: the posterior mean of θ_i (EAP) on the same grid, usable as a reward: it weighs each
// verdict by how strongly that criterion separates rollouts (a_j), where a weighted sum uses
// fixed points. Fisher information a² p (1 − p) says which criteria are most informative at θ.
import { DEFAULT_PASS_THRESHOLD, checkThreshold } from './aggregate';
import type { Rubric } from './schema';

export type Verdict = 0 | 1 | null;

export interface IrtItem {
  /** Discrimination. */
  a: number;
  /** Difficulty: the θ at which P(pass) = 1/2. */
  b: number;
}

export interface IrtFit {
  /** Per criterion; null when it was left out (no pass or no fail among its verdicts). */
  items: (IrtItem | null)[];
  /** Per rollout: posterior mean and standard deviation of θ. */
  abilities: { mean: number; sd: number }[];
  /** The maximised objective F (see the header). */
  objective: number;
  iterations: number;
  converged: boolean;
}

export const IRT_PRIOR = { aMean: 1, aSd: 1, cSd: 2 } as const;
const GRID_POINTS = 61;
const GRID_MAX = 6;

/** The quadrature grid: θ_q and weights w_q ∝ φ(θ_q), Σ w_q = 1. */
export function irtGrid(points = GRID_POINTS, max = GRID_MAX): { theta: number[]; weight: number[] } {
  const theta = Array.from({ length: points }, (_, q) => -max + (2 * max * q) / (points - 1));
  const raw = theta.map((t) => Math.exp(-0.5 * t * t));
  const total = raw.reduce((s, v) => s + v, 0);
  return { theta, weight: raw.map((v) => v / total) };
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));
/** log σ(z) and log(1 − σ(z)) without overflow. */
const logSigmoid = (z: number) => (z >= 0 ? -Math.log1p(Math.exp(-z)) : z - Math.log1p(Math.exp(z)));

/** Per rollout, 1 where it passes a criterion (met; a pitfall: not met), 0 where not, null where unscored or weight 0. */
export function irtVerdicts(rubric: Rubric, scores: readonly (readonly (number | null)[])[], threshold = DEFAULT_PASS_THRESHOLD): Verdict[][] {
  checkThreshold(threshold);
  return scores.map((row, i) => {
    if (row.length !== rubric.criteria.length) throw new RangeError(`rollout ${i} has ${row.length} scores for ${rubric.criteria.length} criteria`);
    return rubric.criteria.map((c, k) => {
      const s = row[k];
      if (s === null || c.weight === 0) return null;
      const met = s >= threshold;
      return (c.weight > 0 ? met : !met) ? 1 : 0;
    });
  });
}

/** Log-prior of one item's (a, c). */
export function itemLogPrior(a: number, c: number): number {
  return -((a - IRT_PRIOR.aMean) ** 2) / (2 * IRT_PRIOR.aSd ** 2) - (c * c) / (2 * IRT_PRIOR.cSd ** 2);
}

/**
 * The objective F for slope-intercept parameters (a_j, c_j) of the included items (others
 * ignored). Exported for tests (the direct fit maximises this same function).
 */
export function irtObjective(verdicts: readonly (readonly Verdict[])[], params: readonly ({ a: number; c: number } | null)[]): number {
  const { theta, weight } = irtGrid();
  const { logMarginal } = posteriors(verdicts, params, theta, weight);
  return logMarginal + params.reduce((s, p) => s + (p ? itemLogPrior(p.a, p.c) : 0), 0);
}

/** Per rollout, the posterior over the grid given the items (normalised), and the summed log marginal. Exported for the online fit (irtOnline.ts). */
export function posteriors(verdicts: readonly (readonly Verdict[])[], params: readonly ({ a: number; c: number } | null)[], theta: number[], weight: number[]) {
  // log p_jq and log(1 − p_jq) once per item and grid point; a row's likelihood is then sums.
  const logPass = params.map((p) => (p ? theta.map((t) => logSigmoid(p.a * t + p.c)) : null));
  const logFail = params.map((p) => (p ? theta.map((t) => logSigmoid(-(p.a * t + p.c))) : null));
  const logWeight = weight.map(Math.log);
  const Q = theta.length;
  let logMarginal = 0;
  const post = verdicts.map((row) => {
    const logs = logWeight.slice();
    row.forEach((x, j) => {
      const table = x === null ? null : x === 1 ? logPass[j] : logFail[j];
      if (!table) return;
      for (let q = 0; q < Q; q++) logs[q] += table[q];
    });
    let m = -Infinity;
    for (let q = 0; q < Q; q++) if (logs[q] > m) m = logs[q];
    let z = 0;
    for (let q = 0; q < Q; q++) z += logs[q] = Math.exp(logs[q] - m);
    logMarginal += m + Math.log(z);
    for (let q = 0; q < Q; q++) logs[q] /= z;
    return logs;
  });
  return { post, logMarginal };
}

/** M-step for one item: Newton on Σ_q [r_q log p_q + (n_q − r_q) log(1 − p_q)] + log prior. Exported for the online fit (irtOnline.ts). */
export function mStep(theta: number[], n: number[], r: number[], start: { a: number; c: number }): { a: number; c: number } {
  let { a, c } = start;
  const va = IRT_PRIOR.aSd ** 2;
  const vc = IRT_PRIOR.cSd ** 2;
  for (let it = 0; it < 50; it++) {
    let ga = -(a - IRT_PRIOR.aMean) / va;
    let gc = -c / vc;
    let haa = -1 / va;
    let hac = 0;
    let hcc = -1 / vc;
    theta.forEach((t, q) => {
      if (n[q] === 0) return;
      const p = sigmoid(a * t + c);
      const resid = r[q] - n[q] * p;
      const w = n[q] * p * (1 - p);
      ga += resid * t;
      gc += resid;
      haa -= w * t * t;
      hac -= w * t;
      hcc -= w;
    });
    const det = haa * hcc - hac * hac;
    // Newton step −H⁻¹g (H is negative definite: the prior terms alone make it so).
    let da = -(hcc * ga - hac * gc) / det;
    let dc = -(-hac * ga + haa * gc) / det;
    const len = Math.hypot(da, dc);
    if (len > 1) {
      da /= len;
      dc /= len;
    }
    a += da;
    c += dc;
    if (len < 1e-12) break;
  }
  return { a, c };
}

export interface IrtOptions {
  maxIterations?: number;
  /** Stop when the objective changes by less than this. Default 1e-10. */
  tol?: number;
}

/** Fits the 2PL model to verdicts (rows: rollouts, columns: criteria) by EM; see the header. */
export function fitIrt(verdicts: readonly (readonly Verdict[])[], options: IrtOptions = {}): IrtFit {
  const maxIterations = options.maxIterations ?? 500;
  const tol = options.tol ?? 1e-10;
  if (verdicts.length === 0) throw new RangeError('no rollouts to fit');
  const K = verdicts[0].length;
  verdicts.forEach((row, i) => {
    if (row.length !== K) throw new RangeError(`rollout ${i} has ${row.length} verdicts, rollout 0 has ${K}`);
  });
  const included = Array.from({ length: K }, (_, j) => {
    const xs = verdicts.map((row) => row[j]).filter((x) => x !== null);
    return xs.includes(1) && xs.includes(0);
  });
  if (!included.some(Boolean)) throw new RangeError('no criterion has both passing and failing rollouts: there is nothing to fit');

  const { theta, weight } = irtGrid();
  let params: ({ a: number; c: number } | null)[] = included.map((inc) => (inc ? { a: 1, c: 0 } : null));
  let previous = -Infinity;
  let objective = -Infinity;
  let iterations = 0;
  let converged = false;
  for (; iterations < maxIterations; iterations++) {
    const { post, logMarginal } = posteriors(verdicts, params, theta, weight);
    objective = logMarginal + params.reduce((s, p) => s + (p ? itemLogPrior(p.a, p.c) : 0), 0);
    if (Math.abs(objective - previous) < tol) {
      converged = true;
      break;
    }
    previous = objective;
    params = params.map((p, j) => {
      if (!p) return null;
      const n = new Array<number>(theta.length).fill(0);
      const r = new Array<number>(theta.length).fill(0);
      verdicts.forEach((row, i) => {
        const x = row[j];
        if (x === null) return;
        const pq = post[i];
        for (let q = 0; q < pq.length; q++) {
          n[q] += pq[q];
          if (x === 1) r[q] += pq[q];
        }
      });
      return mStep(theta, n, r, p);
    });
  }
  const { post } = posteriors(verdicts, params, theta, weight);
  return {
    items: params.map((p) => (p ? { a: p.a, b: -p.c / p.a } : null)),
    abilities: post.map((pq) => {
      const mean = pq.reduce((s, v, q) => s + v * theta[q], 0);
      const variance = pq.reduce((s, v, q) => s + v * (theta[q] - mean) ** 2, 0);
      return { mean, sd: Math.sqrt(variance) };
    }),
    objective,
    iterations,
    converged,
  };
}

/** Posterior-mean ability (EAP) of one verdict row under fitted items: the IRT reward of a rollout. */
export function irtAbility(items: readonly (IrtItem | null)[], row: readonly Verdict[]): number {
  const { theta, weight } = irtGrid();
  const params = items.map((it) => (it ? { a: it.a, c: -it.a * it.b } : null));
  const { post } = posteriors([row], params, theta, weight);
  return post[0].reduce((s, v, q) => s + v * theta[q], 0);
}

/** Fisher information of a criterion at θ: a² p (1 − p) (the criterion to judge first has the most). */
export function itemInformation(item: IrtItem, theta: number): number {
  const p = sigmoid(item.a * (theta - item.b));
  return item.a * item.a * p * (1 - p);
}

/**
 * Fisher-information criterion selection (RRT's adaptive judging): the `budget` fitted criteria
 * most informative at ability θ, most informative first (ties: rubric order). Judging only these
 * for a rollout whose θ is about known spends the judge where a verdict moves θ most.
 */
export function informativeCriteria(items: readonly (IrtItem | null)[], theta: number, budget: number): number[] {
  if (!Number.isInteger(budget) || budget < 0) throw new RangeError(`budget must be an integer >= 0, got ${budget}`);
  return items
    .flatMap((it, j) => (it ? [{ j, info: itemInformation(it, theta) }] : []))
    .sort((x, y) => y.info - x.info || x.j - y.j)
    .slice(0, budget)
    .map((x) => x.j);
}
