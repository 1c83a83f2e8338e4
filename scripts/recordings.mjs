#!/usr/bin/env node
// The lessons' recorded runs the page replays (public/recordings/): converts each run file that
// `node scripts/experiments/lessons.mjs --record DIR` wrote (DIR/<lesson id>.rubric-run.json,
// every step's rollouts) into the zip container the page reads (readRunFile in
// src/share/runFile.ts; run.json deflated, several times smaller), and writes index.json: which
// lessons have a recording, with its seed, step count and the adapter it was recorded on. The
// page asks index.json first, so a lesson without a recording simply offers none.
//
//   node scripts/recordings.mjs [--from DIR] [--to DIR] (--results FILE | --adapter TEXT)
//
// --from is the folder given to --record (default: bench/results/recordings, ignored by git); --to
// defaults to public/recordings. The adapter
// is read from the lessons.json the same lessons.mjs run wrote (--results), or given (--adapter).
// Every file is checked (format, version, no checkpoint, metrics and rollouts present) before
// anything is written; the index lists every recording in --to, old and new, by lesson id.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { strToU8, unzipSync, zipSync } from 'fflate';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const INDEX_FORMAT = 'rubric-playground-recordings';
const SUFFIX_JSON = '.rubric-run.json';
const SUFFIX_ZIP = '.rubric-run.zip';
/** A lesson id as the lessons use them (also the file's name, so nothing odd reaches a URL). */
const LESSON_ID = /^[a-z0-9][a-z0-9-]{0,79}$/;

/** The checked summary of one run file's text; throws with the file's name and the problem. */
export function describeRunFile(name, text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`${name}: not JSON (${e.message})`);
  }
  if (doc?.format !== 'rubric-playground-run' || doc.version !== 1) throw new Error(`${name}: not a version 1 Rubric Playground run file`);
  if (doc.checkpoint) throw new Error(`${name}: holds a checkpoint; a recording must not (it would make the page's download large)`);
  if (!Array.isArray(doc.metrics) || doc.metrics.length === 0) throw new Error(`${name}: has no steps`);
  if (!Array.isArray(doc.rollouts) || doc.rollouts.length === 0) throw new Error(`${name}: has no rollouts (record with lessons.mjs --record)`);
  const seed = doc.experiment?.config?.seed;
  if (!Number.isInteger(seed)) throw new Error(`${name}: its experiment names no seed`);
  return { seed, steps: doc.metrics.length, model: String(doc.experiment.model), recorded_at: String(doc.exported_at) };
}

/** The zip container of a run file's text: run.json alone, deflated (what readRunFile reads). */
export function zipRunFile(text) {
  return zipSync({ 'run.json': [strToU8(text), { level: 9 }] }, { mtime: new Date('2026-01-01T00:00:00Z') });
}

/**
 * Converts every DIR/<id>.rubric-run.json of `from` into `to`/<id>.rubric-run.zip and rewrites
 * `to`/index.json over every recording there. Returns the index.
 */
export function convertRecordings({ from, to, adapter }) {
  if (!existsSync(from)) throw new Error(`no folder ${from}: pass the folder lessons.mjs --record wrote`);
  if (typeof adapter !== 'string' || adapter.trim() === '') throw new Error('the adapter the recordings were made on is unknown: pass --results FILE (lessons.json) or --adapter TEXT');
  const sources = readdirSync(from).filter((f) => f.endsWith(SUFFIX_JSON));
  const converted = sources.map((file) => {
    const lesson = basename(file, SUFFIX_JSON);
    if (!LESSON_ID.test(lesson)) throw new Error(`${file}: "${lesson}" is not a lesson id`);
    const text = readFileSync(join(from, file), 'utf8');
    return { lesson, text, info: describeRunFile(file, text) };
  });
  mkdirSync(to, { recursive: true });
  const previous = readIndex(to);
  for (const c of converted) writeFileSync(join(to, `${c.lesson}${SUFFIX_ZIP}`), zipRunFile(c.text));
  const fresh = new Map(converted.map((c) => [c.lesson, { lesson: c.lesson, file: `${c.lesson}${SUFFIX_ZIP}`, ...c.info, adapter: adapter.trim() }]));
  // Recordings converted earlier (another adapter, another run) stay listed unless replaced.
  const entries = new Map(previous.filter((e) => existsSync(join(to, e.file))).map((e) => [e.lesson, e]));
  for (const [id, e] of fresh) entries.set(id, e);
  const recordings = [...entries.values()]
    .map((e) => ({ ...e, bytes: statSync(join(to, e.file)).size }))
    .sort((a, b) => (a.lesson < b.lesson ? -1 : 1));
  const index = { format: INDEX_FORMAT, version: 1, recordings };
  writeFileSync(join(to, 'index.json'), `${JSON.stringify(index, null, 1)}\n`);
  return index;
}

function readIndex(dir) {
  const path = join(dir, 'index.json');
  if (!existsSync(path)) return [];
  const index = JSON.parse(readFileSync(path, 'utf8'));
  return Array.isArray(index.recordings) ? index.recordings : [];
}

/** The run file inside a converted zip (a check for tests and for the curious). */
export function unzipRunFile(bytes) {
  return new TextDecoder().decode(unzipSync(bytes)['run.json']);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      from: { type: 'string', default: join(repoRoot, 'bench', 'results', 'recordings') },
      to: { type: 'string', default: join(repoRoot, 'public', 'recordings') },
      results: { type: 'string' },
      adapter: { type: 'string' },
    },
  });
  try {
    const adapter = values.adapter ?? (values.results ? JSON.parse(readFileSync(values.results, 'utf8')).adapter : undefined);
    const index = convertRecordings({ from: resolve(values.from), to: resolve(values.to), adapter });
    for (const r of index.recordings) console.log(`${r.file}: ${r.steps} steps, seed ${r.seed}, ${(r.bytes / 1024).toFixed(0)} KB, on ${r.adapter}`);
  } catch (e) {
    console.error(`recordings: ${e.message}`);
    process.exit(2);
  }
}
