// The rubric lab's aggregation options (correlation_weights, fork_precision_recall with fork_beta)
// and FORK's recall marks survive share links, run files and the TRL export.
import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl, rubricRewardSpec } from '../../../src/share/trlExport';

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
  it.each([{ method: 'fork_precision_recall', fork_beta: 2 }, { method: 'correlation_weights' }])('%o through a share link and a run file', async (aggregation) => {
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
});
