#!/usr/bin/env node
// Robustness suite for share links and run files: opens the app once in headless Chromium,
// seeds one saved run, then opens `--cases` generated hostile links and run files (seeded:
// same --seed, same cases; see scripts/fuzz/hostileCases.mjs) and prints
//
//   cases N, scripts run N, hangs N, uncaught errors N, saved runs changed N
//
// then the other checks (unclear messages, outcomes against expectations, the slowest outcome
// and the longest main-thread stall) and every failing case. Writes bench/results/fuzz-links.json.
// Exit status 1 when any counter is not 0.
//
//   node scripts/fuzz-links.mjs [--cases 500] [--seed 1] [--out bench/results/fuzz-links.json]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openPage, repoRoot } from './lib/browser.mjs';
import { FILE_BOUND_MS, HEAVY_BOUND_MS, LINK_BOUND_MS, TRY_IT_BOUND_MS, preparePage, runCases, summaryLine } from './fuzz/runFuzz.mjs';
import { hostileCases } from './fuzz/hostileCases.mjs';

const { values } = parseArgs({
  options: { cases: { type: 'string', default: '500' }, seed: { type: 'string', default: '1' }, out: { type: 'string', default: resolve(repoRoot, 'bench/results/fuzz-links.json') } },
});
const count = Number(values.cases);
const seed = Number(values.seed);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
  console.error('usage: node scripts/fuzz-links.mjs [--cases N>0] [--seed INTEGER] [--out FILE]');
  process.exit(2);
}

const started = Date.now();
const opened = await openPage('/');
let result;
try {
  const { page, pageErrors } = opened;
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByTestId('train').waitFor({ timeout: 120_000 });
  const { experiment, runFile, dbName } = await preparePage(page);
  const cases = hostileCases({ seed, count, experiment, runFile });
  result = await runCases({ page, pageErrors, cases, dbName, log: (line) => console.error(line) });
} finally {
  await opened.close();
}
const seconds = (Date.now() - started) / 1000;
console.log(summaryLine(result));
console.log(
  `unclear messages ${result.unclearMessages}, unexpected outcomes ${result.unexpectedOutcomes} (opened ${result.opened}, refused ${result.refused}); ` +
    `slowest link ${result.maxLinkMs} ms (bound ${LINK_BOUND_MS}), slowest run file ${result.maxFileMs} ms (bound ${FILE_BOUND_MS}), slowest multi-MB valid link ${result.maxHeavyMs} ms (bound ${HEAVY_BOUND_MS}), "Try it" on ${result.tryItRuns} opened regex rubrics at most ${result.maxTryItMs} ms (bound ${TRY_IT_BOUND_MS}), longest main-thread stall ${result.maxStallMs} ms; ${seconds.toFixed(0)} s`,
);
for (const c of result.slowest) console.log(`  slow: #${c.id} ${c.kind} ${c.category} (${c.note}): ${c.ms} ms, stall ${c.stallMs} ms`);
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, JSON.stringify({ seed, seconds, linkBoundMs: LINK_BOUND_MS, fileBoundMs: FILE_BOUND_MS, heavyBoundMs: HEAVY_BOUND_MS, tryItBoundMs: TRY_IT_BOUND_MS, ...result }, null, 2));
console.log(`wrote ${values.out}`);
const bad = result.scriptsRun + result.hangs + result.uncaughtErrors + result.savedRunsChanged + result.unclearMessages + result.unexpectedOutcomes;
process.exitCode = bad === 0 ? 0 : 1;
