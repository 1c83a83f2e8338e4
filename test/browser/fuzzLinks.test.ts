// The hostile-links suite, short: a few dozen generated links and run files (every category of
// scripts/fuzz/hostileCases.mjs at least once; the full run is `node scripts/fuzz-links.mjs`)
// against the app page with one saved run. None may run a script, hang, throw uncaught or change
// the saved run; every refusal names its problem; the valid ones (positive controls) open and
// show their content, so a page that refused everything would fail here too.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { hostileCases, LINK_CATEGORIES, RUN_FILE_CATEGORIES } from '../../scripts/fuzz/hostileCases.mjs';
import { preparePage, runCases, summaryLine, type FuzzTotals } from '../../scripts/fuzz/runFuzz.mjs';
import { openApp } from '../helpers/appPage';

let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  ({ opened, page } = await openApp('/'));
});
afterAll(async () => {
  await opened?.close();
});

describe('hostile links and run files', () => {
  it('a few dozen: no script runs, no hang, no uncaught error, the saved run unchanged; valid ones open', async () => {
    const { experiment, runFile, dbName } = await preparePage(page);
    // A cycle is every link category and half as many run files: 45 cases give every link
    // category twice and every run-file category once.
    const cases = hostileCases({ seed: 7, count: 45, experiment, runFile });
    expect(new Set(cases.filter((c) => c.kind === 'link').map((c) => c.category))).toEqual(new Set(LINK_CATEGORIES));
    expect(new Set(cases.filter((c) => c.kind === 'runfile').map((c) => c.category))).toEqual(new Set(RUN_FILE_CATEGORIES));
    // Bounds ×3: CI machines are busy; a real freeze (a loop, a backtracking regex) exceeds any of them.
    const result: FuzzTotals = await runCases({ page, pageErrors: opened.pageErrors, cases, dbName, boundScale: 3 });
    const detail = `${summaryLine(result)}\n${result.failures.map((f) => `#${f.id} ${f.kind} ${f.category} (${f.note}): ${f.problems.join('; ')}`).join('\n')}`;
    expect(result.cases, detail).toBe(cases.length);
    expect(result.scriptsRun, detail).toBe(0);
    expect(result.hangs, detail).toBe(0);
    expect(result.uncaughtErrors, detail).toBe(0);
    expect(result.savedRunsChanged, detail).toBe(0);
    expect(result.unclearMessages, detail).toBe(0);
    expect(result.unexpectedOutcomes, detail).toBe(0);
    // The controls (valid links and run files) opened; the hostile ones were mostly refused.
    const controls = cases.filter((c) => c.expect === 'open').length;
    expect(controls).toBeGreaterThanOrEqual(3);
    expect(result.opened).toBeGreaterThanOrEqual(controls);
    expect(result.refused).toBeGreaterThan(cases.length / 2);
  });

  it('the counters see what they count: a page that runs a script, throws and edits the saved run on a link', async () => {
    const { experiment, runFile, dbName } = await preparePage(page);
    const control = hostileCases({ seed: 7, count: 1, experiment, runFile });
    expect(control[0]).toMatchObject({ kind: 'link', category: 'control' });
    // Sabotage standing in for a broken page: on the next hashchange, what no link may cause.
    await page.evaluate((name) => {
      addEventListener(
        'hashchange',
        () => {
          (window as { __pwned?: number }).__pwned = 1;
          setTimeout(() => {
            throw new Error('sabotage');
          });
          const open = indexedDB.open(name);
          open.onsuccess = () => {
            const tx = open.result.transaction('runs', 'readwrite');
            const runs = tx.objectStore('runs');
            const all = runs.getAll();
            all.onsuccess = () => runs.put({ ...all.result[0], name: 'changed by a link' });
            tx.oncomplete = () => open.result.close();
          };
        },
        { once: true },
      );
    }, dbName);
    const result = await runCases({ page, pageErrors: opened.pageErrors, cases: control, dbName, boundScale: 3 });
    expect(result).toMatchObject({ cases: 1, scriptsRun: 1, uncaughtErrors: 1, savedRunsChanged: 1, hangs: 0 });
  });
});
