// Bind groups are cached across recordings: a training step records the same dispatches over
// the same pooled buffers every time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('bind group cache', () => {
  it('reuses a bind group for the same buffers, makes a new one for others, and computes the same', async () => {
    const r = await harness.runModule('/test/harness/cases/bindGroups.ts', 'reuse', {});
    expect(r.sums).toEqual([[11, 22, 33, 44], [11, 22, 33, 44], [101, 202, 303, 404]]);
    // First run: new groups. Second run, same buffers (the output and uniform come back from the pool): all reused.
    expect(r.first.created).toBeGreaterThan(0);
    expect(r.second).toEqual({ created: 0, reused: r.first.created + r.first.reused });
    // Third run: the second input differs, so that dispatch needs a new group.
    expect(r.third.created).toBeGreaterThan(0);
  });
});
