// Share links: round trips, and every kind of bad or hostile link ending in a ShareLinkError with
// the right code and a message a user can act on.
import { deflateSync, strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { rng } from '../../helpers/random';
import {
  base64ToBytes,
  bytesToBase64,
  CONTROL_IDS,
  decodeShareLink,
  encodeShareLink,
  hasShareLink,
  inflateLimited,
  isSecretKey,
  MAX_FRAGMENT_CHARS,
  MAX_PAYLOAD_BYTES,
  shareUrl,
  ShareLinkError,
  type Shared,
} from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';

const shared = (): Shared => ({
  experiment: structuredClone(FIRST_VISIT.experiment),
  preset: 'first-visit',
  lesson: { id: 'demo', title: 'Demo', guidance: 'Press Train.', hidden_controls: ['beta', 'loss_type', 'judge'] },
});

/** A link whose payload is this exact text (bypassing the encoder's checks). */
const linkOf = (text: string | Uint8Array, version = 1) =>
  `#x=${version}.${bytesToBase64(deflateSync(typeof text === 'string' ? strToU8(text) : text), true)}`;

function failure(fragment: string): ShareLinkError {
  try {
    decodeShareLink(fragment);
  } catch (e) {
    expect(e).toBeInstanceOf(ShareLinkError);
    return e as ShareLinkError;
  }
  throw new Error(`decoding ${fragment.slice(0, 60)} did not fail`);
}

function encodeFailure(value: unknown): ShareLinkError {
  try {
    encodeShareLink(value as Shared);
  } catch (e) {
    expect(e).toBeInstanceOf(ShareLinkError);
    return e as ShareLinkError;
  }
  throw new Error('encoding did not fail');
}

describe('round trip', () => {
  it('carries the whole experiment, preset and lesson in a URL-safe fragment', () => {
    const s = shared();
    const fragment = encodeShareLink(s);
    expect(fragment).toMatch(/^#x=1\.[A-Za-z0-9_-]+$/);
    expect(fragment.length).toBeLessThan(1500); // compressed: the JSON is ~1.5 kB
    expect(decodeShareLink(fragment)).toEqual(s);
    expect(decodeShareLink(fragment).experiment.config.seed).toBe(42);
  });

  it('accepts the fragment without "#", a whole URL, and other fragment parameters', () => {
    const s = shared();
    const fragment = encodeShareLink(s);
    expect(decodeShareLink(fragment.slice(1))).toEqual(s);
    expect(decodeShareLink(`https://example.org/app/?q=1${fragment}`)).toEqual(s);
    expect(decodeShareLink(`#tab=runs&${fragment.slice(1)}&z=9`)).toEqual(s);
    const url = shareUrl('https://example.org/app/#old', s);
    expect(url.startsWith('https://example.org/app/#x=1.')).toBe(true);
    expect(decodeShareLink(url)).toEqual(s);
    expect(hasShareLink(url)).toBe(true);
    expect(hasShareLink('https://example.org/app/#tab=runs')).toBe(false);
  });

  it('keeps strings as data: script tags, unicode, quotes and newlines come back unchanged', () => {
    const s = shared();
    s.experiment.prompts = ['<script>alert(1)</script>', '<img src=x onerror="alert(1)">', 'caf\u00e9 \ud83c\udf0a "q" \\ \n\t end', 'x'.repeat(4000)];
    (s.experiment.rubric as { name: string }).name = '</title><script>steal()</script>';
    s.lesson!.guidance = '<b>bold?</b> & <a href="javascript:alert(1)">no</a>';
    expect(decodeShareLink(encodeShareLink(s))).toEqual(s);
  });

  it('lets a rubric require a JSON field named "token" (a shape property, not a credential)', () => {
    const s = shared();
    s.experiment.rubric = {
      name: 'json',
      criteria: [{ id: 'j', text: 'JSON', weight: 1, tier: 'essential', rule: { kind: 'json', schema: { type: 'object', properties: { token: { type: 'string' }, api_key: { type: 'string' } } } } }],
    };
    expect(decodeShareLink(encodeShareLink(s))).toEqual(s);
  });

  it('carries a held-out rubric inside the experiment and checks it', () => {
    const s = shared();
    s.experiment.held_out_rubric = { name: 'clean', criteria: [{ id: 'c', text: 'short', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 5 } }] };
    expect(decodeShareLink(encodeShareLink(s))).toEqual(s);
    (s.experiment.held_out_rubric as { criteria: { weight: number }[] }).criteria[0].weight = -1;
    const e = encodeFailure(s);
    expect(e.code).toBe('invalid');
    expect(e.message).toMatch(/\nHeld-out rubric criteria: total positive weight must be > 0/);
  });
});

describe('bad links', () => {
  it('a newer version says so', () => {
    const e = failure('#x=2.AAAA');
    expect(e.code).toBe('newer_version');
    expect(e.message).toMatch(/made by a newer version of Rubric Playground \(link format 2; this page reads up to 1\)/);
    expect(failure(linkOf(JSON.stringify(shared()), 7)).code).toBe('newer_version');
  });

  it('malformed fragments', () => {
    expect(failure('#x=0.AAAA').code).toBe('bad_format');
    expect(failure('#x=abc').code).toBe('bad_format');
    expect(failure('#x=1').code).toBe('bad_format');
    expect(failure('#tab=runs').message).toMatch(/no experiment/);
    expect(failure('#x=1.AA&x=1.AA').message).toMatch(/more than one/);
    expect(failure('#x=1.').code).toBe('bad_encoding');
  });

  it('bad base64url', () => {
    expect(failure('#x=1.ab+c').code).toBe('bad_encoding');
    expect(failure('#x=1.abc%20').code).toBe('bad_encoding');
    expect(failure('#x=1.abcde').message).toMatch(/damaged .*truncated/);
  });

  it('bad deflate data and links cut off when copied', () => {
    const junk = bytesToBase64(Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 255), true);
    expect(failure(`#x=1.${junk}`).code).toBe('bad_compression');
    const good = encodeShareLink(shared());
    const cut = good.slice(0, Math.floor(good.length / 2) - (Math.floor(good.length / 2) % 4) + 2);
    expect(['bad_compression', 'bad_encoding']).toContain(failure(cut).code);
  });

  it('data that is not UTF-8 JSON of an object', () => {
    expect(failure(linkOf('hello')).code).toBe('bad_json');
    expect(failure(linkOf(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).message).toMatch(/not UTF-8/);
    expect(failure(linkOf('[1, 2]')).message).toMatch(/not a valid experiment/);
    expect(failure(linkOf('null')).code).toBe('invalid');
  });

  it('a zip bomb stops at the decompressed-size limit', () => {
    const bomb = `{"experiment": ${' '.repeat(20_000_000)}}`;
    const fragment = linkOf(bomb);
    expect(fragment.length).toBeLessThan(MAX_FRAGMENT_CHARS);
    const e = failure(fragment);
    expect(e.code).toBe('too_large');
    expect(e.message).toMatch(new RegExp(`decompresses to more than ${MAX_PAYLOAD_BYTES} bytes`));
  });

  it('an oversized fragment is refused before any decoding', () => {
    const e = failure(`#x=1.${'A'.repeat(MAX_FRAGMENT_CHARS)}`);
    expect(e.code).toBe('too_large');
    expect(e.message).toMatch(/characters long \(limit 100000\)/);
  });

  it('prototype keys anywhere are refused, and nothing is polluted', () => {
    const exp = JSON.stringify(FIRST_VISIT.experiment);
    const withConfig = (config: string) => exp.replace(/"config":\{/, `"config":{${config},`);
    for (const text of [
      `{"experiment": ${withConfig('"__proto__": {"polluted": true}')}}`,
      `{"experiment": ${exp}, "__proto__": {"polluted": true}}`,
      `{"experiment": ${withConfig('"constructor": {"prototype": {"polluted": true}}')}}`,
      `{"experiment": ${exp.replace('"name":"Short, curious answers"', '"name":"x","prototype":1')}}`,
    ]) {
      const e = failure(linkOf(text));
      expect(e.code).toBe('forbidden_field');
      expect(e.message).toMatch(/the key "(__proto__|constructor|prototype)" is not allowed/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('anything named like a key or credential is refused, in links and when encoding', () => {
    const exp = JSON.stringify(FIRST_VISIT.experiment);
    const e = failure(linkOf(`{"experiment": ${exp.replace('"config":{', '"config":{"api_key":"sk-123",')}}`));
    expect(e.code).toBe('forbidden_field');
    expect(e.message).toMatch(/^Settings: links never carry keys or credentials; remove "api_key"/);
    expect(failure(linkOf(`{"experiment": ${exp}, "lesson": {"id": "a", "guidance": "", "hidden_controls": [], "Authorization": "Bearer x"}}`)).code).toBe('forbidden_field');
    const s = shared() as unknown as { experiment: Record<string, unknown> };
    s.experiment.hf_token = 'hf_abc';
    expect(encodeFailure(s).message).toMatch(/^Experiment: links never carry keys or credentials; remove "hf_token"/);
  });

  it('extra fields (weights, unknown options) are refused by the strict schemas', () => {
    const exp = FIRST_VISIT.experiment;
    const top = failure(linkOf(JSON.stringify({ experiment: exp, weights: 'AAAA' })));
    expect(top.code).toBe('invalid');
    expect(top.message).toMatch(/The link has unknown field "weights" \(expected: experiment, preset, lesson, rubric_lineage\)/);
    expect(failure(linkOf(JSON.stringify({ experiment: { ...exp, weights: [1, 2] } }))).message).toMatch(/weights/);
    expect(failure(linkOf(JSON.stringify({ experiment: { ...exp, config: { ...exp.config, lora_rank: 8 } } }))).message).toMatch(/\nSettings: unknown option\(s\) lora_rank/);
  });

  it('an invalid experiment names what is wrong', () => {
    const exp = structuredClone(FIRST_VISIT.experiment);
    exp.config.num_generations = 1;
    expect(failure(linkOf(JSON.stringify({ experiment: exp }))).message).toMatch(/experiment is invalid:\nSetting num_generations: must be at least 2, got 1$/);
    const bad = structuredClone(FIRST_VISIT.experiment);
    (bad.rubric as { criteria: Record<string, unknown>[] }).criteria[0].rule = { kind: 'regex', pattern: '(a+)+$' };
    expect(failure(linkOf(JSON.stringify({ experiment: bad }))).message).toMatch(/\nCriterion 1 \(id "[a-z_-]+"\), rule pattern: nested quantifier/);
    expect(failure(linkOf(JSON.stringify({ experiment: { ...FIRST_VISIT.experiment, prompts: [] } }))).message).toMatch(/\nPrompts: needs at least one prompt$/);
  });

  it('lessons may hide only known controls, each once', () => {
    const s = shared();
    s.lesson!.hidden_controls = ['beta', 'warp_drive'];
    expect(encodeFailure(s).message).toMatch(/\nLesson hidden controls, item 2: unknown control "warp_drive"/);
    s.lesson!.hidden_controls = ['beta', 'beta'];
    expect(encodeFailure(s).message).toMatch(/lists "beta" twice/);
    expect(CONTROL_IDS).toContain('epsilon_high');
    expect(CONTROL_IDS).toContain('rubric');
  });

  it('deep nesting is refused', () => {
    const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
    const exp = JSON.stringify(FIRST_VISIT.experiment).replace('"config":{', `"held_out_rubric":${deep},"config":{`);
    expect(failure(linkOf(`{"experiment": ${exp}}`)).message).toMatch(/nested deeper than 40 levels/);
  });

  it('an experiment too big for a link asks for a run file', () => {
    const s = shared();
    const rand = rng(3);
    s.experiment.prompts = Array.from({ length: 400 }, () => Array.from({ length: 400 }, () => String.fromCharCode(33 + Math.floor(rand() * 90))).join(''));
    const e = encodeFailure(s);
    expect(e.code).toBe('too_large');
    expect(e.message).toMatch(/export a run file instead/);
  });
});

describe('helpers', () => {
  it('base64 and base64url agree with Node for every length', () => {
    const rand = rng(9);
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
      const buf = Buffer.from(bytes);
      expect(bytesToBase64(bytes)).toBe(buf.toString('base64'));
      expect(bytesToBase64(bytes, true)).toBe(buf.toString('base64url'));
      expect(Array.from(base64ToBytes(buf.toString('base64')))).toEqual(Array.from(bytes));
      expect(Array.from(base64ToBytes(buf.toString('base64url'), true))).toEqual(Array.from(bytes));
    }
    expect(() => base64ToBytes('QQ', false)).toThrow(/truncated/);
    expect(() => base64ToBytes('QR==')).toThrow(/stray bits/);
    expect(() => base64ToBytes('Q-==')).toThrow(/invalid base64 character "-"/);
  });

  it('inflateLimited stops exactly at the limit', () => {
    const data = deflateSync(new Uint8Array(100_000).fill(65));
    expect(inflateLimited(data, 100_000).length).toBe(100_000);
    expect(() => inflateLimited(data, 99_999)).toThrow(/decompresses to more than 99999 bytes/);
  });

  it('isSecretKey knows credentials from look-alikes', () => {
    for (const k of ['api_key', 'apiKey', 'API-KEY', 'openai_api_key', 'Authorization', 'token', 'hf_token', 'accessToken', 'secret', 'client_secret', 'password', 'auth', 'cookie']) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of ['max_tokens', 'tokens', 'tokenizer', 'max_completion_length', 'author', 'keep', 'key_points']) {
      expect(isSecretKey(k), k).toBe(false);
    }
  });
});
