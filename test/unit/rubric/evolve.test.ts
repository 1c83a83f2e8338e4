// Online rubric evolution (src/rubric/evolve.ts) on synthetic verdict histories: each strategy,
// strict parsing of the model's proposals, guarded acceptance and the lineage.
import { describe, expect, it } from 'vitest';
import { parseRubric, rubricVersion, type Rubric } from '../../../src/rubric';
import {
  evolutionDue,
  evolveRubric,
  guardProposal,
  newEvolutionHistory,
  pruneProposal,
  recordEvolutionStep,
  rubricLineage,
  type EvolutionHistory,
  type EvolutionOptions,
  type EvolutionRollout,
} from '../../../src/rubric/evolve';
import type { Complete } from '../../../src/rubric/generate';

const q = (id: string, weight = 1) => ({ id, text: `Checks ${id}`, weight, tier: 'important', judge_question: `Does it ${id}?` });
const RUBRIC: Rubric = parseRubric({ name: 'r', criteria: [q('varies'), q('always'), q('never'), q('half')] });

/** Two groups of 4 per step: 'varies' splits each group, 'always' is met by all, 'never' by none, 'half' varies in group 0 only. */
function stepRollouts(step: number): EvolutionRollout[] {
  const out: EvolutionRollout[] = [];
  for (let g = 0; g < 2; g++) {
    for (let i = 0; i < 4; i++) {
      out.push({ step, group: g, prompt: `prompt ${g}`, completion: `answer ${step}/${g}/${i}`, scores: [i % 2, 1, 0, g === 0 ? i % 2 : 1] });
    }
  }
  return out;
}

function history(steps: number[], rubric = RUBRIC): EvolutionHistory {
  const h = newEvolutionHistory(rubric, 'v0'.padEnd(64, '0'));
  for (const s of steps) recordEvolutionStep(h, s, stepRollouts(s), 2);
  return h;
}

const OPTIONS = (strategy: EvolutionOptions['strategy']): EvolutionOptions => ({ strategy, every: 1, lookback: 2, maxNew: 2, threshold: 0.5 });
/** A judge for new criteria: scores by a rule on the completion's last character (the rollout index). */
const byIndex = (f: (i: number) => number) => async (criteria: Rubric, rollouts: readonly EvolutionRollout[]) =>
  rollouts.map((r) => criteria.criteria.map(() => f(Number(r.completion.at(-1)))));
const fake = (reply: string): Complete & { calls: number } => {
  const fn = (async (): Promise<string> => {
    fn.calls++;
    return reply;
  }) as unknown as Complete & { calls: number };
  fn.calls = 0;
  return fn;
};

describe('the history window', () => {
  it('keeps the last `window` steps, step 0 as the reference, and is due every `every` steps with a full window', () => {
    const h = history([0, 1, 2]);
    expect(h.steps.map((s) => s.step)).toEqual([1, 2]);
    expect(Object.keys(h.reference!)).toEqual(['prompt 0', 'prompt 1']);
    expect(h.reference!['prompt 0']).toHaveLength(4);
    expect(evolutionDue(h, 3, { strategy: 'prune', every: 2, lookback: 2 })).toBe(true);
    expect(evolutionDue(h, 2, { strategy: 'prune', every: 2, lookback: 2 })).toBe(false);
    expect(evolutionDue(history([0]), 1, { strategy: 'prune', every: 2, lookback: 2 })).toBe(false); // window not full
    expect(evolutionDue(h, 3, { strategy: 'off', every: 2, lookback: 2 })).toBe(false);
  });
  it('refuses scores that do not match the rubric', () => {
    expect(() => recordEvolutionStep(newEvolutionHistory(RUBRIC, 'x'), 0, [{ step: 0, group: 0, prompt: 'p', completion: 'c', scores: [1] }], 1)).toThrow(/1 scores for 4 criteria/);
  });
});

describe('prune', () => {
  it('removes exactly the zero-variance criteria ("always", "never"; "half" varies in one group)', () => {
    const p = pruneProposal(RUBRIC, history([0, 1]).steps.flatMap((s) => s.rollouts), 0.5);
    expect('none' in p).toBe(false);
    if ('none' in p) return;
    expect(p.removed).toEqual(['always', 'never']);
    expect(p.rubric.criteria.map((c) => c.id)).toEqual(['varies', 'half']);
  });
  it('proposes nothing when every criterion varies, or when none does', () => {
    const varying = parseRubric({ name: 'r', criteria: [q('varies'), q('half')] });
    const rollouts = stepRollouts(0).map((r) => ({ ...r, scores: [r.scores[0], r.scores[3]] }));
    expect(pruneProposal(varying, rollouts, 0.5)).toEqual({ none: expect.stringMatching(/nothing to prune/) });
    const constant = stepRollouts(0).map((r) => ({ ...r, scores: [1, 1, 0, 1] }));
    expect(pruneProposal(RUBRIC, constant, 0.5)).toEqual({ none: expect.stringMatching(/would leave no criterion/) });
  });
  it('accepts through the guarded check: a new version with its parent and reason, the history reset to it', async () => {
    const h = history([0, 1]);
    const parent = h.version;
    const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('prune'), scoreNew: async () => { throw new Error('prune judges nothing'); } });
    expect(e.outcome).toBe('accepted');
    expect(e.parent).toBe(parent);
    expect(e.version).toBe(await rubricVersion(e.rubric!));
    expect(e.reason).toMatch(/zero within-group variance over the last 2 step\(s\): always, never/);
    expect(e.checks).toEqual([expect.objectContaining({ criterion: '(reward)', passed: true })]);
    expect(h.version).toBe(e.version);
    expect(h.rubric.criteria.map((c) => c.id)).toEqual(['varies', 'half']);
    expect(h.steps).toEqual([]);
    expect(h.reference).not.toBeNull(); // the starting policy's samples outlive a version switch
  });
});

describe('rare', () => {
  const flaws = JSON.stringify({ criteria: [{ ...q('pads_answer', -1), text: 'Pads the answer' }] });
  it('replaces the saturated criterion with the generator\'s flaw checks, scored discriminative on the snapshot', async () => {
    const h = history([0, 1]);
    const complete = fake(flaws);
    const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('rare'), complete, scoreNew: byIndex((i) => (i < 2 ? 1 : 0)) });
    expect(complete.calls).toBe(1);
    expect(e.outcome).toBe('accepted');
    expect(e.removed).toEqual(['always']);
    expect(e.added).toEqual(['pads_answer']);
    expect(e.rubric!.criteria.map((c) => c.id)).toEqual(['varies', 'never', 'half', 'pads_answer']);
    expect(e.rubric!.criteria[3].weight).toBe(-1);
    expect(e.checks!.find((c) => c.criterion === 'pads_answer')).toMatchObject({ passed: true, within_group_variance: 0.25, met_rate: 0.5 });
  });
  it('shows the model the saturated criterion and the latest group\'s responses as data', async () => {
    let seen = '';
    const complete: Complete = async (m) => ((seen = m.user), flaws);
    await evolveRubric({ history: history([0, 1]), step: 1, options: OPTIONS('rare'), complete, scoreNew: byIndex((i) => i % 2) });
    expect(seen).toContain('<criterion>\nChecks always\n</criterion>');
    expect(seen).toContain('answer 1/1/3');
  });
  for (const [what, reply, why] of [
    ['prose', 'Sure! Here are some flaws: padding.', /no JSON object/],
    ['truncated JSON', '{"criteria": [{"id": "x"', /cut off/],
    ['a schema error', JSON.stringify({ criteria: [{ id: 'Bad Id', text: 't', weight: -1, tier: 'important', judge_question: 'q?' }] }), /criteria/],
    ['a positive "flaw"', JSON.stringify({ criteria: [q('good_thing', 2)] }), /a flaw check is a pitfall/],
    ['too many', JSON.stringify({ criteria: ['a', 'b', 'c'].map((id) => q(id, -1)) }), /more than the 2 asked for/],
  ] as const) {
    it(`malformed output (${what}) leaves the rubric unchanged, with the reason`, async () => {
      const h = history([0, 1]);
      const before = h.version;
      const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('rare'), complete: fake(reply), scoreNew: byIndex(() => 1) });
      expect(e.outcome).toBe('unchanged');
      expect(e.version).toBeNull();
      expect(e.reason).toMatch(why);
      expect(h.version).toBe(before);
      expect(h.steps).toHaveLength(2);
    });
  }
  it('without a model that writes text it changes nothing and says so; with nothing saturated it asks no model', async () => {
    const e = await evolveRubric({ history: history([0, 1]), step: 1, options: OPTIONS('rare'), scoreNew: byIndex(() => 1) });
    expect(e).toMatchObject({ outcome: 'unchanged', reason: expect.stringMatching(/needs a judge that writes text/) });
    const none = parseRubric({ name: 'r', criteria: [q('varies')] });
    const h = newEvolutionHistory(none, 'x');
    recordEvolutionStep(h, 0, stepRollouts(0).map((r) => ({ ...r, scores: [r.scores[0]] })), 1);
    const complete = fake(flaws);
    expect((await evolveRubric({ history: h, step: 0, options: { ...OPTIONS('rare'), lookback: 1 }, complete, scoreNew: byIndex(() => 1) })).reason).toMatch(/no criterion is met by every rollout/);
    expect(complete.calls).toBe(0);
  });
});

describe('guarded acceptance', () => {
  it('rejects a non-discriminative proposal (the new flaw check is met by every rollout) and records why', async () => {
    const h = history([0, 1]);
    const before = h.version;
    const reply = JSON.stringify({ criteria: [q('pads_answer', -1)] });
    const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('rare'), complete: fake(reply), scoreNew: byIndex(() => 1) });
    expect(e.outcome).toBe('rejected');
    expect(e.version).toMatch(/^[0-9a-f]{64}$/);
    expect(e.reason).toMatch(/rejected: "pads_answer" is not discriminative on the snapshot \(zero within-group variance, saturated\)/);
    expect(e.checks).toContainEqual(expect.objectContaining({ criterion: 'pads_answer', passed: false, within_group_variance: 0 }));
    expect(e.rubric).toBeUndefined();
    expect(h.version).toBe(before);
  });
  it('rejects a proposal the judge cannot score on the snapshot (the run goes on)', async () => {
    const h = history([0, 1]);
    const before = h.version;
    const reply = JSON.stringify({ criteria: [q('pads_answer', -1)] });
    const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('rare'), complete: fake(reply), scoreNew: async () => { throw new Error('the endpoint answered 503'); } });
    expect(e).toMatchObject({ outcome: 'rejected', added: ['pads_answer'], reason: expect.stringMatching(/rejected: the guarded check could not score it: the endpoint answered 503$/) });
    expect(h.version).toBe(before);
  });
  it('rejects a removal that would flatten a group\'s reward, and an invalid rubric', async () => {
    const snapshot = history([0, 1]).steps.flatMap((s) => s.rollouts);
    const drop = { rubric: { ...RUBRIC, criteria: RUBRIC.criteria.filter((c) => c.id !== 'varies') }, removed: ['varies'], added: [], reason: 'test' };
    const g = await guardProposal(RUBRIC, drop, snapshot, byIndex(() => 1), 0.5);
    expect(g.failure).toMatch(/removing varies leaves no reward variance in 2 of the 4 group\(s\) that had it/);
    const pitfallsOnly = { rubric: { ...RUBRIC, criteria: [{ ...RUBRIC.criteria[0], weight: -1 }] }, removed: [], added: [], reason: 'test' };
    expect((await guardProposal(RUBRIC, pitfallsOnly, snapshot, byIndex(() => 1), 0.5)).failure).toMatch(/not valid: .*total positive weight/);
  });
});

describe('online_rubrics', () => {
  const reply = JSON.stringify({ criteria: [q('gives_example', 1)] });
  it("adds the elicited criteria after comparing the latest step's responses with step 0's to the same prompt", async () => {
    const h = history([0, 1]);
    let seen = '';
    const complete: Complete = async (m) => ((seen = m.user), reply);
    const e = await evolveRubric({ history: h, step: 1, options: OPTIONS('online_rubrics'), complete, scoreNew: byIndex((i) => (i === 0 ? 1 : 0)) });
    expect(e.outcome).toBe('accepted');
    expect(e.added).toEqual(['gives_example']);
    expect(e.rubric!.criteria.map((c) => c.id)).toEqual(['varies', 'always', 'never', 'half', 'gives_example']);
    expect(seen).toContain('answer 1/0/0'); // current
    expect(seen).toContain('answer 0/0/0'); // starting policy (step 0)
  });
  it('without the starting samples it compares nothing', async () => {
    const h = newEvolutionHistory(RUBRIC, 'x');
    recordEvolutionStep(h, 3, stepRollouts(3), 1);
    const e = await evolveRubric({ history: h, step: 3, options: { ...OPTIONS('online_rubrics'), lookback: 1 }, complete: fake(reply), scoreNew: byIndex(() => 1) });
    expect(e).toMatchObject({ outcome: 'unchanged', reason: expect.stringMatching(/resumed after step 0/) });
  });
});

describe('lineage', () => {
  it('lists the starting version, then each accepted version with its parent, first step and reason', async () => {
    const h = history([0, 1]);
    const start = h.version;
    const accepted = await evolveRubric({ history: h, step: 1, options: OPTIONS('prune'), scoreNew: byIndex(() => 1) });
    const unchanged = { ...accepted, outcome: 'unchanged' as const, step: 4 };
    expect(rubricLineage(start, [undefined, accepted, unchanged])).toEqual([
      { version: start, parent: null, first_step: 0, strategy: null, reason: null },
      { version: accepted.version, parent: start, first_step: 2, strategy: 'prune', reason: accepted.reason },
    ]);
  });
});
