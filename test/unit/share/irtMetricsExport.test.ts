// irt_ability's per-step item table (StepMetrics.irt: a and b per criterion id) travels in run
// files and CSV, and steps without it (older runs, other methods) still read and write.
import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { irtRubricUpdate, irtStateItems } from '../../../src/rubric/irtOnline';
import { irtMetrics } from '../../../src/rubric/irtState';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { metrics as storeMetrics } from '../store/fixtures';
import { weighted } from '../rubric/fixtures';

const rubric = weighted([
  [1, 'important'],
  [1, 'important'],
]);
const state = irtRubricUpdate(rubric, null, [
  [1, 0],
  [1, 1],
  [0, 0],
  [1, null],
]);
const irt = irtMetrics(['c0', 'c1'], state);
const withIrt = (step: number): StepMetrics => ({ ...storeMetrics(step), irt });

describe('IRT item table in step metrics', () => {
  it('irtMetrics is the state as a and b = −c / a per criterion id, with the step and pattern counts', () => {
    const items = irtStateItems(state);
    expect(irt).toEqual({ steps: 1, patterns: 4, by_criterion: { c0: { a: items[0].a, b: items[0].b }, c1: { a: items[1].a, b: items[1].b } } });
    expect(items[0].b).toBeLessThan(items[1].b); // c0 passes more often: easier
    expect(irtMetrics(['x'], { steps: 0, params: [{ a: 0, c: 1 }], patterns: [] }).by_criterion.x.b).toBeNull();
    expect(Object.is(irtMetrics(['x'], { steps: 0, params: [{ a: 1, c: 0 }], patterns: [] }).by_criterion.x.b, 0)).toBe(true);
    expect(() => irtMetrics(['x'], state)).toThrow(/2 criteria, the rubric 1/);
  });

  it('a run file keeps it, and still reads steps without it', async () => {
    const text = await runFileJson({ name: 'r', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [storeMetrics(0), withIrt(1)], rollouts: [] });
    const back = await readRunFile(text);
    expect(back.metrics[0].irt).toBeUndefined();
    expect(back.metrics[1].irt).toEqual(irt);
  });

  it('a run file with a malformed table is refused naming the field', async () => {
    const text = await runFileJson({ name: 'r', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [withIrt(0)], rollouts: [] });
    const bad = text.replace('"patterns": 4', '"patterns": -1').replace('"patterns":4', '"patterns":-1');
    expect(bad).not.toBe(text);
    await expect(readRunFile(bad)).rejects.toThrow(/irt/);
  });

  it('CSV has irt/a/<id> and irt/b/<id> columns only when a step has the table', () => {
    expect(metricColumns([storeMetrics(0)]).some((c) => c.startsWith('irt/'))).toBe(false);
    const csv = metricsToCsv([storeMetrics(0), withIrt(1)]);
    const [header, first, second] = csv.trim().split(/\r?\n/);
    const cols = header.split(',');
    expect(cols.filter((c) => c.startsWith('irt/'))).toEqual(['irt/a/c0', 'irt/b/c0', 'irt/a/c1', 'irt/b/c1']);
    const at = (row: string, name: string) => row.split(',')[cols.indexOf(name)];
    expect(at(first, 'irt/a/c0')).toBe('');
    expect(Number(at(second, 'irt/a/c0'))).toBeCloseTo(irt.by_criterion.c0.a, 10);
    expect(Number(at(second, 'irt/b/c1'))).toBeCloseTo(irt.by_criterion.c1.b!, 10);
  });
});
