// Refusals in the page's words (issue 19 item 5, issue 14): a link or an edited experiment that is
// wrong gets, for every problem, a line naming the field as the page labels it (criteria numbered
// from 1, settings by name, "Prompt 4") and what was expected, never zod's wording or a raw
// schema path. Hundreds of broken experiments are generated; every message is checked.
import { strToU8, deflateSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { rng } from '../../helpers/random';
import { GRPO_DEFAULTS } from '../../../src/rl/config';
import { bytesToBase64, decodeShareLink, ShareLinkError } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { describeIssue, validateExperiment } from '../../../src/ui/lib/validate';

const JARGON = /Invalid input|Invalid option|nonoptional|received|Expected|Too small|Too big|Unrecognized key|criteria\[\d|criteria\.\d|\bundefined\b|\[object /;
/** Every problem line starts with a label the page uses. */
const LABEL =
  /^(The link( has|:|'s field "[^"]+":)|Experiment:|Model:|Prompts:|Prompt \d+:|Rubric( [a-z ,0-9]+)?:|Held-out rubric( [a-z ,0-9]+)?:|Criterion \d+( \(id "[^"]*"\))?(, [^:]+)?:|Settings:|Setting [a-z0-9_.]+:|Judge( [a-z ,0-9]+)?:|Lesson( [a-z ]+(, item \d+)?)?:|Preset:|Field "[^"]+":)/;

const base = () => structuredClone(FIRST_VISIT.experiment) as unknown as Record<string, unknown> & { rubric: { criteria: Record<string, unknown>[] }; config: Record<string, unknown> };
const linkOf = (value: unknown) => `#x=1.${bytesToBase64(deflateSync(strToU8(JSON.stringify(value))), true)}`;

const GARBAGE: unknown[] = ['abc', '', -1, 0, 1.5, 1e300, null, true, [], [1, 'x'], {}, { a: { b: [null] } }];

/** Broken experiments: each field missing, or replaced by garbage, at every level. */
function brokenExperiments(): { what: string; experiment: unknown }[] {
  const out: { what: string; experiment: unknown }[] = [];
  const add = (what: string, mutate: (e: ReturnType<typeof base>) => void) => {
    const e = base();
    mutate(e);
    out.push({ what, experiment: e });
  };
  for (const key of ['model', 'prompts', 'rubric']) add(`no ${key}`, (e) => delete e[key]);
  for (const key of ['model', 'prompts', 'rubric', 'config', 'judge', 'held_out_rubric']) {
    GARBAGE.forEach((g, i) => add(`${key} = garbage ${i}`, (e) => (e[key] = structuredClone(g))));
  }
  GARBAGE.forEach((g, i) => add(`prompt 2 = garbage ${i}`, (e) => ((e.prompts as unknown[])[1] = structuredClone(g))));
  add('prompt too long', (e) => ((e.prompts as unknown[])[0] = 'x'.repeat(4001)));
  add('unknown experiment field', (e) => (e.weights = [1]));
  const criterionFields = ['id', 'text', 'weight', 'tier', 'rule', 'judge_question', 'choices'];
  for (const field of criterionFields) {
    add(`criterion 2 without ${field}`, (e) => delete e.rubric.criteria[1][field]);
    GARBAGE.forEach((g, i) => add(`criterion 2 ${field} = garbage ${i}`, (e) => (e.rubric.criteria[1][field] = structuredClone(g))));
  }
  for (const field of ['kind', 'terms', 'pattern', 'unit', 'min', 'max', 'text', 'max_input_chars', 'flags', 'match', 'schema']) {
    GARBAGE.forEach((g, i) => add(`criterion 1 rule.${field} = garbage ${i}`, (e) => ((e.rubric.criteria[0].rule as Record<string, unknown>)[field] = structuredClone(g))));
  }
  GARBAGE.forEach((g, i) => add(`criteria = garbage ${i}`, (e) => (e.rubric.criteria = structuredClone(g) as never)));
  GARBAGE.forEach((g, i) => add(`rubric name = garbage ${i}`, (e) => ((e.rubric as Record<string, unknown>).name = structuredClone(g))));
  for (const key of Object.keys(GRPO_DEFAULTS)) {
    for (const g of ['abc', -1, 1e300, null, [], {}, 100_000]) add(`config.${key} = ${JSON.stringify(g)}`, (e) => (e.config[key] = structuredClone(g)));
  }
  add('unknown option', (e) => (e.config.lora_rank = 8));
  add('judge kind unknown', (e) => (e.judge = { kind: 'oracle' }));
  add('judge without kind', (e) => (e.judge = { model: 'x' }));
  add('judge model missing', (e) => (e.judge = { kind: 'model' }));
  add('remote judge garbage', (e) => (e.judge = { kind: 'remote', base_url: 5, model: '', concurrency: 'many' }));
  // Random nested garbage in the rubric.
  const rand = rng(19);
  for (let n = 0; n < 40; n++) {
    add(`random garbage ${n}`, (e) => {
      const c = e.rubric.criteria[Math.floor(rand() * e.rubric.criteria.length)];
      const keys = [...criterionFields, 'rule.kind', 'rule.terms', 'rule.min'];
      const key = keys[Math.floor(rand() * keys.length)];
      const value = structuredClone(GARBAGE[Math.floor(rand() * GARBAGE.length)]);
      if (key.startsWith('rule.')) (c.rule as Record<string, unknown>)[key.slice(5)] = value;
      else c[key] = value;
    });
  }
  return out;
}

function linkRefusal(payload: unknown): string[] | null {
  try {
    decodeShareLink(linkOf(payload));
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ShareLinkError);
    // The first line is the heading ("the link's experiment is invalid:") when problems follow.
    const lines = (e as Error).message.split('\n');
    return lines.length > 1 ? lines.slice(1) : lines;
  }
}

/** The lines that break the rules, with the case that produced them (empty when all is well). */
function badLines(lines: string[], what: string): string[] {
  if (lines.length === 0) return [`${what}: no message`];
  return lines.filter((line) => JARGON.test(line) || !LABEL.test(line)).map((line) => `${what} → ${line}`);
}

function check(lines: string[], what: string) {
  expect(badLines(lines, what)).toEqual([]);
}

describe('refusals name the field as the page labels it, without validator jargon', () => {
  const cases = brokenExperiments();

  it(`a link with a broken experiment (${cases.length} kinds)`, () => {
    let refused = 0;
    const bad: string[] = [];
    for (const { what, experiment } of cases) {
      const lines = linkRefusal({ experiment });
      if (lines === null) continue; // garbage that happens to be valid (null for a nullable option, say)
      refused++;
      bad.push(...badLines(lines, what));
    }
    expect(bad).toEqual([]);
    expect(refused).toBeGreaterThan(400);
  });

  it('the builder says the same in its problem list', () => {
    let refused = 0;
    const bad: string[] = [];
    for (const { what, experiment } of cases) {
      if (experiment === null || typeof experiment !== 'object') continue;
      const v = validateExperiment(experiment as Record<string, unknown>);
      if (v.issues.length === 0) continue;
      refused++;
      bad.push(...badLines(v.issues.map(describeIssue), what));
    }
    expect(bad).toEqual([]);
    expect(refused).toBeGreaterThan(400);
  });

  it('a link without an experiment, or with broken link fields', () => {
    const exp = base();
    const payloads: unknown[] = [
      {},
      { experiment: null },
      { experiment: 5 },
      { experiment: exp, weights: 'AAAA' },
      { experiment: exp, preset: 'Not An Id' },
      { experiment: exp, preset: 7 },
      { experiment: exp, lesson: {} },
      { experiment: exp, lesson: { id: 'a', guidance: 3, hidden_controls: ['warp'] } },
      { experiment: exp, lesson: { id: 'a', guidance: '', hidden_controls: 'all' } },
      { experiment: exp, lesson: { id: 'a', guidance: '', hidden_controls: [], extra: 1 } },
    ];
    for (const p of payloads) check(linkRefusal(p)!, JSON.stringify(p).slice(0, 80));
    expect(linkRefusal({})).toEqual(['The link has no experiment (expected an object with the model, prompts, rubric and settings)']);
    const noPrompts = base();
    delete noPrompts.prompts;
    expect(linkRefusal({ experiment: noPrompts })).toEqual(['Prompts: is required (a list of 1 to 10,000 prompts)']);
  });

  it('examples read as the page does', () => {
    const e = base();
    e.rubric.criteria[2].weight = 'abc';
    e.config.num_generations = 100_000;
    e.prompts = [];
    const lines = linkRefusal({ experiment: e })!;
    expect(lines).toContain('Prompts: needs at least one prompt');
    const v = validateExperiment(e).issues.map(describeIssue);
    const id = e.rubric.criteria[2].id as string;
    expect(v).toContain(`Criterion 3 (id "${id}"), weight: must be a number, got "abc"`);
    expect(v).toContain('Setting num_generations: must be at most generation_batch_size (16), got 100000'.replace('(16)', `(${String(e.config.generation_batch_size ?? GRPO_DEFAULTS.generation_batch_size)})`));
    const missing = base();
    delete missing.rubric.criteria[0].weight;
    expect(validateExperiment(missing).issues.map(describeIssue)[0]).toMatch(/^Criterion 1 \(id "[^"]+"\), weight: is required \(a number\)$/);
  });
});
