#!/usr/bin/env node
// Headless training: runs an experiment (model, prompts, rubric, GRPO config) with the app's
// trainer in headless Chromium (WebGPU; SwiftShader on machines without a GPU) and writes
// per-step metrics and the final rollouts as JSON.
//
//   node scripts/train.mjs EXPERIMENT.json [--steps N] [--out DIR]
//
// Writes DIR/metrics.json (one object per step) and DIR/rollouts.json (the last step's
// rollouts); DIR defaults to ./train-out. Prints one line per step. An experiment whose judge is
// {"kind": "remote", ...} takes its API key from the RUBRIC_JUDGE_API_KEY environment variable
// (never from the experiment file).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness } from './lib/browser.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { steps: { type: 'string' }, out: { type: 'string', default: 'train-out' } },
});
if (positionals.length !== 1) {
  console.error('usage: node scripts/train.mjs EXPERIMENT.json [--steps N] [--out DIR]');
  process.exit(2);
}
let experiment;
try {
  experiment = JSON.parse(readFileSync(positionals[0], 'utf8'));
} catch (err) {
  console.error(`train: cannot read ${positionals[0]}: ${err.message}`);
  process.exit(2);
}
const steps = values.steps === undefined ? undefined : Number(values.steps);
if (steps !== undefined && (!Number.isInteger(steps) || steps < 1)) {
  console.error('train: --steps must be a positive integer');
  process.exit(2);
}

const harness = await openHarness();
try {
  const result = await harness.runModule('/scripts/page/train.ts', 'runExperiment', { experiment, steps, judgeApiKey: process.env.RUBRIC_JUDGE_API_KEY });
  for (const m of result.metrics) {
    const r = m.rewards.reward;
    console.log(
      `step ${m.step}: reward ${r === null ? 'n/a' : r.toFixed(3)} ± ${m.rewards.reward_std?.toFixed(3) ?? 'n/a'}, ` +
        `loss ${m.loss.toFixed(4)}, kl ${m.kl?.toFixed(4) ?? '-'}, clip ${m.clip_ratio_region.toFixed(3)}, ` +
        `len ${m.completions.mean_length.toFixed(1)}, zero-std groups ${(m.frac_reward_zero_std * 100).toFixed(0)}%, ${m.step_seconds.toFixed(1)} s`,
    );
  }
  for (const e of result.errors) console.error(`train: ${e}`);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'metrics.json'), JSON.stringify(result.metrics, null, 2));
  writeFileSync(join(out, 'rollouts.json'), JSON.stringify(result.rollouts, null, 2));
  console.log(`${result.status} after ${result.steps} steps; wrote ${out}/metrics.json and rollouts.json`);
  process.exitCode = result.status === 'failed' ? 1 : 0;
} catch (err) {
  console.error(`train: ${String(err.message).replace(/^page\.evaluate: \w*Error: /, '')}`);
  process.exitCode = 1;
} finally {
  await harness.close();
}
