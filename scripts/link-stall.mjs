#!/usr/bin/env node
// The main thread while the app opens a valid share link of 1.5 MB (10,000 prompts, as the fuzz
// suite's biggest valid links) through the address fragment: a 20 ms setInterval ping in the page
// measures the longest stall until the link's last prompt is in the prompts box. `--inline`
// refuses the link worker (as a browser without module workers), so the page reads the link on its
// main thread, as it did before src/share/linkDecoder.ts. Prints one line per open.
//
//   node scripts/link-stall.mjs [--opens 3] [--inline]
import { parseArgs } from 'node:util';
import { openPage } from './lib/browser.mjs';

const { values } = parseArgs({ options: { opens: { type: 'string', default: '3' }, inline: { type: 'boolean', default: false } } });
const opens = Number(values.opens);
if (!Number.isInteger(opens) || opens < 1) {
  console.error('usage: node scripts/link-stall.mjs [--opens N>0] [--inline]');
  process.exit(2);
}

const opened = await openPage('/');
try {
  const { page } = opened;
  if (values.inline) {
    await page.addInitScript(() => {
      const RealWorker = window.Worker;
      window.Worker = function (url, options) {
        if (String(url).includes('linkDecode')) throw new Error('no link worker');
        return new RealWorker(url, options);
      };
    });
    await page.reload();
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByTestId('train').waitFor({ timeout: 180_000 });
  // Made before the ping starts: encoding is the test's work, not the page's.
  const fragments = await page.evaluate(async (n) => {
    const load = new Function('p', 'return import(p)');
    const [{ encodeShareLink }, { FIRST_VISIT }] = await Promise.all([load('/src/share/link.ts'), load('/src/share/presets.ts')]);
    const prompts = (k) => Array.from({ length: 10_000 }, (_, i) => `Prompt ${i} v${k}: ${'word '.repeat(25)}`);
    return Array.from({ length: n }, (_, k) => encodeShareLink({ experiment: { ...FIRST_VISIT.experiment, prompts: prompts(k) } }));
  }, opens);
  console.log(`link of ${fragments[0].length} characters (10,000 prompts), read ${values.inline ? 'on the main thread' : 'in the link worker'}`);
  for (const [k, fragment] of fragments.entries()) {
    const r = await page.evaluate(
      async ({ fragment, k }) => {
        const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        await frame();
        let maxGap = 0;
        let last = performance.now();
        const ping = setInterval(() => {
          const t = performance.now();
          maxGap = Math.max(maxGap, t - last);
          last = t;
        }, 20);
        const t0 = performance.now();
        location.hash = fragment;
        const want = `Prompt 9999 v${k}:`;
        while (!(document.querySelector('#builder textarea')?.value ?? '').includes(want) && performance.now() - t0 < 120_000) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const ms = performance.now() - t0;
        await frame();
        clearInterval(ping);
        return { ms: Math.round(ms), maxGap: Math.round(maxGap), opened: (document.querySelector('#builder textarea')?.value ?? '').includes(want) };
      },
      { fragment, k },
    );
    console.log(`open ${k + 1}: ${r.opened ? 'opened' : 'NOT opened'} after ${r.ms} ms, longest main-thread stall ${r.maxGap} ms`);
  }
} finally {
  await opened.close();
}
