// The judge meta panel's position bias (issue 13): the pairwise mode (src/rubric/pairwise.ts)
// over the rollouts the page keeps, each group's rollouts compared pair by pair in both orders,
// with the run's declared position bias when it has one, measured by judgeMeta.positionBias.
import type { JudgeBias } from '../../rubric/bias';
import type { CriterionResult } from '../../rubric/judge';
import { positionBias, type PositionBias } from '../../rubric/judgeMeta';
import { pairwiseComparisons, type PairGroup } from '../../rubric/pairwise';

export interface PairRollout {
  step: number;
  group: number;
  index: number;
  results: readonly CriterionResult[];
}

/** Per criterion (rubric order; criteria never compared are left out), the position bias of the kept rollouts. */
export function positionBiasView(criteria: readonly string[], rollouts: readonly PairRollout[], bias: JudgeBias | null, runSeed: number): PositionBias[] {
  const byGroup = new Map<string, PairRollout[]>();
  for (const r of rollouts) {
    const key = `${r.step}/${r.group}`;
    byGroup.set(key, [...(byGroup.get(key) ?? []), r]);
  }
  const groups: PairGroup[] = [...byGroup.entries()].map(([group, rs]) => ({
    group,
    step: rs[0].step,
    results: [...rs].sort((a, b) => a.index - b.index).map((r) => r.results),
  }));
  return positionBias(pairwiseComparisons(criteria, groups, bias, { seed: runSeed }));
}
