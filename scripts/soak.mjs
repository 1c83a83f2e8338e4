#!/usr/bin/env node
// Kill/reload soak: trains the tiny fixture model in the app on one browser profile, kills it
// (browser SIGKILL, renderer crash, tab closed) at seeded moments (model load, sampling, update,
// checkpoint write, right after a commit), reopens the profile, checks the store and resumes.
// Prints
//
//   cycles N, steps lost N, steps duplicated N, resume errors N
//
// then store problems (anything else the checks found: see scripts/soak/runSoak.mjs), whether a
// second tab was refused the run the first one trains, the steps the resumes redid, and the schedule. Writes bench/results/soak.json. Exit status 1 when any
// counter is not 0.
//
//   node scripts/soak.mjs [--cycles 20] [--seed 1] [--moment load] [--out bench/results/soak.json]
//
// --moment keeps the seeded methods and delays but kills every cycle at that moment (one of
// load, sampling, updating, checkpoint, commit).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './lib/browser.mjs';
import { KILL_MOMENTS, runSoak, soakLine, soakSchedule } from './soak/runSoak.mjs';

const { values } = parseArgs({
  options: { cycles: { type: 'string', default: '20' }, seed: { type: 'string', default: '1' }, moment: { type: 'string' }, out: { type: 'string', default: resolve(repoRoot, 'bench/results/soak.json') } },
});
const cycles = Number(values.cycles);
const seed = Number(values.seed);
if (!Number.isInteger(cycles) || cycles < 1 || !Number.isInteger(seed) || (values.moment !== undefined && !KILL_MOMENTS.includes(values.moment))) {
  console.error(`usage: node scripts/soak.mjs [--cycles N>0] [--seed INTEGER] [--moment ${KILL_MOMENTS.join('|')}] [--out FILE]`);
  process.exit(2);
}

const started = Date.now();
const schedule = soakSchedule(seed, cycles).map((c) => (values.moment ? { ...c, moment: values.moment } : c));
const totals = await runSoak({ schedule, log: (line) => console.error(line) });
const seconds = (Date.now() - started) / 1000;
console.log(soakLine(totals));
console.log(`store problems ${totals.storeProblems}, second tabs not refused ${totals.twoTabErrors}, steps redone by resumes ${totals.stepsRedone}, steps committed at the end ${totals.committed}; ${seconds.toFixed(0)} s`);
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, JSON.stringify({ seed, seconds, schedule, ...totals }, null, 2));
console.log(`wrote ${values.out}`);
process.exitCode = totals.stepsLost + totals.stepsDuplicated + totals.resumeErrors + totals.storeProblems + totals.twoTabErrors === 0 ? 0 : 1;
