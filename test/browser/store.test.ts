// The run store in headless Chromium: real IndexedDB (transactions, structured clone of
// ArrayBuffers, the v1 → v2 upgrade), real Web Locks within one page and across two tabs, and
// navigator.storage. The Node tests (test/unit/store) cover every API on fake-indexeddb.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';

const CASES = '/test/harness/cases/store.ts';
let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('RunStore on Chromium IndexedDB', () => {
  it('commits, reads back, rolls back a failed step, prunes, survives reopening and deletes', async () => {
    const r = await harness.runModule(CASES, 'smoke', { name: 'rubric-playground' });
    expect(r.failed.name).toBe('DataCloneError');
    expect(r.afterFailure).toEqual({ lastStep: 2, step3: 0, metricSteps: [0, 1, 2], latest: 2 });
    expect(r.latest.step).toBe(2);
    expect(r.latest.weights).toEqual(r.latest.expected);
    expect(r.listed.checkpoints).toEqual([1, 2]);
    expect(r.listed.usage.rollouts.count).toBe(12);
    expect(r.listed.usage.checkpoints.bytes).toBeGreaterThan(2 * 3 * 64 * 1024);
    expect(r.listed.bytes).toBe(r.listed.usage.rollouts.bytes + r.listed.usage.metrics.bytes + r.listed.usage.checkpoints.bytes);
    expect(r.impolite).toEqual([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1], [2, 0, 1], [2, 1, 1]]);
    expect(r.pruned.deleted).toBe(8);
    expect(r.estimate.quota).toBeGreaterThan(0);
    expect(r.estimate.usage).toBeGreaterThanOrEqual(0);
    expect(typeof r.persisted).toBe('boolean');
    expect(r.survived).toMatchObject({ lastStep: 2, rollouts: [2, 2, 2, 2], checkpoints: [1, 2], optimizerBytes: 2 * 64 * 1024 });
    expect(r.survived.weights).toEqual(r.latest.expected);
    expect(r.deleted).toBe(true);
    expect(r.afterDelete.runs).toBe(0);
    expect(r.afterDelete.rollouts.name).toBe('RunNotFoundError');
  });

  it('upgrades a version 1 database written by this browser', async () => {
    const r = await harness.runModule(CASES, 'migrateV1', { name: 'store-v1' });
    expect(r.usage.rollouts.count).toBe(8);
    expect(r.usage.checkpoints.count).toBe(1);
    expect(r.lastCheckpointStep).toBe(1);
    expect(r.step1).toEqual([[0, 0, 'tea please 1'], [0, 1, 'tea now 1'], [1, 0, 'tea please 1'], [1, 1, 'tea now 1']]);
    expect(r.weights).toEqual(r.expected);
  });
});

describe('run locks with Web Locks', () => {
  it('refuses a second concurrent holder in the same page, then frees the lock', async () => {
    const r = await harness.runModule(CASES, 'concurrentLocks', { runId: 'same-page' });
    expect(r.usesWebLocks).toBe(true);
    expect(r.second).toMatchObject({ name: 'RunLockedError', locked: true });
    expect(r.second.message).toMatch(/run "same-page" is open in another tab or window/);
    expect(r.order).toEqual(['first acquired', 'first done']);
    expect(r.firstResult).toBe('first');
    expect(r.third).toBe('third');
  });

  it('a second tab is told the run is busy until the first tab releases it', async () => {
    const second: Page = await harness.page.context().newPage();
    try {
      await second.goto(harness.url);
      await second.evaluate(() => window.harnessReady);
      const inSecond = (fn: string) => second.evaluate(([p, f, i]) => window.harness.runModule(p, f, i), [CASES, fn, { runId: 'two-tabs' }] as const);
      expect(await harness.runModule(CASES, 'holdLock', { runId: 'two-tabs' })).toEqual({ holding: true });
      const refused = (await inSecond('tryLock')) as { ran: boolean; name: string; message: string };
      expect(refused).toMatchObject({ ran: false, name: 'RunLockedError' });
      expect(refused.message).toMatch(/run "two-tabs" is open in another tab or window, which holds its lock/);
      expect(await harness.runModule(CASES, 'releaseLock', null)).toEqual({ released: true });
      expect(await inSecond('tryLock')).toEqual({ ran: true });
      // Closing the holder's tab frees its lock too.
      expect(await inSecond('holdLock')).toEqual({ holding: true });
      expect(await harness.runModule(CASES, 'tryLock', { runId: 'two-tabs' })).toMatchObject({ ran: false, name: 'RunLockedError' });
      await second.close();
      await expect.poll(() => harness.runModule(CASES, 'tryLock', { runId: 'two-tabs' }), { timeout: 5000 }).toEqual({ ran: true });
    } finally {
      if (!second.isClosed()) await second.close();
    }
  });
});
