// Human labels stored with a rubric version (RunStore on fake-indexeddb).
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RunStore } from '../../../src/store';
import { newRun } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(): Promise<RunStore> {
  const store = await RunStore.open({ name: `labels-${n++}`, storage: null });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

describe('rubric labels', () => {
  it('marks and verdict labels are stored with the rubric version, replaced and cleared per rollout', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    const v = run.experiment.rubricVersion;
    expect(await store.labels(v)).toEqual({ marks: [], verdicts: [] });
    await store.markRollout(v, { rollout: 'r/0/0/0', group: 'r/0/0' }, 'better');
    await store.markRollout(v, { rollout: 'r/0/0/1', group: 'r/0/0' }, 'worse');
    await store.markRollout(v, { rollout: 'r/0/0/0', group: 'r/0/0' }, 'worse'); // replaces
    await store.labelVerdict(v, { rollout: 'r/0/0/1', criterion: 'polite', score: 1 }, false);
    const labels = await store.labels(v);
    expect(labels.marks).toEqual([
      { rollout: 'r/0/0/1', group: 'r/0/0', label: 'worse' },
      { rollout: 'r/0/0/0', group: 'r/0/0', label: 'worse' },
    ]);
    expect(labels.verdicts).toEqual([{ rollout: 'r/0/0/1', criterion: 'polite', score: 1, correct: false }]);
    await store.markRollout(v, { rollout: 'r/0/0/1', group: 'r/0/0' }, null);
    await store.labelVerdict(v, { rollout: 'r/0/0/1', criterion: 'polite', score: 1 }, null);
    expect(await store.labels(v)).toEqual({ marks: [{ rollout: 'r/0/0/0', group: 'r/0/0', label: 'worse' }], verdicts: [] });
    // The rubric itself is unchanged by labels.
    expect(await store.rubric(v)).toEqual((await store.listRubrics())[0].rubric);
  });
  it('refuses an unknown version and an out-of-range score', async () => {
    const store = await open();
    const run = await store.createRun(newRun());
    await expect(store.markRollout('0'.repeat(64), { rollout: 'x', group: 'g' }, 'better')).rejects.toThrow(/is not stored/);
    await expect(store.labelVerdict(run.experiment.rubricVersion, { rollout: 'x', criterion: 'c', score: 2 }, true)).rejects.toThrow(/score must be in \[0, 1\]/);
  });
});
