// Kill/reload soak: trains a run in the app on one browser profile and kills it at seeded
// moments, then reopens the profile and checks the store before resuming. Used by
// scripts/soak.mjs (N cycles, on demand) and test/browser/soak.test.ts (1 cycle, CI).
//
// A kill is one of
//   kill   SIGKILL of the whole browser process (a crash, a power cut of the app; the profile stays)
//   crash  the renderer crashed through CDP (Page.crash): the tab and its workers die at once
//   close  the tab closed (no beforeunload): the page and its trainer worker are gone
// at one of these moments
//   load        0–3 s after Train/Resume is clicked (creating the run, loading the model)
//   sampling    while the stage diagram says the step is sampling
//   updating    while it says the step updates the weights
//   checkpoint  during the checkpoint write: the trainer worker's put() into 'checkpoints' is
//               issued and its transaction held open (the worker spins 4 s) while the kill lands
//   commit      right after a step was committed (the runs list's step count went up)
//
// After each reopen the store is read raw (IndexedDB, no app code) and checked: the run exists,
// it is stored "running" and the page shows "interrupted" with the banner's redo count, its
// committed steps are 0..N-1 with one metrics record and generation_batch_size rollouts each,
// the newest checkpoint's files parse (trainer_state.json, config.json, the safetensors header
// and its size) and its global_step is its step + 1, and the rubric stored under the run's
// rubric version hashes to that version. Then Resume is clicked (the next kill follows). After
// the last cycle the store is checked once more and (finalResume) the run resumed, and it must
// commit one more step, and (secondTab) a second tab's Resume of it meanwhile must be refused (its lock).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_FLAGS, chromiumExecutable, removeProfile, repoRoot } from '../lib/browser.mjs';

export const KILL_METHODS = ['kill', 'crash', 'close'];
export const KILL_MOMENTS = ['load', 'sampling', 'updating', 'checkpoint', 'commit'];

/** The tiny experiment every soak trains (the byte-level fixture: steps of a few seconds on SwiftShader). */
export const SOAK_SETTINGS = [
  ['num_generations', '2'],
  ['generation_batch_size', '4'],
  ['max_completion_length', '3'],
  ['max_steps', '500'],
];
const ROLLOUTS_PER_STEP = 4;

/** mulberry32: uniform in [0, 1), deterministic per seed. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seeded schedule: one { method, moment, delayMs } per cycle. */
export function soakSchedule(seed, cycles) {
  const r = rng(seed);
  return Array.from({ length: cycles }, () => ({
    method: KILL_METHODS[Math.floor(r() * KILL_METHODS.length)],
    moment: KILL_MOMENTS[Math.floor(r() * KILL_MOMENTS.length)],
    delayMs: Math.floor(r() * 3000),
  }));
}

async function startVite() {
  const { createServer } = await import('vite');
  const server = await createServer({
    root: repoRoot,
    configFile: join(repoRoot, 'vite.config.ts'),
    logLevel: 'error',
    clearScreen: false,
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
  });
  await server.listen();
  return { origin: `http://127.0.0.1:${server.httpServer.address().port}`, close: () => server.close() };
}

/** Chromium on `profile`, started by us (so it can be SIGKILLed) and driven over CDP. */
async function launchBrowser(profile) {
  const { chromium } = await import('playwright-core');
  const proc = spawn(await chromiumExecutable(), [...CHROMIUM_FLAGS, '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ws = await new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`Chromium did not start in 60 s: ${err.slice(-500)}`)), 60_000);
    proc.stderr.on('data', (chunk) => {
      err += chunk;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited with ${code}: ${err.slice(-500)}`));
    });
  });
  proc.stderr.resume();
  const browser = await chromium.connectOverCDP(ws);
  // As the other browser tests (scripts/lib/browser.mjs): no adapter calibration before Train,
  // seconds of shader compiling on SwiftShader that this soak does not test.
  await browser.contexts()[0].addInitScript(() => {
    try {
      localStorage.setItem('rubric-playground.calibration', 'off');
    } catch {
      // about:blank has no storage.
    }
  });
  const exited = new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on('exit', () => resolve())));
  return {
    browser,
    context: browser.contexts()[0],
    kill: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
    close: async () => {
      await browser.close().catch(() => {});
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Reads the store raw in the page and checks it (see the file comment). A string: vitest must not rewrite its import(). */
const STORE_CHECK = `(async () => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open('rubric-playground');
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const names = ['runs', 'rubrics', 'metrics', 'rollouts', 'checkpoints'].filter((n) => db.objectStoreNames.contains(n));
  const data = {};
  if (names.length) {
    const tx = db.transaction(names);
    await Promise.all(names.map((n) => new Promise((resolve, reject) => {
      const req = tx.objectStore(n).getAll();
      req.onsuccess = () => resolve((data[n] = req.result));
      req.onerror = () => reject(req.error);
    })));
  }
  db.close();
  const runs = data.runs ?? [];
  if (runs.length === 0) return { run: null, problems: [] };
  const problems = [];
  if (runs.length > 1) problems.push(runs.length + ' runs stored, expected 1');
  const run = runs[0];
  const steps = (data.metrics ?? []).filter((m) => m.runId === run.id).map((m) => m.step).sort((a, b) => a - b);
  const perStep = new Map();
  for (const r of data.rollouts ?? []) if (r.runId === run.id) perStep.set(r.step, (perStep.get(r.step) ?? 0) + 1);
  let duplicated = 0;
  steps.forEach((s, i) => {
    if (i > 0 && s === steps[i - 1]) duplicated++;
  });
  const distinct = [...new Set(steps)];
  const count = distinct.length;
  if (distinct.some((s, i) => s !== i)) problems.push('committed steps are not contiguous from 0: ' + distinct.join(','));
  if (run.lastStep !== (count ? distinct[count - 1] : null)) problems.push('lastStep ' + run.lastStep + ' but the metrics end at ' + distinct[count - 1]);
  for (const s of distinct) {
    const n = perStep.get(s) ?? 0;
    if (n > ${ROLLOUTS_PER_STEP}) duplicated += n - ${ROLLOUTS_PER_STEP};
    if (n !== ${ROLLOUTS_PER_STEP}) problems.push('step ' + s + ' has ' + n + ' rollouts, expected ${ROLLOUTS_PER_STEP}');
  }
  for (const s of perStep.keys()) if (!distinct.includes(s)) problems.push('rollouts of uncommitted step ' + s);
  const checkpoints = (data.checkpoints ?? []).filter((c) => c.runId === run.id).sort((a, b) => a.step - b.step);
  const newest = checkpoints[checkpoints.length - 1] ?? null;
  if ((newest?.step ?? null) !== run.lastCheckpointStep) problems.push('lastCheckpointStep ' + run.lastCheckpointStep + ' but the newest stored checkpoint is ' + (newest?.step ?? 'none'));
  if (newest) {
    try {
      const state = JSON.parse(newest.files['trainer_state.json']);
      if (state.global_step !== newest.step + 1) problems.push('checkpoint of step ' + newest.step + ' has global_step ' + state.global_step);
      JSON.parse(newest.files['config.json']);
      for (const name of ['model.safetensors', 'optimizer.safetensors']) {
        const buf = newest.files[name];
        if (!buf) continue;
        const view = new DataView(buf);
        const len = Number(view.getBigUint64(0, true));
        const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, len)));
        let end = 0;
        for (const [k, t] of Object.entries(header)) if (k !== '__metadata__') end = Math.max(end, t.data_offsets[1]);
        if (8 + len + end !== buf.byteLength) problems.push(name + ' of checkpoint ' + newest.step + ' is ' + buf.byteLength + ' bytes, its header says ' + (8 + len + end));
      }
      if (newest.step > (run.lastStep ?? -1)) problems.push('checkpoint of step ' + newest.step + ' is newer than the last committed step ' + run.lastStep);
    } catch (e) {
      problems.push('checkpoint of step ' + newest.step + ' does not parse: ' + e.message);
    }
  }
  const rubric = (data.rubrics ?? []).find((r) => r.version === run.experiment.rubricVersion);
  if (!rubric) problems.push('rubric version ' + run.experiment.rubricVersion + ' is not stored');
  else {
    const { rubricVersion } = await import('/src/rubric/version.ts');
    const again = await rubricVersion(rubric.rubric);
    if (again !== run.experiment.rubricVersion) problems.push('the stored rubric hashes to ' + again + ', not its version ' + run.experiment.rubricVersion);
  }
  return { run: { id: run.id, name: run.name, status: run.status, lastStep: run.lastStep, lastCheckpointStep: run.lastCheckpointStep, rubricVersion: run.experiment.rubricVersion }, steps: count, duplicated, problems };
})()`;

/** Signals the page when a worker starts writing a checkpoint, and holds that transaction open 4 s. */
const HOLD_CHECKPOINT_WRITE = () => {
  const proto = IDBObjectStore.prototype;
  if (proto.__soakHeld) return;
  proto.__soakHeld = true;
  const put = proto.put;
  proto.put = function (...args) {
    const request = put.apply(this, args);
    if (this.name === 'checkpoints') {
      new BroadcastChannel('soak').postMessage('checkpoint-write');
      // The transaction cannot commit while this task runs: the kill lands mid-write.
      const until = Date.now() + 4000;
      while (Date.now() < until) {
        /* spin */
      }
    }
    return request;
  };
};

/**
 * Runs `schedule` (from soakSchedule) and returns the totals:
 * { cycles, stepsLost, stepsDuplicated, resumeErrors, storeProblems, twoTabErrors, stepsRedone, committed, details }.
 */
export async function runSoak({ schedule, log = () => {}, timeoutScale = 1, finalResume = true, secondTab = true }) {
  const T = (ms) => ms * timeoutScale;
  const vite = await startVite();
  const profile = mkdtempSync(join(tmpdir(), 'rp-soak-'));
  let browser = await launchBrowser(profile);
  const totals = { cycles: 0, stepsLost: 0, stepsDuplicated: 0, resumeErrors: 0, storeProblems: 0, twoTabErrors: 0, stepsRedone: 0, committed: 0, details: [] };
  /** The most committed steps the page has shown (a later store with fewer lost some). */
  let seen = 0;
  let page = null;
  const pageErrors = [];

  const openApp = async () => {
    page = await browser.context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e));
    page.on('dialog', (d) => void d.accept());
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${vite.origin}/`, { waitUntil: 'commit', timeout: T(180_000) });
    await page.getByTestId('train').waitFor({ timeout: T(180_000) });
  };
  const row = () => page.getByTestId('run-row');
  const shownSteps = async () => Number((await row().getByTestId('run-steps').textContent({ timeout: 1000 }).catch(() => null)) ?? 0) || 0;

  /** Reads and checks the store after a reopen; returns the stored run (or null) and counts what is wrong. */
  const check = async (cycle, expectInterrupted) => {
    const result = await page.evaluate(STORE_CHECK);
    const detail = { cycle, ...result };
    if (result.run) {
      if (result.steps < seen) totals.stepsLost += seen - result.steps;
      seen = Math.max(seen, result.steps);
      totals.stepsDuplicated += result.duplicated;
      // A run killed while its model loaded, before any step, is interrupted too (created 'running': src/store/loadingRun.ts).
      if (expectInterrupted) {
        if (result.run.status !== 'running') result.problems.push(`stored status "${result.run.status}", expected "running" (the page died while it trained)`);
        const cell = row().getByTestId('run-status-cell');
        const shown = await cell.filter({ hasText: 'interrupted' }).waitFor({ timeout: T(60_000) }).then(() => 'interrupted', async () => cell.textContent().catch(() => 'no row'));
        if (shown !== 'interrupted') result.problems.push(`the runs list shows "${shown}", expected "interrupted"`);
        const step = result.run.lastStep === null ? 0 : result.run.lastStep + 1;
        const from = result.run.lastCheckpointStep === null ? 0 : result.run.lastCheckpointStep + 1;
        totals.stepsRedone += step - from;
        const text = await page.getByTestId('interrupted-text').textContent({ timeout: T(30_000) }).catch(() => null);
        if (text === null || !text.includes(`was interrupted at step ${step} (`) || (result.run.lastCheckpointStep !== null && !text.includes(`last checkpoint ${from}:`))) {
          result.problems.push(`the banner says ${JSON.stringify(text)}; the store has ${step} steps, checkpoint ${from}`);
        }
      }
    } else if (seen > 0) {
      totals.stepsLost += seen;
      result.problems.push('the run is gone');
    }
    totals.storeProblems += result.problems.length;
    totals.details.push(detail);
    for (const p of result.problems) log(`  cycle ${cycle}: ${p}`);
    return result.run;
  };

  /** Starts (or resumes) training; false when the page refused. */
  const startTraining = async (run) => {
    if (run) {
      const before = page.locator('[data-testid=run-status]');
      // The banner offers an interrupted run; any other (a failed one) resumes from its row.
      const banner = page.getByTestId('interrupted-resume');
      if (await banner.count()) await banner.click({ timeout: T(30_000) });
      else await row().getByTestId('run-resume').click({ timeout: T(30_000) });
      // Resuming opens the stored run: the status line leaves "Ready".
      await before.filter({ hasNotText: /^Ready/ }).waitFor({ timeout: T(30_000) });
    } else {
      await page.getByTestId('model-input').fill('/test/fixtures/tiny-byte-gpt2/');
      for (const [key, value] of SOAK_SETTINGS) {
        const input = page.getByTestId(`setting-${key}`).locator('input');
        await input.fill(value);
        await input.press('Tab');
      }
      await page.getByTestId('train').click();
    }
  };

  const failedText = async () => {
    const s = (await page.getByTestId('run-status').textContent({ timeout: 1000 }).catch(() => '')) ?? '';
    if (!/fail|error|could not/i.test(s)) return null;
    const why = await page.getByTestId('run-error').textContent({ timeout: 1000 }).catch(() => null);
    return why ? `${s} ${why}` : s;
  };

  /** Waits for the moment to kill; returns what it waited for (or a note when it did not come). */
  const waitMoment = async (moment, delayMs) => {
    const stage = (name) => page.locator(`[data-testid=stages] li[data-stage=${name}][data-working]`).waitFor({ state: 'attached', timeout: T(240_000) });
    switch (moment) {
      case 'load':
        await page.waitForTimeout(delayMs);
        return 'load';
      case 'sampling':
        await stage('sampled');
        await page.waitForTimeout(delayMs % 200);
        return 'sampling';
      case 'updating':
        await stage('updated');
        return 'updating';
      case 'checkpoint':
        await page.waitForFunction(() => window.__soakSignal > 0, null, { polling: 20, timeout: T(240_000) });
        return 'checkpoint';
      case 'commit': {
        const n = await shownSteps();
        await page.waitForFunction((k) => Number(document.querySelector('[data-testid=run-row] [data-testid=run-steps]')?.textContent) > k, n, { polling: 'raf', timeout: T(240_000) });
        return 'commit';
      }
    }
  };

  const armCheckpointHold = async () => {
    await page.evaluate(() => {
      window.__soakSignal = 0;
      new BroadcastChannel('soak').onmessage = () => window.__soakSignal++;
    });
    const hold = (w) => void w.evaluate(HOLD_CHECKPOINT_WRITE).catch(() => {});
    page.workers().forEach(hold);
    page.on('worker', hold);
  };

  const killPage = async (method) => {
    if (method === 'kill') {
      await browser.kill();
      browser = await launchBrowser(profile);
    } else if (method === 'crash') {
      const cdp = await page.context().newCDPSession(page);
      const crashed = page.waitForEvent('crash', { timeout: 30_000 }).catch(() => {});
      void cdp.send('Page.crash').catch(() => {});
      await crashed;
      await page.close().catch(() => {});
    } else {
      await page.close({ runBeforeUnload: false });
    }
    page = null;
  };

  try {
    let run = null;
    for (const [cycle, { method, moment, delayMs }] of schedule.entries()) {
      await openApp();
      run = await check(cycle, run !== null);
      const errorsBefore = pageErrors.length;
      if (moment === 'checkpoint') await armCheckpointHold();
      await startTraining(run);
      const reached = await waitMoment(moment, delayMs).catch(async (e) => `missed (${(await failedText()) ?? e.message.split('\n')[0]})`);
      const failed = await failedText();
      if (failed || pageErrors.length > errorsBefore) {
        totals.resumeErrors++;
        log(`  cycle ${cycle}: ${run ? 'resume' : 'training'} failed: ${failed ?? pageErrors.slice(errorsBefore).map((e) => e.message).join('; ')}`);
      }
      seen = Math.max(seen, await shownSteps());
      log(`cycle ${cycle}: ${method} at ${reached} (${seen} steps seen committed)`);
      totals.details[totals.details.length - 1].kill = { method, moment, reached };
      await killPage(method);
      totals.cycles++;
      // A killed page may leave the run uncreated: the next cycle starts training anew.
      run = run ?? { pending: true };
    }
    // The last reopen: checks, then (finalResume) Resume must train one more step.
    await openApp();
    run = await check(schedule.length, true);
    if (!finalResume) {
      totals.committed = run ? (run.lastStep ?? -1) + 1 : 0;
      return totals;
    }
    const n = run ? (run.lastStep ?? -1) + 1 : 0;
    await startTraining(run);
    const ok = await page
      .waitForFunction((k) => Number(document.querySelector('[data-testid=run-row] [data-testid=run-steps]')?.textContent) > k, n, { polling: 'raf', timeout: T(240_000) })
      .then(() => true, () => false);
    if (!ok) {
      totals.resumeErrors++;
      log(`  final resume did not commit a step: ${(await failedText()) ?? 'no new step'}`);
    }
    // Two tabs on one run: while this tab trains, a second tab's Resume must be refused.
    if (secondTab) {
      const first = page;
      await openApp();
      const second = page;
      await row().getByTestId('run-resume').click({ timeout: T(30_000) });
      const refusal = await second.getByTestId('run-error').textContent({ timeout: T(60_000) }).catch(() => null);
      if (!refusal?.includes('is open in another tab or window')) {
        totals.twoTabErrors++;
        log(`  a second tab's Resume was not refused while the first trained: ${refusal ?? (await second.getByTestId('run-status').textContent())}`);
      }
      await second.close();
      page = first;
    }
    totals.committed = await shownSteps();
    await page.getByTestId('stop').click({ timeout: 10_000 }).catch(() => {});
    const after = await page.evaluate(STORE_CHECK);
    totals.storeProblems += after.problems.length;
    totals.stepsDuplicated += after.duplicated;
    if (after.run && after.steps < seen) totals.stepsLost += seen - after.steps;
    for (const p of after.problems) log(`  final: ${p}`);
  } finally {
    await browser.close();
    await vite.close();
    removeProfile(profile, (m) => log(`  ${m}`));
  }
  return totals;
}

export const soakLine = (t) => `cycles ${t.cycles}, steps lost ${t.stepsLost}, steps duplicated ${t.stepsDuplicated}, resume errors ${t.resumeErrors}`;
