// The rubric lab's aggregation options (correlation_weights, fork_precision_recall with fork_beta)
// and FORK's recall marks survive share links, run files and the TRL export.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl, exportToTrlZip, IRT_EXPORT_REFUSAL, rubricRewardSpec } from '../../../src/share/trlExport';

const RUBRIC = {
  name: 'fork',
  criteria: [
    { id: 'covers', text: 'Covers the cause', weight: 2, tier: 'essential', rule: { kind: 'contains', terms: ['moon'] }, recall: true },
    { id: 'short', text: 'At most 30 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 30 } },
  ],
};
const experiment = (aggregation: Record<string, unknown>) => ({
  ...structuredClone(FIRST_VISIT.experiment),
  rubric: RUBRIC,
  config: { ...FIRST_VISIT.experiment.config, reward_aggregation: aggregation },
});

describe('rubric lab options round-trip', () => {
  it.each([{ method: 'fork_precision_recall', fork_beta: 2 }, { method: 'correlation_weights' }, { method: 'irt_ability' }, { method: 'irt_ability', irt_judge_budget: 3 }])('%o through a share link and a run file', async (aggregation) => {
    const s: Shared = { experiment: experiment(aggregation) as Shared['experiment'] };
    const back = decodeShareLink(encodeShareLink(s));
    expect(back).toEqual(s);
    const parsed = parseExperiment(back.experiment);
    expect(parsed.config.reward_aggregation).toEqual(aggregation);
    expect(parsed.rubric.criteria.map((c) => c.recall ?? false)).toEqual([true, false]);
    const file = await readRunFile(await runFileJson({ name: 'r', experiment: experiment(aggregation) as never, metrics: [], rollouts: [] }));
    expect(parseExperiment(file.experiment).config.reward_aggregation).toEqual(aggregation);
    expect(JSON.stringify(file)).toContain('"recall":true');
  });

  it('the TRL export writes the method, fork_beta and the recall marks into rubric_reward.py', async () => {
    const spec = await rubricRewardSpec(experiment({ method: 'fork_precision_recall', fork_beta: 2 }));
    expect(spec.reward.aggregation).toMatchObject({ method: 'fork_precision_recall', fork_beta: 2 });
    expect(spec.reward.criteria.map((c) => c.recall ?? false)).toEqual([true, false]);
    const { files } = await exportToTrl(experiment({ method: 'correlation_weights' }));
    expect(files['train_grpo.py']).toMatch(/correlation_weights: rubric_reward.py estimates the criterion correlations from each call's completions/);
  });

  it('the TRL export refuses irt_ability (its item table spans the run; rubric_reward.py has no memory across batches), saying why', async () => {
    const refusal = /reward_aggregation "irt_ability" cannot be exported to TRL: .*online EM.*no memory of earlier batches.*Export with another reward aggregation/;
    expect(IRT_EXPORT_REFUSAL).toMatch(refusal);
    await expect(rubricRewardSpec(experiment({ method: 'irt_ability' }))).rejects.toThrow(refusal);
    await expect(exportToTrl(experiment({ method: 'irt_ability' }))).rejects.toThrow(refusal);
    await expect(exportToTrlZip(experiment({ method: 'irt_ability' }))).rejects.toThrow(refusal);
    // Another method of the same experiment still exports.
    await expect(exportToTrl(experiment({ method: 'weighted_mean' }))).resolves.toBeDefined();
  });

  it.skipIf(spawnSync('python3', ['--version']).status !== 0)('rubric_reward.py refuses a hand-edited irt_ability spec with the reason', async () => {
    const { files } = await exportToTrl(experiment({ method: 'weighted_mean' }));
    const dir = mkdtempSync(join(tmpdir(), 'irt-python-'));
    try {
      writeFileSync(join(dir, 'rubric_reward.py'), files['rubric_reward.py']);
      const call = (method: string) =>
        spawnSync('python3', ['-c', `import rubric_reward as r\nc = r.SPEC["reward"]["criteria"]\nprint(r.aggregate_group(c, [[1] * len(c)], dict(r.SPEC["reward"]["aggregation"], method="${method}")))`], {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
          timeout: 60_000,
        });
      const ok = call('weighted_mean');
      expect(ok.stderr).toBe('');
      expect(ok.stdout.trim()).toBe('[1.0]');
      const refused = call('irt_ability');
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toMatch(/ValueError: irt_ability needs the item parameters the page fits over the whole run \(online EM\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
