#!/usr/bin/env node
// Lesson experiments (issue 16): trains every lesson (or the ones named) headless with its own
// settings over several seeds, with the app's trainer (scripts/page/train.ts) in one headless
// Chromium, and measures the figure each lesson's claim is about (scripts/page/lessonFigures.ts).
// On demand, not CI: a full run takes one to two hours on 2 CPU cores (SwiftShader).
//
//   node scripts/experiments/lessons.mjs [--lesson ID[,ID...]] [--seeds 1,2] [--steps N] [--out DIR] [--record DIR]
//                                        [--merge FILE[,FILE...]]
//
// Writes DIR/lessons.json (every run's per-step figures, a few completions of its first and last
// step, and the summary) and DIR/lessons.md (the table the README shows) after every run, so an
// interrupted run still leaves the finished ones. DIR defaults to bench/results/lessons (ignored
// by git). --steps overrides every lesson's default step count (STEPS below). --record DIR also
// writes each lesson's run of the first seed as DIR/<lesson id>.rubric-run.json (every step's
// rollouts): the recordings the page replays (public/recordings). --merge also counts the runs of
// earlier invocations' lessons.json files in the table (same lesson and seed: the newest run wins);
// with --seeds none it trains nothing and only writes the merged table.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from '../lib/browser.mjs';
import { keepStep } from './keepStep.mjs';

/** Steps each lesson family needs for its claim to show (measured; see the README's "Lesson experiments"). */
const STEPS = { 'grpo-basics': 5, 'reward-hacking': 8, 'hacking-onset': 8, 'vacuous-credit': 6, 'zero-variance': 4, clipping: 4, 'rubric-quality': 4, 'distill-then-rl': 4, 'distill-': 2, 'rubric-evolution': 6 };
const stepsFor = (id) => STEPS[Object.keys(STEPS).find((k) => id.startsWith(k))] ?? 5;

const { values } = parseArgs({
  options: {
    lesson: { type: 'string', multiple: true },
    seeds: { type: 'string', default: '1,2' },
    steps: { type: 'string' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'lessons') },
    record: { type: 'string' },
    merge: { type: 'string', multiple: true },
  },
});
const fail = (msg) => {
  console.error(`lessons: ${msg}`);
  process.exit(2);
};
const seeds = values.seeds.trim() === 'none' ? [] : values.seeds.split(',').map((s) => Number(s.trim()));
if (seeds.some((s) => !Number.isInteger(s) || s < 0)) fail('--seeds must be a comma-separated list of non-negative integers, e.g. 1,2,3, or none');
const steps = values.steps === undefined ? undefined : Number(values.steps);
if (steps !== undefined && (!Number.isInteger(steps) || steps < 1)) fail('--steps must be a positive integer');
const ids = (values.lesson ?? []).flatMap((l) => l.split(',')).map((s) => s.trim()).filter(Boolean);
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const recordDir = values.record === undefined ? undefined : resolve(values.record);
if (recordDir) mkdirSync(recordDir, { recursive: true });

const harness = await openHarness();
/** Writes lessons.json and lessons.md of every run so far (sorted by lesson, then seed). */
async function write(lessons) {
  const order = new Map(lessons.map((l, i) => [l.id, i]));
  runs.sort((a, b) => (order.get(a.lesson) ?? 1e9) - (order.get(b.lesson) ?? 1e9) || a.seed - b.seed);
  const summary = await harness.runModule('/scripts/page/lessons.ts', 'summarise', { runs, adapter });
  const configs = Object.fromEntries(lessons.map((l) => [l.id, l.experiment.config]));
  const allSeeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
  writeFileSync(join(out, 'lessons.json'), JSON.stringify({ adapter, seeds: allSeeds, configs, summaries: summary.summaries, runs }, null, 1));
  writeFileSync(join(out, 'lessons.md'), `${summary.markdown}\n`);
  return summary;
}
const adapter = `${harness.info.vendor} ${harness.info.architecture} ${harness.info.description}`.trim() + (harness.info.isFallback ? ' (fallback adapter)' : '');
const runs = [];
/** Adds a run, replacing an earlier one of the same lesson and seed. */
const addRun = (run) => {
  const i = runs.findIndex((r) => r.lesson === run.lesson && r.seed === run.seed);
  if (i >= 0) runs.splice(i, 1);
  runs.push(run);
};
for (const file of (values.merge ?? []).flatMap((f) => f.split(',')).filter(Boolean)) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(resolve(file), 'utf8'));
  } catch (err) {
    fail(`--merge ${file}: ${err.message}`);
  }
  if (!Array.isArray(doc?.runs)) fail(`--merge ${file}: no "runs" list (is it a lessons.json of this script?)`);
  for (const run of doc.runs) if (!ids.length || ids.includes(run.lesson)) addRun(run);
}
if (!seeds.length && !runs.length) fail('nothing to do: --seeds none needs --merge');
try {
  const lessons = await harness.runModule('/scripts/page/lessons.ts', 'lessonExperiments', { ids });
  console.log(`lessons: ${lessons.length} lessons × seeds ${seeds.join(', ')} on ${adapter}; writing ${out}`);
  // Seed-major (every lesson once, then again with the next seed), so a run cut short still covers
  // every lesson; --lesson sets the lesson order.
  for (const seed of seeds) {
    for (const lesson of lessons) {
      const experiment = structuredClone(lesson.experiment);
      experiment.config = { ...experiment.config, seed };
      const n = steps ?? stepsFor(lesson.id);
      const t0 = Date.now();
      const recordAs = recordDir && seed === seeds[0] ? `${lesson.id} (recording, seed ${seed})` : undefined;
      // "Is my rubric any good?" is measured on every rollout of its run: the run file carries them.
      const quality = lesson.id === 'rubric-quality';
      const result = await harness.runModule('/scripts/page/train.ts', 'runExperiment', { experiment, steps: n, keepCompletions: true, recordAs: recordAs ?? (quality ? lesson.id : undefined) });
      if (recordDir && recordAs && result.runFile) writeFileSync(join(recordDir, `${lesson.id}.rubric-run.json`), result.runFile);
      const rubricQuality = quality && result.runFile ? await harness.runModule('/scripts/page/rubricQuality.ts', 'measureLessonRun', { runFile: result.runFile }) : undefined;
      const seconds = (Date.now() - t0) / 1000;
      for (const e of result.errors) console.error(`lessons: ${lesson.id} seed ${seed}: ${e}`);
      const c = result.completions ?? [];
      addRun({
        lesson: lesson.id,
        seed,
        status: result.status,
        seconds,
        metrics: result.metrics.map(keepStep),
        completions_first_step: (c[0] ?? []).slice(0, 8),
        completions_last_step: (c[c.length - 1] ?? []).slice(0, 8),
        ...(rubricQuality ? { rubric_quality: rubricQuality } : {}),
      });
      const last = result.metrics[result.metrics.length - 1];
      console.log(
        `${lesson.id} seed ${seed}: ${result.status} after ${result.steps} steps in ${seconds.toFixed(0)} s; last reward ${last?.rewards.reward?.toFixed(3) ?? 'n/a'}` +
          (last?.held_out ? `, held-out ${last.held_out.reward?.toFixed(3) ?? 'n/a'}` : ''),
      );
      await write(lessons);
    }
  }
  const { markdown } = await write(lessons);
  console.log(`\n${markdown}`);
} catch (err) {
  console.error(`lessons: ${String(err.message).replace(/^page\.evaluate: \w*Error: /, '')}`);
  process.exitCode = 1;
} finally {
  await harness.close();
}
