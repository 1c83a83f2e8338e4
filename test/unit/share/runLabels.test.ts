// Human labels travel in run files: the store's labels of a run (keyed by its local id) are
// written per rubric version, read back through the schema, and land under another run id as the
// store keeps them. A label that does not fit the file (unknown version, rollout or criterion, a
// rollout marked twice, a malformed key) refuses the whole file, naming it.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { labelsForFile, labelsFromFile, type RunFileLabels } from '../../../src/share/runLabels';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { RunStore } from '../../../src/store';
import { metrics, rollouts } from '../store/fixtures';

const experiment = () => structuredClone(FIRST_VISIT.experiment);
const version = () => rubricVersion(parseRubric(FIRST_VISIT.experiment.rubric));
const ROLLOUTS = [...rollouts(0), ...rollouts(1)];

describe('labels in run files', () => {
  it('round trip: store → file → store, only this run’s labels of rollouts in the file', async () => {
    const store = await RunStore.open({ name: 'run-labels-1', storage: null });
    const v = await version();
    const run = await store.createRun({ name: 'r', modelId: 'embedded-tiny', prompts: ['p'], rubric: parseRubric(FIRST_VISIT.experiment.rubric), config: structuredClone(FIRST_VISIT.experiment.config) as never });
    expect(run.experiment.rubricVersion).toBe(v);
    const id = run.id;
    await store.markRollout(v, { rollout: `${id}/1/0/0`, group: `${id}/1/0` }, 'better');
    await store.markRollout(v, { rollout: `${id}/1/0/1`, group: `${id}/1/0` }, 'worse');
    await store.labelVerdict(v, { rollout: `${id}/1/0/1`, criterion: 'short', score: 1 }, false);
    // Another run's label and a label of a rollout the file does not hold stay behind.
    await store.markRollout(v, { rollout: `other/1/0/0`, group: `other/1/0` }, 'better');
    await store.markRollout(v, { rollout: `${id}/9/0/0`, group: `${id}/9/0` }, 'better');
    const stored = await store.labels(v);
    store.close();

    const labels = labelsForFile(id, new Map([[v, stored]]), ROLLOUTS);
    expect(labels).toEqual([
      {
        version: v,
        marks: [
          { rollout: '1/0/0', label: 'better' },
          { rollout: '1/0/1', label: 'worse' },
        ],
        verdicts: [{ rollout: '1/0/1', criterion: 'short', score: 1, correct: false }],
      },
    ]);
    const text = await runFileJson({ name: 'r', experiment: experiment(), metrics: [metrics(0), metrics(1)], rollouts: ROLLOUTS, labels });
    const back = await readRunFile(text);
    expect(back.labels).toEqual(labels);
    // Written again (as the page re-exports an opened file), they are the same.
    expect((await readRunFile(await runFileJson({ ...back, rubric_versions: undefined }))).labels).toEqual(labels);
    // Under a new run id, in the store's form: the group is the rollout's step and group.
    expect(labelsFromFile('new', back.labels![0])).toEqual({
      marks: [
        { rollout: 'new/1/0/0', group: 'new/1/0', label: 'better' },
        { rollout: 'new/1/0/1', group: 'new/1/0', label: 'worse' },
      ],
      verdicts: [{ rollout: 'new/1/0/1', criterion: 'short', score: 1, correct: false }],
    });
    // No labels: the document has no labels field.
    const plain = await runFileJson({ name: 'r', experiment: experiment(), metrics: [], rollouts: ROLLOUTS, labels: [] });
    expect(JSON.parse(plain).labels).toBeUndefined();
    expect((await readRunFile(plain)).labels).toBeUndefined();
  });

  it('a label that does not fit the file is refused, naming it', async () => {
    const v = await version();
    const file = (labels: RunFileLabels[]) => runFileJson({ name: 'r', experiment: experiment(), metrics: [], rollouts: ROLLOUTS, labels });
    const ok: RunFileLabels = { version: v, marks: [{ rollout: '0/0/0', label: 'better' }], verdicts: [] };
    await expect(readRunFile(await file([ok]))).resolves.toBeTruthy();
    await expect(readRunFile(await file([{ ...ok, version: 'a'.repeat(64) }]))).rejects.toThrow(/labels\[0\]: version aaaaaaaaaaaa… is not one of the run's rubric versions/);
    await expect(readRunFile(await file([{ ...ok, marks: [{ rollout: '5/0/0', label: 'better' }] }]))).rejects.toThrow(/marks\[0\]: rollout 5\/0\/0 is not in the file/);
    await expect(
      readRunFile(
        await file([
          {
            ...ok,
            marks: [
              { rollout: '0/0/0', label: 'better' },
              { rollout: '0/0/0', label: 'worse' },
            ],
          },
        ]),
      ),
    ).rejects.toThrow(/marks\[1\]: rollout 0\/0\/0 is marked twice/);
    await expect(readRunFile(await file([{ ...ok, verdicts: [{ rollout: '0/0/0', criterion: 'polite', score: 1, correct: true }] }]))).rejects.toThrow(
      /verdicts\[0\]: criterion "polite" is not in that rubric version/,
    );
    // The schema: a key that is not step/group/index, a score outside [0, 1], an unknown field.
    const text = await file([ok]);
    await expect(readRunFile(text.replace('"rollout":"0/0/0"', '"rollout":"run/0/0/0"'))).rejects.toThrow(/labels/);
    await expect(readRunFile(text.replace('"label":"better"', '"label":"best"'))).rejects.toThrow(/labels/);
    await expect(readRunFile(text.replace('"marks":[', '"script":"x","marks":['))).rejects.toThrow(/labels/);
  });
});
