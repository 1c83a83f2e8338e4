// runCriteria (src/ui/lib/rollouts.ts): the rollout inspector's criteria, so a verdict on a
// criterion a later rubric version added gets a chip (and can be labelled right or wrong).
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { runCriteria } from '../../../src/ui/lib/rollouts';

const c = (id: string, weight = 1) => ({ id, text: `Text of ${id}`, weight, tier: 'important', judge_question: `${id}?` });

describe('runCriteria', () => {
  it("the rubric's criteria, then an evolved version's and a black-box teacher's induced ones, each once", () => {
    const metrics = [
      { rubric_evolution: { outcome: 'accepted', rubric: { name: 'r', criteria: [c('b', -1)] } } },
      { teacher_rubric: { step: 1, outcome: 'induced', version: 'v', provenance: null, rubric: { name: 'r', criteria: [c('a'), c('names_it', 2)] } } },
      { teacher_rubric: { step: 2, outcome: 'failed', version: null, provenance: null, error: 'x' } },
      {},
    ] as unknown as Pick<StepMetrics, 'rubric_evolution' | 'teacher_rubric'>[];
    expect(runCriteria({ name: 'r', criteria: [c('a')] }, metrics)).toEqual([
      { id: 'a', text: 'Text of a', weight: 1 },
      { id: 'b', text: 'Text of b', weight: -1 },
      { id: 'names_it', text: 'Text of names_it', weight: 2 },
    ]);
    expect(runCriteria(undefined, [])).toEqual([]);
  });
});
