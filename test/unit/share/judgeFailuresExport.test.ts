// Judge-failure metrics travel in run files and CSV, and the TRL export says the
// max_unscorable_fraction / on_unscorable options have no TRL equivalent.
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl } from '../../../src/share/trlExport';
import { metrics as storeMetrics } from '../store/fixtures';

const failures = judgeFailureMetrics(
  [
    { results: [{ criterion_id: 'polite', status: 'unscorable', score: null, reason: '=HTTP 500 from the endpoint' }], reward: null },
    { results: [{ criterion_id: 'polite', status: 'ok', score: 1, reason: 'yes' }], reward: 1 },
  ],
  0.25,
);
const withFailures = (step: number): StepMetrics => ({ ...storeMetrics(step), judge_failures: failures });

describe('judge failures in exports', () => {
  it('a run file keeps them, and still reads steps saved before they existed', async () => {
    const text = await runFileJson({ name: 'r', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [storeMetrics(0), withFailures(1)], rollouts: [] });
    const back = await readRunFile(text);
    expect(back.metrics[0].judge_failures).toBeUndefined();
    expect(back.metrics[1].judge_failures).toEqual(failures);
    expect(failures.over_threshold).toBe(true);
  });

  it('CSV has their columns (the reason quoted) only when a step has them', () => {
    expect(metricColumns([storeMetrics(0)])).not.toContain('judge/unscorable_fraction');
    const csv = metricsToCsv([storeMetrics(0), withFailures(1)]);
    const [header, first, second] = csv.trim().split(/\r?\n/);
    const cols = header.split(',');
    const at = (row: string, name: string) => row.split(',')[cols.indexOf(name)];
    expect(at(first, 'judge/unscorable_fraction')).toBe('');
    expect(at(second, 'judge/unscorable_fraction')).toBe('0.5');
    expect(at(second, 'judge/failed_verdicts')).toBe('1');
    expect(second.endsWith(',"criterion ""polite"": =HTTP 500 from the endpoint"')).toBe(true);
  });

  it('the TRL export notes that TRL has no such options, only when they differ from the defaults', async () => {
    const experiment = (config: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, ...config } });
    const plain = await exportToTrl(experiment({}));
    expect(plain.files['train_grpo.py']).not.toContain('on_unscorable');
    const stop = await exportToTrl(experiment({ on_unscorable: 'stop', max_unscorable_fraction: 0.2 }));
    expect(stop.files['train_grpo.py']).toMatch(/# max_unscorable_fraction 0.2, on_unscorable "stop": TRL has no such options/);
    expect(stop.notes.some((n) => n.includes('on_unscorable "stop"'))).toBe(true);
  });
});
