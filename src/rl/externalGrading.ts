// Self-judging with an externally graded fraction (issue 13; seed 000 #76, Self-Rewarding
// Rubric-Based RL: the policy grades its own rollouts, and "a small amount of teacher-graded data
// further enhances performance"). When judge_external_fraction > 0, a seeded, deterministic share
// of each step's groups is also sent to the external judge (config judge_external: a remote
// endpoint, another model on our engine, or a zero-shot classifier), and on those rollouts the
// external verdicts replace the run's own judge's: the reward there is anchored to the external
// judge. The same rollouts give, per step, how far the run's judge can be trusted: agreement with
// the external judge per criterion, its leniency, and the external calls.
//
// The rule, exactly (so other implementations can reproduce it):
//   groups  = rollouts / num_generations;  m = round(fraction · groups)  (config refuses m = 0)
//   group g draws u_g = mulberry32(fnv1a32(`external:${seed}:${step}:${g}`))(); the m groups of
//     smallest u_g (ties: lower g) are graded, every rollout of each. Whole groups, never part of
//     one: GRPO compares rollouts within a group, so a group judged half by a lenient self-judge
//     and half by a strict external one would rank answers by judge, not by content.
//   The external judge answers the judge-question criteria the run's judge answered on those
//     rollouts (a rule criterion is a rule's, whoever judges), one request per criterion, in its
//     own default way: judge_verdict, judge_scope, evidence-required credit and the bias sandbox
//     are the run's own judge's (the bias is laid over the self verdicts before this, so the
//     external verdicts are clean).
//   Its 'ok' verdict replaces the self verdict (external: 'graded'). Its failure (unscorable: a
//     timeout, an HTTP error, a malformed answer, a judge that rejected) keeps the self verdict,
//     which says why (external: 'failed'), and counts as a failed call: never a crash, never a
//     rollout without reward that the self-judge could score.
//   Agreement and leniency, per criterion, over the items both judges scored ('ok' both):
//     pass = score >= pass_threshold (reward_aggregation's, default 0.5), as judgeMeta.ts's leniency;
//     agreement = (items where both pass or both fail) / items;
//     leniency  = self pass rate − external pass rate (> 0: the self-judge lets more through).
//   The pooled figures sum the criteria's counts. Counts are stored, so steps add up exactly.
// Pure TS: the judges come in built (src/rl/judgeFactory.ts), so Node tests drive it with fakes.
import { DEFAULT_PASS_THRESHOLD, isRuleCriterion, judgeRollouts, type CriterionResult, type Judge, type Rubric } from '../rubric';
import { fnv1a32, mulberry32 } from '../rubric/dropout';
import type { Rollout } from '../rubric/judge';
import type { JudgeChoice } from './judgeChoice';
import { keyFieldIn } from './judgeChoice';

/** The external judge kinds: a judge other than the run's own that answers judge questions. */
export const EXTERNAL_JUDGE_KINDS = ['remote', 'model', 'zero_shot'] as const;

export interface ExternalGrader {
  judge: Judge;
  /** judge_external_fraction, in (0, 1]. */
  fraction: number;
}

/** A result as external grading leaves it: graded by the external judge, or the self verdict kept because it failed. */
export type ExternallyGradedResult = CriterionResult & { external?: 'graded' | 'failed' };

export interface CriterionAgreement {
  /** Items both judges scored. */
  n: number;
  /** Of those, where both pass or both fail. */
  agree: number;
  self_pass: number;
  external_pass: number;
}

export interface ExternalGradingMetrics {
  /** The external judge's name ("remote:gpt-4o-mini", "model:…"). */
  judge: string;
  fraction: number;
  /** Groups and rollouts graded this step. */
  groups: number;
  rollouts: number;
  /** Requests sent to the external judge (one per rollout and judge-question criterion). */
  calls: number;
  /** Requests it failed (the self verdict was kept), and the first reason. */
  failed: number;
  first_failure: string | null;
  /** Self verdicts replaced by the external judge's. */
  replaced: number;
  seconds: number;
  /** Pooled over criteria: agreement and self − external pass rate; null when no item was scored by both. */
  agreement: number | null;
  leniency: number | null;
  by_criterion: Record<string, CriterionAgreement>;
}

/** Groups graded per step: round(fraction · groups). */
export function externalGroupCount(groups: number, fraction: number): number {
  if (!(fraction >= 0 && fraction <= 1)) throw new RangeError(`judge_external_fraction must be in [0, 1], got ${fraction}`);
  return Math.min(groups, Math.round(fraction * groups + 1e-9));
}

/** The step's externally graded groups, ascending (the rule above). */
export function externallyGradedGroups(groups: number, fraction: number, seed: number, step: number): number[] {
  const m = externalGroupCount(groups, fraction);
  if (m === 0) return [];
  const draws = Array.from({ length: groups }, (_, g) => ({ g, u: mulberry32(fnv1a32(`external:${seed}:${step}:${g}`))() }));
  draws.sort((a, b) => a.u - b.u || a.g - b.g);
  return draws
    .slice(0, m)
    .map((d) => d.g)
    .sort((a, b) => a - b);
}

export interface ExternalGradingInput {
  rubric: Rubric;
  rubricVersion: string;
  seed: number;
  step: number;
  numGenerations: number;
  /** reward_aggregation.pass_threshold (default 0.5). */
  threshold?: number;
  signal?: AbortSignal;
}

/**
 * The step's results with the externally graded groups' judge-question verdicts replaced, and
 * the step's figures; off (no grader): the results as given and no metrics. results[i] belongs to
 * rollouts[i]; the input rows are not changed.
 */
export async function gradeExternally(
  grader: ExternalGrader | null | undefined,
  input: ExternalGradingInput,
  rollouts: readonly Rollout[],
  results: readonly (readonly CriterionResult[])[],
): Promise<{ results: ExternallyGradedResult[][]; metrics?: ExternalGradingMetrics }> {
  const out: ExternallyGradedResult[][] = results.map((row) => [...row]);
  if (!grader || grader.fraction === 0) return { results: out };
  if (results.length !== rollouts.length) throw new RangeError(`gradeExternally: ${results.length} result rows for ${rollouts.length} rollouts`);
  const G = input.numGenerations;
  const groups = Math.floor(rollouts.length / G);
  const chosen = externallyGradedGroups(groups, grader.fraction, input.seed, input.step);
  const rows = chosen.flatMap((g) => Array.from({ length: G }, (_, k) => g * G + k));
  const { rubric } = input;
  // Only the judge-question criteria the run's judge answered on the rollout (irt_judge_budget may ask fewer).
  const keep = rows.map((i) => rubric.criteria.map((c) => !isRuleCriterion(c) && results[i].some((r) => r.criterion_id === c.id)));
  const calls = keep.reduce((n, mask) => n + mask.filter(Boolean).length, 0);
  const t0 = performance.now();
  const external = calls === 0 ? rows.map(() => []) : await judgeRollouts(rubric, input.rubricVersion, rows.map((i) => rollouts[i]), { modelJudge: grader.judge, keep, signal: input.signal });
  const seconds = (performance.now() - t0) / 1000;

  const threshold = input.threshold ?? DEFAULT_PASS_THRESHOLD;
  const byCriterion: Record<string, CriterionAgreement> = {};
  // Every criterion asked at least once has a row, in rubric order (n 0 when no item was scored by both).
  rubric.criteria.forEach((c, k) => {
    if (keep.some((mask) => mask[k])) byCriterion[c.id] = { n: 0, agree: 0, self_pass: 0, external_pass: 0 };
  });
  let failed = 0;
  let replaced = 0;
  let firstFailure: string | null = null;
  rows.forEach((i, j) => {
    for (const ext of external[j]) {
      const at = out[i].findIndex((r) => r.criterion_id === ext.criterion_id);
      if (at < 0) continue;
      const self = results[i][at];
      if (ext.status !== 'ok') {
        failed++;
        firstFailure ??= ext.reason;
        const kept = `${self.reason} [external judge failed: ${ext.reason}; self verdict kept]`;
        out[i][at] = self.status === 'ok' ? { ...self, reason: kept, external: 'failed' } : { ...self, reason: kept };
        continue;
      }
      out[i][at] = { ...ext, reason: `[external ${grader.judge.name}] ${ext.reason}`, external: 'graded' };
      replaced++;
      if (self.status !== 'ok') continue;
      const a = (byCriterion[ext.criterion_id] ??= { n: 0, agree: 0, self_pass: 0, external_pass: 0 });
      const selfPass = self.score >= threshold;
      const extPass = ext.score >= threshold;
      a.n++;
      if (selfPass === extPass) a.agree++;
      if (selfPass) a.self_pass++;
      if (extPass) a.external_pass++;
    }
  });
  const pooled = Object.values(byCriterion).reduce((s, a) => ({ n: s.n + a.n, agree: s.agree + a.agree, self_pass: s.self_pass + a.self_pass, external_pass: s.external_pass + a.external_pass }), { n: 0, agree: 0, self_pass: 0, external_pass: 0 });
  return {
    results: out,
    metrics: {
      judge: grader.judge.name,
      fraction: grader.fraction,
      groups: chosen.length,
      rollouts: rows.length,
      calls,
      failed,
      first_failure: firstFailure,
      replaced,
      seconds,
      ...agreementFigures(pooled),
      by_criterion: byCriterion,
    },
  };
}

/** Agreement and leniency of counts (null without items). */
export function agreementFigures(a: CriterionAgreement): { agreement: number | null; leniency: number | null } {
  return a.n === 0 ? { agreement: null, leniency: null } : { agreement: a.agree / a.n, leniency: (a.self_pass - a.external_pass) / a.n };
}

/** Several steps' counts summed per criterion (the judge meta panel's run-so-far rows). */
export function sumAgreement(steps: readonly (ExternalGradingMetrics | undefined)[]): Record<string, CriterionAgreement> {
  const sum: Record<string, CriterionAgreement> = {};
  for (const m of steps) {
    if (!m) continue;
    for (const [id, a] of Object.entries(m.by_criterion)) {
      const s = (sum[id] ??= { n: 0, agree: 0, self_pass: 0, external_pass: 0 });
      s.n += a.n;
      s.agree += a.agree;
      s.self_pass += a.self_pass;
      s.external_pass += a.external_pass;
    }
  }
  return sum;
}

/**
 * What the experiment parser refuses about external grading, given the run's own judge: a clear
 * message and the config field it is about, else null. (The config schema checks the fraction, the
 * external judge's kind and that one is named.)
 */
export function externalGradingIssue(
  config: { judge_external_fraction: number; judge_external: JudgeChoice | null },
  judge: JudgeChoice,
): { field: 'judge_external_fraction' | 'judge_external'; message: string } | null {
  const external = config.judge_external;
  if (config.judge_external_fraction === 0 || external === null) return null;
  if (judge.kind === 'rules') {
    return { field: 'judge_external_fraction', message: 'grades a fraction of the run\'s judge verdicts externally, but with judge "rules" there is none: the rules are exact. Choose a judge for the judge questions (the policy itself, another model…), or set it to 0' };
  }
  if (judge.kind === 'remote' && external.kind === 'remote') {
    return { field: 'judge_external', message: 'a remote external judge beside a remote judge is refused: a run holds one API key, bound to one site. Use another model or a zero-shot classifier as the external judge, or a judge on this page' };
  }
  if (JSON.stringify(canonical(judge)) === JSON.stringify(canonical(external))) {
    return { field: 'judge_external', message: `is the run's own judge (${describeExternalJudge(external)}): an external grade must come from another judge` };
  }
  return null;
}

/** A key-like field inside config.judge_external: the message (an API key never travels in an experiment), else null. */
export function externalJudgeKeyField(config: unknown): string | null {
  if (typeof config !== 'object' || config === null) return null;
  return keyFieldIn((config as { judge_external?: unknown }).judge_external);
}

const canonical = (c: JudgeChoice) => ('url' in c ? { kind: c.kind, url: c.url, model: c.model } : 'model' in c ? { kind: c.kind, model: c.model } : { kind: c.kind });

/** "remote gpt-4o-mini at https://…", "model embedded/…": how the page names an external judge. */
export function describeExternalJudge(c: JudgeChoice): string {
  if (c.kind === 'remote') return `remote ${c.model} at ${c.url}`;
  if (c.kind === 'model' || c.kind === 'zero_shot') return `${c.kind === 'model' ? 'model' : 'zero-shot'} ${c.model}`;
  return c.kind;
}

/**
 * A link's, run file's or lesson's remote external judge is an endpoint chosen by whoever made it,
 * which would receive every prompt and completion it grades: the experiment opens with external
 * grading off (fraction 0; the endpoint stays in the judge picker, under its warning), so only the
 * visitor turns it on. Any other experiment is returned as it is.
 */
export function withholdExternalRemote<E extends object>(experiment: E): { experiment: E; held: boolean } {
  const config = (experiment as { config?: unknown }).config;
  if (config === null || typeof config !== 'object') return { experiment, held: false };
  const { judge_external_fraction: fraction, judge_external: external } = config as { judge_external_fraction?: unknown; judge_external?: { kind?: unknown } | null };
  if (external?.kind !== 'remote' || typeof fraction !== 'number' || !(fraction > 0)) return { experiment, held: false };
  return { experiment: { ...experiment, config: { ...(config as Record<string, unknown>), judge_external_fraction: 0 } }, held: true };
}
