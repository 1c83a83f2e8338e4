// Fisher-information criterion selection (src/rubric/irtSelect.ts): the pick is the most
// informative judged criterion at the current ability, rules are free, and on synthetic verdicts
// half the judge calls keep the abilities' ranking of rollouts close to full judging (and better
// than judging a random half).
import { describe, expect, it } from 'vitest';
import { itemInformation, type Verdict } from '../../../src/rubric/irt';
import { irtEap, irtOnlineUpdate, irtStateItems, newIrtState, type IrtOnlineState } from '../../../src/rubric/irtOnline';
import { judgeAdaptively, judgedCriteria, judgeRolloutsByInformation, nextCriterion } from '../../../src/rubric/irtSelect';
import { scoresOf } from '../../../src/rubric/aggregate';
import { judgeRollouts, type Judge } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';
import { parseExperiment } from '../../../src/rl/experiment';
import { FIRST_VISIT } from '../../../src/share/presets';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const normal = (u: () => number) => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
const sig = (z: number) => 1 / (1 + Math.exp(-z));

function spearman(x: number[], y: number[]): number {
  const ranks = (v: number[]) => {
    const order = v.map((a, i) => [a, i] as const).sort((p, q) => p[0] - q[0]);
    const r = new Array<number>(v.length);
    for (let i = 0; i < order.length; ) {
      let j = i;
      while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
      for (let k = i; k <= j; k++) r[order[k][1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const rx = ranks(x);
  const ry = ranks(y);
  const mean = (rx.length - 1) / 2;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  rx.forEach((v, i) => {
    sxy += (v - mean) * (ry[i] - mean);
    sxx += (v - mean) ** 2;
    syy += (ry[i] - mean) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}

const stateWith = (items: { a: number; b: number }[]): IrtOnlineState => ({ ...newIrtState(items.length), params: items.map(({ a, b }) => ({ a, c: -a * b })) });

describe('judgedCriteria', () => {
  it('lists the judge questions, not the rules', () => {
    const rubric = parseRubric({
      name: 'mixed',
      criteria: [
        { id: 'r', text: 'Mentions the moon', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['moon'] } },
        { id: 'q1', text: 'Explains why', weight: 2, tier: 'important', judge_question: 'Does it explain why?' },
        { id: 'q2', text: 'Is rude', weight: -1, tier: 'important', judge_question: 'Is it rude?' },
      ],
    });
    expect(judgedCriteria(rubric)).toEqual([1, 2]);
  });
});

describe('nextCriterion', () => {
  const items = [
    { a: 2, b: 0 }, // information 1 at θ = 0
    { a: 1, b: 0 }, // 0.25 at θ = 0
    { a: 3, b: 3 }, // about 0.001 at θ = 0
    { a: 2, b: 2 }, // about 0.07 at θ = 0, 0.79 at θ = 1.5
    { a: 2, b: 1.5 }, // a free rule criterion
  ];
  const state = stateWith(items);
  const candidates = [0, 1, 2, 3];

  it('with nothing scored picks the most informative at the prior mean θ = 0, then the next', () => {
    expect(nextCriterion(state, [null, null, null, null, null], candidates, new Set())).toBe(0);
    expect(nextCriterion(state, [null, null, null, null, null], candidates, new Set([0]))).toBe(1);
    expect(nextCriterion(state, [null, null, null, null, null], candidates, new Set([0, 1, 2, 3]))).toBeNull();
  });

  it('after a passed rule moves θ̂ up, picks the harder item that is now the most informative', () => {
    const row: Verdict[] = [null, null, null, null, 1];
    const theta = irtEap(state, row)!;
    expect(theta).toBeGreaterThan(0.8);
    const info = candidates.map((j) => itemInformation(items[j], theta));
    const argmax = info.indexOf(Math.max(...info));
    expect(nextCriterion(state, row, candidates, new Set())).toBe(argmax);
    expect(argmax).toBe(3);
  });

  it('picks the argmax of a² p (1 − p) at θ̂ on random item tables (brute force)', () => {
    const u = rng(11);
    for (let trial = 0; trial < 50; trial++) {
      const its = Array.from({ length: 6 }, () => ({ a: 0.2 + 2.5 * u(), b: 4 * u() - 2 }));
      const s = stateWith(its);
      const row: Verdict[] = its.map(() => (u() < 0.4 ? (u() < 0.5 ? 1 : 0) : null));
      const open = its.map((_, j) => j).filter((j) => row[j] === null);
      const theta = irtEap(s, row) ?? 0;
      const best = open.reduce((b, j) => (itemInformation(its[j], theta) > itemInformation(its[b], theta) ? j : b), open[0]);
      expect(nextCriterion(s, row, open, new Set())).toBe(best);
    }
  });
});

describe('half the judge calls at a comparable ranking (synthetic verdicts)', () => {
  const truth = [
    { a: 0.5, b: -1.5 },
    { a: 2.0, b: -0.5 },
    { a: 1.0, b: 0 },
    { a: 2.5, b: 0.5 },
    { a: 0.8, b: 1 },
    { a: 1.5, b: 1.5 },
    { a: 2.0, b: -1 },
    { a: 1.2, b: 2 },
  ];
  const u = rng(2026);
  const draw = (n: number) =>
    Array.from({ length: n }, () => {
      const t = normal(u);
      return { theta: t, verdicts: truth.map(({ a, b }): Verdict => (u() < sig(a * (t - b)) ? 1 : 0)) };
    });
  // The item table after 30 fully judged steps of 16 rollouts.
  let state = newIrtState(truth.length);
  for (let s = 0; s < 30; s++) state = irtOnlineUpdate(state, draw(16).map((r) => r.verdicts));
  const fresh = draw(300);
  const all = truth.map((_, j) => j);
  const none = fresh.map(() => truth.map((): Verdict => null));

  it('asks 4 of 8 judged criteria per rollout: exactly half the calls; the ranking stays within 0.06 of full judging and beats a random half', async () => {
    let fullCalls = 0;
    const full = await judgeAdaptively(state, none, all, all.length, (i, j) => {
      fullCalls++;
      return fresh[i].verdicts[j];
    });
    const half = await judgeAdaptively(state, none, all, all.length / 2, (i, j) => fresh[i].verdicts[j]);
    expect(fullCalls).toBe(2400);
    expect(full.calls).toBe(2400);
    expect(half.calls).toBe(1200);
    half.asked.forEach((a) => expect(new Set(a).size).toBe(4));
    const theta = fresh.map((r) => r.theta);
    const rhoFull = spearman(full.verdicts.map((v) => irtEap(state, v)!), theta);
    const rhoHalf = spearman(half.verdicts.map((v) => irtEap(state, v)!), theta);
    // A random half of the criteria per rollout, same number of calls.
    const pick = rng(7);
    const randomHalf = fresh.map((r) => {
      const keep = new Set([...all].sort(() => pick() - 0.5).slice(0, 4));
      return r.verdicts.map((x, j) => (keep.has(j) ? x : null));
    });
    const rhoRandom = spearman(randomHalf.map((v) => irtEap(state, v)!), theta);
    const rhoRandomFull = spearman(randomHalf.map((v) => irtEap(state, v)!), full.verdicts.map((v) => irtEap(state, v)!));
    const rhoHalfFull = spearman(half.verdicts.map((v) => irtEap(state, v)!), full.verdicts.map((v) => irtEap(state, v)!));
    // Measured (seeded): Spearman with the true θ: full 0.856, Fisher half 0.805, random half 0.751;
    // with the fully judged abilities: Fisher half 0.935, random half 0.852.
    expect(rhoFull - rhoHalf).toBeLessThan(0.06);
    expect(rhoHalf).toBeGreaterThan(rhoRandom);
    expect(rhoHalfFull).toBeGreaterThan(rhoRandomFull);
    // Adaptive: different rollouts get different criteria.
    expect(new Set(half.asked.map((a) => a.join(','))).size).toBeGreaterThan(1);
    // The fitted table is informative at all (the most discriminating item leads the first round at θ̂ = 0).
    const items = irtStateItems(state);
    expect(half.asked[0][0]).toBe(items.map((it) => itemInformation(it, irtEap(state, none[0]) ?? 0)).reduce((b, v, j, xs) => (v > xs[b] ? j : b), 0));
  });

  it('rules are free: their verdicts are kept and never asked', async () => {
    const rules = fresh.slice(0, 5).map((r) => r.verdicts.map((x, j) => (j === 7 ? x : null)));
    const out = await judgeAdaptively(state, rules, [0, 1, 2, 3, 4, 5, 6], 2, (i, j) => fresh[i].verdicts[j]);
    expect(out.calls).toBe(10);
    out.verdicts.forEach((v, i) => expect(v[7]).toBe(fresh[i].verdicts[7]));
    out.asked.forEach((a) => expect(a).not.toContain(7));
  });

  it('refuses a bad budget or criterion', async () => {
    await expect(judgeAdaptively(state, none.slice(0, 1), all, -1, () => 1)).rejects.toThrow(/judge budget must be a whole number/);
    await expect(judgeAdaptively(state, none.slice(0, 1), [9], 1, () => 1)).rejects.toThrow(/criterion 9 is not one of the 8 criteria/);
  });
});

describe('judgeRolloutsByInformation (the trainer\'s adaptive judging)', () => {
  const rubric = parseRubric({
    name: 'mixed',
    criteria: [
      { id: 'moon', text: 'Mentions the moon', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['moon'] } },
      ...Array.from({ length: 6 }, (_, k) => ({ id: `q${k}`, text: `Question ${k}`, weight: 1, tier: 'important' as const, judge_question: `Is ${k} met?` })),
    ],
  });
  // An item table after a few steps; the fake judge passes q_k when the completion has at least k + 1 words.
  const truthItems = [{ a: 1.5, b: 0 }, ...Array.from({ length: 6 }, (_, k) => ({ a: 0.5 + 0.4 * k, b: -1 + 0.4 * k }))];
  const state = stateWith(truthItems);
  const rollouts = ['moon', 'the moon rises', 'no', 'moon moon moon moon moon moon', 'a b c d'].map((completion) => ({ prompt: 'p', completion }));
  const requests: { completion: string; id: string }[] = [];
  const judge: Judge = {
    name: 'words',
    async judge(reqs) {
      return reqs.map((r) => {
        requests.push({ completion: r.completion, id: r.criterion.id });
        const k = Number(r.criterion.id.slice(1));
        return { criterion_id: r.criterion.id, status: 'ok' as const, score: r.completion.split(' ').length > k ? 1 : 0, reason: '' };
      });
    },
  };

  it('asks the rules of every rollout and `budget` judge questions each, chosen by information; results in rubric order', async () => {
    requests.length = 0;
    const out = await judgeRolloutsByInformation(rubric, 'v', rollouts, state, 3, { modelJudge: judge });
    expect(out.calls).toBe(15);
    expect(requests.length).toBe(15);
    out.results.forEach((row, i) => {
      expect(row[0].criterion_id).toBe('moon');
      expect(row.length).toBe(4);
      const ids = row.map((r) => r.criterion_id);
      expect(ids).toEqual([...ids].sort((x, y) => rubric.criteria.findIndex((c) => c.id === x) - rubric.criteria.findIndex((c) => c.id === y)));
      // The first question asked is the most informative at the rule-only ability.
      const rule: Verdict[] = rubric.criteria.map((_, k) => (k === 0 ? (row[0].score === 1 ? 1 : 0) : null));
      expect(requests.filter((r) => r.completion === rollouts[i].completion)[0].id).toBe(`q${nextCriterion(state, rule, [1, 2, 3, 4, 5, 6], new Set())! - 1}`);
    });
    // Half the questions: half the calls of full judging.
    requests.length = 0;
    await judgeRollouts(rubric, 'v', rollouts, { modelJudge: judge });
    expect(requests.length).toBe(30);
    const full = await judgeRolloutsByInformation(rubric, 'v', rollouts, state, 6, { modelJudge: judge });
    expect(full.calls).toBe(30);
    expect(full.results.map((row) => scoresOf(rubric, row))).toEqual((await judgeRollouts(rubric, 'v', rollouts, { modelJudge: judge })).map((row) => scoresOf(rubric, row)));
  });

  it('budget 0 asks only the rules; unasked questions score null', async () => {
    requests.length = 0;
    const out = await judgeRolloutsByInformation(rubric, 'v', rollouts, state, 0, { modelJudge: judge });
    expect(requests.length).toBe(0);
    expect(out.results.map((row) => scoresOf(rubric, row)[0])).toEqual([1, 1, 0, 1, 0]);
    expect(out.results.every((row) => scoresOf(rubric, row).slice(1).every((x) => x === null))).toBe(true);
  });

  it('refuses a state of another rubric and a bad budget', async () => {
    await expect(judgeRolloutsByInformation(rubric, 'v', rollouts, newIrtState(3), 1, { modelJudge: judge })).rejects.toThrow(/IRT state has 3 criteria, the rubric 7/);
    await expect(judgeRolloutsByInformation(rubric, 'v', rollouts, state, 1.5, { modelJudge: judge })).rejects.toThrow(/judge budget must be a whole number/);
  });
});

describe('irt_judge_budget in an experiment', () => {
  const base = { ...structuredClone(FIRST_VISIT.experiment) };
  it('is accepted with irt_ability and refused with another method, saying why', () => {
    expect(parseExperiment({ ...base, config: { ...base.config, reward_aggregation: { method: 'irt_ability', irt_judge_budget: 2 } } }).config.reward_aggregation.irt_judge_budget).toBe(2);
    expect(() => parseExperiment({ ...base, config: { ...base.config, reward_aggregation: { method: 'weighted_mean', irt_judge_budget: 2 } } })).toThrow(
      /config\.reward_aggregation\.irt_judge_budget: the judge budget chooses criteria by the IRT item table, which only reward_aggregation "irt_ability" fits; with "weighted_mean" leave it empty/,
    );
    expect(() => parseExperiment({ ...base, config: { ...base.config, reward_aggregation: { method: 'irt_ability', irt_judge_budget: -1 } } })).toThrow();
  });
});
