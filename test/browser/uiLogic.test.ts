// The UI's pure logic, in Node (no browser): prompt import, the rubric draft round trip, the
// rule builder's coverage of every rule kind, the settings catalogue's coverage of every option,
// validation messages, the try-it reward, chart smoothing and the rollout history.
import { describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS } from '../../src/rl/config';
import type { RolloutRecord } from '../../src/rl/grpoStep';
import { parseRubric, RubricError, rubricVersion } from '../../src/rubric';
import { FIRST_VISIT } from '../../src/share/presets';
import { sanitizeLanguageTag } from '../../src/ui/lib/localeGuard';
import {
  decodePromptLine,
  encodePromptLine,
  parseCsv,
  parseCsvRows,
  parseJsonl,
  parsePromptFile,
  PromptImportError,
  promptsToText,
  textToPrompts,
} from '../../src/ui/lib/promptImport';
import { chipsOf, RolloutHistory } from '../../src/ui/lib/rollouts';
import { defaultRule, draftFromRubric, moved, newCriterion, RULE_KINDS, rubricJson } from '../../src/ui/lib/rubricDraft';
import { buildCharts, lastValues, smooth } from '../../src/ui/lib/series';
import { ALL_OPTIONS, defaultOf, getPath, setPath } from '../../src/ui/lib/settingsCatalog';
import { tryResponse } from '../../src/ui/lib/tryIt';
import { describeIssue, validateExperiment } from '../../src/ui/lib/validate';

const FIRST = FIRST_VISIT.experiment as unknown as Record<string, unknown> & { config: Record<string, unknown> };

describe('prompt import', () => {
  it('round-trips prompts with line breaks and backslashes through the one-per-line editor', () => {
    const prompts = ['plain', 'two\nlines', 'a \\ backslash', 'literal \\n stays', 'C:\\path'];
    expect(textToPrompts(promptsToText(prompts))).toEqual(prompts);
    expect(encodePromptLine('a\nb')).toBe('a\\nb');
    expect(decodePromptLine('keeps \\t and \\q')).toBe('keeps \\t and \\q');
    // Lines are kept exactly (a link must round-trip its prompts); only empty lines are skipped.
    expect(textToPrompts('  one  \n\n   \ntwo\r\nthree')).toEqual(['  one  ', '   ', 'two', 'three']);
    expect(textToPrompts(promptsToText(['CR\r\nLF', ' lone\rCR ']))).toEqual(['CR\r\nLF', ' lone\rCR ']);
  });

  it('reads JSONL: strings, {"prompt"} objects and chat-message prompts; blank prompts are skipped', () => {
    const text = ['{"prompt": "Hello"}', '', '"bare string"', '{"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A"}, {"role": "user", "content": "Q2"}]}', '{"prompt": "  "}'].join('\n');
    expect(parseJsonl(text)).toEqual({ format: 'jsonl', prompts: ['Hello', 'bare string', 'Q2'], skipped: 1 });
  });

  it('names the JSONL line at fault', () => {
    expect(() => parseJsonl('{"prompt": "ok"}\n{oops')).toThrow(/^line 2: not valid JSON/);
    expect(() => parseJsonl('{"question": "x"}')).toThrow('line 1: no "prompt" field (fields: question)');
    expect(() => parseJsonl('{"prompt": 3}')).toThrow('line 1: "prompt" must be a string or a list of chat messages, got number');
    expect(() => parseJsonl('[1]')).toThrow(PromptImportError);
  });

  it('reads CSV with quoted commas, quotes and line breaks, a BOM and CRLF, by the "prompt" column', () => {
    const csv = '\ufeffid,Prompt,notes\r\n1,"Hello, world",x\r\n2,"She said ""hi""\nthen left",\r\n3,,empty\r\n';
    expect(parseCsvRows(csv)[2]).toEqual(['2', 'She said "hi"\nthen left', '']);
    expect(parseCsv(csv)).toEqual({ format: 'csv', prompts: ['Hello, world', 'She said "hi"\nthen left'], skipped: 1 });
    expect(() => parseCsv('question,answer\nq,a')).toThrow('no "prompt" column in the header (columns: question, answer)');
    expect(() => parseCsv('prompt\n"open')).toThrow('a quoted field is not closed');
  });

  it('picks the parser from the file name and rejects a file without prompts', () => {
    expect(parsePromptFile('set.CSV', 'prompt\na').format).toBe('csv');
    expect(parsePromptFile('set.jsonl', '{"prompt":"a"}').format).toBe('jsonl');
    expect(parsePromptFile('set.txt', 'a\n\nb').prompts).toEqual(['a', 'b']);
    expect(() => parsePromptFile('empty.jsonl', '\n\n')).toThrow('no prompts found in empty.jsonl');
  });
});

describe('rubric draft', () => {
  it('turns the first-visit rubric into editor state and back without changing its content version', async () => {
    const back = rubricJson(draftFromRubric(FIRST.rubric));
    expect(await rubricVersion(parseRubric(back))).toBe(await rubricVersion(parseRubric(FIRST.rubric)));
  });

  it('keeps a judge-question criterion as a question, with its choices', () => {
    const draft = draftFromRubric({ name: 'q', criteria: [{ id: 'a', text: 't', weight: 1, tier: 'optional', judge_question: 'Is it kind?', choices: ['no', 'somewhat', 'yes'] }] });
    expect(draft.criteria[0].mode).toBe('question');
    expect(rubricJson(draft).criteria).toEqual([{ id: 'a', text: 't', weight: 1, tier: 'optional', judge_question: 'Is it kind?', choices: ['no', 'somewhat', 'yes'] }]);
  });

  it('offers every rule kind of the schema, and each kind starts as a valid rule', () => {
    let expected: string[] = [];
    try {
      parseRubric({ name: 'x', criteria: [{ id: 'a', text: 't', weight: 1, tier: 'important', rule: { kind: 'no_such_kind' } }] });
    } catch (e) {
      const message = (e as RubricError).issues[0].message;
      expected = message.slice(message.indexOf('one of: ') + 8, -1).split(', ');
    }
    expect(RULE_KINDS.map((k) => k.kind).sort()).toEqual([...expected].sort());
    for (const { kind } of RULE_KINDS) {
      const rule = defaultRule(kind);
      expect(() => parseRubric({ name: 'x', criteria: [{ id: 'a', text: 't', weight: 1, tier: 'important', rule }] }), kind).not.toThrow();
    }
  });

  it('carries terms and text over when the rule kind changes', () => {
    expect(defaultRule('starts_with', { kind: 'contains', terms: ['hi', 'yo'] }).text).toBe('hi');
    expect(defaultRule('not_contains', { kind: 'ends_with', text: '?' }).terms).toEqual(['?']);
  });

  it('adds criteria with fresh ids and moves them within bounds', () => {
    const draft = draftFromRubric(FIRST.rubric);
    const added = newCriterion(draft.criteria);
    expect(draft.criteria.map((c) => c.id)).not.toContain(added.id);
    expect(moved(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moved(['a', 'b', 'c'], 0, -1)).toEqual(['a', 'b', 'c']);
    expect(moved(['a', 'b', 'c'], 2, 1)).toEqual(['a', 'b', 'c']);
  });
});

describe('settings catalogue', () => {
  it('shows every GrpoConfig option (nested aggregation settings included)', () => {
    const shown = new Set(ALL_OPTIONS.map((o) => o.key.split('.')[0]));
    expect(Object.keys(GRPO_DEFAULTS).filter((k) => !shown.has(k))).toEqual([]);
    for (const o of ALL_OPTIONS) expect(defaultOf(o.key), o.key).not.toBeUndefined();
    expect(ALL_OPTIONS.every((o) => o.help.length > 10)).toBe(true);
  });

  it('sets and clears nested paths without touching the input', () => {
    const config = { beta: 0.1 };
    const a = setPath(config, 'reward_aggregation.dropout_p', 0.4);
    expect(a).toEqual({ beta: 0.1, reward_aggregation: { method: 'weighted_mean', dropout_p: 0.4 } });
    expect(config).toEqual({ beta: 0.1 });
    expect(getPath(a, 'reward_aggregation.dropout_p')).toBe(0.4);
    expect(setPath(setPath(a, 'reward_aggregation.dropout_p', undefined), 'reward_aggregation.method', undefined)).toEqual({ beta: 0.1 });
    expect(setPath(a, 'beta', undefined)).toEqual({ reward_aggregation: { method: 'weighted_mean', dropout_p: 0.4 } });
  });
});

describe('validation', () => {
  it('accepts the first-visit experiment as it is', () => {
    const v = validateExperiment(FIRST);
    expect(v.issues).toEqual([]);
    expect(v.experiment).toBe(FIRST);
  });

  it('reports config, rubric and prompt problems together, each with the parser message', () => {
    const bad = {
      ...FIRST,
      prompts: [],
      rubric: { name: 'r', criteria: [{ id: 'a', text: 't', weight: 1, tier: 'important', rule: { kind: 'contains', terms: [] } }] },
      config: { ...FIRST.config, generation_batch_size: 30 },
    };
    const v = validateExperiment(bad);
    expect(v.experiment).toBeNull();
    expect(v.issues.map(describeIssue)).toEqual([
      'Criterion 1 (id "a"), rule terms: needs at least one term',
      'Setting generation_batch_size: must be a multiple of num_generations (8), got 30',
      'Prompts: needs at least one prompt',
    ]);
    expect(v.issues[2]).toMatchObject({ area: 'prompts', path: '' });
  });
});

describe('try it', () => {
  const draft = draftFromRubric(FIRST.rubric);
  const rubric = parseRubric(FIRST.rubric);
  const config = validateExperiment(FIRST).config;

  it('scores each criterion and aggregates with the configured method', () => {
    const r = tryResponse(draft, rubric, config, 'Describe the sea.', 'The sea is wide and blue.');
    expect(r.rows.map((row) => [row.id, row.result?.status === 'ok' ? row.result.score : null, row.passes])).toEqual([
      ['short', 1, true],
      ['asks', 0, false],
      ['you', 0, false],
      ['no_caps_shouting', 0, true],
    ]);
    expect(r.method).toBe('weighted_mean');
    expect(r.reward).toBeCloseTo(2 / 4, 12);
    expect(r.alternatives.find((a) => a.method === 'strict_all_required')?.reward).toBe(0);
  });

  it('scores valid criteria even when another is invalid, and then gives no reward', () => {
    const broken = draftFromRubric(FIRST.rubric);
    broken.criteria[1].rule = { kind: 'ends_with', text: '' };
    const r = tryResponse(broken, null, config, 'p', 'Hello you?');
    expect(r.rows[0].result?.status).toBe('ok');
    expect(r.rows[1].invalid).toBe('rule text: must not be empty');
    expect(r.reward).toBeNull();
    expect(r.why).toContain('rubric');
  });

  it('uses a picked judge answer for a question criterion; without one the rollout has no reward', () => {
    const q = draftFromRubric({ name: 'q', criteria: [{ id: 'kind', text: 'Kind', weight: 1, tier: 'important', judge_question: 'Is it kind?', choices: ['no', 'somewhat', 'yes'] }] });
    const qr = parseRubric(rubricJson(q));
    const none = tryResponse(q, qr, config, 'p', 'r');
    expect(none.rows[0].result?.status).toBe('needs_model');
    expect(none.reward).toBeNull();
    expect(none.why).toContain('Not scored: kind');
    const picked = tryResponse(q, qr, config, 'p', 'r', { [q.criteria[0].uid]: 'somewhat' });
    expect(picked.reward).toBeCloseTo(0.5, 12);
  });
});

describe('charts', () => {
  it('smooths with a debiased EMA that skips missing points', () => {
    expect(smooth([1, 2, 3], 0)).toEqual([1, 2, 3]);
    const s = smooth([2, null, 4], 0.5);
    expect(s[0]).toBeCloseTo(2, 12);
    expect(s[1]).toBeNull();
    // (0.5·(0.5·2) + 0.5·4) / (1 − 0.25) = 3.333…
    expect(s[2]).toBeCloseTo((0.5 * 1 + 2) / 0.75, 12);
    expect(() => smooth([1], 1)).toThrow(RangeError);
  });

  it('builds every chart from step metrics, with the ± std band and the last values as text', () => {
    const m = (step: number, reward: number) =>
      ({
        step,
        rewards: { reward, reward_std: 0.1, criterion_pass_rate: { a: 0.5 }, criterion_mean_score: {}, strict_completion_rate: 0.25, unscorable: 0, aggregations: {} },
        held_out: null,
        completions: { mean_length: 4, min_length: 2, max_length: 6, clipped_ratio: 0 },
        frac_reward_zero_std: 0,
        kl: null,
        entropy: 2,
        clip_ratio_low: 0,
        clip_ratio_high: 0,
        clip_ratio_region: 0,
        sampling_tokens_per_second: 10,
        training_tokens_per_second: 20,
      }) as never;
    const charts = buildCharts([m(0, 0.2), m(1, 0.4)], ['a'], 0);
    expect(charts.map((c) => c.id)).toEqual(['reward', 'pass-rates', 'strict', 'kl', 'entropy', 'clip', 'length', 'throughput']);
    const reward = charts[0];
    expect(reward.ys).toEqual([[0.2, 0.4], [0.1, 0.30000000000000004], [0.30000000000000004, 0.5]]);
    expect(lastValues(reward)).toBe('reward mean 0.4 at step 1');
    expect(charts[3].note).toContain('beta = 0');
  });
});

describe('rollout history and verdicts', () => {
  const r = (step: number, prompt: string, scores: (number | null)[]): RolloutRecord => ({
    step,
    group: 0,
    index: 0,
    prompt,
    completion: 'c',
    completion_ids: [],
    logprobs: [],
    truncated: false,
    results: scores.map((s, k) => (s === null ? { criterion_id: `c${k}`, status: 'unscorable', score: null, reason: 'too long' } : { criterion_id: `c${k}`, status: 'ok', score: s, reason: 'r' })),
    scores,
    reward: null,
    advantage: 0,
  });

  it('keeps only the last N steps and follows one prompt across them', () => {
    const h = new RolloutHistory(2);
    h.add(0, [r(0, 'a', [])]);
    h.add(1, [r(1, 'b', [])]);
    h.add(2, [r(2, 'a', [])]);
    expect(h.stepNumbers()).toEqual([1, 2]);
    expect(h.acrossSteps('a').map((g) => g.step)).toEqual([2]);
    h.setKeep(1);
    expect(h.stepNumbers()).toEqual([2]);
    expect(() => new RolloutHistory(0)).toThrow(RangeError);
  });

  it('calls a met pitfall a failure and an unmet pitfall a pass', () => {
    const criteria = [
      { id: 'c0', text: '', weight: 1 },
      { id: 'c1', text: '', weight: -1 },
      { id: 'c2', text: '', weight: -1 },
      { id: 'c3', text: '', weight: 0 },
      { id: 'c4', text: '', weight: 1 },
    ];
    const chips = chipsOf(r(0, 'p', [0.5, 1, 0, 1, null]), criteria, 0.5);
    expect(chips.map((c) => c.verdict)).toEqual(['pass', 'fail', 'pass', 'tracked', 'unscored']);
  });
});

it('turns a POSIX locale into a language tag Intl accepts', () => {
  expect(sanitizeLanguageTag('en-US@posix')).toBe('en-US');
  expect(sanitizeLanguageTag('de_DE.UTF-8')).toBe('de-DE');
  expect(sanitizeLanguageTag('fr-FR')).toBe('fr-FR');
  expect(sanitizeLanguageTag('@@')).toBe('en-US');
});
