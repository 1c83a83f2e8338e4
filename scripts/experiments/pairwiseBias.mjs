#!/usr/bin/env node
// Position bias of a real model judge (issue 13): the embedded model, frozen, as a self-judge in
// the pairwise mode (judge_verdict "pairwise": two answers of a group in one prompt, "A or B?",
// the margin of the answer tokens picks the winner, every pair in both orders). One GRPO step per
// seed on the first --groups prompts of the lessons' prompt list, --generations answers each, two
// judge-question criteria; reported per seed and criterion: comparisons, first-slot win rate,
// position-bias index (judgeMeta.positionBias: 0 = the slot does not matter, +1 = slot A always
// wins), and the index histogram over groups. On demand, not CI (headless Chromium, SwiftShader
// on this machine's CPUs: about a minute per seed when the machine is idle).
//
//   node scripts/experiments/pairwiseBias.mjs [--seeds 1,2,3] [--groups 4] [--generations 4] [--length 40] [--out FILE]
//
// Writes FILE (default bench/results/pairwise-bias.json, ignored by git).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openHarness, repoRoot } from '../lib/browser.mjs';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    groups: { type: 'string', default: '4' },
    generations: { type: 'string', default: '4' },
    length: { type: 'string', default: '40' },
    out: { type: 'string', default: join(repoRoot, 'bench', 'results', 'pairwise-bias.json') },
  },
});
const fail = (msg) => {
  console.error(`pairwiseBias: ${msg}`);
  process.exit(2);
};
const int = (name, min, max) => {
  const v = Number(values[name]);
  if (!Number.isInteger(v) || v < min || v > max) fail(`--${name} must be an integer in [${min}, ${max}], got ${values[name]}`);
  return v;
};
const seeds = values.seeds.split(',').map((s) => Number(s.trim()));
if (!seeds.length || seeds.some((s) => !Number.isInteger(s) || s < 0)) fail('--seeds must be a comma-separated list of non-negative integers, e.g. 1,2,3');
const input = { groups: int('groups', 1, 8), numGenerations: int('generations', 2, 16), maxCompletionLength: int('length', 1, 200) };
const out = resolve(values.out);
mkdirSync(dirname(out), { recursive: true });

const fmt = (x, d = 2) => (typeof x === 'number' ? x.toFixed(d) : 'n/a');
const harness = await openHarness();
const doc = { adapter: `${harness.info.vendor} ${harness.info.architecture} ${harness.info.description}`.trim(), ...input, runs: [] };
try {
  for (const seed of seeds) {
    const r = await harness.runModule('/scripts/page/pairwiseBias.ts', 'measure', { ...input, seed });
    doc.runs.push(r);
    writeFileSync(out, JSON.stringify(doc, null, 1));
    for (const b of r.position_bias) {
      console.log(
        `seed ${seed} ${b.criterion_id}: ${b.n} comparisons, first slot wins ${fmt(b.first_win_rate)}, index ${fmt(b.index)}, ties ${b.ties}, groups by index ${b.histogram.map((h) => h.groups).join('/')}`,
      );
    }
    console.log(`seed ${seed}: judge ${r.judge}, step ${fmt(r.seconds, 1)} s (judging ${fmt(r.judge_seconds, 1)} s), margins mean ${fmt(r.margins.mean, 3)} |mean| ${fmt(r.margins.mean_abs, 3)}, unscorable ${r.unscorable_count}${r.unscorable.length ? ` (${r.unscorable[0]})` : ''}`);
  }
  // All seeds pooled, per criterion.
  const pooled = new Map();
  for (const r of doc.runs) for (const b of r.position_bias) {
    const p = pooled.get(b.criterion_id) ?? { n: 0, first: 0, second: 0 };
    p.n += b.n;
    p.first += b.first_wins;
    p.second += b.second_wins;
    pooled.set(b.criterion_id, p);
  }
  doc.pooled = Object.fromEntries([...pooled].map(([id, p]) => [id, { n: p.n, first_win_rate: p.first / p.n, index: (p.first - p.second) / p.n }]));
  writeFileSync(out, JSON.stringify(doc, null, 1));
  for (const [id, p] of Object.entries(doc.pooled)) console.log(`pooled ${id}: ${p.n} comparisons, first slot wins ${fmt(p.first_win_rate)}, index ${fmt(p.index)}`);
  console.log(`wrote ${out}`);
} finally {
  await harness.close();
}
