// A judge that fails every call is noticed, and a full disk can be dealt with from the page.
// A remote judge on a loopback server answers HTTP 500 to every request: the run view shows a
// prominent warning with the count and the first reason, the charts say no reward could be
// computed, retries stay bounded (max_attempts), and the key appears nowhere it is stored. With
// on_unscorable "stop" the run ends failed with that reason. The prune controls of a saved run say
// what they free and free it; a quota error (the QuotaExceededError a browser throws, raised by the
// trainer worker's IndexedDB writes while a flag is on) shows "Free space…", which opens them for
// the run and offers Resume.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedPage } from '../../scripts/lib/browser.mjs';
import { encodeShareLink } from '../../src/share/link';
import { FIRST_VISIT } from '../../src/share/presets';
import { indexedDbDump as dumpIndexedDb, openApp, SHOTS } from '../helpers/appPage';

const KEY = 'sk-test-judge-fails-9Xq2-DO-NOT-LEAK';
/** Every POST the stand-in judge received: its Authorization header. */
const received: (string | undefined)[] = [];
let server: Server;
let judgeUrl = '';

let opened: OpenedPage;
let page: Page;
/** What the page and its workers logged (the key must never be among it). */
const logged: string[] = [];

beforeAll(async () => {
  // The judge: a loopback HTTP server that fails every call with 500 (and CORS, like a real API).
  server = createServer((req, res) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST, OPTIONS' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    received.push(req.headers.authorization);
    req.resume();
    req.on('end', () => res.writeHead(500, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'judge backend exploded' } })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  judgeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;

  const rubric = { name: 'polite only', criteria: [{ id: 'polite', text: 'Is polite', weight: 1, tier: 'important', judge_question: 'Is the answer polite?' }] };
  const fragment = encodeShareLink({
    experiment: {
      ...FIRST_VISIT.experiment,
      model: '/test/fixtures/tiny-byte-gpt2/',
      rubric,
      judge: { kind: 'remote', url: judgeUrl, model: 'judge-model', max_attempts: 2 },
      config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 3, max_steps: 2, save_steps: 1, learning_rate: 1e-3 },
    } as typeof FIRST_VISIT.experiment,
  });
  ({ opened, page } = await openApp(`/${fragment}`));
  page.on('console', (m) => logged.push(m.text()));
  // A link's remote judge may wait for the visitor's consent before it is used.
  const consent = page.getByTestId('judge-consent-use');
  if (await consent.count()) await consent.click();
  await expect(page.getByTestId('judge-kind-remote').isChecked()).resolves.toBe(true);
  await expect(page.getByTestId('judge-url').inputValue()).resolves.toBe(judgeUrl);
  await page.getByTestId('judge-key').fill(KEY);
});
afterAll(async () => {
  await opened?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const status = () => page.getByTestId('run-status');
const rows = () => page.getByTestId('run-row');

/**
 * While on, IndexedDB writes of rollouts, metrics and checkpoints in the page's workers (the trainer
 * worker's store) throw QuotaExceededError, as a browser does when the origin's quota is used up.
 * (Chromium's DevTools quota override does not make IndexedDB commits fail.)
 */
async function setStorageFull(on: boolean): Promise<void> {
  const patched = await Promise.all(
    page.workers().map((w) =>
      w.evaluate((full) => {
        const g = globalThis as { __storageFull?: boolean; __storagePatched?: boolean };
        if (typeof IDBObjectStore === 'undefined') return false;
        if (!g.__storagePatched) {
          const put = IDBObjectStore.prototype.put;
          IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
            if (g.__storageFull && this.name !== 'runs') throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
            return put.apply(this, args);
          };
          g.__storagePatched = true;
        }
        g.__storageFull = full;
        return true;
      }, on),
    ),
  );
  expect(patched).toContain(true);
}
const pruneOf = (runId: string) => page.locator(`[data-testid=prune-run][data-run-id="${runId}"]`);

const indexedDbDump = () => dumpIndexedDb(page);

/** Records of the run in one object store. */
async function countOf(store: 'rollouts' | 'checkpoints', runId: string): Promise<number> {
  const dump = JSON.parse(await indexedDbDump()) as Record<string, { runId: string }[]>;
  return dump[store].filter((r) => r.runId === runId).length;
}

/** "1.5 KiB" → bytes (approximately, as the page formats them). */
function parseBytes(text: string): number {
  const m = /([\d.]+)\s*(bytes|KiB|MiB|GiB)/.exec(text);
  if (!m) throw new Error(`no size in ${JSON.stringify(text)}`);
  return Number(m[1]) * { bytes: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[m[2] as 'bytes']!;
}

describe('a judge that fails every call', () => {
  it('warns prominently with the count and the first reason; charts say no reward; retries are bounded; the key is not stored', async () => {
    await page.getByTestId('train').click();
    await status().filter({ hasText: 'Finished' }).waitFor({ timeout: 150_000 });

    const alert = page.getByTestId('unscorable-alert');
    await expect(alert.getAttribute('role')).resolves.toBe('alert');
    const text = (await alert.textContent())!;
    expect(text).toContain('4 of 4 rollouts had no reward at step 1 (4 of 4 criterion verdicts failed): criterion "polite": HTTP 500 from the endpoint: "judge backend exploded" (gave up after 2 attempts)');
    expect(text).toContain('2 of 2 steps passed max_unscorable_fraction');
    expect(text).not.toContain(KEY);
    // The reward chart says why it is empty, in words and to assistive technology.
    const reward = page.getByTestId('chart-reward');
    await expect(reward.getAttribute('data-points')).resolves.toBe('2');
    expect(await reward.getByTestId('chart-empty').textContent()).toContain('No reward could be computed');
    expect(await reward.getByTestId('chart-plot').getAttribute('aria-label')).toContain('No reward could be computed');
    // Unscorable verdicts are shown as such, never as a 0.
    const verdicts = await page.locator('[data-testid=chip]').filter({ hasText: 'polite' }).evaluateAll((els) => els.map((e) => e.getAttribute('data-verdict')));
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.every((v) => v !== 'fail' && v !== 'pass')).toBe(true);

    // 2 steps x 4 rollouts x max_attempts 2, each with the key; never more.
    expect(received.length).toBe(16);
    expect(received.every((a) => a === `Bearer ${KEY}`)).toBe(true);
    const db = await indexedDbDump();
    expect(db).toContain('judge backend exploded');
    expect(db).toContain('"unscorable_fraction":1');
    expect(db).not.toContain(KEY);
    expect(page.url()).not.toContain(KEY);
    expect(logged.join('\n')).not.toContain(KEY);
    await page.getByTestId('unscorable-alert').screenshot({ path: join(SHOTS, 'app-judge-failure.png') });
    expect(opened.pageErrors).toEqual([]);
  });

  it('the prune controls say what each prune frees, then free it', async () => {
    const row = rows().first();
    const runId = (await row.getAttribute('data-run-id'))!;
    const sizeCell = row.locator('td').nth(4);
    const sizeBefore = parseBytes((await sizeCell.textContent())!);
    expect(await countOf('rollouts', runId)).toBe(8);
    expect(await countOf('checkpoints', runId)).toBe(2);

    await row.getByTestId('run-prune').click();
    const prune = pruneOf(runId);
    await prune.waitFor();
    // Defaults: keep the newest checkpoint (frees the older one); rollouts of the last steps stay.
    await prune.getByTestId('prune-checkpoints-frees').filter({ hasText: 'frees' }).waitFor();
    const checkpointBytes = parseBytes((await prune.getByTestId('prune-checkpoints-frees').textContent())!);
    expect(checkpointBytes).toBeGreaterThan(1000);
    await prune.getByTestId('prune-before').fill('1');
    await prune.getByTestId('prune-rollouts-frees').filter({ hasText: '4 rollouts' }).waitFor();
    const rolloutBytes = parseBytes((await prune.getByTestId('prune-rollouts-frees').textContent())!);
    expect(rolloutBytes).toBeGreaterThan(100);
    // Bad input says what is wrong and frees nothing.
    await prune.getByTestId('prune-before').fill('7');
    await prune.getByTestId('prune-rollouts-frees').filter({ hasText: 'a step from 0 to 2' }).waitFor();
    await prune.getByTestId('prune-before').fill('1');

    await prune.getByTestId('prune-start').click();
    expect(await prune.getByTestId('prune-confirm-text').textContent()).toMatch(/^Delete 4 rollouts and 1 checkpoint \(.+\) of .+\? This cannot be undone\.$/);
    // Nothing is deleted before the confirmation.
    expect(await countOf('rollouts', runId)).toBe(8);
    await prune.getByTestId('prune-confirm').click();
    await prune.getByTestId('prune-result').filter({ hasText: 'Freed 4 rollouts and 1 checkpoint' }).waitFor({ timeout: 20_000 });
    expect(await countOf('rollouts', runId)).toBe(4);
    expect(await countOf('checkpoints', runId)).toBe(1);
    await expect.poll(async () => parseBytes((await sizeCell.textContent())!), { timeout: 10_000 }).toBeLessThan(sizeBefore - (checkpointBytes + rolloutBytes) * 0.9);
    // Already freed: nothing more to free with the same choices.
    await expect(prune.getByTestId('prune-start').isEnabled()).resolves.toBe(false);
    await prune.screenshot({ path: join(SHOTS, 'app-prune-run.png') });
    await prune.getByTestId('prune-close').click();
    expect(opened.pageErrors).toEqual([]);
  });

  it('on_unscorable "stop" ends the run as failed after the step, with the count and the reason', async () => {
    await page.getByTestId('setting-on_unscorable').locator('select').selectOption('stop');
    const before = received.length;
    await page.getByTestId('train').click();
    await status().filter({ hasText: 'The run failed.' }).waitFor({ timeout: 150_000 });
    const error = (await page.getByTestId('run-error').textContent())!;
    expect(error).toContain('4 of 4 rollouts had no reward at step 0');
    expect(error).toContain('HTTP 500 from the endpoint: "judge backend exploded" (gave up after 2 attempts)');
    expect(error).toContain('The run stopped: more than 50% of rollouts had no reward and on_unscorable is "stop".');
    // One step only, committed; saved as failed with the reason.
    expect(received.length - before).toBe(8);
    await rows().first().getByTestId('run-status-cell').filter({ hasText: 'failed' }).waitFor({ timeout: 10_000 });
    expect(await rows().first().getByTestId('run-steps').textContent()).toBe('1');
    expect(await indexedDbDump()).not.toContain(KEY);
    expect(logged.join('\n')).not.toContain(KEY);
    expect(opened.pageErrors).toEqual([]);
  });

  it('a full disk: "Free space…" opens the run\'s prune controls, and Resume goes on once space is freed', async () => {
    await page.getByTestId('setting-on_unscorable').locator('select').selectOption('warn');
    await page.getByTestId('step').click();
    await status().filter({ hasText: 'Paused after step 0' }).waitFor({ timeout: 150_000 });
    const runId = (await rows().first().getAttribute('data-run-id'))!;
    await rows().first().getByTestId('run-steps').filter({ hasText: '1' }).waitFor({ timeout: 10_000 });

    // The disk is full: the next step's commit hits the quota.
    await setStorageFull(true);
    try {
      await page.getByTestId('train').click();
      // Not a failure: the page says it stopped, why, that the committed steps are whole, and to free space and resume.
      await status().filter({ hasText: 'Stopped: storage is full' }).waitFor({ timeout: 150_000 });
      expect(await status().textContent()).toContain('Every step committed before it is saved whole');
      expect(await page.getByTestId('run-error').textContent()).toMatch(/Storage is full: saving step 1 of run "[^"]+" failed and nothing of it was written/);
      await rows().first().getByTestId('run-status-cell').filter({ hasText: 'stopped' }).waitFor({ timeout: 10_000 });
      await page.getByTestId('resume-failed').waitFor({ timeout: 10_000 });
      await page.getByTestId('storage-full-prune').click();
      const prune = pruneOf(runId);
      await prune.waitFor();
      await expect(prune.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
      await prune.getByTestId('prune-before').fill('1');
      await prune.getByTestId('prune-rollouts-frees').filter({ hasText: '4 rollouts' }).waitFor();
      await prune.getByTestId('prune-start').click();
      await prune.getByTestId('prune-confirm').click();
      await prune.getByTestId('prune-result').filter({ hasText: 'Freed 4 rollouts' }).waitFor({ timeout: 20_000 });
    } finally {
      await setStorageFull(false);
    }
    expect(await countOf('rollouts', runId)).toBe(0);
    await pruneOf(runId).getByTestId('prune-resume').click();
    await status().filter({ hasText: 'Finished' }).waitFor({ timeout: 150_000 });
    expect(await status().textContent()).toContain('Finished: 2 steps');
    await rows().first().getByTestId('run-steps').filter({ hasText: '2' }).waitFor({ timeout: 10_000 });
    expect(opened.pageErrors).toEqual([]);
  });
});
