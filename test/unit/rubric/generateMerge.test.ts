// Self-consistency merging of sampled rubrics (GenRubric #61) against hand-worked clusters.
import { describe, expect, it } from 'vitest';
import { GenerationError, type Complete } from '../../../src/rubric/generate';
import { mergeRubrics, sampleRubrics } from '../../../src/rubric/generateMerge';
import { similarity } from '../../../src/rubric/lint';
import { parseRubric, type Rubric } from '../../../src/rubric/schema';

const q = (id: string, text: string, weight: number, tier = 'important') => ({ id, text, weight, tier, judge_question: `${text}?` });
const rubric = (criteria: unknown[]): Rubric => parseRubric({ name: 'sample', criteria });

const ANSWER = 'States the answer to the question';
const S1 = rubric([q('answer', ANSWER, 3, 'essential'), q('cites', 'Cites a source', 1, 'important'), q('rude', 'Is rude to the user', -1)]);
const S2 = rubric([q('answer_clear', `${ANSWER} clearly`, 2, 'important'), q('bullets', 'Uses bullet points', 1, 'optional'), q('rude_2', 'Is rude to the user', -2)]);
const S3 = rubric([q('direct', ANSWER, 1, 'essential'), q('source', 'Cites a source', 1, 'optional')]);

describe('mergeRubrics', () => {
  it('keeps criteria proposed by a majority (2 of 3), with mean weight, most common tier, medoid text', () => {
    expect(similarity(ANSWER, `${ANSWER} clearly`)).toBeGreaterThan(0.6); // the paraphrase matches
    expect(similarity('Cites a source', 'Uses bullet points')).toBeLessThan(0.6);
    const out = mergeRubrics([S1, S2, S3], { name: 'merged' });
    // answer: 3 votes, weights 3, 2, 1 → 2; tiers essential ×2 → essential; medoid = S1's text (ties go first).
    // cites: S1 and S3, weights 1, 1; tiers important / optional tie → the more important.
    // rude: S1 and S2 (a pitfall), weights −1, −2 → −1.5. bullets: 1 vote, dropped.
    expect(out.rubric.name).toBe('merged');
    expect(out.rubric.criteria.map((c) => [c.id, c.text, c.weight, c.tier])).toEqual([
      ['answer', ANSWER, 2, 'essential'],
      ['cites', 'Cites a source', 1, 'important'],
      ['rude', 'Is rude to the user', -1.5, 'important'],
    ]);
    expect(out.votes).toEqual([3, 2, 2]);
    expect(out.dropped).toBe(1);
  });

  it('minVotes 3 keeps only what every sample proposed; 1 keeps everything once', () => {
    expect(mergeRubrics([S1, S2, S3], { minVotes: 3 }).rubric.criteria.map((c) => c.id)).toEqual(['answer']);
    expect(mergeRubrics([S1, S2, S3], { minVotes: 1 }).rubric.criteria.map((c) => c.id)).toEqual(['answer', 'cites', 'rude', 'bullets']);
  });

  it('a pitfall never merges with a positive criterion of the same text; one sample votes once per cluster', () => {
    const a = rubric([q('x', 'Mentions the moon', 1), q('y', 'Mentions the moon', -1)]);
    const b = rubric([q('x', 'Mentions the moon', 1), q('x2', 'Mentions the moon!', 1)]);
    const out = mergeRubrics([a, b], { minVotes: 2 });
    expect(out.rubric.criteria.map((c) => [c.id, c.weight])).toEqual([['x', 1]]);
    expect(out.votes).toEqual([2]);
    // b's second copy starts a cluster of its own (1 vote), as does a's pitfall.
    expect(out.dropped).toBe(2);
  });

  it('ids of merged criteria stay unique', () => {
    const a = rubric([q('c', 'Cites a source', 1), q('d', 'Uses metric units', 1)]);
    const b = rubric([q('d', 'Cites a source', 1), q('c', 'Uses metric units', 1)]);
    expect(mergeRubrics([a, b]).rubric.criteria.map((c) => c.id)).toEqual(['c', 'd']);
    const c1 = rubric([q('same', 'Cites a source', 1), q('same_x', 'Uses metric units', 1)]);
    const c2 = rubric([q('same_x', 'Uses metric units', 1), q('same', 'Cites a source', 1)]);
    const ids = mergeRubrics([c1, c2]).rubric.criteria.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('nothing reaching the votes, or only pitfalls kept, is an error, never an empty rubric', () => {
    const a = rubric([q('a', 'Cites a source', 1)]);
    const b = rubric([q('b', 'Uses metric units', 1)]);
    expect(() => mergeRubrics([a, b])).toThrow(GenerationError);
    expect(() => mergeRubrics([a, b])).toThrow(/no criterion was proposed by at least 2 of the 2/);
    const p1 = rubric([q('a', 'Cites a source', 1), q('r', 'Is rude', -1)]);
    const p2 = rubric([q('b', 'Uses metric units', 1), q('r', 'Is rude', -1)]);
    expect(() => mergeRubrics([p1, p2])).toThrow(/total positive weight must be > 0/);
    expect(() => mergeRubrics([a, b], { minVotes: 3 })).toThrow(/minVotes must be a whole number from 1 to 2/);
  });
});

describe('sampleRubrics', () => {
  it('drafts n rubrics, leaves malformed samples out and reports them, merges the rest', async () => {
    const replies = [JSON.stringify({ criteria: [q('answer', ANSWER, 2), q('cites', 'Cites a source', 1)] }), '{"criteria": [', JSON.stringify({ criteria: [q('answer_2', ANSWER, 4)] })];
    const complete: Complete = async () => replies.shift()!;
    const out = await sampleRubrics(complete, 'Explain tides.', 3, { minVotes: 2 });
    expect(out.rubric.criteria.map((c) => [c.id, c.weight])).toEqual([['answer', 3]]);
    expect(out.failures).toEqual([{ sample: 2, problems: [expect.stringMatching(/truncated/)] }]);
  });
  it('too few valid samples is an error naming the first failure', async () => {
    const complete: Complete = async () => 'no idea';
    await expect(sampleRubrics(complete, 'p', 3)).rejects.toThrow(/only 0 of 3 samples gave a valid rubric, fewer than the 2 votes needed \(sample 1: the reply has no JSON object/);
  });
});
