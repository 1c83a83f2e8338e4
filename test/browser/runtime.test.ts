// The GPU runtime in a real browser: buffer reuse, one submission for many dispatches,
// pipeline caching, WGSL errors surfaced with the kernel's name, device loss surfaced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('GPU runtime', () => {
  it('reuses pooled buffers of the same size bucket and refuses double release', async () => {
    const r = await harness.evaluate(() => window.harness.checks.poolReuse(window.harness.runtime), null);
    expect(r.sameBuffer).toBe(true);
    expect(r.reused).toBe(1);
    expect(r.created).toBe(2);
    expect(r.sizes[0]).toBeGreaterThanOrEqual(1000);
    expect(r.sizes[1]).toBeGreaterThanOrEqual(5000);
    expect(r.doubleRelease).toMatch(/was not handed out by this pool/);
  });

  it('records 53 dispatches and two reads into one submission; pipelines are cached per constants', async () => {
    const r = await harness.evaluate(() => window.harness.checks.manyDispatchesOneSubmit(window.harness.runtime), null);
    expect(r.values).toEqual([80, 80]); // 50 x 1 + 3 x 10
    expect(r.submits).toBe(1);
    expect(r.dispatches).toBe(53);
    expect(r.readbacks).toBe(2);
    expect(r.bytesRead).toBe(8);
    expect(r.compiled).toBeLessThanOrEqual(2);
  });

  it('profiles kernels: every dispatch of the recordings made inside is timed, by kernel and constants, results unchanged', async () => {
    const r = await harness.evaluate(() => window.harness.checks.profiledDispatches(window.harness.runtime), null);
    // 3 x 1 + 10 (two workgroups of 64: the first 128 values) + 1 in the second recording.
    expect([r.first, r.last]).toEqual([14, 4]);
    expect(r.kernels).toEqual(['test.fill:main', 'test.fill:main', 'test.fill:main', 'test.fill:main {"VALUE":10}', 'test.fill:main']);
    expect(r.workgroups).toEqual([4, 4, 4, 2, 4]);
    expect(r.allTimed).toBe(true);
    expect(r.totals).toEqual(expect.arrayContaining([['test.fill:main', 4], ['test.fill:main {"VALUE":10}', 1]]));
    expect(r.totals).toHaveLength(2);
    expect(r.nested).toMatch(/do not nest/);
  });

  it('surfaces a WGSL error with the kernel name instead of computing zeros', async () => {
    const message = await harness.evaluate(() => window.harness.checks.brokenShader(window.harness.runtime), null);
    expect(message).toMatch(/test\.broken:main failed to build/);
    expect(message).toMatch(/missing/);
  });

  it('names the limit when logits exceed one storage binding', async () => {
    const message = await harness.evaluate(() => window.harness.checks.oversizedLogits(window.harness.runtime), null);
    expect(message).toMatch(/storage binding limit/);
    expect(message).toMatch(/process at most \d+ rows at a time/);
  });

  it('surfaces device loss to callers', async () => {
    const r = await harness.evaluate(() => window.harness.checks.deviceLoss(), null);
    expect(r.reason).toBe('destroyed');
    expect(r.lostMessage).toMatch(/destroyed/);
    expect(r.recorderError).toMatch(/device was lost/);
  });

  it('a submission and readback pending when the device is destroyed finish or fail as a device loss, never hang', async () => {
    const r = await harness.evaluate(() => window.harness.checks.readbackDuringLoss({ waitMs: 20_000 }), null);
    expect(r.outcome, 'the readback never settled after destroy()').not.toBe('still pending');
    for (const o of r.outcome as string[]) expect(o).toMatch(/^(finished|GpuDeviceLostError: the GPU device was lost \(destroyed)/);
  });
});
