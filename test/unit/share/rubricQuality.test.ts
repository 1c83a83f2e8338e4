// The "Is my rubric any good?" lesson's measurement (scripts/page/rubricQuality.ts): a run's
// rubric measured on its rollouts and prompts, as lessons.mjs tabulates it, on a hand-made run.
import { describe, expect, it } from 'vitest';
import { lessonById } from '../../../src/share/lessons';
import { measureLessonRun, qualityFigures } from '../../../scripts/page/rubricQuality';

describe('rubric-quality measurement', () => {
  it('flags the saturated criterion, the correlation of the pair, the leaking criteria', async () => {
    const experiment = lessonById('rubric-quality')!.shared.experiment;
    // Criteria: on_topic, brief, finished, complete. Two groups of two; brief always met; finished = complete.
    const scores = [
      [1, 1, 1, 1],
      [0, 1, 0, 0],
      [1, 1, 0, 0],
      [0, 1, 1, 1],
    ];
    const rollouts = scores.map((s, i) => ({ step: 0, group: Math.floor(i / 2), index: i % 2, scores: s }));
    const q = await measureLessonRun(null as never, { runFile: JSON.stringify({ experiment, rollouts }) });
    expect(q.criteria.map((c) => [c.id, c.flag])).toEqual([
      ['on_topic', 'discriminative'],
      ['brief', 'saturated'],
      ['finished', 'discriminative'],
      ['complete', 'discriminative'],
    ]);
    expect(q.redundant).toEqual(['finished~complete']);
    expect(q.correlation['finished~complete']).toBeCloseTo(1, 12);
    expect(q.correlation['on_topic~brief']).toBeNull();
    expect(q.leakage).toEqual({ on_topic: { met: 8, judged: 8 }, complete: { met: 8, judged: 8 } });
    const f = qualityFigures(q);
    expect(f['brief saturated']).toBe(1);
    expect(f['finished saturated']).toBe(0);
    expect(f['brief within-var']).toBe(0);
    expect(f['on_topic within-var']).toBeCloseTo(0.25, 12);
    expect(f['on_topic leak share']).toBe(1);
  });
});
