#!/usr/bin/env node
// The calibration before Train against real steps: calibrates the adapter for an experiment's
// model twice (a fresh device each time, as a page would), prints each estimate, then trains
// the experiment with the app's trainer and prints every step's measured time. Timings depend
// on the machine and what else runs on it; the first step also compiles the kernels.
//
//   node scripts/calibration-check.mjs EXPERIMENT.json [--steps N]
//
// Only for a model that ships with the page (embedded/...): its config.json is read from public/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from './lib/browser.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { steps: { type: 'string', default: '3' } } });
if (positionals.length !== 1) {
  console.error('usage: node scripts/calibration-check.mjs EXPERIMENT.json [--steps N]');
  process.exit(2);
}
const experiment = JSON.parse(readFileSync(positionals[0], 'utf8'));
const steps = Number(values.steps);
if (!Number.isInteger(steps) || steps < 1) {
  console.error('calibration-check: --steps must be a positive integer');
  process.exit(2);
}
const embedded = /^embedded\/(.+)$/.exec(experiment.model ?? '');
if (!embedded) {
  console.error(`calibration-check: "${experiment.model}" is not a model that ships with the page (embedded/...)`);
  process.exit(2);
}
const hf = JSON.parse(readFileSync(join(repoRoot, 'public', 'models', embedded[1], 'config.json'), 'utf8'));
// Byte-level embedded models: a prompt is its template's bytes and a BOS token.
const template = hf.rubric_playground?.prompt_template ?? '{prompt}';
const lengths = experiment.prompts.map((p) => 1 + Buffer.byteLength(template.replace('{prompt}', p)));
const promptTokens = Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length);
const config = { ...experiment.config, max_steps: steps };

const harness = await openHarness();
try {
  const runs = await harness.runModule('/test/harness/cases/calibration.ts', 'calibrateConfig', { hf, runs: 2 });
  for (const [i, run] of runs.entries()) {
    const e = await harness.runModule('/test/harness/cases/calibration.ts', 'estimate', { costs: run.result, config, promptTokens });
    console.log(
      `calibration ${i + 1}: ${run.result.seconds.toFixed(2)} s (compiling ${run.result.parts.compile.toFixed(2)} s); ` +
        `estimate ${e.step.toFixed(1)} s per step (sampling ${e.sampling.toFixed(1)} s, update ${e.update.toFixed(1)} s)`,
    );
  }
  const result = await harness.runModule('/scripts/page/train.ts', 'runExperiment', { experiment: { ...experiment, config } });
  for (const m of result.metrics) console.log(`step ${m.step}: ${m.step_seconds.toFixed(1)} s, mean completion ${m.completions.mean_length.toFixed(1)} tokens`);
  for (const e of result.errors) console.error(`calibration-check: ${e}`);
} finally {
  await harness.close();
}
