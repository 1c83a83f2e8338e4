// fork_precision_recall (FORK-style precision + recall) against hand-computed values, and the
// recall field of the rubric schema.
import { describe, expect, it } from 'vitest';
import { aggregateAll, aggregateGroup } from '../../../src/rubric/aggregations';
import { forkParts, forkReward, forkRubricIssue } from '../../../src/rubric/fork';
import { parseRubric, type Rubric } from '../../../src/rubric/schema';
import { rubricVersion } from '../../../src/rubric/version';
import { parseExperiment } from '../../../src/rl/experiment';
import { expectClose } from '../../helpers/compare';

const EXACT = { atol: 1e-12, rtol: 0 };
const q = (id: string, weight: number, recall?: boolean) => ({ id, text: `${id} text`, weight, tier: 'important', judge_question: `${id}?`, ...(recall === undefined ? {} : { recall }) });
// Recall items: cover_a (2), cover_b (1). Precision items: concise (1) and a pitfall false_claim (−2).
const R: Rubric = parseRubric({ name: 'fork', criteria: [q('cover_a', 2, true), q('cover_b', 1, true), q('concise', 1), q('false_claim', -2)] });

describe('forkReward', () => {
  it('F1 of recall (recall items) and precision (the other criteria, pitfalls avoided) — hand-computed', () => {
    // recall = 2/3; precision = (1·1 + 2·(1 − 1)) / 3 = 1/3; F1 = 2·(2/9) / (1/3 + 2/3) = 4/9.
    const parts = forkParts(R, [1, 0, 1, 1])!;
    expectClose([parts.recall, parts.precision, parts.reward], [2 / 3, 1 / 3, 4 / 9], EXACT, 'parts');
    // Pitfall avoided: precision 1 → F1 = 2·(2/3) / (5/3) = 4/5.
    expectClose([forkReward(R, [1, 0, 1, 0])!], [4 / 5], EXACT, 'pitfall avoided');
    expect(forkReward(R, [1, 1, 1, 0])).toBe(1);
    expect(forkReward(R, [0, 0, 0, 1])).toBe(0);
  });

  it('β weighs recall against precision: F_β = (1 + β²) P R / (β² P + R)', () => {
    // P = 1/3, R = 2/3. β = 2: 5·(2/9) / (4/3 + 2/3) = 5/9. β = 0.5: 1.25·(2/9) / (1/12 + 2/3) = 10/27.
    expectClose([forkReward(R, [1, 0, 1, 1], 2)!, forkReward(R, [1, 0, 1, 1], 0.5)!], [5 / 9, 10 / 27], EXACT, 'beta');
    expect(() => forkReward(R, [1, 0, 1, 1], 0)).toThrow(/fork_beta must be a positive number/);
  });

  it('soft scores count as they are; a missing score gives null, never 0', () => {
    // recall = (2·0.5 + 1) / 3 = 2/3; precision = (0.5 + 2·(1 − 0.25)) / 3 = 2/3 → F1 = 2/3.
    expectClose([forkReward(R, [0.5, 1, 0.5, 0.25])!], [2 / 3], EXACT, 'soft');
    expect(forkReward(R, [1, null, 1, 0])).toBeNull();
  });

  it('through the registry, with fork_beta, and listed by aggregateAll only where the rubric marks recall items', () => {
    const group = [
      [1, 0, 1, 1],
      [1, 1, 1, 0],
    ];
    expectClose(aggregateGroup(R, group, { method: 'fork_precision_recall', fork_beta: 2 }).rewards as number[], [5 / 9, 1], EXACT, 'registry');
    expectClose(aggregateAll(R, group).fork_precision_recall as number[], [4 / 9, 1], EXACT, 'aggregateAll');
    const plain = parseRubric({ name: 'plain', criteria: [q('a', 1), q('b', 1)] });
    expect(aggregateAll(plain, [[1, 0]])).not.toHaveProperty('fork_precision_recall');
    expect(aggregateAll(plain, [[1, 0]])).toHaveProperty('weighted_mean');
  });

  it('needs a recall item and another criterion, and says so', () => {
    const none = parseRubric({ name: 'n', criteria: [q('a', 1), q('b', -1)] });
    expect(forkRubricIssue(none)).toMatch(/needs at least one criterion marked as a recall item/);
    expect(() => forkReward(none, [1, 0])).toThrow(/recall item/);
    const all = parseRubric({ name: 'n', criteria: [q('a', 1, true), q('b', 1, true)] });
    expect(forkRubricIssue(all)).toMatch(/needs at least one criterion that is not a recall item/);
    expect(forkRubricIssue(R)).toBeNull();
  });
});

describe('the recall field', () => {
  it('is kept when true, dropped when false, so older rubrics keep their version', async () => {
    expect(R.criteria.map((c) => c.recall ?? false)).toEqual([true, true, false, false]);
    const without = parseRubric({ name: 'v', criteria: [q('a', 1)] });
    const explicitFalse = parseRubric({ name: 'v', criteria: [q('a', 1, false)] });
    const marked = parseRubric({ name: 'v', criteria: [q('a', 1, true)] });
    expect(explicitFalse.criteria[0]).not.toHaveProperty('recall');
    expect(await rubricVersion(explicitFalse)).toBe(await rubricVersion(without));
    expect(await rubricVersion(marked)).not.toBe(await rubricVersion(without));
  });

  it('is refused on a pitfall or as a non-boolean, naming the criterion', () => {
    expect(() => parseRubric({ name: 'v', criteria: [q('a', 1), q('b', -1, true)] })).toThrow(/criteria\[1\]\.recall: only a criterion with a positive weight can be a recall item/);
    expect(() => parseRubric({ name: 'v', criteria: [{ ...q('a', 1), recall: 'yes' }] })).toThrow(/criteria\[0\]\.recall/);
  });

  it('an experiment with fork_precision_recall and no recall item is refused before training', () => {
    const experiment = (criteria: unknown[]) => ({ model: 'embedded/tiny-gpt2-byte', prompts: ['p'], rubric: { name: 'r', criteria }, config: { reward_aggregation: { method: 'fork_precision_recall', fork_beta: 2 } } });
    expect(() => parseExperiment(experiment([q('a', 1), q('b', 1)]))).toThrow(/rubric: reward_aggregation "fork_precision_recall" needs at least one criterion marked as a recall item/);
    expect(parseExperiment(experiment([q('a', 1, true), q('b', 1)])).config.reward_aggregation).toEqual({ method: 'fork_precision_recall', fork_beta: 2 });
    expect(() => parseExperiment({ ...experiment([q('a', 1, true), q('b', 1)]), config: { reward_aggregation: { method: 'fork_precision_recall', fork_beta: 0 } } })).toThrow(/fork_beta/);
  });
});
