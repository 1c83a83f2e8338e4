// CriPO's criterion-injection teacher (seed 000 #24, its fix for Unexplored Criteria): a positive
// criterion no scored rollout of a group meets gives that group no learning signal at all (every
// reward is equally blind to it). The same weights with exactly those criteria in the prompt act
// as the teacher of the group's rollouts, and a localized forward KL (GKD beta 0) pulls the
// student toward what the teacher, told the criterion, would have written. Rollouts of groups
// where every criterion was met by someone get no distillation term.
//
// Pure: which rows are injected and with which criteria, from the step's judged verdicts (the
// Unexplored diagnostics of src/rl/credit/criteria.ts, already on each rollout record as
// unexplored_criteria before the update), and the per-row weights that mask the others out.
import type { Criterion } from '../../rubric';

/** What the selection reads of a trained row (a RolloutRecord). */
export interface InjectionRow {
  group: number;
  /** null = no reward (unscorable): its verdicts cannot say what the group missed. */
  reward: number | null;
  /** Ids of its group's criteria no scored rollout met (absent or empty = none). */
  unexplored_criteria?: readonly string[];
}

export interface InjectionSelection<C = Pick<Criterion, 'id' | 'text' | 'weight'>> {
  /** Per trained row, the criteria its teacher sees (empty = not injected). */
  contexts: C[][];
  /** Per trained row, 1 = its tokens are distilled, 0 = no distillation term. */
  rowWeights: Float32Array;
  /** Injected rollouts this step. */
  rollouts: number;
  /** Σ over the groups with an injected rollout of their unexplored criteria. */
  criteria: number;
}

/**
 * The rows the criterion-injection teacher distils: every scored row whose group has unexplored
 * criteria, its teacher told those criteria (in the rubric's order). Throws on an id the rubric
 * does not have (the verdicts and the rubric must be the step's).
 */
export function injectionSelection<C extends Pick<Criterion, 'text' | 'weight'> & { id?: string }>(criteria: readonly C[], rows: readonly InjectionRow[]): InjectionSelection<C> {
  const byId = new Map(criteria.map((c, k) => [c.id, k]));
  const groups = new Map<number, number>();
  const contexts = rows.map((r) => {
    const ids = r.reward === null ? [] : (r.unexplored_criteria ?? []);
    const ks = ids.map((id) => {
      const k = byId.get(id);
      if (k === undefined) throw new RangeError(`criterion injection: the unexplored criterion "${id}" is not in the rubric being trained`);
      return k;
    });
    if (ks.length) groups.set(r.group, ks.length);
    return [...new Set(ks)].sort((a, b) => a - b).map((k) => criteria[k]);
  });
  return {
    contexts,
    rowWeights: Float32Array.from(contexts, (c) => (c.length ? 1 : 0)),
    rollouts: contexts.filter((c) => c.length).length,
    criteria: [...groups.values()].reduce((s, n) => s + n, 0),
  };
}

/**
 * Token weights of sequences [start, start + n) (T positions each) times their row's weight: the
 * distillation mask of a micro-batch with the non-injected rows taken out. A teacher without row
 * weights leaves them as they are.
 */
export function withRowWeights(weights: Float32Array, rowWeights: ArrayLike<number> | undefined, start: number, seqLen: number): Float32Array {
  if (!rowWeights) return weights;
  return weights.map((w, i) => w * rowWeights[start + Math.floor(i / seqLen)]);
}

/** The step's injection counts for its distillation metrics (nothing for another teacher). */
export function injectionMetrics(teacher: { injection?: { rollouts: number; criteria: number } } | null): { injected_rollouts?: number; injected_criteria?: number } {
  return teacher?.injection ? { injected_rollouts: teacher.injection.rollouts, injected_criteria: teacher.injection.criteria } : {};
}
