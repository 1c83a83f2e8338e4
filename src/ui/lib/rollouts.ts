// The rollout inspector's data: the last N steps' rollouts in memory, grouped by prompt, with
// per-criterion verdicts and filters (by failed criterion, by prompt across steps).
import type { RolloutRecord, StepMetrics } from '../../rl/grpoStep';
import type { CriterionResult } from '../../rubric';

export interface CriterionInfo {
  id: string;
  text: string;
  weight: number;
}

export type Verdict = 'pass' | 'fail' | 'tracked' | 'unscored' | 'dropped';

export interface Chip {
  id: string;
  text: string;
  verdict: Verdict;
  score: number | null;
  reason: string;
  /** The criterion's weight: a negative one is a penalty, whose verdict reads "detected" (verdictWords). */
  weight?: number;
  /** The bias sandbox (judge_bias) changed this verdict: shown on the chip, never hidden. */
  biased?: boolean;
  /** External grading (judge_external_fraction): the external judge's verdict, or the run judge's kept because the external call failed. */
  external?: 'graded' | 'failed';
}

/**
 * The criteria a run's verdicts can name, first seen first: its rubric's, then those a later
 * version added: an accepted rubric_evolution version's, or one the black-box teacher induced
 * (teacher_rubric). A criterion a later version pruned stays (its chip reads "not judged this step").
 */
export function runCriteria(rubric: unknown, metrics: readonly Pick<StepMetrics, 'rubric_evolution' | 'teacher_rubric'>[]): CriterionInfo[] {
  const own = (rubric as { criteria?: CriterionInfo[] } | undefined)?.criteria ?? [];
  const later = metrics.flatMap((m) => [...(m.rubric_evolution?.rubric?.criteria ?? []), ...(m.teacher_rubric?.rubric?.criteria ?? [])]);
  return [...own, ...later].filter((c, i, xs) => xs.findIndex((x) => x.id === c.id) === i).map((c) => ({ id: c.id, text: c.text, weight: c.weight }));
}

/** One chip per criterion: pass / fail against the threshold (pitfalls pass when not met). */
export function chipsOf(rollout: RolloutRecord, criteria: readonly CriterionInfo[], threshold: number): Chip[] {
  const byId = new Map<string, CriterionResult>(rollout.results.map((r) => [r.criterion_id, r]));
  return criteria.map((c) => {
    const r = byId.get(c.id);
    if (!r) return { id: c.id, text: c.text, verdict: rollout.results.length ? 'dropped' : 'unscored', score: null, reason: rollout.results.length ? 'not judged this step (dropped)' : 'not judged yet' };
    if (r.status !== 'ok') return { id: c.id, text: c.text, verdict: 'unscored', score: null, reason: `${r.status}: ${r.reason}` };
    const met = r.score >= threshold;
    const verdict: Verdict = c.weight === 0 ? 'tracked' : (c.weight > 0) === met ? 'pass' : 'fail';
    const biased = (r as { biased?: unknown }).biased === true;
    const external = (r as { external?: unknown }).external;
    return { id: c.id, text: c.text, verdict, score: r.score, reason: r.reason, weight: c.weight, ...(biased ? { biased } : {}), ...(external === 'graded' || external === 'failed' ? { external } : {}) };
  });
}

export interface Group {
  step: number;
  group: number;
  prompt: string;
  rollouts: RolloutRecord[];
}

export function groupsOf(rollouts: readonly RolloutRecord[]): Group[] {
  const groups = new Map<string, Group>();
  for (const r of rollouts) {
    const key = `${r.step}:${r.group}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { step: r.step, group: r.group, prompt: r.prompt, rollouts: [] }));
    g.rollouts.push(r);
  }
  return [...groups.values()];
}

/** Whether the rollout failed (or could not be scored on) criterion `id`. */
export function failed(rollout: RolloutRecord, criteria: readonly CriterionInfo[], threshold: number, id: string): boolean {
  const chip = chipsOf(rollout, criteria, threshold).find((c) => c.id === id);
  return chip?.verdict === 'fail' || chip?.verdict === 'unscored';
}

/** Rollouts of the last `keep` steps, newest last. */
export class RolloutHistory {
  private readonly steps = new Map<number, RolloutRecord[]>();

  constructor(private keep: number) {
    if (!(Number.isInteger(keep) && keep >= 1)) throw new RangeError(`keep must be a positive integer, got ${keep}`);
  }

  add(step: number, rollouts: readonly RolloutRecord[]): void {
    this.steps.delete(step);
    this.steps.set(step, [...rollouts]);
    while (this.steps.size > this.keep) this.steps.delete(this.steps.keys().next().value!);
  }

  setKeep(keep: number): void {
    if (!(Number.isInteger(keep) && keep >= 1)) throw new RangeError(`keep must be a positive integer, got ${keep}`);
    this.keep = keep;
    while (this.steps.size > this.keep) this.steps.delete(this.steps.keys().next().value!);
  }

  clear(): void {
    this.steps.clear();
  }

  stepNumbers(): number[] {
    return [...this.steps.keys()];
  }

  at(step: number): RolloutRecord[] {
    return this.steps.get(step) ?? [];
  }

  /** Every prompt seen in the kept steps, in first-seen order. */
  prompts(): string[] {
    return [...new Set([...this.steps.values()].flatMap((rs) => rs.map((r) => r.prompt)))];
  }

  /** The same prompt across the kept steps: one group per step where it was sampled. */
  acrossSteps(prompt: string): Group[] {
    return [...this.steps.values()].flatMap((rs) => groupsOf(rs.filter((r) => r.prompt === prompt)));
  }
}
