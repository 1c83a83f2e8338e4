// CriPO's criterion-injection teacher (src/rl/distill/injection.ts): which rows get the
// distillation term and with which criteria in the teacher's prompt, the token mask that leaves
// the other rows out, forward KL whatever beta says, and the config's refusals.
import { describe, expect, it } from 'vitest';
import type { Transformer } from '../../../src/model/transformer';
import { parseGrpoConfig } from '../../../src/rl/config';
import { criterionDiagnostics } from '../../../src/rl/credit/criteria';
import { distillTeacher, injectionMetrics, injectionSelection, needsFrozenTeacher, privilegedPrompt, teacherTokens, withRowWeights } from '../../../src/rl/distill';

const fakeModel = (maxPositions: number, vocabSize = 259) => ({ config: { maxPositions, vocabSize } }) as unknown as Transformer;
const bytes = (text: string) => Array.from(new TextEncoder().encode(text));
const criteria = [
  { id: 'colour', text: 'Names a colour', weight: 2 },
  { id: 'rambles', text: 'Rambles', weight: -1 },
  { id: 'cites', text: 'Cites a source', weight: 1 },
];

/** Two groups of two: group 0 met "colour" (row 0) but nobody met "cites"; group 1 met both. */
function judged() {
  const rows = [
    { group: 0, advantage: 0.5, scores: [1, 0, 0], reward: 0.6 },
    { group: 0, advantage: -0.5, scores: [0, 0, 0], reward: 0 },
    { group: 1, advantage: 0.5, scores: [1, 0, 0], reward: 0.6 },
    { group: 1, advantage: -0.5, scores: [0, 1, 1], reward: 0.2 },
  ];
  const d = criterionDiagnostics(criteria, rows, 2, 0.5);
  return rows.map((r) => ({ ...r, unexplored_criteria: d.unexplored[r.group] }));
}

describe('criterion injection: the selection', () => {
  it('injects every scored rollout of a group with an unexplored criterion, told only those criteria; other groups get nothing', () => {
    const rows = judged();
    expect(rows.map((r) => r.unexplored_criteria)).toEqual([['cites'], ['cites'], [], []]);
    const s = injectionSelection(criteria, rows);
    expect(s.contexts.map((c) => c.map((x) => x.id))).toEqual([['cites'], ['cites'], [], []]);
    expect(Array.from(s.rowWeights)).toEqual([1, 1, 0, 0]);
    expect(s.rollouts).toBe(2);
    expect(s.criteria).toBe(1);
  });

  it('counts each group\'s criteria once, keeps the rubric\'s order, and leaves an unscorable rollout out', () => {
    const rows = [
      { group: 0, reward: 0.1, unexplored_criteria: ['cites', 'colour'] },
      { group: 0, reward: null, unexplored_criteria: ['cites', 'colour'] },
      { group: 1, reward: 0.3, unexplored_criteria: ['cites'] },
      { group: 2, reward: 1, unexplored_criteria: [] },
      { group: 2, reward: 1 },
    ];
    const s = injectionSelection(criteria, rows);
    expect(s.contexts.map((c) => c.map((x) => x.id))).toEqual([['colour', 'cites'], [], ['cites'], [], []]);
    expect(Array.from(s.rowWeights)).toEqual([1, 0, 1, 0, 0]);
    expect(s.rollouts).toBe(2);
    expect(s.criteria).toBe(3);
  });

  it('refuses an unexplored id the rubric does not have', () => {
    expect(() => injectionSelection(criteria, [{ group: 0, reward: 0, unexplored_criteria: ['gone'] }])).toThrow(/unexplored criterion "gone" is not in the rubric/);
  });

  it('masks the tokens of the rows outside the injection, micro-batch by micro-batch', () => {
    const T = 3;
    const rowWeights = Float32Array.from([1, 0, 0, 1]);
    // A micro-batch of rows 2..3: its token mask [row 2 | row 3].
    const tokens = Float32Array.from([0, 1, 1, 0, 1, 1]);
    expect(Array.from(withRowWeights(tokens, rowWeights, 2, T))).toEqual([0, 0, 0, 0, 1, 1]);
    expect(Array.from(withRowWeights(Float32Array.from([1, 1, 1, 1, 0, 0]), rowWeights, 0, T))).toEqual([1, 1, 1, 0, 0, 0]);
    // No row weights (another teacher): unchanged.
    expect(withRowWeights(tokens, undefined, 2, T)).toBe(tokens);
  });
});

describe('the criterion_injection teacher', () => {
  const config = parseGrpoConfig({ distillation: { teacher: 'criterion_injection', beta: 0.7 } });
  const policy = fakeModel(512);
  const reference = fakeModel(512);
  const src = { model: policy, reference, formatPrompt: bytes, criteria, padTokenId: 0, config };
  const prompts = ['Sky?', 'Sky?', 'Sea?', 'Sea?'];
  const completions = [[7, 8], [9], [5, 6], [4]];

  it('puts the unexplored criteria in the injected rows\' prompts, the plain prompt elsewhere, and distils with forward KL', () => {
    const t = distillTeacher({ ...src, rows: judged() }, prompts, completions)!;
    expect(t.kind).toBe('criterion_injection');
    expect(t.model).toBe(reference);
    expect(t.options.beta).toBe(0);
    expect(Array.from(t.rowWeights!)).toEqual([1, 1, 0, 0]);
    expect(t.injection).toEqual({ rollouts: 2, criteria: 1 });
    expect(injectionMetrics(t)).toEqual({ injected_rollouts: 2, injected_criteria: 1 });
    const P = t.batch.completionStart + 1;
    const told = bytes(privilegedPrompt('Sky?', [criteria[2]]));
    expect(P).toBe(told.length);
    expect(Array.from(teacherTokens(t, 0, 1).ids).slice(0, P)).toEqual(told);
    const plain = Array.from(teacherTokens(t, 2, 1).ids);
    expect(plain.slice(P - bytes('Sea?').length, P)).toEqual(bytes('Sea?'));
    expect(plain.slice(P)).toEqual([5, 6]);
    // Nothing unexplored anywhere: no row is distilled.
    const none = distillTeacher({ ...src, rows: judged().map((r) => ({ ...r, unexplored_criteria: [] })) }, prompts, completions)!;
    expect(Array.from(none.rowWeights!)).toEqual([0, 0, 0, 0]);
    expect(none.injection).toEqual({ rollouts: 0, criteria: 0 });
  });

  it('uses the frozen or the live weights, and needs the judged rows', () => {
    expect(needsFrozenTeacher(config)).toBe(true);
    const live = parseGrpoConfig({ distillation: { teacher: 'criterion_injection', teacher_weights: 'live' } });
    expect(needsFrozenTeacher(live)).toBe(false);
    expect(distillTeacher({ ...src, config: live, rows: judged() }, prompts, completions)!.model).toBe(policy);
    expect(() => distillTeacher(src, prompts, completions)).toThrow(/needs the step's judged rollouts/);
    expect(() => distillTeacher({ ...src, reference: null, rows: judged() }, prompts, completions)).toThrow(/frozen criterion_injection teacher needs the starting model/);
    expect(injectionMetrics(null)).toEqual({});
  });

  it('is refused in pure mode: it needs the judge\'s verdicts', () => {
    expect(() => parseGrpoConfig({ distillation: { teacher: 'criterion_injection', mode: 'pure' } })).toThrow(/distillation\.mode: the criterion_injection teacher needs the judge/);
  });
});
