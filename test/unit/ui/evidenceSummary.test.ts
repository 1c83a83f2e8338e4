// The run view's evidence-required credit summary (src/ui/lib/evidenceSummary.ts).
import { describe, expect, it } from 'vitest';
import { evidenceSummary } from '../../../src/ui/lib/evidenceSummary';

const c = (passes: number, withheld: number, probed: number, vacuous: number) => ({ passes, quoted: passes - withheld, withheld, probed, vacuous, fell: probed - vacuous });

describe('evidence summary', () => {
  it('is null when no step carries evidence counts', () => {
    expect(evidenceSummary([{ step: 0 }, { step: 1 }])).toBeNull();
    expect(evidenceSummary([])).toBeNull();
  });

  it('sums each criterion over the steps, with the vacuous rate of the probed passes, and gives the last step', () => {
    const s = evidenceSummary([
      { step: 0, evidence: { by_criterion: { a: c(4, 1, 3, 1) }, passes: 4, withheld: 1, probed: 3, vacuous: 1 } },
      { step: 1 },
      { step: 2, evidence: { by_criterion: { a: c(2, 0, 2, 2), b: c(1, 1, 0, 0) }, passes: 3, withheld: 1, probed: 2, vacuous: 2 } },
    ])!;
    expect(s.steps).toBe(2);
    expect(s.rows).toEqual([
      { criterion_id: 'a', passes: 6, withheld: 1, probed: 5, vacuous: 3, vacuous_rate: 0.6 },
      { criterion_id: 'b', passes: 1, withheld: 1, probed: 0, vacuous: 0, vacuous_rate: null },
    ]);
    expect(s.last).toEqual({ step: 2, passes: 3, withheld: 1, probed: 2, vacuous: 2 });
  });
});
