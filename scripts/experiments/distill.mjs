#!/usr/bin/env node
// Distillation experiment (issue 11): does on-policy distillation from a checkpoint trained on a
// rubric teach that rubric to the start model, with no judge? On demand, not CI (minutes on 2 CPU
// cores with SwiftShader), in one headless Chromium (scripts/page/distill.ts):
//   1. teacher: GRPO on the "Open with The" preset (its rubric, seed 7, learning rate 2e-3) from the
//      embedded model for --teacher-steps steps, kept as F16 safetensors;
//   2. for every seed: the "Learn from a teacher" lesson's experiment (src/share/lessons.ts:
//      distillation.teacher "model", mode "pure", the preset's prompts, rubric and sizes) with that
//      teacher as its teacher_model, distilled into the embedded start model for --steps updates.
//      Nothing is judged for training; the rubric is also the held-out rubric, measured on each
//      step's samples.
// Reported per seed: the per-token divergence (GKD beta, at the distillation temperature) at step 0
// and after --steps updates, top-1 agreement, and the rubric's reward on a fixed evaluation
// (--eval-samples answers per prompt, sampling seed --eval-seed) before and after; the teacher's and
// the start model's reward on the same evaluation.
//
//   node scripts/experiments/distill.mjs [--seeds 1,2,3] [--teacher-steps 2] [--steps 1]
//                                        [--eval-samples 16] [--eval-seed 99] [--beta B] [--lr X]
//                                        [--out FILE] [--save-teacher DIR] [--lessons-out FILE]
//
// Writes FILE (default bench/results/distill.json, ignored by git) after the teacher and after every
// seed, so an interrupted run keeps what finished. --save-teacher DIR also writes the teacher as a
// model folder (the embedded model's config and tokenizer, the teacher's F16 model.safetensors):
// public/models/tiny-gpt2-byte-the/ is this, with the defaults. --lessons-out FILE also writes the
// runs' first 2 steps (with --steps 1, all of them) as a lessons.json of lessons.mjs (lesson
// distill-teacher: the same trainer and experiment, the teacher from memory instead of public/),
// for its --merge.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from '../lib/browser.mjs';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    'teacher-steps': { type: 'string', default: '2' },
    steps: { type: 'string', default: '1' },
    'eval-samples': { type: 'string', default: '16' },
    'eval-seed': { type: 'string', default: '99' },
    beta: { type: 'string' },
    lr: { type: 'string' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'distill.json') },
    'save-teacher': { type: 'string' },
    'lessons-out': { type: 'string' },
  },
});
const fail = (msg) => {
  console.error(`distill: ${msg}`);
  process.exit(2);
};
const int = (name, min) => {
  const v = Number(values[name]);
  if (!Number.isInteger(v) || v < min) fail(`--${name} must be an integer ≥ ${min}, got ${values[name]}`);
  return v;
};
const seeds = values.seeds.split(',').map((s) => Number(s.trim()));
if (!seeds.length || seeds.some((s) => !Number.isInteger(s) || s < 0)) fail('--seeds must be a comma-separated list of non-negative integers, e.g. 1,2,3');
const teacherSteps = int('teacher-steps', 1);
const steps = int('steps', 1);
const evalReq = { evalSamplesPerPrompt: int('eval-samples', 2), evalSeed: int('eval-seed', 0) };
const distillation = values.beta === undefined ? undefined : { beta: Number(values.beta) };
if (distillation && !(distillation.beta >= 0 && distillation.beta <= 1)) fail('--beta must be in [0, 1]');
const config = values.lr === undefined ? undefined : { learning_rate: Number(values.lr) };
if (config && !(config.learning_rate > 0)) fail('--lr must be a positive number');
const out = resolve(values.out);
mkdirSync(dirname(out), { recursive: true });

const fmt = (x, d = 3) => (typeof x === 'number' ? x.toFixed(d) : 'n/a');
const harness = await openHarness();
const doc = { adapter: `${harness.info.vendor} ${harness.info.architecture} ${harness.info.description}`.trim(), teacher_steps: teacherSteps, steps, eval: evalReq, teacher: null, runs: [] };
/** lessons.mjs runs a distill- lesson for 2 steps (its STEPS): the merged runs keep those. */
const LESSON_STEPS = 2;
const save = () => {
  writeFileSync(out, JSON.stringify(doc, null, 1));
  if (!values['lessons-out']) return;
  const runs = doc.runs.map((r) => ({ lesson: 'distill-teacher', seed: r.seed, status: r.status, seconds: r.seconds, metrics: r.metrics.slice(0, LESSON_STEPS), source: 'scripts/experiments/distill.mjs' }));
  writeFileSync(resolve(values['lessons-out']), JSON.stringify({ adapter: doc.adapter, seeds: runs.map((r) => r.seed), runs }, null, 1));
};
try {
  let t0 = Date.now();
  const teacher = await harness.runModule('/scripts/page/distill.ts', 'trainTeacher', { ...evalReq, steps: teacherSteps });
  for (const e of teacher.errors) console.error(`distill: teacher: ${e}`);
  const { weights_f16_base64: weights, ...kept } = teacher;
  doc.teacher = { ...kept, seconds: (Date.now() - t0) / 1000, weights_f16_bytes: Buffer.from(weights, 'base64').length };
  save();
  console.log(`teacher: ${teacher.status} after ${teacher.metrics.length} GRPO steps in ${doc.teacher.seconds.toFixed(0)} s; eval reward ${fmt(teacher.before.reward)} → ${fmt(teacher.after.reward)} (F16, n=${teacher.after.n})`);
  if (values['save-teacher']) {
    const dir = resolve(values['save-teacher']);
    mkdirSync(dir, { recursive: true });
    const embedded = join(repoRoot, 'public', 'models', 'tiny-gpt2-byte');
    for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(embedded, f), join(dir, f));
    writeFileSync(join(dir, 'model.safetensors'), Buffer.from(weights, 'base64'));
    console.log(`teacher written to ${dir}`);
  }
  for (const seed of seeds) {
    t0 = Date.now();
    const r = await harness.runModule('/scripts/page/distill.ts', 'distill', { ...evalReq, seed, steps, distillation, config });
    for (const e of r.errors) console.error(`distill: seed ${seed}: ${e}`);
    const first = r.metrics[0]?.distillation;
    const last = r.metrics[r.metrics.length - 1]?.distillation;
    const run = {
      seed,
      status: r.status,
      seconds: (Date.now() - t0) / 1000,
      divergence_before: first?.divergence ?? null,
      divergence_after: last?.divergence ?? null,
      top1_before: first?.top1_agreement ?? null,
      top1_after: last?.top1_agreement ?? null,
      reward_before: r.before.reward,
      reward_after: r.after.reward,
      reward_se_after: r.after.se,
      ...r,
    };
    doc.runs.push(run);
    save();
    console.log(
      `seed ${seed}: ${r.status}, ${steps} updates in ${run.seconds.toFixed(0)} s; divergence ${fmt(run.divergence_before)} → ${fmt(run.divergence_after)}, ` +
        `top-1 agreement ${fmt(run.top1_before, 2)} → ${fmt(run.top1_after, 2)}, rubric reward ${fmt(run.reward_before)} → ${fmt(run.reward_after)} (n=${r.after.n})`,
    );
  }
  console.log(`wrote ${out}`);
} catch (err) {
  console.error(`distill: ${String(err.message).replace(/^page\.evaluate: \w*Error: /, '')}`);
  process.exitCode = 1;
} finally {
  await harness.close();
}
