// Self-judging with an externally graded fraction (src/rl/externalGrading.ts): the seeded choice of
// whole groups, the replacement of the self verdicts, agreement and leniency against hand-computed
// figures, a failing external judge (recorded, self verdict kept, never a crash), and the option
// through the config, experiment parser, links, run files, CSV and the TRL export.
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import { parseExperiment } from '../../../src/rl/experiment';
import { experimentProblems } from '../../../src/rl/issueLabels';
import { externalGroupCount, externallyGradedGroups, gradeExternally, sumAgreement, withholdExternalRemote, type ExternalGradingMetrics } from '../../../src/rl/externalGrading';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { parseRubric, type CriterionResult, type Judge, type JudgeRequest } from '../../../src/rubric';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';
import { chipsOf } from '../../../src/ui/lib/rollouts';

const rubric = parseRubric({
  name: 'r',
  criteria: [
    { id: 'short', text: 'Short', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 50 } },
    { id: 'q1', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is it polite?' },
    { id: 'q2', text: 'Clear', weight: 1, tier: 'important', judge_question: 'Is it clear?' },
  ],
});

const ok = (criterion_id: string, score: number, reason = 'self'): CriterionResult => ({ criterion_id, status: 'ok', score, reason });
const rollouts = (n: number) => Array.from({ length: n }, (_, i) => ({ prompt: `p${Math.floor(i / 2)}`, completion: `answer ${i}` }));

/** An external judge whose score per (completion, criterion) comes from a table; it records what it was asked. */
function tableJudge(table: Record<string, number | 'fail'>, name = 'external-fake'): Judge & { asked: JudgeRequest[] } {
  const asked: JudgeRequest[] = [];
  return {
    name,
    asked,
    async judge(requests) {
      asked.push(...requests);
      return requests.map((r) => {
        const v = table[`${r.completion}|${r.criterion.id}`];
        if (v === undefined) throw new Error(`unexpected request ${r.completion}|${r.criterion.id}`);
        return v === 'fail' ? { criterion_id: r.criterion.id, status: 'unscorable', score: null, reason: 'HTTP 503 from the endpoint' } : { criterion_id: r.criterion.id, status: 'ok', score: v, reason: 'ext' };
      });
    },
  };
}

describe('the seeded choice of graded groups', () => {
  it('is deterministic, of size round(fraction · groups), whole distinct groups, and varies with the step', () => {
    for (const [groups, fraction, size] of [[8, 0.25, 2], [8, 0.3, 2], [4, 0.5, 2], [5, 0.5, 3], [3, 1, 3], [10, 0.05, 1], [8, 0, 0]] as const) {
      expect(externalGroupCount(groups, fraction), `${fraction} of ${groups}`).toBe(size);
      const a = externallyGradedGroups(groups, fraction, 42, 7);
      expect(a).toEqual(externallyGradedGroups(groups, fraction, 42, 7));
      expect(a).toHaveLength(size);
      expect(new Set(a).size).toBe(size);
      expect([...a].sort((x, y) => x - y)).toEqual(a);
      for (const g of a) expect(g >= 0 && g < groups).toBe(true);
    }
    // Over steps and seeds every group gets its turn (not a fixed prefix).
    const seen = new Set<string>();
    for (let step = 0; step < 20; step++) seen.add(externallyGradedGroups(8, 0.25, 42, step).join(','));
    expect(seen.size).toBeGreaterThan(5);
    // and the seed changes the draw.
    const bySeed = (seed: number) => Array.from({ length: 5 }, (_, step) => externallyGradedGroups(8, 0.25, seed, step).join(',')).join(';');
    expect(bySeed(1)).not.toBe(bySeed(2));
    expect(() => externalGroupCount(4, 1.5)).toThrow(/\[0, 1\]/);
  });
});

describe('gradeExternally', () => {
  it('is off without a grader: the rows as given, no metrics', async () => {
    const rows = rollouts(4).map(() => [ok('short', 1), ok('q1', 1)]);
    const out = await gradeExternally(null, { rubric, rubricVersion: 'v', seed: 1, step: 0, numGenerations: 2 }, rollouts(4), rows);
    expect(out.metrics).toBeUndefined();
    expect(out.results).toEqual(rows);
  });

  it('replaces the judge-question verdicts of the chosen groups only, asking nothing else', async () => {
    const R = rollouts(8); // 4 groups of 2
    const self = R.map(() => [ok('short', 1), ok('q1', 1), ok('q2', 0)]);
    const table: Record<string, number> = {};
    for (const r of R) for (const q of ['q1', 'q2']) table[`${r.completion}|${q}`] = 0.25;
    const judge = tableJudge(table);
    const out = await gradeExternally({ judge, fraction: 0.5 }, { rubric, rubricVersion: 'v', seed: 42, step: 3, numGenerations: 2 }, R, self);
    const groups = externallyGradedGroups(4, 0.5, 42, 3);
    const graded = groups.flatMap((g) => [2 * g, 2 * g + 1]);
    expect(out.metrics!.groups).toBe(2);
    expect(out.metrics!.rollouts).toBe(4);
    expect(out.metrics!.calls).toBe(8); // 4 rollouts × 2 judge questions; the rule is never asked
    expect(judge.asked.map((r) => `${r.completion}|${r.criterion.id}`).sort()).toEqual(graded.flatMap((i) => [`answer ${i}|q1`, `answer ${i}|q2`]).sort());
    expect(out.metrics!.replaced).toBe(8);
    out.results.forEach((row, i) => {
      expect(row[0]).toBe(self[i][0]); // the rule verdict is the rule's
      if (graded.includes(i)) {
        expect(row[1]).toMatchObject({ criterion_id: 'q1', status: 'ok', score: 0.25, external: 'graded' });
        expect(row[1].reason).toBe('[external external-fake] ext');
      } else {
        expect(row[1]).toBe(self[i][1]);
        expect(row[2]).toBe(self[i][2]);
      }
    });
    expect(self[graded[0]][1]).toEqual(ok('q1', 1)); // the input rows are not changed
  });

  it('computes agreement and leniency per criterion and pooled, against hand-computed figures', async () => {
    // fraction 1: every group is graded, so the figures do not depend on the draw.
    const R = rollouts(4);
    const selfQ1 = [1, 1, 0, 1];
    const extQ1 = [1, 0, 0, 0];
    const selfQ2: (number | null)[] = [0, 0, 1, null]; // rollout 3's self verdict on q2 failed
    const extQ2 = [0, 1, 1, 0.6];
    const self = R.map((_, i) => [
      ok('short', 1),
      ok('q1', selfQ1[i]),
      selfQ2[i] === null ? ({ criterion_id: 'q2', status: 'unscorable', score: null, reason: 'self failed' } as CriterionResult) : ok('q2', selfQ2[i]!),
    ]);
    const table: Record<string, number> = {};
    R.forEach((r, i) => {
      table[`${r.completion}|q1`] = extQ1[i];
      table[`${r.completion}|q2`] = extQ2[i];
    });
    const { metrics, results } = await gradeExternally({ judge: tableJudge(table), fraction: 1 }, { rubric, rubricVersion: 'v', seed: 0, step: 0, numGenerations: 2 }, R, self);
    // q1: self passes 3, external 1, agree on rollouts 0 and 2 → agreement 2/4, leniency (3 − 1)/4.
    expect(metrics!.by_criterion.q1).toEqual({ n: 4, agree: 2, self_pass: 3, external_pass: 1 });
    // q2 over rollouts 0-2 (3 has no self verdict): self passes 1, external 2, agree on 0 and 2.
    expect(metrics!.by_criterion.q2).toEqual({ n: 3, agree: 2, self_pass: 1, external_pass: 2 });
    expect(metrics!.agreement).toBeCloseTo(4 / 7, 12);
    expect(metrics!.leniency).toBeCloseTo((4 - 3) / 7, 12);
    // The unscorable self verdict is replaced too: the external grade anchors the reward there.
    expect(results[3][2]).toMatchObject({ status: 'ok', score: 0.6, external: 'graded' });
    expect(metrics!.replaced).toBe(8);
    // A stricter threshold moves the 0.6: q2's external pass count falls by one.
    const strict = await gradeExternally({ judge: tableJudge(table), fraction: 1 }, { rubric, rubricVersion: 'v', seed: 0, step: 0, numGenerations: 2, threshold: 0.7 }, R, self);
    expect(strict.metrics!.by_criterion.q2).toEqual({ n: 3, agree: 2, self_pass: 1, external_pass: 2 }); // rollout 3 is not among the items both scored
    expect(sumAgreement([metrics, undefined, strict.metrics])).toEqual({ q1: { n: 8, agree: 4, self_pass: 6, external_pass: 2 }, q2: { n: 6, agree: 4, self_pass: 2, external_pass: 4 } });
  });

  it('records a failing external judge: the self verdict kept and the failure named, never a crash', async () => {
    const R = rollouts(4);
    const self = R.map(() => [ok('short', 1), ok('q1', 1), ok('q2', 0)]);
    const down: Judge = {
      name: 'remote:judge-model',
      judge: async () => {
        throw new Error('network down (fetch failed)');
      },
    };
    const { metrics, results } = await gradeExternally({ judge: down, fraction: 1 }, { rubric, rubricVersion: 'v', seed: 0, step: 0, numGenerations: 2 }, R, self);
    expect(metrics).toMatchObject({ calls: 8, failed: 8, replaced: 0, agreement: null, leniency: null });
    expect(metrics!.first_failure).toMatch(/judge "remote:judge-model" failed: network down \(fetch failed\)/);
    results.forEach((row, i) => {
      expect(row[1]).toMatchObject({ status: 'ok', score: 1, external: 'failed' });
      expect(row[1].reason).toMatch(/^self \[external judge failed: judge "remote:judge-model" failed: network down \(fetch failed\); self verdict kept\]$/);
      expect(row[2].status === 'ok' && row[2].score).toBe(self[i][2].score);
    });
    // Part of the batch failing: those items kept, the rest replaced.
    const table: Record<string, number | 'fail'> = {};
    R.forEach((r, i) => {
      table[`${r.completion}|q1`] = i === 1 ? 'fail' : 0;
      table[`${r.completion}|q2`] = 1;
    });
    const partial = await gradeExternally({ judge: tableJudge(table), fraction: 1 }, { rubric, rubricVersion: 'v', seed: 0, step: 0, numGenerations: 2 }, R, self);
    expect(partial.metrics).toMatchObject({ calls: 8, failed: 1, replaced: 7, first_failure: 'HTTP 503 from the endpoint' });
    expect(partial.results[1][1]).toMatchObject({ score: 1, external: 'failed' });
    expect(partial.results[0][1]).toMatchObject({ score: 0, external: 'graded' });
    // q1: self passes all three scored items, the external judge none: agreement 0, leniency +1.
    expect(partial.metrics!.by_criterion.q1).toEqual({ n: 3, agree: 0, self_pass: 3, external_pass: 0 });
  });

  it('stops when the step is stopped', async () => {
    const R = rollouts(2);
    const controller = new AbortController();
    const slow: Judge = {
      name: 'slow',
      judge: async (_r, o) => {
        controller.abort();
        throw o?.signal?.reason ?? new Error('aborted');
      },
    };
    await expect(gradeExternally({ judge: slow, fraction: 1 }, { rubric, rubricVersion: 'v', seed: 0, step: 0, numGenerations: 2, signal: controller.signal }, R, R.map(() => [ok('q1', 1)]))).rejects.toBeDefined();
  });
});

const base = {
  model: 'embedded/tiny-gpt2-byte',
  prompts: ['Say hi.'],
  rubric: { name: 'r', criteria: [{ id: 'polite', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is the response polite?' }] },
  judge: { kind: 'self' },
};
const remoteExternal = { kind: 'remote', url: 'http://127.0.0.1:9/v1/chat/completions', model: 'grader' };

function problems(input: Record<string, unknown>): string[] {
  try {
    parseExperiment(input);
  } catch (e) {
    return experimentProblems(e, input) ?? [String(e)];
  }
  return [];
}

describe('judge_external_fraction and judge_external', () => {
  it('default to off and validate the fraction', () => {
    expect(parseGrpoConfig({})).toMatchObject({ judge_external_fraction: 0, judge_external: null });
    expect(parseGrpoConfig({ judge_external_fraction: 0.25, judge_external: remoteExternal }).judge_external).toEqual(remoteExternal);
    expect(() => parseGrpoConfig({ judge_external_fraction: 1.5, judge_external: remoteExternal })).toThrow(/judge_external_fraction/);
    expect(() => parseGrpoConfig({ judge_external_fraction: -0.1, judge_external: remoteExternal })).toThrow(/judge_external_fraction/);
  });

  it('refuses a fraction without an external judge, and unfit external judges, with clear messages', () => {
    expect(problems({ ...base, config: { judge_external_fraction: 0.5 } })).toEqual([
      'Setting judge_external: is required when judge_external_fraction is above 0 (0.5): name the external judge (a remote endpoint, another model or a zero-shot classifier) under Judge → External grading, or set the fraction to 0',
    ]);
    expect(problems({ ...base, config: { judge_external_fraction: 0.5, judge_external: { kind: 'self' } } })[0]).toMatch(/^Setting judge_external: must be a remote endpoint, another model or a zero-shot classifier, got "self": the policy itself is the judge being checked/);
    expect(problems({ ...base, config: { judge_external_fraction: 0.5, judge_external: { kind: 'rules' } } })[0]).toMatch(/the rules answer no judge question/);
    // 4 groups a step (32 / 8): 0.1 of them rounds to none.
    expect(problems({ ...base, config: { judge_external_fraction: 0.1, judge_external: remoteExternal } })).toEqual([
      "Setting judge_external_fraction: 0.1 of a step's 4 groups is no group (whole groups are graded): use at least 0.125, or 0 for off",
    ]);
    expect(problems({ ...base, judge: { kind: 'rules' }, config: { judge_external_fraction: 0.5, judge_external: remoteExternal } })[0]).toMatch(/^Setting judge_external_fraction: grades a fraction of the run's judge verdicts externally, but with judge "rules" there is none/);
    expect(problems({ ...base, judge: { kind: 'remote', url: 'http://127.0.0.1:8/v1', model: 'm' }, config: { judge_external_fraction: 0.5, judge_external: remoteExternal } })[0]).toMatch(/a run holds one API key/);
    expect(problems({ ...base, judge: { kind: 'model', model: 'embedded/tiny-gpt2-byte' }, config: { judge_external_fraction: 0.5, judge_external: { kind: 'model', model: 'embedded/tiny-gpt2-byte' } } })[0]).toMatch(/is the run's own judge \(model embedded\/tiny-gpt2-byte\)/);
    // Off (fraction 0) with a judge named: kept, never built.
    expect(problems({ ...base, config: { judge_external: remoteExternal } })).toEqual([]);
    expect(problems({ ...base, config: { judge_external_fraction: 0.5, judge_external: remoteExternal } })).toEqual([]);
  });

  it('never carries a key', () => {
    for (const field of ['api_key', 'apiKey', 'token']) {
      expect(() => parseExperiment({ ...base, config: { judge_external_fraction: 0.5, judge_external: { ...remoteExternal, [field]: 'sk-1' } } })).toThrow(new RegExp(`config.judge_external: "${field}" is not allowed: an API key never travels`));
    }
    expect(() => decodeShareLink(encodeShareLink({ experiment: { ...base, config: { judge_external_fraction: 0.5, judge_external: { ...remoteExternal, api_key: 'sk-1' } } } as never }))).toThrow();
  });

  it('travels in a share link and a run file, with its step figures and the verdicts it graded', async () => {
    const config = { judge_external_fraction: 0.5, judge_external: remoteExternal };
    const back = decodeShareLink(encodeShareLink({ experiment: { ...base, config } as never }));
    expect(back.experiment.config).toMatchObject(config);
    const external_grading: ExternalGradingMetrics = {
      judge: 'remote:grader', fraction: 0.5, groups: 2, rollouts: 4, calls: 4, failed: 1, first_failure: '=HYPERLINK("x") failed', replaced: 3, seconds: 0.5,
      agreement: 2 / 3, leniency: 1 / 3, by_criterion: { polite: { n: 3, agree: 2, self_pass: 2, external_pass: 1 } },
    };
    const step = {
      step: 0, rewards: { reward: 0.5, reward_std: 0, criterion_pass_rate: { polite: 0.5 }, criterion_mean_score: { polite: 0.5 }, strict_completion_rate: 0, unscorable: 0, aggregations: {} }, held_out: null,
      completions: { mean_length: 1, min_length: 1, max_length: 1, clipped_ratio: 0 }, frac_reward_zero_std: 0, learning_rate: 1e-6, skipped: false,
      sampling_tokens_per_second: 1, training_tokens_per_second: 1, judge_seconds: 1, step_seconds: 1, update_submits: 1,
      loss: 0, policy_loss: 0, kl: null, entropy: 1, clip_ratio_low: 0, clip_ratio_high: 0, clip_ratio_region: 0, ratio_mean: 1, grad_norm: 0, external_grading,
    } as unknown as StepMetrics;
    const rollout = {
      step: 0, group: 0, index: 0, prompt: 'p', completion: 'c', completion_ids: [1], logprobs: [-1], truncated: false,
      results: [{ criterion_id: 'polite', status: 'ok', score: 0, reason: '[external remote:grader] no', external: 'graded' }], scores: [0], reward: 0, advantage: 0,
    } as unknown as RolloutRecord;
    const file = await readRunFile(await runFileJson({ name: 'x', exported_at: '2025-01-02T03:04:05.000Z', experiment: { ...base, config } as never, metrics: [step], rollouts: [rollout] }));
    expect((file.experiment.config as Record<string, unknown>).judge_external).toEqual(remoteExternal);
    expect(file.metrics[0].external_grading).toEqual(external_grading);
    expect(file.rollouts[0].results[0]).toEqual(rollout.results[0]);
    // The rollout inspector's chip says whose verdict it is.
    expect(chipsOf(file.rollouts[0], [{ id: 'polite', text: 'Polite', weight: 1 }], 0.5)[0]).toMatchObject({ verdict: 'fail', external: 'graded' });
    expect(chipsOf({ ...rollout, results: [{ criterion_id: 'polite', status: 'ok', score: 1, reason: 'self' }] }, [{ id: 'polite', text: 'Polite', weight: 1 }], 0.5)[0].external).toBeUndefined();
    // CSV: the step figures and per-criterion agreement / leniency, the failure text neutralised.
    expect(metricColumns([step])).toEqual(expect.arrayContaining(['external/calls', 'external/failed', 'external/agreement', 'external/leniency', 'external/agreement/polite', 'external/leniency/polite']));
    const csv = metricsToCsv([step]).split('\r\n');
    const header = csv[0].split(',');
    const row = csv[1].split(',');
    expect(Number(row[header.indexOf('external/agreement/polite')])).toBeCloseTo(2 / 3, 12);
    expect(Number(row[header.indexOf('external/leniency/polite')])).toBeCloseTo(1 / 3, 12);
    expect(Number(row[header.indexOf('external/calls')])).toBe(4);
    expect(metricsToCsv([step])).not.toMatch(/,=HYPERLINK/);
  });

  it('the TRL export says the external fraction is not exported', async () => {
    const { notes } = await exportToTrl({ ...base, judge: { kind: 'remote', url: 'http://127.0.0.1:8/v1', model: 'm' }, config: { judge_external_fraction: 0.5, judge_external: { kind: 'model', model: 'embedded/tiny-gpt2-byte' } } });
    expect(notes.join('\n')).toMatch(/judge_external_fraction 0.5 \(the page sent that share of each step's groups to the external judge, model embedded\/tiny-gpt2-byte, whose verdicts replaced the run's judge's there\) is not exported/);
    expect((await exportToTrl({ ...base, judge: { kind: 'remote', url: 'http://127.0.0.1:8/v1', model: 'm' } })).notes.join('\n')).not.toMatch(/judge_external/);
  });

  it('opens a foreign experiment with a remote external judge switched off, the endpoint kept', () => {
    const config = { judge_external_fraction: 0.5, judge_external: remoteExternal, seed: 3 };
    const held = withholdExternalRemote({ ...base, config });
    expect(held.held).toBe(true);
    expect(held.experiment.config).toEqual({ ...config, judge_external_fraction: 0 });
    expect(problems(held.experiment)).toEqual([]);
    // A judge on this page sends nothing anywhere: left as it is.
    const model = { ...base, config: { judge_external_fraction: 0.5, judge_external: { kind: 'model', model: 'embedded/tiny-gpt2-byte' } } };
    expect(withholdExternalRemote(model)).toEqual({ experiment: model, held: false });
    expect(withholdExternalRemote(base)).toEqual({ experiment: base, held: false });
  });
});
