#!/usr/bin/env node
// Each seed method of issue 10 against plain GRPO, headless, on the same prompts, rubric, config
// and seeds: only the method's options differ (scripts/experiments/summarize.mjs METHODS). Run on
// demand, not in CI (minutes per run on a software WebGPU adapter).
//
//   node scripts/experiments/methods.mjs [--steps N] [--seeds 2 | --seeds 1,5,9]
//        [--methods span_credit,cort_credit,...] [--experiment FILE] [--out DIR]
//
// One Chromium page (scripts/lib/browser.mjs) runs every run with the app's trainer
// (scripts/page/train.ts). After each run DIR/runs.jsonl gets the run's record appended and
// DIR/summary.json and DIR/table.md are rewritten, so an interrupted comparison is still usable;
// a rerun into the same DIR skips the (method, seed) pairs it already has for the same experiment
// and steps (so a method added later joins the earlier baseline runs).
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openHarness } from '../lib/browser.mjs';
import { markdownTable, methodExperiment, parseMethodList, parseSeeds, runRecord, summarize } from './summarize.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '8' },
    seeds: { type: 'string' },
    methods: { type: 'string' },
    experiment: { type: 'string', default: join(here, 'methods.experiment.json') },
    out: { type: 'string', default: 'methods-out' },
  },
});

function fail(message) {
  console.error(`methods: ${message}`);
  process.exit(2);
}

let methods, seeds, base;
const steps = Number(values.steps);
if (!Number.isInteger(steps) || steps < 1) fail('--steps must be a positive integer');
try {
  methods = parseMethodList(values.methods);
  seeds = parseSeeds(values.seeds);
} catch (err) {
  fail(err.message);
}
try {
  base = JSON.parse(readFileSync(values.experiment, 'utf8'));
} catch (err) {
  fail(`cannot read ${values.experiment}: ${err.message}`);
}
// The schedules (credit_schedule, scaffold decay) run over the run's own length.
base.config = { ...base.config, max_steps: steps };

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const runsFile = join(out, 'runs.jsonl');
// Runs of another experiment or step count are not comparable: a key says which these are.
const key = JSON.stringify({ base, steps });
const records = existsSync(runsFile)
  ? readFileSync(runsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((r) => r.key === key)
  : [];

function writeSummary() {
  const rows = summarize(records);
  const header =
    `${records.length} runs of ${steps} steps on ${base.model}: seeds ${[...new Set(records.map((r) => r.seed))].join(', ')}; ` +
    `adapter: ${adapter}.\n\n`;
  writeFileSync(join(out, 'summary.json'), JSON.stringify({ steps, experiment: base, adapter, rows }, null, 2));
  writeFileSync(join(out, 'table.md'), header + markdownTable(rows) + '\n');
}

const todo = seeds.flatMap((seed) => methods.map((method) => ({ method, seed }))).filter((t) => !records.some((r) => r.method === t.method && r.seed === t.seed));
console.log(`methods: ${todo.length} runs to do (${records.length} already in ${runsFile}), ${steps} steps each`);
// The adapter of the runs already there (a rerun with nothing to do only rewrites the summary).
let adapter = existsSync(join(out, 'summary.json')) ? JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).adapter : 'unknown';
if (todo.length === 0) {
  writeSummary();
  console.log(readFileSync(join(out, 'table.md'), 'utf8'));
  process.exit(0);
}
const harness = await openHarness();
try {
  adapter = [harness.info.vendor, harness.info.architecture, harness.info.description].filter(Boolean).join(' / ') + (harness.info.isFallback ? ' (fallback adapter)' : '');
  for (const { method, seed } of todo) {
    const experiment = methodExperiment(base, method, seed);
    const t0 = performance.now();
    let result;
    try {
      result = await harness.runModule('/scripts/page/train.ts', 'runExperiment', { experiment, steps });
    } catch (err) {
      result = { status: 'failed', steps: 0, metrics: [], rollouts: [], errors: [String(err.message)] };
    }
    const record = { key, ...runRecord(method, seed, result, base.rubric.criteria, (performance.now() - t0) / 1000) };
    records.push(record);
    appendFileSync(runsFile, JSON.stringify(record) + '\n');
    writeSummary();
    const f = record.final;
    console.log(
      `${method} seed ${seed}: ${record.status} after ${record.steps} steps, ` +
        (f ? `reward ${f.reward?.toFixed(3)} (last 3: ${f.reward_last3?.toFixed(3)}), UC ${f.unexplored_per_step?.toFixed(2)}, SC ${f.suppressed_per_step?.toFixed(2)}, ` : '') +
        `${record.wall_seconds.toFixed(0)} s` +
        (record.errors.length ? `; errors: ${record.errors.join('; ')}` : ''),
    );
  }
  writeSummary();
  console.log(`methods: wrote ${join(out, 'table.md')}\n`);
  console.log(readFileSync(join(out, 'table.md'), 'utf8'));
} finally {
  await harness.close();
}
