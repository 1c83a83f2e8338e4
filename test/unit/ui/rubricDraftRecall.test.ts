// The editor keeps FORK's recall marks: rubric JSON → draft → rubric JSON.
import { describe, expect, it } from 'vitest';
import { criterionJson, draftFromRubric, rubricJson } from '../../../src/ui/lib/rubricDraft';
import { parseRubric } from '../../../src/rubric/schema';

describe('recall marks in the rubric draft', () => {
  it('round-trip: kept when true, absent otherwise', () => {
    const json = {
      name: 'r',
      criteria: [
        { id: 'a', text: 'a', weight: 1, tier: 'important', judge_question: 'a?', choices: ['no', 'yes'], recall: true },
        { id: 'b', text: 'b', weight: 1, tier: 'important', judge_question: 'b?', choices: ['no', 'yes'] },
        { id: 'c', text: 'c', weight: 1, tier: 'important', judge_question: 'c?', choices: ['no', 'yes'], recall: false },
      ],
    };
    const back = rubricJson(draftFromRubric(json)) as { criteria: Record<string, unknown>[] };
    expect(back.criteria.map((c) => c.recall)).toEqual([true, undefined, undefined]);
    expect(parseRubric(back).criteria.map((c) => c.recall ?? false)).toEqual([true, false, false]);
    const d = draftFromRubric(json).criteria[1];
    expect(criterionJson({ ...d, recall: true })).toMatchObject({ id: 'b', recall: true });
  });
});
