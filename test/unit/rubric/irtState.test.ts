// The irt_ability item table's checkpoint shape (src/rubric/irtState.ts): a table after several
// online EM steps survives JSON (serialise → parse) exactly and goes on to the same next table and
// rewards; a missing, malformed or foreign table gives a fresh one with a note naming the problem.
import { describe, expect, it } from 'vitest';
import { irtRubricRewards, irtRubricUpdate, type IrtOnlineState } from '../../../src/rubric/irtOnline';
import { IRT_STATE_FORMAT, IRT_STATE_VERSION, irtStateFromJson, irtStateToJson } from '../../../src/rubric/irtState';
import { weighted } from './fixtures';

const rubric = weighted([
  [1, 'important'],
  [2, 'essential'],
  [1, 'optional'],
]);
const batches: (number | null)[][][] = [
  [[1, 0, 1], [0, 0, null], [1, 1, 1], [0, 1, 0]],
  [[1, 1, 0], [null, null, null], [0, 0, 0], [1, 0, 1]],
  [[1, 1, 1], [1, 0, 0], [0, 1, 1], [1, 0, 1]],
];

function trained(): IrtOnlineState {
  let s: IrtOnlineState | null = null;
  for (const b of batches) s = irtRubricUpdate(rubric, s, b);
  return s!;
}

const roundTrip = (s: IrtOnlineState, version = 'v1', criteria = 3) => irtStateFromJson(JSON.parse(JSON.stringify(irtStateToJson(s, version))), criteria, version);

describe('irt_ability item table in checkpoints', () => {
  it('serialise → parse gives the identical table, and the next step and rewards are the same as without the round trip', () => {
    const s = trained();
    expect(s.steps).toBe(3);
    expect(s.params.some((p) => p.a !== 1 || p.c !== 0)).toBe(true);
    const back = roundTrip(s);
    expect(back.note).toBeNull();
    expect(back.state).toEqual(s); // bit-identical: JSON round-trips doubles exactly
    const next: (number | null)[][] = [[0, 1, 1], [1, 1, null], [0, 0, 1], [1, 1, 1]];
    const a = irtRubricUpdate(rubric, s, next);
    const b = irtRubricUpdate(rubric, back.state, next);
    expect(b).toEqual(a);
    expect(irtRubricRewards(rubric, b, next)).toEqual(irtRubricRewards(rubric, a, next));
  });

  it('the saved shape is versioned and names its rubric version; it is a copy, not the live table', () => {
    const s = trained();
    const json = irtStateToJson(s, 'abc');
    expect(json).toMatchObject({ format: IRT_STATE_FORMAT, version: IRT_STATE_VERSION, rubric_version: 'abc', criteria: 3, steps: 3 });
    json.params[0].a = 99;
    json.patterns[0][1] = 1000;
    expect(s.params[0].a).not.toBe(99);
    expect(s.patterns[0][1]).not.toBe(1000);
  });

  it('a missing table gives a fresh one, said so', () => {
    for (const saved of [undefined, null]) {
      const r = irtStateFromJson(saved, 3, 'v1');
      expect(r.state).toBeNull();
      expect(r.note).toMatch(/^irt_ability: the checkpoint has no IRT item table .*fresh item table/);
    }
  });

  it('a malformed table is refused with the problem and where it is (never a throw)', () => {
    const good = irtStateToJson(trained(), 'v1');
    const cases: [unknown, RegExp][] = [
      ['not an object', /not valid/],
      [{ ...good, version: 2 }, /at irt_state\.version/],
      [{ ...good, format: 'other' }, /at irt_state\.format/],
      [{ ...good, params: good.params.slice(1) }, /2 items for 3 criteria at irt_state\.params/],
      [{ ...good, params: [{ a: 1, c: 0 }, { a: 1, c: 0 }, { a: 'x', c: 0 }] }, /at irt_state\.params\.2\.a/],
      [{ ...good, patterns: [['1x0', 1]] }, /1, 0 and - at irt_state\.patterns\.0\.0/],
      [{ ...good, patterns: [['10', 1]] }, /pattern of 2 verdicts for 3 criteria at irt_state\.patterns\.0/],
      [{ ...good, patterns: [['---', 1]] }, /no scored criterion at irt_state\.patterns\.0/],
      [{ ...good, patterns: [['101', 0]] }, /at irt_state\.patterns\.0\.1/],
      [{ ...good, patterns: [['101', 1], ['101', 2]] }, /stored twice/],
      [{ ...good, steps: -1 }, /at irt_state\.steps/],
      [{ ...good, extra: 1 }, /extra/],
    ];
    for (const [saved, message] of cases) {
      const r = irtStateFromJson(saved, 3, 'v1');
      expect(r.state, JSON.stringify(saved).slice(0, 80)).toBeNull();
      expect(r.note).toMatch(/^irt_ability: the checkpoint's IRT item table is not valid/);
      expect(r.note).toMatch(message);
    }
    // Non-finite numbers cannot come from JSON, but a structured clone could carry them.
    expect(irtStateFromJson({ ...good, params: [{ a: Infinity, c: 0 }, ...good.params.slice(1)] }, 3, 'v1').state).toBeNull();
  });

  it('a table for another rubric version or criterion count is not used', () => {
    const s = trained();
    const other = irtStateFromJson(irtStateToJson(s, 'v1'), 3, 'v2');
    expect(other.state).toBeNull();
    expect(other.note).toMatch(/fitted for rubric version v1, this run's rubric is v2/);
    const count = irtStateFromJson(irtStateToJson(s, 'v1'), 4, 'v1');
    expect(count.state).toBeNull();
    expect(count.note).toMatch(/has 3 criteria, the rubric 4/);
  });
});
