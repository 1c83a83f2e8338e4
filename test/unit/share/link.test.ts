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
import { checkLinkRubricLineage, runRubricVersions, shareRubricLineage, type RunRubricVersion } from '../../../src/share/linkLineage';
import type { Experiment } from '../../../src/rl/experiment';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { evolveRubric, newEvolutionHistory, recordEvolutionStep, type RubricEvolutionEvent } from '../../../src/rubric/evolve';

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

describe('rubric lineage (an evolved run\'s rubric in a link)', () => {
  const START = {
    name: 'evolving',
    criteria: [
      { id: 'short', text: 'At most 30 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 30 } },
      { id: 'moon', text: 'Mentions the moon', weight: 2, tier: 'essential', rule: { kind: 'contains', terms: ['moon'] } },
      { id: 'sun', text: 'Mentions the sun', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['sun'] } },
    ],
  };
  const experiment = (rubric: unknown = START): Experiment =>
    ({ ...structuredClone(FIRST_VISIT.experiment), rubric, config: { ...FIRST_VISIT.experiment.config, rubric_evolution: 'prune', rubric_evolution_every: 1, rubric_evolution_window: 1 } }) as Experiment;
  const OPTIONS = { strategy: 'prune', every: 1, lookback: 1, maxNew: 2, threshold: 0.5 } as const;
  const rollouts = (step: number, scores: (i: number) => number[]) => [0, 1, 2, 3].map((i) => ({ step, group: 0, prompt: 'p', completion: `c${i}`, scores: scores(i) }));

  /** A run of three steps with real prune decisions: 'short' goes after step 1, 'sun' after step 2; step 3 changes nothing. */
  async function evolvedMetrics(): Promise<{ start: string; metrics: Pick<StepMetrics, 'step' | 'rubric_version' | 'rubric_evolution' | 'teacher_rubric'>[]; events: RubricEvolutionEvent[] }> {
    const start = await rubricVersion(parseRubric(START));
    const h = newEvolutionHistory(parseRubric(START), start);
    recordEvolutionStep(h, 0, rollouts(0, (i) => [1, i % 2, i >> 1]), 1);
    const e0 = await evolveRubric({ history: h, step: 0, options: OPTIONS, scoreNew: async () => [] });
    recordEvolutionStep(h, 1, rollouts(1, (i) => [i % 2, 1]), 1);
    const e1 = await evolveRubric({ history: h, step: 1, options: OPTIONS, scoreNew: async () => [] });
    recordEvolutionStep(h, 2, rollouts(2, (i) => [i % 2]), 1);
    const e2 = await evolveRubric({ history: h, step: 2, options: OPTIONS, scoreNew: async () => [] });
    expect([e0.outcome, e1.outcome, e2.outcome]).toEqual(['accepted', 'accepted', 'unchanged']);
    const metrics = [
      { step: 0, rubric_version: start, rubric_evolution: e0 },
      { step: 1, rubric_version: e0.version!, rubric_evolution: e1 },
      { step: 2, rubric_version: e1.version!, rubric_evolution: e2 },
    ];
    return { start, metrics, events: [e0, e1, e2] };
  }

  const open = async ({ experiment, rubric_lineage }: { experiment: Experiment; rubric_lineage: Shared['rubric_lineage'] }) => {
    const url = shareUrl('https://example.org/app/', { experiment, rubric_lineage, preset: 'first-visit' });
    const back = decodeShareLink(url);
    await checkLinkRubricLineage(back);
    return { back, url };
  };

  it('the run\'s versions: the starting rubric, then every accepted one with its rubric; none for a run that never evolved', async () => {
    const { start, metrics, events } = await evolvedMetrics();
    const versions = runRubricVersions(START, metrics)!;
    expect(versions.map((v) => [v.entry.version, v.entry.parent, v.entry.first_step, v.entry.strategy])).toEqual([
      [start, null, 0, null],
      [events[0].version, start, 1, 'prune'],
      [events[1].version, events[0].version, 2, 'prune'],
    ]);
    expect(versions.map((v) => v.rubric.criteria.map((c) => c.id))).toEqual([['short', 'moon', 'sun'], ['moon', 'sun'], ['moon']]);
    expect(runRubricVersions(START, [{ step: 0, rubric_version: start, rubric_evolution: events[2] }])).toBeNull();
    expect(runRubricVersions(START, [{ step: 0 }])).toBeNull();
  });

  it('evolution, not induction: a black-box teacher\'s induced versions (named by its steps\' rubric_version too) make no lineage, and a step judged with a version no evolution made voids it', async () => {
    const { start, metrics, events } = await evolvedMetrics();
    const induced = 'a'.repeat(64);
    const provenance = { kind: 'teacher_contrast', teacher: 't', judge: 'j', base_version: start, prompts: ['p'], criteria: ['x'], step: 0 } as never;
    // A black-box run: the base, then the induced version judges from step 1 (rubric_evolution off, so no decisions).
    const blackBox = [
      { step: 0, rubric_version: start, teacher_rubric: { step: 0, outcome: 'induced' as const, version: induced, provenance } },
      { step: 1, rubric_version: induced },
    ];
    expect(runRubricVersions(START, blackBox)).toBeNull();
    // Its pin link then carries the experiment's own rubric, with no lineage.
    const share = await shareRubricLineage(experiment(), 'pin', runRubricVersions(START, blackBox));
    expect([share.rubric_lineage, share.pinned]).toEqual([{ mode: 'pin' }, null]);
    // Evolution decisions beside an induction (a run file can hold both): the lineage would leave
    // the induced version out and name a wrong chain, so there is none.
    expect(runRubricVersions(START, [...metrics.slice(0, 2), { ...metrics[2], teacher_rubric: { step: 2, outcome: 'induced', version: induced, provenance } }])).toBeNull();
    expect(runRubricVersions(START, [...metrics, { step: 3, rubric_version: induced }])).toBeNull();
    // A failed induction changes no version: the evolution lineage stands.
    const withFailure = [...metrics.slice(0, 2), { ...metrics[2], teacher_rubric: { step: 2, outcome: 'failed' as const, version: null, provenance: null, error: 'x' } }];
    expect(runRubricVersions(START, withFailure)!.map((v) => v.entry.version)).toEqual([start, events[0].version, events[1].version]);
    // Steps judged with the version in force (the last step after the final decision too) keep it.
    expect(runRubricVersions(START, [...metrics, { step: 3, rubric_version: events[1].version! }])!).toHaveLength(3);
  });

  it('pin carries the final version\'s criteria and the lineage summary (no rollouts, labels or keys); the recipient trains on it with evolution off', async () => {
    const { metrics, events } = await evolvedMetrics();
    const versions = runRubricVersions(START, metrics);
    const share = await shareRubricLineage(experiment(), 'pin', versions);
    expect(share.pinned).toBe(events[1].version);
    const { back, url } = await open(share);
    expect(back.experiment.config.rubric_evolution).toBe('off');
    expect(await rubricVersion(parseRubric(back.experiment.rubric))).toBe(events[1].version);
    expect((back.experiment.rubric as typeof START).criteria.map((c) => c.id)).toEqual(['moon']);
    expect(back.rubric_lineage!.mode).toBe('pin');
    expect(back.rubric_lineage!.versions!.map((v) => [v.version, v.parent, v.strategy, v.reason])).toEqual(versions!.map((v) => [v.entry.version, v.entry.parent, v.entry.strategy, v.entry.reason]));
    expect(back.rubric_lineage!.versions![2].reason).toMatch(/zero within-group variance over the last 1 step\(s\): sun/);
    for (const v of back.rubric_lineage!.versions!) expect(Object.keys(v).sort()).toEqual(['first_step', 'parent', 'reason', 'strategy', 'version']);
    expect(JSON.stringify(back.rubric_lineage)).not.toMatch(/completion|"c0"|label|scores/);
    // Small: the lineage of three versions adds a few hundred characters to the compressed link.
    const plain = shareUrl('https://example.org/app/', { experiment: share.experiment, preset: 'first-visit' });
    expect(url.length - plain.length).toBeGreaterThan(100);
    expect(url.length - plain.length).toBeLessThan(600);
    expect(url.length).toBeLessThan(2500);
  });

  it('pin a version the visitor chose: its rubric and the lineage up to it, not what came after', async () => {
    const { metrics, events } = await evolvedMetrics();
    const versions = runRubricVersions(START, metrics);
    const share = await shareRubricLineage(experiment(), 'pin', versions, events[0].version!);
    const { back } = await open(share);
    expect((back.experiment.rubric as typeof START).criteria.map((c) => c.id)).toEqual(['moon', 'sun']);
    expect(back.rubric_lineage!.versions!.map((v) => v.version)).toEqual([versions![0].entry.version, events[0].version]);
    await expect(shareRubricLineage(experiment(), 'pin', versions, 'f'.repeat(64))).rejects.toThrow(/ffffffff… is not one of the run's rubric versions/);
  });

  it('allow carries the starting rubric and the evolution settings; a run from another rubric pins the experiment\'s own', async () => {
    const { metrics } = await evolvedMetrics();
    const versions = runRubricVersions(START, metrics);
    const { back } = await open(await shareRubricLineage(experiment(), 'allow', versions));
    expect(back.rubric_lineage).toEqual({ mode: 'allow' });
    expect((back.experiment.rubric as typeof START).criteria.map((c) => c.id)).toEqual(['short', 'moon', 'sun']);
    expect([back.experiment.config.rubric_evolution, back.experiment.config.rubric_evolution_every, back.experiment.config.rubric_evolution_window]).toEqual(['prune', 1, 1]);
    // The builder's rubric was edited after the run: the run's lineage does not describe it.
    const edited = { ...START, criteria: START.criteria.slice(1) };
    const other = await shareRubricLineage(experiment(edited), 'pin', versions);
    expect(other.rubric_lineage).toEqual({ mode: 'pin' });
    expect(other.pinned).toBeNull();
    const { back: b } = await open(other);
    expect((b.experiment.rubric as typeof START).criteria.map((c) => c.id)).toEqual(['moon', 'sun']);
    expect(b.experiment.config.rubric_evolution).toBe('off');
  });

  it('a malformed lineage is refused, naming the problem', async () => {
    const { metrics } = await evolvedMetrics();
    const good = await shareRubricLineage(experiment(), 'pin', runRubricVersions(START, metrics));
    const withVersions = (edit: (v: RunRubricVersion['entry'][]) => void) => {
      const versions = structuredClone(good.rubric_lineage.versions!);
      edit(versions);
      return linkOf(JSON.stringify({ experiment: good.experiment, rubric_lineage: { mode: 'pin', versions } }));
    };
    const refused = (fragment: string) => {
      const e = failure(fragment);
      expect(e.code).toBe('invalid');
      return e.message;
    };
    expect(refused(withVersions((v) => (v[2].parent = 'f'.repeat(64))))).toMatch(/\nRubric lineage, version 3 parent: ffffffffffff… is not an earlier version in the lineage: the lineage is broken/);
    expect(refused(withVersions((v) => (v[0].parent = v[1].version)))).toMatch(/Rubric lineage, version 1 parent: the first version is the starting rubric: it has no parent/);
    expect(refused(withVersions((v) => (v[1].strategy = null)))).toMatch(/Rubric lineage, version 2 strategy: is missing: an evolved version names the strategy that made it/);
    expect(refused(withVersions((v) => (v[2].version = v[1].version)))).toMatch(/Rubric lineage, version 3 version: [0-9a-f]{12}… appears twice in the lineage/);
    expect(refused(withVersions((v) => (v[2].first_step = 1)))).toMatch(/Rubric lineage, version 3 first step: 1 is not after the previous version's first step 1/);
    expect(refused(withVersions((v) => (v[1].version = 'NOT-A-HASH')))).toMatch(/Rubric lineage, version 2 version: must be a lowercase hex SHA-256/);
    expect(refused(withVersions((v) => ((v[1] as { rollouts?: unknown }).rollouts = [])))).toMatch(/Rubric lineage, version 2: .*rollouts/);
    expect(refused(withVersions((v) => v.splice(0)))).toMatch(/Rubric lineage versions: /);
    expect(refused(linkOf(JSON.stringify({ experiment: good.experiment, rubric_lineage: { mode: 'freeze' } })))).toMatch(/Rubric lineage mode: /);
    // A key inside the lineage is refused by name, like anywhere in a link.
    const keyed = failure(withVersions((v) => ((v[0] as { api_key?: string }).api_key = 'sk-1')));
    expect([keyed.code, keyed.message]).toEqual(['forbidden_field', expect.stringMatching(/links never carry keys or credentials; remove "api_key"/)]);
    // Well formed, but the rubric is not the pinned version (edited after sharing): refused on opening.
    const edited = structuredClone(good.experiment);
    (edited.rubric as typeof START).criteria[0].weight = 5;
    const shared = decodeShareLink(linkOf(JSON.stringify({ experiment: edited, rubric_lineage: good.rubric_lineage })));
    await expect(checkLinkRubricLineage(shared)).rejects.toThrow(ShareLinkError);
    await expect(checkLinkRubricLineage(shared)).rejects.toThrow(/^Rubric lineage: the link's rubric \(version [0-9a-f]{8}…\) is not its pinned version [0-9a-f]{8}…: the link was edited or damaged$/);
    // allow names its starting version first.
    const allow = decodeShareLink(linkOf(JSON.stringify({ experiment: good.experiment, rubric_lineage: { ...good.rubric_lineage, mode: 'allow' } })));
    await expect(checkLinkRubricLineage(allow)).rejects.toThrow(/is not its starting version/);
  });
});
