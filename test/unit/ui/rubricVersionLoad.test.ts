// loadRubricVersion (src/ui/lib/rubricVersionLoad.ts): the run view's rubric version for the label
// panels. A slow earlier hash must never overwrite a newer load's version.
import { describe, expect, it } from 'vitest';
import { loadRubricVersion } from '../../../src/ui/lib/rubricVersionLoad';
import { rubricVersion } from '../../../src/rubric/version';
import { parseRubric, type Rubric } from '../../../src/rubric/schema';

const rubric = (id: string) => ({ name: 'r', criteria: [{ id, text: `Says ${id}.`, weight: 1, tier: 'essential', rule: { kind: 'contains', terms: [id] } }] });

/** A versionOf whose promises the test resolves by hand, in any order. */
function manualVersions() {
  const pending: { id: string; resolve: (v: string) => void }[] = [];
  const versionOf = (r: Rubric) => new Promise<string>((resolve) => pending.push({ id: r.criteria[0].id, resolve }));
  const settle = (id: string) => pending.find((p) => p.id === id)!.resolve(`version-of-${id}`);
  return { versionOf, settle, pending };
}
const flush = () => new Promise((r) => setTimeout(r, 0));

describe('loadRubricVersion', () => {
  it('two loads resolving out of order: the later-started one wins (the effect cancels the earlier one)', async () => {
    const m = manualVersions();
    const seen: (string | null)[] = [];
    let version: string | null = 'stale';
    const set = (v: string | null) => {
      version = v;
      seen.push(v);
    };
    // What a $effect does when the run's rubric changes: cleanup of the first run, then the second run.
    const cancelFirst = loadRubricVersion(rubric('a'), set, m.versionOf);
    cancelFirst();
    loadRubricVersion(rubric('b'), set, m.versionOf);
    expect(m.pending.map((p) => p.id)).toEqual(['a', 'b']);
    m.settle('b');
    await flush();
    m.settle('a'); // the slow earlier hash arrives last
    await flush();
    expect(version).toBe('version-of-b');
    expect(seen).toEqual([null, null, 'version-of-b']);
  });

  it('the real hash; undefined or a rubric that does not parse gives null and hashes nothing', async () => {
    let version: string | null = 'x';
    loadRubricVersion(rubric('a'), (v) => (version = v));
    expect(version).toBeNull(); // cleared at once, before the hash
    await new Promise((r) => setTimeout(r, 20));
    expect(version).toBe(await rubricVersion(parseRubric(rubric('a'))));
    const m = manualVersions();
    for (const raw of [undefined, { criteria: 'no' }]) {
      version = 'x';
      loadRubricVersion(raw, (v) => (version = v), m.versionOf)();
      expect(version).toBeNull();
    }
    expect(m.pending).toHaveLength(0);
  });
});
