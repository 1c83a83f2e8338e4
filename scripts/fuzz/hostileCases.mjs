// Hostile share links and run files, generated from a seed (same seed, same cases), for the
// robustness suite: scripts/fuzz-links.mjs (the full run) and test/browser/fuzzLinks.test.ts (a
// few dozen in CI). Plain JavaScript on fflate so both Node scripts and vitest import it.
//
// The cases start from a valid experiment and a valid run file (both made by the page, so they
// follow the real schemas) and damage them by category: malformed, truncated, bit-flipped,
// oversized (MB, zip bombs), deeply nested, wrong types, prototype keys, HTML/script in every text
// field, catastrophic regular expressions, hostile numbers, unknown versions, credential fields,
// odd Unicode; run files also a rubric that does not match its version and zip containers.
// Every script payload sets window.__pwned (or opens a dialog), so a run that executes one is seen.
import { deflateSync, strToU8, zipSync } from 'fflate';

/** Deterministic 32-bit PRNG (mulberry32): uniform in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (r, list) => list[Math.floor(r() * list.length)];
const int = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
const clone = (v) => JSON.parse(JSON.stringify(v));

/** Markup and script in every spelling the page must show as text (each sets window.__pwned or alerts). */
export const SCRIPT_PAYLOADS = [
  '<script>window.__pwned=(window.__pwned||0)+1</script>',
  '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">',
  '<svg onload="window.__pwned=(window.__pwned||0)+1"></svg>',
  '"><img src=x onerror=alert(1)>',
  "'><script>alert('pwned')</script>",
  '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
  '<a href="javascript:window.__pwned=1">click</a>',
  'javascript:window.__pwned=1',
  '<details open ontoggle="window.__pwned=1">',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=1">',
  '{{constructor.constructor("window.__pwned=1")()}}',
  '${window.__pwned=1}',
  '<style>body{display:none}</style><b>bold</b>',
  '<!--<img src="--><img src=x onerror=alert(1)//">',
  '\u202e<b>override</b>\u202c',
];

const CATASTROPHIC_PATTERNS = [
  '(a+)+$',
  '(a|a)*b',
  '(x+x+)+y',
  '(a|aa)+$',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '(.*a){20}',
  'a{1000}',
  '(a{1000}){1000}',
  '((a{100}){100}){100}',
  '(?:a*)*b',
  '\\w{0,999}\\W',
  '(?<x>a)\\k<x>',
  '(a)\\1',
  '(?=a)a',
  '[',
  '(',
  '\\',
  'a**',
  `(${'a|'.repeat(2000)}b)`,
];

const HOSTILE_NUMBERS = ['NaN', 'Infinity', '-Infinity', '1e999', '-1e999', '-1', '0', '-0', '1e300', '-1e300', '9007199254740993', '0.5', '1e-320', '"12"', 'null', 'true', '[]', '{}'];
const NUMERIC_SETTINGS = [
  'num_generations',
  'generation_batch_size',
  'max_completion_length',
  'temperature',
  'learning_rate',
  'beta',
  'max_steps',
  'save_steps',
  'top_p',
  'top_k',
  'seed',
  'epsilon',
  'max_grad_norm',
  'gradient_accumulation_steps',
  'num_iterations',
];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];
const SECRET_KEYS = ['api_key', 'apiKey', 'Authorization', 'hf_token', 'token', 'secret', 'password', 'OPENAI_API_KEY', 'bearer', 'x-api-key'];
const WRONG_VALUES = [null, 0, -1, 1.5, '', 'x', true, [], {}, [1, 2], { a: 1 }, 1e308, ['a', 3, null]];
const ODD_STRINGS = ['\ud800', '\udfff\ud800', '\u0000', '\ufeff', '\u202e', '\u200b'.repeat(100), 'e\u0301'.repeat(3000), '😀'.repeat(1000), '\r\n\r', '\\u0000'];
const JUNK = 'ABCxyz019-_+/=%.&#!~*<>"\'\\ \u00e9\u{1f600}\u0000';

// ---- encoding ----

/** Bytes as base64url without padding (the link alphabet). */
export function base64url(bytes) {
  return Buffer.from(bytes).toString('base64url');
}

/** A share-link fragment for JSON text (or bytes), version `version` (default 1). */
export function linkOf(json, version = 1) {
  const bytes = typeof json === 'string' ? strToU8(json) : json;
  return `#x=${version}.${base64url(deflateSync(bytes, { level: 9 }))}`;
}

/** JSON with `value` as an own property `key` of the object at `path` (works for "__proto__" too). */
function withKey(root, path, key, value) {
  let o = root;
  for (const p of path) o = o[p];
  Object.defineProperty(o, key, { value, enumerable: true, configurable: true, writable: true });
  return root;
}

function setAt(root, path, value) {
  let o = root;
  for (const p of path.slice(0, -1)) o = o[p];
  o[path[path.length - 1]] = value;
  return root;
}

function existing(root, path) {
  let o = root;
  for (const p of path) {
    if (o === null || typeof o !== 'object' || !(p in o)) return false;
    o = o[p];
  }
  return true;
}

/** Object paths in a shared payload where keys may be inserted. */
function objectPaths(payload) {
  const out = [[], ['experiment'], ['experiment', 'rubric'], ['experiment', 'config'], ['lesson']];
  payload.experiment.rubric.criteria.forEach((c, i) => {
    out.push(['experiment', 'rubric', 'criteria', i]);
    if (c.rule) out.push(['experiment', 'rubric', 'criteria', i, 'rule']);
  });
  return out.filter((p) => existing(payload, p));
}

// ---- share links ----

export const LINK_CATEGORIES = ['control', 'malformed', 'truncated', 'bitflip', 'oversized', 'nested', 'wrong_types', 'proto_keys', 'html', 'regex', 'settings', 'version', 'secrets', 'unicode'];

const LESSON = { id: 'fuzz-lesson', title: 'Fuzz lesson', guidance: 'Read the guidance.', hidden_controls: ['top_p'] };

/** Text fields of a shared payload, by path (some must be ids or URLs: the schema refuses markup there). */
function textPaths(payload) {
  const paths = [['experiment', 'rubric', 'name'], ['lesson', 'title'], ['lesson', 'guidance'], ['lesson', 'id'], ['preset'], ['experiment', 'model']];
  payload.experiment.prompts.forEach((_, i) => paths.push(['experiment', 'prompts', i]));
  payload.experiment.rubric.criteria.forEach((c, i) => {
    paths.push(['experiment', 'rubric', 'criteria', i, 'text'], ['experiment', 'rubric', 'criteria', i, 'id']);
    if (Array.isArray(c.rule?.terms)) paths.push(['experiment', 'rubric', 'criteria', i, 'rule', 'terms', 0]);
    if (typeof c.rule?.text === 'string') paths.push(['experiment', 'rubric', 'criteria', i, 'rule', 'text']);
  });
  paths.push(['judge-url'], ['judge-model'], ['judge-question']);
  return paths;
}

function basePayload(experiment, r) {
  const payload = { experiment: clone(experiment) };
  if (r() < 0.6) payload.lesson = clone(LESSON);
  return payload;
}

function linkCase(category, r, experiment, index) {
  const payload = basePayload(experiment, r);
  const valid = () => linkOf(JSON.stringify(payload));
  switch (category) {
    case 'control': {
      payload.experiment.prompts = [`fuzz control ${index}`, ...payload.experiment.prompts.slice(1)];
      return { fragment: valid(), expect: 'open', marker: `fuzz control ${index}`, note: 'a valid link' };
    }
    case 'malformed': {
      const body = Array.from({ length: int(r, 0, 300) }, () => pick(r, [...JUNK])).join('');
      const fixed = ['#x=', '#x=1', '#x=1.', '#x=.', '#x=1..', '#x=abc.def', `#x=1.${body}`, `#x=${body}`, `#a=1&x=1.${body}&x=1.AAAA`, `#x=1.${valid().slice(5)}!!`, `#x=1.${encodeURIComponent(valid().slice(5))}%ZZ`, `#x=1.AAAA`, '#x=1.____', `#x=1.${'='.repeat(int(r, 1, 9))}`];
      return { fragment: pick(r, fixed), expect: 'refuse', note: 'malformed fragment' };
    }
    case 'truncated': {
      const full = valid();
      const cut = int(r, 1, full.length - 1);
      return { fragment: full.slice(0, cut), expect: 'refuse', note: `cut at ${cut} of ${full.length}` };
    }
    case 'bitflip': {
      const full = valid();
      if (r() < 0.5) {
        const bytes = Buffer.from(full.slice(5), 'base64url');
        const flips = int(r, 1, 3);
        for (let k = 0; k < flips; k++) bytes[int(r, 0, bytes.length - 1)] ^= 1 << int(r, 0, 7);
        return { fragment: `#x=1.${base64url(bytes)}`, expect: 'any', note: `${flips} bit(s) flipped in the compressed data` };
      }
      const at = int(r, 5, full.length - 1);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      return { fragment: full.slice(0, at) + pick(r, [...alphabet]) + full.slice(at + 1), expect: 'any', note: `character ${at} replaced` };
    }
    case 'oversized': {
      const kind = int(r, 0, 3);
      if (kind === 0) {
        const n = int(r, 100_001, 1_900_000);
        return { fragment: `#x=1.${'A'.repeat(n)}`, expect: 'refuse', note: `${n}-character fragment` };
      }
      if (kind === 1) {
        // A zip bomb: megabytes of one character compress to a few KB.
        const mb = int(r, 3, 32);
        return { fragment: linkOf(new Uint8Array(mb * 1024 * 1024).fill(0x20)), expect: 'refuse', note: `${mb} MB of spaces (deflate bomb)` };
      }
      if (kind === 2) {
        payload.experiment.prompts = [`${'a'.repeat(int(r, 2_000_001, 4_000_000))}`];
        return { fragment: valid(), expect: 'refuse', note: 'one multi-MB prompt' };
      }
      // Under the limits: 10,000 prompts, about 1.5 MB of JSON.
      payload.experiment.prompts = Array.from({ length: 10_000 }, (_, i) => `Prompt ${i}: ${'word '.repeat(25)}`);
      // heavy: Chromium alone takes over a second to lay out 1.5 MB in the prompts box (measured on 2 cores).
      return { fragment: valid(), expect: 'any', heavy: true, note: '10,000 prompts, ~1.5 MB of JSON' };
    }
    case 'nested': {
      const depth = pick(r, [41, 64, 1000, 10_000, 100_000, 1_000_000]);
      const deep = r() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const where = pick(r, [['experiment', 'prompts', 0], ['experiment', 'rubric', 'name'], ['experiment', 'config', 'seed'], ['experiment', 'rubric', 'criteria', 0, 'rule'], ['lesson', 'guidance'], ['extra']]);
      if (where[0] === 'lesson' && !payload.lesson) payload.lesson = clone(LESSON);
      setAt(payload, where, '@@DEEP@@');
      return { fragment: linkOf(JSON.stringify(payload).replace('"@@DEEP@@"', deep)), expect: 'refuse', note: `depth ${depth} at ${where.join('.')}` };
    }
    case 'wrong_types': {
      const paths = [[], ['experiment'], ['experiment', 'prompts'], ['experiment', 'prompts', 0], ['experiment', 'rubric'], ['experiment', 'rubric', 'criteria'], ['experiment', 'rubric', 'criteria', 0], ['experiment', 'rubric', 'criteria', 0, 'weight'], ['experiment', 'rubric', 'criteria', 0, 'rule'], ['experiment', 'config'], ['experiment', 'model'], ['experiment', 'judge'], ['lesson'], ['lesson', 'hidden_controls'], ['preset']];
      const path = pick(r, paths);
      const value = clone(pick(r, WRONG_VALUES));
      if (path.length === 0) return { fragment: linkOf(JSON.stringify(value)), expect: 'refuse', note: `the whole payload is ${JSON.stringify(value)}` };
      if (path[0] === 'lesson' && !payload.lesson) payload.lesson = clone(LESSON);
      setAt(payload, path, value);
      return { fragment: valid(), expect: 'any', note: `${path.join('.')} = ${JSON.stringify(value)}` };
    }
    case 'proto_keys': {
      const path = pick(r, objectPaths(payload));
      const key = pick(r, PROTO_KEYS);
      withKey(payload, path, key, pick(r, [{ polluted: true }, 'polluted', { toString: 'x' }, null, [1]]));
      return { fragment: valid(), expect: 'refuse', note: `"${key}" in ${path.join('.') || 'the payload'}` };
    }
    case 'html': {
      const path = pick(r, textPaths(payload));
      const text = pick(r, SCRIPT_PAYLOADS);
      if (path[0] === 'judge-url' || path[0] === 'judge-model') {
        payload.experiment.judge = { kind: 'remote', url: path[0] === 'judge-url' ? text : 'https://judge.example/v1', model: path[0] === 'judge-model' ? text : 'm' };
      } else if (path[0] === 'judge-question') {
        payload.experiment.rubric.criteria.push({ id: 'q', text: 'Is polite', weight: 1, tier: 'important', judge_question: text });
      } else {
        if (path[0] === 'lesson' && !payload.lesson) payload.lesson = clone(LESSON);
        setAt(payload, path, path[0] === 'preset' || path.at(-1) === 'id' ? text : `${text} ${pick(r, ['Say hi.', 'guidance', ''])}`);
      }
      return { fragment: valid(), expect: 'any', note: `markup in ${path.join('.')}` };
    }
    case 'regex': {
      const pattern = pick(r, CATASTROPHIC_PATTERNS);
      const rule = { kind: 'regex', pattern, ...(r() < 0.5 ? { flags: pick(r, ['i', 'u', 's', 'ium', 'gy', 'x']) } : {}), ...(r() < 0.5 ? { max_input_chars: pick(r, [1, 100_000, 1e9, -1, 1.5]) } : {}) };
      const n = int(r, 1, 40);
      payload.experiment.rubric.criteria = [...payload.experiment.rubric.criteria, ...Array.from({ length: n }, (_, i) => ({ id: `re${i}`, text: `Matches ${pattern.slice(0, 50)}`, weight: 1, tier: 'optional', rule }))];
      payload.experiment.prompts = [`${'a'.repeat(int(r, 10, 3900))}!`, ...payload.experiment.prompts];
      // tryIt: once open, "Try it" scores this response in its worker (the regexes run there).
      return { fragment: valid(), expect: 'any', tryIt: `${'a'.repeat(int(r, 1000, 50_000))}!`, note: `${n} × /${pattern.slice(0, 40)}/` };
    }
    case 'settings': {
      const key = pick(r, NUMERIC_SETTINGS);
      const value = pick(r, HOSTILE_NUMBERS);
      payload.experiment.config[key] = '@@NUM@@';
      return { fragment: linkOf(JSON.stringify(payload).replace('"@@NUM@@"', value)), expect: 'any', note: `${key} = ${value}` };
    }
    case 'version': {
      const v = pick(r, ['0', '2', '3', '10', '999999', '1000000', '00', '01', '001', '1e3', '-1', '1.5', '', 'NaN', 'Infinity', '\u0661', '0x1', ' 1']);
      return { fragment: `#x=${v}.${valid().slice(5)}`, expect: ['01', '001'].includes(v) ? 'open' : 'refuse', note: `version "${v}"` };
    }
    case 'secrets': {
      const key = pick(r, SECRET_KEYS);
      if (r() < 0.3) {
        payload.experiment.judge = { kind: 'remote', url: 'https://judge.example/v1', model: 'm' };
        withKey(payload, ['experiment', 'judge'], key, 'sk-fuzz-secret');
      } else withKey(payload, pick(r, objectPaths(payload)), key, 'sk-fuzz-secret');
      return { fragment: valid(), expect: 'refuse', note: `a "${key}" field` };
    }
    case 'unicode': {
      if (r() < 0.3) {
        // Not UTF-8 at all: invalid bytes inside the compressed JSON.
        const bytes = strToU8(JSON.stringify(payload));
        const at = int(r, 0, bytes.length - 1);
        const bad = Uint8Array.from([...bytes.subarray(0, at), pick(r, [0xff, 0xc0, 0xed, 0x80]), ...bytes.subarray(at)]);
        return { fragment: linkOf(bad), expect: 'refuse', note: 'invalid UTF-8 in the data' };
      }
      const path = pick(r, textPaths(payload).filter((p) => !p[0].startsWith('judge')));
      if (path[0] === 'lesson' && !payload.lesson) payload.lesson = clone(LESSON);
      setAt(payload, path, pick(r, ODD_STRINGS));
      return { fragment: valid(), expect: 'any', note: `odd Unicode in ${path.join('.')}` };
    }
    default:
      throw new Error(`unknown link category ${category}`);
  }
}

// ---- run files ----

export const RUN_FILE_CATEGORIES = ['control', 'malformed', 'truncated', 'bitflip', 'oversized', 'nested', 'wrong_types', 'proto_keys', 'html', 'settings', 'version', 'secrets', 'rubric_mismatch', 'zip', 'duplicates'];

const bytesOf = (text) => strToU8(text);

function runFileCase(category, r, runFile, index) {
  const doc = JSON.parse(runFile);
  const text = () => JSON.stringify(doc);
  switch (category) {
    case 'control': {
      doc.name = `fuzz control ${index}`;
      return { bytes: bytesOf(text()), expect: 'open', marker: doc.name, note: 'a valid run file' };
    }
    case 'malformed': {
      const junk = Array.from({ length: int(r, 0, 500) }, () => pick(r, [...JUNK])).join('');
      const options = ['', '{', 'null', '[]', '"run"', '42', junk, `{"format":"rubric-playground-run"`, JSON.stringify({ format: 'something-else', version: 1 }), JSON.stringify({ ...doc, format: 'rubric-playground-run ' })];
      const choice = int(r, 0, options.length + 1);
      if (choice === options.length) return { bytes: Uint8Array.from([0x50, 0x4b, 0x03, 0x04, ...bytesOf(junk)]), expect: 'refuse', note: 'zip signature, then junk' };
      if (choice === options.length + 1) return { bytes: Uint8Array.from({ length: int(r, 1, 4096) }, () => int(r, 0, 255)), expect: 'refuse', note: 'random bytes' };
      return { bytes: bytesOf(options[choice]), expect: 'refuse', note: `malformed: ${JSON.stringify(options[choice].slice(0, 40))}` };
    }
    case 'truncated': {
      const full = text();
      const cut = int(r, 0, full.length - 1);
      return { bytes: bytesOf(full.slice(0, cut)), expect: 'refuse', note: `cut at ${cut} of ${full.length}` };
    }
    case 'bitflip': {
      const bytes = bytesOf(text());
      const flips = int(r, 1, 4);
      for (let k = 0; k < flips; k++) bytes[int(r, 0, bytes.length - 1)] ^= 1 << int(r, 0, 7);
      return { bytes, expect: 'any', note: `${flips} bit(s) flipped` };
    }
    case 'oversized': {
      const kind = int(r, 0, 2);
      if (kind === 0) {
        doc.name = 'n'.repeat(int(r, 1_000_000, 3_000_000));
        return { bytes: bytesOf(text()), expect: 'refuse', note: `a ${doc.name.length}-character name` };
      }
      if (kind === 1) {
        // A zip whose run.json inflates to tens of MB of spaces: refused or read, never a freeze.
        const mb = int(r, 16, 32);
        return { bytes: zipSync({ 'run.json': [new Uint8Array(mb * 1024 * 1024).fill(0x20), { level: 9 }] }), expect: 'refuse', note: `zip bomb: ${mb} MB run.json of spaces` };
      }
      // Valid and large: thousands of rollouts (several MB).
      const n = int(r, 2000, 8000);
      const base = doc.rollouts[0];
      doc.rollouts = Array.from({ length: n }, (_, i) => ({ ...base, index: i, completion: `${base.completion} ${'lorem ipsum '.repeat(40)}` }));
      return { bytes: bytesOf(text()), expect: 'any', note: `${n} rollouts` };
    }
    case 'nested': {
      const depth = pick(r, [41, 1000, 100_000, 1_000_000]);
      const deep = r() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const where = pick(r, [['name'], ['metrics', 0, 'loss'], ['rollouts', 0, 'results'], ['experiment', 'prompts', 0], ['rubric_versions', 0, 'rubric']]);
      setAt(doc, where, '@@DEEP@@');
      return { bytes: bytesOf(text().replace('"@@DEEP@@"', deep)), expect: 'refuse', note: `depth ${depth} at ${where.join('.')}` };
    }
    case 'wrong_types': {
      const path = pick(r, [['name'], ['experiment'], ['metrics'], ['metrics', 0], ['metrics', 0, 'step'], ['metrics', 0, 'rewards'], ['rollouts'], ['rollouts', 0], ['rollouts', 0, 'completion'], ['rollouts', 0, 'results', 0], ['rollouts', 0, 'scores'], ['rubric_versions'], ['rubric_versions', 0, 'version'], ['exported_at']]);
      setAt(doc, path, clone(pick(r, WRONG_VALUES)));
      return { bytes: bytesOf(text()), expect: 'any', note: `${path.join('.')} wrong type` };
    }
    case 'proto_keys': {
      const path = pick(r, [[], ['experiment'], ['experiment', 'config'], ['metrics', 0], ['metrics', 0, 'rewards', 'criterion_pass_rate'], ['rollouts', 0], ['rubric_versions', 0, 'rubric']]);
      const key = pick(r, PROTO_KEYS);
      withKey(doc, path, key, { polluted: true });
      return { bytes: bytesOf(text()), expect: 'refuse', note: `"${key}" in ${path.join('.') || 'the document'}` };
    }
    case 'html': {
      const payload = pick(r, SCRIPT_PAYLOADS);
      const path = pick(r, [['name'], ['rollouts', 0, 'prompt'], ['rollouts', 0, 'completion'], ['rollouts', 0, 'results', 0, 'reason'], ['rollouts', 0, 'tokens'], ['experiment', 'prompts', 0], ['experiment', 'rubric', 'name'], ['experiment', 'rubric', 'criteria', 0, 'text'], ['exported_at']]);
      if (path.at(-1) === 'tokens') doc.rollouts[0].tokens = doc.rollouts[0].completion_ids.map(() => payload);
      else setAt(doc, path, payload);
      // The page recomputes rubric_versions for a case marked rehash, so a changed rubric is still valid.
      return { bytes: bytesOf(text()), expect: 'any', rehash: true, note: `markup in ${path.join('.')}` };
    }
    case 'settings': {
      if (r() < 0.5) {
        const key = pick(r, ['loss', 'grad_norm', 'kl', 'entropy', 'step_seconds']);
        doc.metrics[0][key] = pick(r, ['NaN', 'Infinity', '-Infinity', 1e308, -1e308, 'nan', '1e999']);
        return { bytes: bytesOf(text()), expect: 'any', note: `metrics ${key} = ${JSON.stringify(doc.metrics[0][key])}` };
      }
      const key = pick(r, NUMERIC_SETTINGS);
      const value = pick(r, HOSTILE_NUMBERS);
      doc.experiment.config[key] = '@@NUM@@';
      return { bytes: bytesOf(text().replace('"@@NUM@@"', value)), expect: 'any', note: `${key} = ${value}` };
    }
    case 'version': {
      const v = pick(r, [0, 2, 99, -1, 1.5, '1', null, 'v1', 1e300, [1], undefined]);
      if (v === undefined) delete doc.version;
      else doc.version = v;
      return { bytes: bytesOf(text()), expect: 'refuse', note: `version ${JSON.stringify(v) ?? 'missing'}` };
    }
    case 'secrets': {
      const key = pick(r, SECRET_KEYS);
      const where = pick(r, [[], ['experiment'], ['experiment', 'config'], ['experiment', 'judge']]);
      if (where.at(-1) === 'judge') doc.experiment.judge = { kind: 'remote', url: 'https://judge.example/v1', model: 'm' };
      withKey(doc, where, key, 'sk-fuzz-secret');
      return { bytes: bytesOf(text()), expect: 'refuse', note: `a "${key}" field in ${where.join('.') || 'the document'}` };
    }
    case 'rubric_mismatch': {
      doc.rubric_versions[0].rubric.name = `${doc.rubric_versions[0].rubric.name} (edited)`;
      return { bytes: bytesOf(text()), expect: 'refuse', note: 'a rubric edited without its version' };
    }
    case 'duplicates': {
      // Rows the page keys by (step, group, index) or by step, twice.
      if (r() < 0.5) doc.rollouts = [doc.rollouts[0], { ...doc.rollouts[0], completion: 'again' }];
      else doc.metrics = [doc.metrics[0], { ...doc.metrics[0] }];
      return { bytes: bytesOf(text()), expect: 'any', note: doc.metrics.length > 1 ? 'one metrics step twice' : 'one rollout twice' };
    }
    case 'zip': {
      const kind = int(r, 0, 3);
      if (kind === 0) return { bytes: zipSync({ 'run.json': [bytesOf(text()), { level: 6 }] }), expect: 'open', note: 'a valid zip' };
      if (kind === 1) return { bytes: zipSync({ 'other.json': bytesOf(text()) }), expect: 'refuse', note: 'a zip without run.json' };
      if (kind === 2) {
        doc.checkpoint = { step: 1, files: { 'config.json': '{}', 'trainer_state.json': '{"global_step":1}', 'model.safetensors': { zip_entry: 'checkpoint/model.safetensors' } } };
        return { bytes: zipSync({ 'run.json': bytesOf(text()), 'checkpoint/model.safetensors': Uint8Array.from([255, 255, 255, 255, 0, 0, 0, 0, 1]) }), expect: 'refuse', note: 'a checkpoint with a bad safetensors header' };
      }
      const zip = zipSync({ 'run.json': [bytesOf(text()), { level: 6 }] });
      const at = int(r, 30, zip.length - 1);
      zip[at] ^= 0xff;
      return { bytes: zip, expect: 'any', note: `a zip with byte ${at} flipped` };
    }
    default:
      throw new Error(`unknown run file category ${category}`);
  }
}

/**
 * `count` cases from `seed`: links and run files alternate over every category in turn, so a
 * few dozen cover them all. Each case: { id, kind: 'link' | 'runfile', category, fragment | bytes,
 * expect: 'open' | 'refuse' | 'any', note, marker?, rehash? }.
 * `experiment` is a valid experiment; `runFile` the text of a valid run file with one metrics
 * step and at least one rollout.
 */
export function hostileCases({ seed = 1, count, experiment, runFile }) {
  const slots = [];
  LINK_CATEGORIES.forEach((category, i) => {
    slots.push(['link', category]);
    // Links outnumber run files 2:1 (they are the common way in); run files take their categories in turn.
    if (i % 2 === 0) slots.push(['runfile', '']);
  });
  let fileTurn = 0;
  const out = [];
  for (let i = 0; i < count; i++) {
    let [kind, category] = slots[i % slots.length];
    if (kind === 'runfile') category = RUN_FILE_CATEGORIES[fileTurn++ % RUN_FILE_CATEGORIES.length];
    const r = rng((seed * 0x9e3779b1 + i * 0x85ebca6b) >>> 0);
    const c = kind === 'link' ? linkCase(category, r, experiment, i) : runFileCase(category, r, runFile, i);
    out.push({ id: i, kind, category, ...c });
  }
  return out;
}

/** A metrics step and a rollout with the run-file schema's fields (for the base run file). */
export const BASE_METRICS = {
  step: 0,
  rewards: { reward: 0.5, reward_std: 0.25, criterion_pass_rate: { short: 1 }, criterion_mean_score: { short: 1 }, strict_completion_rate: 0.5, unscorable: 0, aggregations: {} },
  held_out: null,
  completions: { mean_length: 3, min_length: 3, max_length: 3, clipped_ratio: 0 },
  frac_reward_zero_std: 0,
  loss: 0.01,
  policy_loss: -0.02,
  kl: null,
  entropy: 2.5,
  clip_ratio_low: 0,
  clip_ratio_high: 0,
  clip_ratio_region: 0,
  ratio_mean: 1,
  grad_norm: 0.7,
  learning_rate: 3e-4,
  skipped: false,
  sampling_tokens_per_second: 100,
  training_tokens_per_second: 100,
  judge_seconds: 0.01,
  step_seconds: 1,
  update_submits: 1,
};
export const BASE_ROLLOUT = {
  step: 0,
  group: 0,
  index: 0,
  prompt: 'Describe the sea.',
  completion: 'The sea?',
  completion_ids: [1, 2, 3],
  logprobs: [-0.5, -1.25, -2],
  truncated: false,
  results: [{ criterion_id: 'short', status: 'ok', score: 1, reason: '2 words' }],
  scores: [1],
  reward: 0.75,
  advantage: 0.5,
};
