// IRT ability as a reward (RRT, seed 000 #63: "online expectation maximization ... from current
// rollout verdicts"; RRT predicts the item parameters with a network from the criterion text, here
// a per-criterion table replaces it, as the digest suggests). The model is irt.ts's 2PL:
//     P(pass_ij | θ_i) = σ(a_j θ_i + c_j),  b_j = −c_j / a_j,  θ ~ N(0, 1),
// on the same 61-point grid over [−6, 6] and with the same weak item priors a ~ N(1, 1), c ~ N(0, 2²).
// Verdicts are binary: pass = score ≥ pass_threshold (a pitfall: not met), as in irtVerdicts;
// unscorable verdicts (null) and weight-0 criteria are skipped (they add nothing to the likelihood).
//
// State carried across steps (IrtOnlineState): per criterion j the slope-intercept (a_j, c_j), and
// the verdicts stored so far in the run as a table of distinct verdict patterns (one character
// per criterion: 1 pass, 0 fail, - unscored) with their counts; rollouts with no scored criterion
// are not stored (they carry nothing). The update with step t's verdicts (incremental EM over
// the run, warm-started from the carried items):
//     1. add the step's rows to the pattern table;
//     2. ITERATIONS_PER_STEP = 3 times, over every stored pattern v with count m_v:
//        E: π_vq ∝ w_q Π_{j scored in v} p_jq^v_j (1 − p_jq)^(1 − v_j),  p_jq = σ(a_j θ_q + c_j)
//           N_jq = Σ_v m_v π_vq [v_j scored],  R_jq = Σ_v m_v π_vq [v_j = 1]
//        M: (a_j, c_j) ← argmax Σ_q [R_jq log p_jq + (N_jq − R_jq) log(1 − p_jq)] + log prior(a_j, c_j)
//           (irt.ts's mStep: Newton on a concave function, from the current (a_j, c_j)).
// Each iteration is one EM iteration of the pooled objective (irt.ts's F over all stored verdicts),
// so it never decreases F, and as steps accumulate the table approaches the marginal-MAP fit of
// all the run's verdicts (fitIrt, or a direct maximisation of irtObjective: the tests check this).
// Every verdict counts once and equally (no forgetting). The E-step's cost grows with the number of
// distinct patterns (at most 3^K, in practice at most the rollouts so far), not with the steps.
// Earlier steps' posteriors are recomputed under the current items rather than frozen: freezing
// them (stepwise EM on summed statistics) left the discriminations biased low after 40 steps.
//
// Reward: each rollout's posterior-mean ability (EAP) on the grid under the items after the step's
// update, rescaled to [0, 1] as Φ(θ̂) (the standard normal CDF: the share of the prior's rollout
// population below θ̂; 0.5 = average). Φ is increasing, so the group's ranking is θ̂'s. A rollout
// with no scored criterion has no reward (null), never 0.
import { DEFAULT_PASS_THRESHOLD } from './aggregate';
import { irtGrid, irtVerdicts, mStep, posteriors, type IrtItem, type Verdict } from './irt';
import type { Rubric } from './schema';

export const ITERATIONS_PER_STEP = 3;

export interface IrtOnlineState {
  /** Steps folded in. */
  steps: number;
  /** Per criterion: slope a and intercept c (b = −c / a). */
  params: { a: number; c: number }[];
  /** The stored verdicts: distinct patterns (1 pass, 0 fail, - unscored; one character per criterion) and their counts. */
  patterns: [pattern: string, count: number][];
}

/** The state before any verdict: every item at its prior mode (a = 1, c = 0), nothing stored. */
export function newIrtState(criteria: number): IrtOnlineState {
  return { steps: 0, params: Array.from({ length: criteria }, () => ({ a: 1, c: 0 })), patterns: [] };
}

/** The items of a state as discrimination and difficulty. */
export function irtStateItems(state: IrtOnlineState): IrtItem[] {
  return state.params.map((p) => ({ a: p.a, b: -p.c / p.a }));
}

const patternOf = (row: readonly Verdict[]) => row.map((x) => (x === null ? '-' : String(x))).join('');
const rowOf = (pattern: string): Verdict[] => [...pattern].map((ch) => (ch === '-' ? null : ch === '1' ? 1 : 0));

/** The expected counts N, R of the stored patterns under items `params` (the E-step above). */
export function irtExpectedCounts(state: Pick<IrtOnlineState, 'patterns'>, params: readonly { a: number; c: number }[]): { n: number[][]; r: number[][] } {
  const { theta, weight } = irtGrid();
  const K = params.length;
  const Q = theta.length;
  const rows = state.patterns.map(([p]) => rowOf(p));
  const { post } = posteriors(rows, params, theta, weight);
  const n = Array.from({ length: K }, () => new Array<number>(Q).fill(0));
  const r = Array.from({ length: K }, () => new Array<number>(Q).fill(0));
  rows.forEach((row, i) => {
    const m = state.patterns[i][1];
    row.forEach((x, j) => {
      if (x === null) return;
      for (let q = 0; q < Q; q++) {
        n[j][q] += m * post[i][q];
        if (x === 1) r[j][q] += m * post[i][q];
      }
    });
  });
  return { n, r };
}

/** One online EM update with a step's verdicts (rows: rollouts; see the header). Pure: returns a new state. */
export function irtOnlineUpdate(state: IrtOnlineState, verdicts: readonly (readonly Verdict[])[], iterations = ITERATIONS_PER_STEP): IrtOnlineState {
  const K = state.params.length;
  verdicts.forEach((row, i) => {
    if (row.length !== K) throw new RangeError(`rollout ${i} has ${row.length} verdicts for ${K} criteria`);
  });
  if (!Number.isInteger(iterations) || iterations < 1) throw new RangeError(`iterations must be an integer >= 1, got ${iterations}`);
  const table = new Map(state.patterns);
  for (const row of verdicts) {
    if (!row.some((x) => x !== null)) continue;
    const key = patternOf(row);
    table.set(key, (table.get(key) ?? 0) + 1);
  }
  const patterns = [...table.entries()];
  const { theta } = irtGrid();
  let params = state.params.map((p) => ({ ...p }));
  for (let it = 0; it < iterations && patterns.length > 0; it++) {
    const { n, r } = irtExpectedCounts({ patterns }, params);
    params = params.map((p, j) => mStep(theta, n[j], r[j], p));
  }
  return { steps: state.steps + 1, params, patterns };
}

/** Posterior-mean ability (EAP) of one verdict row under the state's items; null when nothing is scored. */
export function irtEap(state: IrtOnlineState, row: readonly Verdict[]): number | null {
  if (!row.some((x) => x !== null)) return null;
  const { theta, weight } = irtGrid();
  const { post } = posteriors([row], state.params, theta, weight);
  return post[0].reduce((s, v, q) => s + v * theta[q], 0);
}

/**
 * Standard normal CDF Φ(x) to about 1e-15 absolute (Marsaglia 2004, "Evaluating the normal
 * distribution": Φ(x) = 1/2 + φ(x)(x + x³/3 + x⁵/(3·5) + …)); |x| > 8 is 0 or 1 to double precision.
 */
export function normalCdf(x: number): number {
  if (x < -8) return 0;
  if (x > 8) return 1;
  let term = x;
  let sum = x;
  const x2 = x * x;
  for (let k = 3; Math.abs(term) > 1e-17 * Math.abs(sum) || k < 5; k += 2) {
    term *= x2 / k;
    sum += term;
  }
  return 0.5 + sum * Math.exp(-0.5 * x2 - 0.91893853320467274178);
}

/** The reward of an ability: Φ(θ̂) in [0, 1] (see the header); null stays null. */
export function irtRewardOf(ability: number | null): number | null {
  return ability === null ? null : normalCdf(ability);
}

/** The run's verdicts for a rubric: irtVerdicts at the pass threshold. */
function verdictsOf(rubric: Rubric, scores: readonly (readonly (number | null)[])[], threshold: number): Verdict[][] {
  return irtVerdicts(rubric, scores, threshold);
}

/** The trainer's once-per-step update: folds the whole batch's verdicts into the state (null = a fresh state). */
export function irtRubricUpdate(rubric: Rubric, state: IrtOnlineState | null | undefined, batchScores: readonly (readonly (number | null)[])[], threshold = DEFAULT_PASS_THRESHOLD): IrtOnlineState {
  const current = state ?? newIrtState(rubric.criteria.length);
  if (current.params.length !== rubric.criteria.length) {
    throw new RangeError(`the IRT state has ${current.params.length} criteria, the rubric ${rubric.criteria.length}`);
  }
  return irtOnlineUpdate(current, verdictsOf(rubric, batchScores, threshold));
}

/** Rewards Φ(EAP θ̂) of rollouts under the state's items (no update). */
export function irtRubricRewards(rubric: Rubric, state: IrtOnlineState, scores: readonly (readonly (number | null)[])[], threshold = DEFAULT_PASS_THRESHOLD): (number | null)[] {
  return verdictsOf(rubric, scores, threshold).map((row) => irtRewardOf(irtEap(state, row)));
}
