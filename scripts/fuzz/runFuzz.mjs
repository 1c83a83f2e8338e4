// Runs hostile cases (scripts/fuzz/hostileCases.mjs) against the app page open in headless
// Chromium and counts what must never happen: a script that runs, a hang, an uncaught error, a
// saved run that changes. Shared by scripts/fuzz-links.mjs and test/browser/fuzzLinks.test.ts.
//
// Per case: a link is opened by changing location.hash (the page's hashchange handler has it
// read in a worker, saying "Opening the share link…" meanwhile); a run file is fed to the
// "Import a run file" input. The case ends when the refusal banner
// (link-error) or the import message naming the file shows, or the link's experiment is in the
// builder. Measured: the time to that outcome and the longest main-thread stall meanwhile (a
// 20 ms setInterval ping in the page). A hang is an outcome later than the bound, a stall
// longer than the bound, or no outcome at all. "Scripts run": the canary window.__pwned set,
// a dialog opened, an injected element with an on* handler, <script>, <iframe> or javascript:
// URL in the DOM, or Object.prototype polluted. "Saved runs changed": the SHA-256 of every record
// of the app's IndexedDB (one run with a step and a rollout, seeded first) differs from before.
import { BASE_METRICS, BASE_ROLLOUT, hostileCases } from './hostileCases.mjs';

/**
 * Bounds (ms) on the time to an outcome and on any main-thread stall meanwhile: a link; a run
 * file (its bytes cross the DevTools protocol too); a valid experiment of megabytes (10,000
 * prompts: the browser's own layout of the prompts box takes over a second of it).
 */
export const LINK_BOUND_MS = 2000;
export const FILE_BOUND_MS = 10_000;
export const HEAVY_BOUND_MS = 8000;
/** "Try it" scoring a long response on the opened rubric: its 3 s budget, the debounce and slack. */
export const TRY_IT_BOUND_MS = 5000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve({ timedOut: true }), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Installs the in-page probes: the main-thread ping, rejection count. Idempotent. */
async function installProbes(page) {
  await page.evaluate(() => {
    if (window.__fuzzProbe) return;
    window.__fuzzProtoKeys = Object.getOwnPropertyNames(Object.prototype).length;
    const p = { maxGap: 0, last: performance.now(), rejections: 0 };
    window.__fuzzProbe = p;
    setInterval(() => {
      const t = performance.now();
      p.maxGap = Math.max(p.maxGap, t - p.last);
      p.last = t;
    }, 20);
    addEventListener('unhandledrejection', () => p.rejections++);
  });
}

/** What a script payload would leave behind, as counts (compared with the page before the first case). */
function hostileTraces() {
  let handlers = 0;
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) if (/^on/i.test(a.name)) handlers++;
  }
  return {
    pwned: window.__pwned ?? null,
    handlers,
    scripts: document.querySelectorAll('script:not([src]), iframe, object, embed').length,
    jsUrls: document.querySelectorAll('[href^="javascript:" i], [src^="javascript:" i]').length,
    polluted: Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted') || Object.getOwnPropertyNames(Object.prototype).length !== window.__fuzzProtoKeys,
  };
}

/** SHA-256 (hex) of every record of every store of the app's database. */
function databaseDigest(dbName) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(dbName);
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      const db = req.result;
      const names = [...db.objectStoreNames].sort();
      const tx = db.transaction(names);
      const out = {};
      for (const name of names) {
        const all = tx.objectStore(name).getAll();
        all.onsuccess = () => (out[name] = all.result);
      }
      tx.oncomplete = async () => {
        db.close();
        const json = JSON.stringify(out, (_k, v) => (v instanceof ArrayBuffer ? Array.from(new Uint8Array(v)) : ArrayBuffer.isView(v) ? Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) : v));
        const hash = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(json));
        resolve({ digest: Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, '0')).join(''), runs: (out.runs ?? []).length });
      };
      tx.onerror = () => reject(tx.error);
    };
  });
}

/**
 * Seeds one saved run (with one step: metrics and a rollout) through the app's own store, and
 * returns the bases the cases start from: a valid experiment and a valid run file, both made by
 * the page's modules.
 */
export async function preparePage(page) {
  await installProbes(page);
  return page.evaluate(
    async ({ metrics, rollout }) => {
      // Spelled as text: a test runner that transforms this file must not rewrite the page's import().
      const load = new Function('path', 'return import(path)');
      const [{ FIRST_VISIT }, { runFileJson }, store, { parseExperiment }] = await Promise.all(
        ['/src/share/presets.ts', '/src/share/runFile.ts', '/src/store/index.ts', '/src/rl/experiment.ts'].map((p) => load(p)),
      );
      const experiment = FIRST_VISIT.experiment;
      const parsed = parseExperiment(experiment);
      const runs = await store.RunStore.open();
      try {
        const run = await runs.createRun({ name: 'fuzz: the saved run', modelId: experiment.model, prompts: experiment.prompts, rubric: parsed.rubric, config: parsed.config, status: 'finished' });
        await runs.commitStep(run.id, 0, metrics, [rollout]);
      } finally {
        runs.close();
      }
      const runFile = await runFileJson({ name: 'fuzz base', experiment, metrics: [metrics], rollouts: [rollout] });
      return { experiment, runFile, dbName: store.DB_NAME };
    },
    { metrics: BASE_METRICS, rollout: BASE_ROLLOUT },
  ).then(async (bases) => {
    // The page starts its link worker with the first link it reads (on a page opened with a link,
    // as it loads): started here with the base experiment's link, so the cases time the links,
    // not that start (2.8 s in the dev server on the busy machine; the README says so).
    await page.evaluate(async () => {
      const load = new Function('path', 'return import(path)');
      const [{ encodeShareLink }, { FIRST_VISIT }] = await Promise.all(['/src/share/link.ts', '/src/share/presets.ts'].map((p) => load(p)));
      location.hash = encodeShareLink({ experiment: FIRST_VISIT.experiment });
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 50));
      while (document.querySelector('[data-testid=link-opening]') && performance.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    });
    return bases;
  });
}

/** Opens one link in the page; resolves with its outcome. */
function openLinkInPage({ fragment, id, marker }) {
  const P = window.__fuzzProbe;
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const hashChange = (ms) =>
    new Promise((resolve) => {
      const done = (fired) => {
        clearTimeout(timer);
        removeEventListener('hashchange', onChange);
        resolve(fired);
      };
      const onChange = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      addEventListener('hashchange', onChange);
    });
  return (async () => {
    document.querySelector('[data-testid=link-error] button')?.click();
    let changed = hashChange(2000);
    location.hash = `#fuzz-${id}`;
    await changed;
    await frame();
    P.maxGap = 0;
    P.last = performance.now();
    const t0 = performance.now();
    changed = hashChange(5000);
    location.hash = fragment;
    const fired = await changed;
    await frame();
    await frame();
    // The link is read in a worker (src/share/linkDecoder.ts): wait while the page says it is opening one.
    const until = performance.now() + 60_000;
    while (document.querySelector('[data-testid=link-opening]') && performance.now() < until) await frame();
    const banner = document.querySelector('[data-testid=link-error] p');
    const prompts = document.querySelector('#builder textarea')?.value ?? '';
    return {
      ms: performance.now() - t0,
      maxGap: P.maxGap,
      outcome: !fired ? 'ignored' : banner ? 'refused' : 'opened',
      message: banner?.textContent ?? null,
      markerShown: marker ? prompts.includes(marker) : null,
    };
  })();
}

/**
 * Scores `text` in "Try it" (a worker with a time budget) and waits for a verdict or its "stopped"
 * message. An empty response first, so the wait is for this text's scoring, not an earlier one.
 */
function tryItInPage(text) {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const table = () => document.querySelector('[data-testid=tryit-table]');
  const stopped = () => document.querySelector('[data-testid=tryit-stopped]');
  const type = (value) => {
    const box = document.querySelector('[data-testid=tryit-response]');
    box.value = value;
    box.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const until = async (done, ms) => {
    const t0 = performance.now();
    while (!done()) {
      if (performance.now() - t0 > ms) return false;
      await sleep(20);
    }
    return true;
  };
  return (async () => {
    if (!document.querySelector('[data-testid=tryit-response]')) return { skipped: true };
    type('');
    if (!(await until(() => table()?.dataset.scoring === 'false' || stopped(), 20_000))) return { ms: Infinity, message: 'no verdict for an empty response' };
    const t0 = performance.now();
    type(text);
    // Scoring starts (the table says so) unless the rubric cannot be scored at all.
    await until(() => table()?.dataset.scoring === 'true', 2000);
    const finished = await until(() => table()?.dataset.scoring === 'false' || stopped(), 30_000);
    return { ms: finished ? performance.now() - t0 : Infinity, message: stopped()?.textContent ?? null };
  })();
}

/** Recomputes a run file's rubric version for its (edited) rubric, so the file is valid again. */
async function rehashInPage(text) {
  const { parseRubric, rubricVersion } = await new Function('path', 'return import(path)')('/src/rubric/index.ts');
  const doc = JSON.parse(text);
  try {
    doc.rubric_versions = [{ rubric: doc.experiment.rubric, first_step: 0, version: await rubricVersion(parseRubric(doc.experiment.rubric)) }];
  } catch {
    // A rubric the schema refuses stays as it is: the import refuses it.
  }
  return JSON.stringify(doc);
}

async function importFile(page, c) {
  let bytes = c.bytes;
  if (c.rehash) bytes = new TextEncoder().encode(await page.evaluate(rehashInPage, new TextDecoder().decode(bytes)));
  const zip = bytes[0] === 0x50 && bytes[1] === 0x4b;
  const name = `fuzz-${c.id}.rubric-run.${zip ? 'zip' : 'json'}`;
  await page.evaluate(() => {
    window.__fuzzProbe.maxGap = 0;
    window.__fuzzProbe.last = performance.now();
  });
  const t0 = performance.now();
  await page.getByTestId('import-run').setInputFiles({ name, mimeType: zip ? 'application/zip' : 'application/json', buffer: Buffer.from(bytes) });
  const shown = await page
    .waitForFunction((n) => document.querySelector('[data-testid=export-message]')?.textContent?.includes(n) ?? false, name, { timeout: FILE_BOUND_MS * 2, polling: 25 })
    .then(() => true)
    .catch(() => false);
  const ms = performance.now() - t0;
  const after = await page.evaluate((marker) => {
    const message = document.querySelector('[data-testid=export-message]')?.textContent ?? '';
    return { message, maxGap: window.__fuzzProbe.maxGap, viewing: document.querySelector('[data-testid=viewing]')?.textContent ?? '', marker: marker ? (document.querySelector('[data-testid=viewing]')?.textContent ?? '').includes(marker) : null };
  }, c.marker ?? null);
  return {
    ms,
    maxGap: after.maxGap,
    outcome: !shown ? 'none' : /^Opened /.test(after.message) ? 'opened' : 'refused',
    message: after.message,
    markerShown: after.marker,
  };
}

/** Wording that is not the page's: a raw JavaScript error leaking through instead of a message naming the problem. */
const UNCLEAR = /Cannot read prop|is not a function|is not defined|undefined is not|\[object Object\]|Maximum call stack|Unexpected token .* in JSON at position 0$|^the link could not be opened: /;

/**
 * Runs `cases` on the page (prepared with preparePage). Returns the counters and the details of
 * every case that failed one of them.
 */
export async function runCases({ page, pageErrors, cases, dbName, log = () => {}, boundScale = 1 }) {
  const dialogs = [];
  const onDialog = (d) => {
    dialogs.push(d.message());
    void d.dismiss().catch(() => {});
  };
  page.on('dialog', onDialog);
  const totals = { cases: 0, scriptsRun: 0, hangs: 0, uncaughtErrors: 0, savedRunsChanged: 0, unclearMessages: 0, unexpectedOutcomes: 0, opened: 0, refused: 0 };
  const failures = [];
  const byCategory = {};
  let maxLinkMs = 0;
  let maxFileMs = 0;
  let maxHeavyMs = 0;
  let maxTryItMs = 0;
  let tryItRuns = 0;
  /** The five cases with the longest outcome or stall. */
  const slowest = [];
  let maxStallMs = 0;
  const startTraces = await page.evaluate(hostileTraces);
  let { digest, runs } = await page.evaluate(databaseDigest, dbName);
  if (runs < 1) throw new Error('fuzz: no saved run to watch (preparePage seeds one)');
  try {
    for (const c of cases) {
      const errorsBefore = pageErrors.length;
      const dialogsBefore = dialogs.length;
      const rejectionsBefore = await page.evaluate(() => window.__fuzzProbe.rejections);
      // boundScale: a busy CI machine may run slower; a real freeze (a loop, a backtracking regex) exceeds any scale.
      const bound = boundScale * (c.heavy ? HEAVY_BOUND_MS : c.kind === 'link' ? LINK_BOUND_MS : FILE_BOUND_MS);
      const run = c.kind === 'link' ? page.evaluate(openLinkInPage, { fragment: c.fragment, id: c.id, marker: c.marker ?? null }) : importFile(page, c);
      const r = await within(
        run.catch((e) => ({ error: String(e?.message ?? e) })),
        bound * 5 + 10_000,
      );
      const problems = [];
      if (r.timedOut || r.error || r.outcome === 'none') {
        problems.push(r.timedOut ? 'hang: no answer from the page' : r.error ? `harness error: ${r.error.split('\n')[0]}` : 'hang: no outcome shown');
        totals.hangs++;
        // A frozen page is reloaded so the next cases still run.
        if (r.timedOut) {
          await page.reload({ timeout: 60_000 }).catch(() => {});
          await page.getByTestId('train').waitFor({ timeout: 60_000 }).catch(() => {});
          await installProbes(page);
        }
      } else {
        const ms = r.ms;
        slowest.push({ id: c.id, kind: c.kind, category: c.category, note: c.note, ms: Math.round(ms), stallMs: Math.round(r.maxGap) });
        slowest.sort((a, b) => Math.max(b.ms, b.stallMs) - Math.max(a.ms, a.stallMs));
        slowest.length = Math.min(slowest.length, 5);
        if (c.heavy) maxHeavyMs = Math.max(maxHeavyMs, ms);
        else if (c.kind === 'link') maxLinkMs = Math.max(maxLinkMs, ms);
        else maxFileMs = Math.max(maxFileMs, ms);
        maxStallMs = Math.max(maxStallMs, r.maxGap);
        if (ms > bound || r.maxGap > bound) {
          totals.hangs++;
          problems.push(`hang: outcome after ${ms.toFixed(0)} ms, main thread stalled ${r.maxGap.toFixed(0)} ms (bound ${bound} ms)`);
        }
        if (r.outcome === 'opened') totals.opened++;
        if (r.outcome === 'refused') totals.refused++;
        if (r.outcome === 'refused' && (!r.message || UNCLEAR.test(r.message.replace(/^Could not open \S+: /, '')))) {
          totals.unclearMessages++;
          problems.push(`unclear message: ${JSON.stringify((r.message ?? '').slice(0, 200))}`);
        }
        if (c.tryIt && r.outcome === 'opened') {
          const t = await within(page.evaluate(tryItInPage, c.tryIt), boundScale * TRY_IT_BOUND_MS * 10);
          if (t.timedOut || (!t.skipped && t.ms > boundScale * TRY_IT_BOUND_MS)) {
            totals.hangs++;
            problems.push(`hang: "Try it" gave no verdict within ${boundScale * TRY_IT_BOUND_MS} ms (${t.timedOut ? 'no answer' : `${Math.round(t.ms)} ms`})`);
          } else if (!t.skipped) {
            maxTryItMs = Math.max(maxTryItMs, t.ms);
            tryItRuns++;
          }
        }
        const wrongOpen = c.expect === 'open' && (r.outcome !== 'opened' || r.markerShown === false);
        const wrongRefuse = c.expect === 'refuse' && r.outcome === 'opened';
        if (wrongOpen || wrongRefuse) {
          totals.unexpectedOutcomes++;
          problems.push(`expected ${c.expect}, got ${r.outcome}${r.markerShown === false ? ' (its content not shown)' : ''}: ${JSON.stringify((r.message ?? '').slice(0, 200))}`);
        }
      }
      const traces = await within(page.evaluate(hostileTraces), 30_000);
      const rejections = await within(page.evaluate(() => window.__fuzzProbe.rejections), 30_000);
      const scripts =
        traces.timedOut ||
        traces.pwned !== null ||
        traces.polluted ||
        traces.handlers > startTraces.handlers ||
        traces.scripts > startTraces.scripts ||
        traces.jsUrls > startTraces.jsUrls ||
        dialogs.length > dialogsBefore;
      if (scripts) {
        totals.scriptsRun++;
        problems.push(`script ran: ${JSON.stringify({ ...traces, dialogs: dialogs.slice(dialogsBefore) })}`);
        // Reset the canary so one case is not counted again by every later one.
        await page.evaluate(() => delete window.__pwned).catch(() => {});
      }
      const uncaught = Math.max(pageErrors.length - errorsBefore, typeof rejections === 'number' ? rejections - rejectionsBefore : 0);
      if (uncaught > 0) {
        totals.uncaughtErrors++;
        problems.push(`uncaught: ${pageErrors.slice(errorsBefore).map((e) => String(e.message ?? e).split('\n')[0]).join(' | ') || 'unhandled rejection'}`);
      }
      const db = await within(page.evaluate(databaseDigest, dbName), 30_000);
      if (db.timedOut || db.digest !== digest || db.runs !== runs) {
        totals.savedRunsChanged++;
        problems.push(db.timedOut ? 'the database could not be read' : `the saved runs changed (${runs} → ${db.runs} runs)`);
        if (!db.timedOut) ({ digest, runs } = db);
      }
      totals.cases++;
      const cat = (byCategory[`${c.kind}:${c.category}`] ??= { cases: 0, opened: 0, refused: 0, failed: 0 });
      cat.cases++;
      if (r.outcome === 'opened') cat.opened++;
      if (r.outcome === 'refused') cat.refused++;
      if (problems.length > 0) {
        cat.failed++;
        failures.push({ id: c.id, kind: c.kind, category: c.category, note: c.note, problems });
        log(`case ${c.id} (${c.kind} ${c.category}: ${c.note}): ${problems.join('; ')}`);
      }
      // Let a page still busy with the last case (workers, effects) settle a little.
      await sleep(5);
    }
  } finally {
    page.off('dialog', onDialog);
  }
  return { ...totals, maxLinkMs: Math.round(maxLinkMs), maxFileMs: Math.round(maxFileMs), maxHeavyMs: Math.round(maxHeavyMs), tryItRuns, maxTryItMs: Math.round(maxTryItMs), maxStallMs: Math.round(maxStallMs), slowest, byCategory, failures };
}

/** The summary line the suite prints. */
export function summaryLine(t) {
  return `cases ${t.cases}, scripts run ${t.scriptsRun}, hangs ${t.hangs}, uncaught errors ${t.uncaughtErrors}, saved runs changed ${t.savedRunsChanged}`;
}

export { hostileCases };
