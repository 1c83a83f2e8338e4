// Judge meta-evaluation (issue 13; seed 000 §2F, #5/#28/#90): how far a judge's verdicts can be
// trusted, measured on verdicts the page already has. Pure functions over plain data:
//
//   agreement with labels   per criterion, judge verdict (score >= threshold) vs a person's
//                           pass/fail label: agreement = (TP + TN) / n; Cohen's κ =
//                           (p_o − p_e) / (1 − p_e), p_e = (p_judge·p_label + (1 − p_judge)(1 − p_label))
//                           (null when p_e = 1: both constant); false-pass rate FP / (FP + TN)
//   leniency                per criterion, on items both judges scored: pass rate of the judge
//                           minus pass rate of a reference judge (> 0: more lenient), and the
//                           share of the reference's fails the judge passes
//   verbosity bias          pass rate by response-length bin (equal-count bins over the lengths
//                           seen) and Spearman's ρ of length vs score (Pearson on average ranks)
//   judge load              per step: model-judge requests (judge_question verdicts, the
//                           vacuous-credit probe's re-judgements), seconds, requests per second
//   position bias           the pairwise mode's comparisons (src/rubric/pairwise.ts), both orders
//                           of every pair: how often the first slot wins, and a per-group histogram
// Unscored verdicts (null) are left out of every rate, and counted.
import { DEFAULT_PASS_THRESHOLD } from './aggregate';
import type { CriterionResult } from './judge';
import type { JudgeScope } from './judgeDesign';
import { HOLISTIC_ID } from './holistic';
import { pearson } from './measure';
import { isRuleCriterion, type Rubric } from './schema';

const scoreOf = (r: CriterionResult | undefined): number | null => (r?.status === 'ok' ? r.score : null);

// ---- agreement with labels ----

export interface LabelledVerdict {
  criterion_id: string;
  /** The judge's score in [0, 1]; null when it could not score. */
  score: number | null;
  /** A person's verdict: the criterion is met. */
  label: boolean;
}

export interface LabelAgreement {
  criterion_id: string;
  /** Labelled verdicts the judge scored. */
  n: number;
  unscored: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  agreement: number | null;
  kappa: number | null;
  /** Of the items the person failed, the share the judge passed (leniency against the labels). */
  false_pass_rate: number | null;
}

/** Cohen's κ of two binary raters from their 2×2 table; null when chance agreement is 1 or n = 0. */
export function cohenKappa(tp: number, fp: number, fn: number, tn: number): number | null {
  const n = tp + fp + fn + tn;
  if (n === 0) return null;
  const po = (tp + tn) / n;
  const pJudge = (tp + fp) / n;
  const pLabel = (tp + fn) / n;
  const pe = pJudge * pLabel + (1 - pJudge) * (1 - pLabel);
  return pe >= 1 ? null : (po - pe) / (1 - pe);
}

/** Per criterion (first-seen order), the judge against the labels. */
export function labelAgreement(verdicts: readonly LabelledVerdict[], threshold = DEFAULT_PASS_THRESHOLD): LabelAgreement[] {
  const by = new Map<string, LabelAgreement>();
  for (const v of verdicts) {
    let a = by.get(v.criterion_id);
    if (!a) by.set(v.criterion_id, (a = { criterion_id: v.criterion_id, n: 0, unscored: 0, tp: 0, fp: 0, fn: 0, tn: 0, agreement: null, kappa: null, false_pass_rate: null }));
    if (v.score === null) {
      a.unscored++;
      continue;
    }
    a.n++;
    const pass = v.score >= threshold;
    if (pass && v.label) a.tp++;
    else if (pass) a.fp++;
    else if (v.label) a.fn++;
    else a.tn++;
  }
  return [...by.values()].map((a) => ({
    ...a,
    agreement: a.n ? (a.tp + a.tn) / a.n : null,
    kappa: cohenKappa(a.tp, a.fp, a.fn, a.tn),
    false_pass_rate: a.fp + a.tn ? a.fp / (a.fp + a.tn) : null,
  }));
}

// ---- leniency against a reference judge ----

export interface Leniency {
  criterion_id: string;
  /** Items both judges scored. */
  n: number;
  judge_pass_rate: number | null;
  reference_pass_rate: number | null;
  /** judge_pass_rate − reference_pass_rate: > 0 the judge is more lenient. */
  leniency: number | null;
  /** Of the reference's fails, the share the judge passes. */
  passes_reference_fails: number | null;
}

/**
 * Per criterion of the rubric, the judge's verdicts against a reference judge's on the same
 * rollouts (`judge[i]` and `reference[i]` are one rollout's results, matched by criterion id).
 */
export function leniency(rubric: Rubric, judge: readonly (readonly CriterionResult[])[], reference: readonly (readonly CriterionResult[])[], threshold = DEFAULT_PASS_THRESHOLD): Leniency[] {
  if (judge.length !== reference.length) throw new RangeError(`leniency: ${judge.length} rollouts judged but ${reference.length} by the reference`);
  return rubric.criteria.map((c) => {
    let n = 0;
    let jp = 0;
    let rp = 0;
    let rFails = 0;
    let passedFails = 0;
    judge.forEach((row, i) => {
      const s = scoreOf(row.find((r) => r.criterion_id === c.id));
      const t = scoreOf(reference[i].find((r) => r.criterion_id === c.id));
      if (s === null || t === null) return;
      n++;
      const jPass = s >= threshold;
      const rPass = t >= threshold;
      if (jPass) jp++;
      if (rPass) rp++;
      if (!rPass) {
        rFails++;
        if (jPass) passedFails++;
      }
    });
    return {
      criterion_id: c.id,
      n,
      judge_pass_rate: n ? jp / n : null,
      reference_pass_rate: n ? rp / n : null,
      leniency: n ? (jp - rp) / n : null,
      passes_reference_fails: rFails ? passedFails / rFails : null,
    };
  });
}

// ---- verbosity bias ----

export interface LengthScore {
  /** The response's length (characters, words or tokens: the caller's unit). */
  length: number;
  score: number | null;
}

export interface LengthBin {
  /** Shortest and longest length in the bin. */
  min: number;
  max: number;
  n: number;
  pass_rate: number;
  mean_score: number;
}

export interface VerbosityBias {
  bins: LengthBin[];
  /** Spearman's ρ of length vs score over the scored items; null when fewer than 2 or either is constant. */
  spearman: number | null;
  n: number;
  unscored: number;
}

/** Average ranks (1-based) of `xs`, ties sharing their mean rank. */
export function averageRanks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(xs.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return ranks;
}

/**
 * Pass rate by length: the scored items sorted by length and cut into `bins` bins of (nearly)
 * equal count; items of the same length stay in one bin (so there may be fewer bins).
 */
export function verbosityBias(items: readonly LengthScore[], bins = 4, threshold = DEFAULT_PASS_THRESHOLD): VerbosityBias {
  if (!Number.isInteger(bins) || bins < 1) throw new RangeError(`bins must be a positive integer, got ${bins}`);
  const scored = items.filter((x): x is { length: number; score: number } => x.score !== null).sort((a, b) => a.length - b.length);
  const out: LengthBin[] = [];
  let start = 0;
  for (let b = 0; b < bins && start < scored.length; b++) {
    let end = Math.max(start + 1, Math.round(((b + 1) * scored.length) / bins));
    while (end < scored.length && scored[end].length === scored[end - 1].length) end++;
    const part = scored.slice(start, end);
    out.push({
      min: part[0].length,
      max: part[part.length - 1].length,
      n: part.length,
      pass_rate: part.filter((x) => x.score >= threshold).length / part.length,
      mean_score: part.reduce((s, x) => s + x.score, 0) / part.length,
    });
    start = end;
  }
  const spearman = scored.length >= 2 ? pearson(averageRanks(scored.map((x) => x.length)), averageRanks(scored.map((x) => x.score))) : null;
  return { bins: out, spearman, n: scored.length, unscored: items.length - scored.length };
}

// ---- judge load per step ----

export interface JudgeLoad {
  step: number;
  /** Requests the model judge answered or the cache served: judge_question verdicts, plus probe re-judgements. */
  model_requests: number;
  judge_seconds: number;
  /** model_requests / judge_seconds; null when no time was measured. */
  requests_per_second: number | null;
  /**
   * Judge calls (prompts) behind those requests: one per request per criterion; in checklist
   * scope (src/rubric/judgeDesign.ts) one per response for its criteria, the holistic judge's and
   * each probe re-judgement one of their own.
   */
  judge_calls: number;
}

/** The ids of the rubric's judge_question criteria (the ones a model judge answers). */
export function questionIds(rubric: Pick<Rubric, 'criteria'>): Set<string> {
  return new Set(rubric.criteria.filter((c) => !isRuleCriterion(c)).map((c) => c.id));
}

/** One step's judge load from its rollouts' results and its judge_seconds; `questions`: questionIds(rubric). */
export function judgeLoad(
  questions: ReadonlySet<string>,
  step: number,
  results: readonly (readonly (CriterionResult & { probe?: string })[])[],
  judgeSeconds: number,
  scope: JudgeScope = 'per_criterion',
): JudgeLoad {
  let requests = 0;
  let calls = 0;
  for (const row of results) {
    let listed = 0;
    for (const r of row) {
      if (!questions.has(r.criterion_id) || r.status === 'needs_model') continue;
      requests += r.probe !== undefined ? 2 : 1;
      calls += r.probe !== undefined ? 1 : 0;
      if (scope === 'checklist' && r.criterion_id !== HOLISTIC_ID) listed++;
      else calls++;
    }
    if (listed > 0) calls++;
  }
  return { step, model_requests: requests, judge_seconds: judgeSeconds, requests_per_second: judgeSeconds > 0 ? requests / judgeSeconds : null, judge_calls: calls };
}

// ---- position bias (the pairwise mode, src/rubric/pairwise.ts) ----
//
// Over ordered comparisons (every pair of a group asked in both orders):
//   first_win_rate = first wins / comparisons
//   index          = (first wins − second wins) / comparisons, in [−1, 1]
// An order-free judge gives index 0 (a pair's two orders cancel). A judge that hands the first
// slot the win with chance s gives s in expectation, on every pair: a pair with a better side
// wins first once for sure (better side first) and once with chance s, else second: (1 + s − (1 − s)) / 2
// = s; a tied pair gives first with chance s in each order, else a tie: s. A second-slot bias gives −s.
// The histogram counts groups by their own index in five bins over [−1, 1] (the middle one holds 0).

export interface PositionBias {
  criterion_id: string;
  /** Ordered comparisons. */
  n: number;
  first_wins: number;
  second_wins: number;
  ties: number;
  first_win_rate: number | null;
  index: number | null;
  /** Groups by their index; `min` inclusive, `max` exclusive except the last bin's. */
  histogram: { min: number; max: number; groups: number }[];
}

export const POSITION_BINS = 5;

/** Per criterion (first-seen order), the position bias of pairwise comparisons. */
export function positionBias(comparisons: readonly { criterion_id: string; group: string; winner: 'first' | 'second' | 'tie' }[]): PositionBias[] {
  const by = new Map<string, Map<string, { first: number; second: number; ties: number }>>();
  for (const c of comparisons) {
    let groups = by.get(c.criterion_id);
    if (!groups) by.set(c.criterion_id, (groups = new Map()));
    let g = groups.get(c.group);
    if (!g) groups.set(c.group, (g = { first: 0, second: 0, ties: 0 }));
    if (c.winner === 'first') g.first++;
    else if (c.winner === 'second') g.second++;
    else g.ties++;
  }
  const width = 2 / POSITION_BINS;
  return [...by.entries()].map(([criterion_id, groups]) => {
    const histogram = Array.from({ length: POSITION_BINS }, (_, k) => ({ min: -1 + k * width, max: -1 + (k + 1) * width, groups: 0 }));
    let first = 0;
    let second = 0;
    let ties = 0;
    for (const g of groups.values()) {
      first += g.first;
      second += g.second;
      ties += g.ties;
      const index = (g.first - g.second) / (g.first + g.second + g.ties);
      histogram[Math.min(POSITION_BINS - 1, Math.floor((index + 1) / width + 1e-9))].groups++;
    }
    const n = first + second + ties;
    return { criterion_id, n, first_wins: first, second_wins: second, ties, first_win_rate: n ? first / n : null, index: n ? (first - second) / n : null, histogram };
  });
}
