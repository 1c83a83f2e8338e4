// Hostile model folders (issue 15): the files a visitor picks (or a Hub mirror serves) go
// through assembleModelFiles, configFromHf and the safetensors reader before any GPU work.
// Seeded damage to the fixture model's config.json, model.safetensors and a shard index
// (malformed, truncated, bit-flipped, wrong types, prototype keys, hostile numbers, oversized
// headers, offsets of the wrong type, path traversal) must end in a result or an Error naming
// the problem: never a raw TypeError, a hang, or a polluted Object.prototype.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rng } from '../../../scripts/fuzz/hostileCases.mjs';
import { configFromHf } from '../../../src/model/config';
import { MissingFileError } from '../../../src/model/hub/errors';
import { assembleModelFiles, type ModelFileSource } from '../../../src/model/hub/assemble';
import { readSafetensors, readSafetensorsHeader } from '../../../src/model/safetensors';

const FIXTURE = join(__dirname, '../../fixtures/tiny-byte-gpt2');
const CONFIG = readFileSync(join(FIXTURE, 'config.json'), 'utf8');
const WEIGHTS = new Uint8Array(readFileSync(join(FIXTURE, 'model.safetensors')));

const enc = (text: string) => new TextEncoder().encode(text);
const buffer = (bytes: Uint8Array) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)];

/** A safetensors file with `header` (any JSON text) and `data` bytes after it. */
function safetensors(header: string, data = new Uint8Array(16), declared?: bigint): Uint8Array {
  const h = enc(header);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, declared ?? BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

const HOSTILE_VALUES = ['null', '-1', '0', '0.5', '1e999', '-1e999', '1e300', '9007199254740993', '"12"', 'true', '[]', '{}', '{"__proto__": {"polluted": 1}}', '"<img src=x onerror=alert(1)>"'];
const CONFIG_KEYS = ['model_type', 'vocab_size', 'n_embd', 'n_layer', 'n_head', 'n_inner', 'n_positions', 'layer_norm_epsilon', 'activation_function', 'eos_token_id', 'tie_word_embeddings', 'rubric_playground'];

/** One hostile folder: file name → bytes. */
function hostileFolder(i: number): { note: string; files: Record<string, Uint8Array>; mustRefuse?: boolean } {
  const r = rng(1000 + i);
  const files: Record<string, Uint8Array> = { 'config.json': enc(CONFIG), 'model.safetensors': WEIGHTS };
  const kind = i % 8;
  if (kind === 0) {
    const key = pick(r, CONFIG_KEYS);
    const value = pick(r, HOSTILE_VALUES);
    files['config.json'] = enc(CONFIG.replace(new RegExp(`"${key}": [^,\\n]+`), `"${key}": ${value}`));
    return { note: `config ${key} = ${value}`, files };
  }
  if (kind === 1) {
    const text = pick(r, ['', '{', '[]', 'null', '"x"', CONFIG.slice(0, Math.floor(r() * CONFIG.length)), `${'['.repeat(100_000)}${']'.repeat(100_000)}`, `{"__proto__": {"polluted": 1}, ${CONFIG.slice(1)}`, `{"constructor": {"prototype": {"polluted": 1}}, ${CONFIG.slice(1)}`]);
    files['config.json'] = enc(text);
    // Prototype keys in config.json are ignored fields (JSON.parse makes them own keys): either outcome is fine.
    return { note: `config.json ${JSON.stringify(text.slice(0, 30))}`, files, mustRefuse: !text.includes('"__proto__"') && !text.includes('"constructor"') };
  }
  if (kind === 2) {
    const bytes = WEIGHTS.slice();
    for (let k = 0; k < 1 + Math.floor(r() * 4); k++) bytes[Math.floor(r() * Math.min(bytes.length, 600))] ^= 1 << Math.floor(r() * 8);
    files['model.safetensors'] = bytes;
    return { note: 'bits flipped in the safetensors header', files };
  }
  if (kind === 3) {
    const cut = Math.floor(r() * WEIGHTS.length);
    files['model.safetensors'] = WEIGHTS.slice(0, cut);
    return { note: `safetensors cut at ${cut}`, files, mustRefuse: true };
  }
  if (kind === 4) {
    const declared = pick(r, [2n ** 64n - 1n, 2n ** 53n + 1n, 100n * 1024n * 1024n + 1n, 0n, 3n, 2n]);
    files['model.safetensors'] = safetensors('{}', new Uint8Array(8), declared);
    return { note: `header length ${declared}`, files, mustRefuse: declared !== 2n };
  }
  if (kind === 5) {
    const tensor = pick(r, [
      '{"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}',
      '{"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}',
      '{"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}',
      '{"dtype": "F32", "shape": [1e300, 1e300], "data_offsets": [0, 4]}',
      '{"dtype": "F32", "shape": [1], "data_offsets": ["0", "4"]}',
      '{"dtype": "F32", "shape": [1], "data_offsets": [0.5, 4.5]}',
      '{"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}',
      '{"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}',
      '{"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "extra": {"__proto__": {"polluted": 1}}}',
      '{"dtype": "F32", "shape": "1", "data_offsets": [0, 4]}',
      '{"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}',
      'null',
      '7',
    ]);
    const name = pick(r, ['wte.weight', '__proto__', 'constructor', '<script>alert(1)</script>']);
    files['model.safetensors'] = safetensors(`{"${name}": ${tensor}}`);
    // Only a well-formed tensor (data_offsets [12, 16] of the 16 data bytes, or [0, 16] with an ignored extra field) may open.
    return { note: `tensor ${name}: ${tensor}`, files, mustRefuse: !tensor.includes('[12, 16]') && !tensor.includes('"extra"') };
  }
  if (kind === 6) {
    delete (files as Record<string, Uint8Array | undefined>)['model.safetensors'];
    const map = pick(r, ['{"wte.weight": "../secret.safetensors"}', '{"wte.weight": "https://evil.example/x.safetensors"}', '{"wte.weight": 7}', '{}', '[]', '{"__proto__": "x.safetensors"}', '{"wte.weight": "model-00001-of-00002.safetensors"}']);
    files['model.safetensors.index.json'] = enc(`{"metadata": {"total_size": 1e999}, "weight_map": ${map}}`);
    return { note: `shard index weight_map ${map}`, files, mustRefuse: true };
  }
  files['config.json'] = enc(JSON.stringify({ ...JSON.parse(CONFIG), n_embd: 1e9, n_layer: 1e9, vocab_size: 2 ** 31 }));
  return { note: 'a config with billions of parameters', files };
}

const RAW = /Cannot read prop|is not a function|is not defined|undefined is not|\[object Object\]|Maximum call stack|Invalid typed array length|should be a multiple of/;

async function open(files: Record<string, Uint8Array>): Promise<void> {
  const source: ModelFileSource = {
    where: 'the picked files',
    read: async (file) => {
      const bytes = files[file];
      if (!bytes) throw new MissingFileError(file, 'not among the picked files');
      return buffer(bytes);
    },
  };
  const model = await assembleModelFiles(source);
  configFromHf(model.config);
  if (model.weights instanceof ArrayBuffer) readSafetensors(model.weights);
  else for (const shard of model.weights.shards) readSafetensorsHeader(shard.buffer, shard.file);
}

describe('hostile model folders', () => {
  it('the fixture folder opens (the control)', async () => {
    await expect(open({ 'config.json': enc(CONFIG), 'model.safetensors': WEIGHTS })).resolves.toBeUndefined();
  });

  it('200 damaged folders: each opens or is refused with a message naming the problem, fast, nothing polluted', async () => {
    const unclear: string[] = [];
    let refused = 0;
    /** Damage that must not load: accepting it would read wrong bytes or sizes silently. */
    const accepted: string[] = [];
    for (let i = 0; i < 200; i++) {
      const { note, files, mustRefuse } = hostileFolder(i);
      const t0 = performance.now();
      try {
        await open(files);
        if (mustRefuse) accepted.push(`#${i} ${note}`);
      } catch (e) {
        refused++;
        const message = e instanceof Error ? e.message : String(e);
        if (!(e instanceof Error) || e.name === 'TypeError' || RAW.test(message) || message.trim() === '') unclear.push(`#${i} ${note}: ${e instanceof Error ? e.name : typeof e}: ${message.slice(0, 200)}`);
      }
      expect(performance.now() - t0, note).toBeLessThan(2000);
      expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
    }
    expect(unclear).toEqual([]);
    expect(accepted).toEqual([]);
    expect(refused).toBeGreaterThan(140);
  });
});
