// The rule catalogue as rubric_evolution's rare writer (src/rubric/flawCatalogue.ts): every check
// on a response with the flaw and one without, the choice of the most discriminative check
// against hand-computed within-group variances, the exclusions, and the decisions evolveRubric
// records with it (through the same guarded check as a model's proposal).
import { describe, expect, it } from 'vitest';
import { judgeWithRules, parseRubric, scoresOf, type Rubric } from '../../../src/rubric';
import { catalogueRareProposal, flawCatalogue, measureCatalogue } from '../../../src/rubric/flawCatalogue';
import { evolveRubric, newEvolutionHistory, recordEvolutionStep, type EvolutionOptions, type EvolutionRollout } from '../../../src/rubric/evolve';
import { checkRule } from '../../../src/rubric/rules';
import { parseGrpoConfig } from '../../../src/rl/config';
import { finalRubricExperiment } from '../../../src/share/trlExport';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { lessonById } from '../../../src/share/lessons';
import { readRunFile, runFileJson, type RunFileInput } from '../../../src/share/runFile';

const rule = (id: string, completions: string[] = []) => {
  const check = flawCatalogue(completions).find((c) => c.id === id);
  if (!check) throw new Error(`no check ${id}`);
  return check.rule;
};
const has = (id: string, text: string, completions: string[] = []) => {
  const o = checkRule(rule(id, completions), text);
  if (o.status !== 'ok') throw new Error(o.reason);
  return o.score === 1;
};

describe('the catalogue checks (met = the response has the flaw)', () => {
  it.each([
    ['unfinished_sentence', 'The sea is blue and', 'The sea is blue.'],
    ['unfinished_sentence', 'It said "go', 'It said "go."'],
    ['letter_stutter', 'The seaaaa is blue.', 'The sea is blue.'],
    ['letter_stutter', 'ZZZZ top.', 'Buzz off.'],
    ['symbol_run', 'The sea #@% is blue.', 'The sea (blue) is "wet", isn\'t it?'],
    ['repeated_punctuation', 'The sea!!', 'The sea! Yes.'],
    ['repeated_punctuation', 'Well....', 'Well... yes.'],
    ['run_together', 'Theseaisbluetoday.', 'The sea is blue today.'],
    ['shouting', 'The OCEAN is blue.', 'The Ocean is blue, OK.'],
    ['double_space', 'The sea  is blue.', 'The sea is blue.'],
    ['empty', '  \n ', 'A.'],
  ])('%s: %j has it, %j does not', (id, positive, negative) => {
    expect(has(id, positive)).toBe(true);
    expect(has(id, negative)).toBe(false);
  });

  it('runs long: above the median and the upper-quartile word count of the window', () => {
    // Word counts 1, 2, 3, 4, 5: median 3, lower upper quartile 4.
    const window = ['a', 'a b', 'a b c', 'a b c d', 'a b c d e'];
    expect(flawCatalogue(window).filter((c) => c.id.startsWith('runs_long')).map((c) => c.text)).toEqual(['Runs long: more than 3 words', 'Runs long: more than 4 words']);
    expect(has('runs_long_3', 'one two three four', window)).toBe(true);
    expect(has('runs_long_3', 'one two three', window)).toBe(false);
  });

  it('repeats a word: only words the window repeats, the most-repeated first, at most three', () => {
    const window = ['sea sea blue', 'sea and sea', 'wave wave', 'blue sky', 'moon moon', 'star star'];
    const ids = flawCatalogue(window).filter((c) => c.id.startsWith('repeats_')).map((c) => c.id);
    expect(ids).toEqual(['repeats_sea', 'repeats_moon', 'repeats_star']); // sea in 2 rollouts; ties alphabetically
    expect(has('repeats_sea', 'The Sea, the sea.', window)).toBe(true);
    expect(has('repeats_sea', 'The sea, the seaside.', window)).toBe(false); // whole words only
  });

  it('every check is a valid rule of the rubric language', () => {
    const checks = flawCatalogue(['the sea is the sea', 'a b c']);
    expect(() => parseRubric({ name: 'all', criteria: checks.map((c) => ({ ...c, weight: 1, tier: 'important' })) })).not.toThrow();
    expect(checks.map((c) => c.id)).toContain('unfinished_sentence');
  });
});

// ---- choosing the check ----

const RUBRIC: Rubric = parseRubric({
  name: 'r',
  criteria: [
    { id: 'short', text: 'Short', weight: 2, tier: 'important', rule: { kind: 'length', unit: 'words', max: 12 } },
    { id: 'other', text: 'Says blue', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['blue'] } },
  ],
});

/**
 * Two groups of 4 three-word answers, all ending in a sentence mark (no unfinished sentence, no
 * repeated word, every answer 3 words: "runs long" is met by none). In each group repeated
 * punctuation is met by 2 of 4 (population variance 1/4) and a letter stutter by 1 of 4 (3/16).
 */
const GROUPS = [
  ['Calm blue water.', 'Calm blue water!!', 'Calm bluuuue water.', 'Calm grey water?!'],
  ['Soft grey stone.', 'Soft blue stone!!', 'Sooooft grey stone.', 'Soft grey stone?!'],
];

function snapshotOf(groups: string[][], rubric: Rubric = RUBRIC, step = 0): EvolutionRollout[] {
  return groups.flatMap((g, group) => g.map((completion) => ({ step, group, prompt: `p${group}`, completion, scores: scoresOf(rubric, judgeWithRules(rubric, `p${group}`, completion)) })));
}

describe('the proposal for a saturated criterion', () => {
  it('measures each check on the window as hand-computed', () => {
    const m = measureCatalogue(snapshotOf(GROUPS), [{ criterion: RUBRIC.criteria[1], index: 1 }]);
    const v = Object.fromEntries(m.map((c) => [c.check.id, c.withinGroupVariance]));
    expect(v.repeated_punctuation).toBeCloseTo(0.25, 12);
    expect(v.letter_stutter).toBeCloseTo(3 / 16, 12);
    expect(v.unfinished_sentence).toBe(0);
    expect(m.find((c) => c.check.id === 'unfinished_sentence')!.excluded).toMatch(/zero within-group variance \(unreachable\)/);
    expect(m.find((c) => c.check.id === 'runs_long_3')!.excluded).toMatch(/zero within-group variance/);
  });

  it('replaces the saturated criterion with the check of largest within-group variance, a pitfall of its weight', () => {
    const p = catalogueRareProposal(RUBRIC, RUBRIC.criteria[0], snapshotOf(GROUPS));
    if ('none' in p) throw new Error(p.none);
    expect(p.removed).toEqual(['short']);
    expect(p.added).toEqual(['repeated_punctuation']);
    const added = p.rubric.criteria.find((c) => c.id === 'repeated_punctuation')!;
    expect(added.weight).toBe(-2);
    expect(p.rubric.criteria.map((c) => c.id)).toEqual(['other', 'repeated_punctuation']);
    expect(p.reason).toMatch(/not model-written; within-group variance 0\.2500 on the window, the most discriminative of 2 usable/);
  });

  it('breaks a tie by catalogue order', () => {
    // A second stutter in each group: both checks met by 2 of 4 (variance 1/4 each); letter_stutter comes first.
    const tied = GROUPS.map((g, i) => [...g.slice(0, 3), i === 0 ? 'Calm grrrrey water?!' : 'Soft greeeey stone?!']);
    const p = catalogueRareProposal(RUBRIC, RUBRIC.criteria[0], snapshotOf(tied));
    if ('none' in p) throw new Error(p.none);
    expect(p.added).toEqual(['letter_stutter']);
  });

  it('skips a check that only repeats a kept criterion (|r| >= 0.9 on the window)', () => {
    // "other" (says blue) is met exactly by the answers with repeated punctuation: the same behaviour, counted twice.
    const groups = [
      ['Calm grey water.', 'Calm blue water!!', 'Calm grrrrey water.', 'Calm blue water?!'],
      ['Soft grey stone.', 'Soft blue stone!!', 'Soooft grey stone.', 'Soft blue stone?!'],
    ];
    const p = catalogueRareProposal(RUBRIC, RUBRIC.criteria[0], snapshotOf(groups));
    if ('none' in p) throw new Error(p.none);
    expect(p.added).toEqual(['letter_stutter']);
    const why = measureCatalogue(snapshotOf(groups), [{ criterion: RUBRIC.criteria[1], index: 1 }]).find((c) => c.check.id === 'repeated_punctuation')!.excluded;
    expect(why).toMatch(/redundant with "other" on the window \(r = 1\.00\)/);
  });

  it('never proposes a check the rubric has already', () => {
    const withStutter = parseRubric({ name: 'r', criteria: [...RUBRIC.criteria, { id: 'stutter', text: 'Stutters', weight: -1, tier: 'important', rule: flawCatalogue([]).find((c) => c.id === 'repeated_punctuation')!.rule }] });
    const p = catalogueRareProposal(withStutter, withStutter.criteria[0], snapshotOf(GROUPS, withStutter));
    if ('none' in p) throw new Error(p.none);
    expect(p.added).toEqual(['letter_stutter']);
  });
});

// ---- evolveRubric with the catalogue ----

const OPTIONS: EvolutionOptions = { strategy: 'rare', every: 1, lookback: 1, maxNew: 2, threshold: 0.5, writer: 'catalogue' };
/** The run's own judge for new criteria: the rules. */
const rules = async (criteria: Rubric, rollouts: readonly EvolutionRollout[]) => rollouts.map((r) => scoresOf(criteria, judgeWithRules(criteria, r.prompt, r.completion)));

function historyOf(groups: string[][]) {
  const h = newEvolutionHistory(RUBRIC, 'v0'.padEnd(64, '0'));
  recordEvolutionStep(h, 0, snapshotOf(groups), 1);
  return h;
}

describe('rare with the catalogue writer in evolveRubric', () => {
  it('accepts the catalogue check through the guarded check, with no model', async () => {
    const e = await evolveRubric({ history: historyOf(GROUPS), step: 0, options: OPTIONS, scoreNew: rules });
    expect(e.outcome).toBe('accepted');
    expect(e.removed).toEqual(['short']);
    expect(e.added).toEqual(['repeated_punctuation']);
    expect(e.checks).toEqual([
      { criterion: 'repeated_punctuation', within_group_variance: 0.25, met_rate: 0.5, flag: 'discriminative', passed: true },
      { criterion: '(reward)', within_group_variance: null, met_rate: null, flag: 'discriminative', passed: true },
    ]);
    expect(e.rubric!.criteria.at(-1)!.weight).toBe(-2);
  });

  it('the guarded check still decides: a judge that disagrees with the rule gets the proposal rejected', async () => {
    const e = await evolveRubric({ history: historyOf(GROUPS), step: 0, options: OPTIONS, scoreNew: async (c, rs) => rs.map(() => c.criteria.map(() => 1)) });
    expect(e.outcome).toBe('rejected');
    expect(e.reason).toMatch(/"repeated_punctuation" is not discriminative on the snapshot/);
  });

  it('saturated but no discriminative check: the decision is recorded with every check\'s reason, the rubric stays', async () => {
    const same = [Array(4).fill('Calm blue water.'), Array(4).fill('Soft grey stone.')];
    const e = await evolveRubric({ history: historyOf(same), step: 0, options: OPTIONS, scoreNew: rules });
    expect(e.outcome).toBe('unchanged');
    expect(e.version).toBeNull();
    expect(e.reason).toMatch(/^"short" is met by every rollout of the recent steps, but no flaw check of the catalogue is discriminative on the window/);
    expect(e.reason).toMatch(/unfinished_sentence: zero within-group variance \(unreachable\)/);
    expect(e.reason).toMatch(/runs_long_3: zero within-group variance/);
  });

  it('the judge writer without a model still says it needs one (the default keeps the old behaviour)', async () => {
    const e = await evolveRubric({ history: historyOf(GROUPS), step: 0, options: { ...OPTIONS, writer: undefined }, scoreNew: rules });
    expect(e.outcome).toBe('unchanged');
    expect(e.reason).toMatch(/needs a judge that writes text/);
  });
});

describe('the option rubric_evolution_writer', () => {
  it('defaults to judge, and the catalogue does not write online_rubrics', () => {
    expect(parseGrpoConfig({}).rubric_evolution_writer).toBe('judge');
    expect(parseGrpoConfig({ rubric_evolution: 'rare', rubric_evolution_writer: 'catalogue' }).rubric_evolution_writer).toBe('catalogue');
    expect(() => parseGrpoConfig({ rubric_evolution: 'online_rubrics', rubric_evolution_writer: 'catalogue' })).toThrow(/the catalogue writes only rare's flaw checks/);
  });

  it('travels in share links and run files', async () => {
    const shared = lessonById('rubric-evolution')!.shared;
    expect((decodeShareLink(encodeShareLink(shared)).experiment.config as Record<string, unknown>).rubric_evolution_writer).toBe('catalogue');
    const input: RunFileInput = { name: 'r', exported_at: '2026-01-01T00:00:00.000Z', experiment: shared.experiment as RunFileInput['experiment'], metrics: [], rollouts: [] };
    const back = await readRunFile(await runFileJson(input));
    expect((back.experiment.config as Record<string, unknown>).rubric_evolution_writer).toBe('catalogue');
  });

  it('the TRL export note says the flaw checks came from the rule catalogue', () => {
    const config = parseGrpoConfig({ rubric_evolution: 'rare', rubric_evolution_writer: 'catalogue' });
    expect(finalRubricExperiment({}, config).note).toMatch(/rule catalogue \(rubric_evolution_writer "catalogue": rules, not model-written\)/);
    expect(finalRubricExperiment({}, parseGrpoConfig({ rubric_evolution: 'rare' })).note).not.toMatch(/catalogue/);
  });
});
