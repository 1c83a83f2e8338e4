// A rubric is data: this schema says what a valid one is, and parseRubric turns JSON into a
// typed rubric (defaults filled in) or throws a RubricError naming every problem's path.
import { z } from 'zod';
import { RubricError, formatPath, type RubricIssue } from './errors';
import { fieldWord } from './issueLabel';
import { explainIssue, primaryIssues, valueAt } from './zodIssue';
import { compileSafeRegex, RegexRejected, MAX_PATTERN_LENGTH, MAX_REGEX_WORK, regexWork } from './safeRegex';

export const TIERS = ['essential', 'important', 'optional'] as const;
export type Tier = (typeof TIERS)[number];

export const MAX_CRITERIA = 100;
export const MAX_INPUT_CHARS_LIMIT = 100_000;
export const DEFAULT_MAX_INPUT_CHARS = 10_000;
/** Nesting depth of a JSON shape (the root is depth 1). */
export const MAX_SHAPE_DEPTH = 8;
export const DEFAULT_CHOICES: readonly string[] = ['no', 'yes'];

const nonEmpty = (max: number) => z.string().min(1, 'must not be empty').max(max);

// ---- JSON shapes (a small subset of JSON Schema: types, required keys, nesting) ----

export type JsonShape =
  | { type: 'object'; properties?: Record<string, JsonShape>; required?: string[] }
  | { type: 'array'; items?: JsonShape }
  | { type: 'string' | 'number' | 'integer' | 'boolean' | 'null' };

const JsonShapeSchema: z.ZodType<JsonShape> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('object'),
      properties: z.record(z.string(), JsonShapeSchema).optional(),
      required: z.array(z.string()).max(100).optional(),
    }),
    z.strictObject({ type: z.literal('array'), items: JsonShapeSchema.optional() }),
    z.strictObject({ type: z.enum(['string', 'number', 'integer', 'boolean', 'null']) }),
  ]),
);

function shapeDepth(shape: JsonShape): number {
  if (shape.type === 'object') return 1 + Math.max(0, ...Object.values(shape.properties ?? {}).map(shapeDepth));
  if (shape.type === 'array') return 1 + (shape.items ? shapeDepth(shape.items) : 0);
  return 1;
}

// ---- rules ----

const caseSensitive = z.boolean().default(false);
const terms = z
  .array(z.string().max(200).refine((t) => t.trim() !== '', 'must not be empty or only spaces'))
  .min(1, 'needs at least one term')
  .max(50);
const bound = z.number().int().min(0).max(10_000_000).optional();

/** min/max: at least one, and min <= max. */
function checkBounds(v: { min?: number; max?: number }, ctx: z.RefinementCtx): void {
  if (v.min === undefined && v.max === undefined) ctx.addIssue({ code: 'custom', message: 'give min, max or both', path: [] });
  if (v.min !== undefined && v.max !== undefined && v.min > v.max) {
    ctx.addIssue({ code: 'custom', message: `min ${v.min} is above max ${v.max}`, path: ['min'] });
  }
}

const ContainsRule = z.strictObject({
  kind: z.literal('contains'),
  terms,
  /** 'any': at least one term appears; 'all': every term appears. */
  match: z.enum(['any', 'all']).default('any'),
  case_sensitive: caseSensitive,
  whole_word: z.boolean().default(false),
});

const NotContainsRule = z.strictObject({
  kind: z.literal('not_contains'),
  terms,
  /** 'any': fails if any term appears (the usual "contains none"); 'all': fails only if all appear. */
  match: z.enum(['any', 'all']).default('any'),
  case_sensitive: caseSensitive,
  whole_word: z.boolean().default(false),
});

const RegexRule = z
  .strictObject({
    kind: z.literal('regex'),
    pattern: nonEmpty(MAX_PATTERN_LENGTH),
    flags: z.string().max(4).default(''),
    expect: z.enum(['match', 'no_match']).default('match'),
    /**
     * Longer completions are unscorable for this criterion (never silently truncated). Counted in
     * UTF-16 code units, the regex engine's own measure of its work (an emoji counts 2), where a
     * length rule's "characters" are code points (an emoji counts 1).
     */
    max_input_chars: z.number().int().min(1).max(MAX_INPUT_CHARS_LIMIT).default(DEFAULT_MAX_INPUT_CHARS),
  })
  .superRefine((v, ctx) => {
    try {
      compileSafeRegex(v.pattern, v.flags);
    } catch (e) {
      if (!(e instanceof RegexRejected)) throw e;
      ctx.addIssue({ code: 'custom', message: e.message, path: [e.message.startsWith('flag ') ? 'flags' : 'pattern'] });
    }
  });

const LengthRule = z
  .strictObject({ kind: z.literal('length'), unit: z.enum(['words', 'characters', 'tokens']), min: bound, max: bound })
  .superRefine(checkBounds);

const CountRule = z
  .strictObject({ kind: z.literal('count'), unit: z.enum(['sentences', 'lines', 'bullets']), min: bound, max: bound })
  .superRefine(checkBounds);

const affix = {
  text: nonEmpty(1000),
  /** Ignore leading/trailing whitespace of the completion. */
  trim: z.boolean().default(true),
  case_sensitive: caseSensitive,
};
const StartsWithRule = z.strictObject({ kind: z.literal('starts_with'), ...affix });
const EndsWithRule = z.strictObject({ kind: z.literal('ends_with'), ...affix });

const JsonRule = z
  .strictObject({
    kind: z.literal('json'),
    schema: JsonShapeSchema.optional(),
    /** Accept the JSON wrapped in one markdown code fence (```json ... ```). */
    allow_code_fence: z.boolean().default(true),
  })
  .superRefine((v, ctx) => {
    if (v.schema && shapeDepth(v.schema) > MAX_SHAPE_DEPTH) {
      ctx.addIssue({ code: 'custom', message: `nests deeper than ${MAX_SHAPE_DEPTH} levels`, path: ['schema'] });
    }
  });

const AllCapsRule = z.strictObject({ kind: z.literal('all_caps') });
const NoCapsRule = z.strictObject({ kind: z.literal('no_caps') });

export const RuleSchema = z.discriminatedUnion('kind', [
  ContainsRule,
  NotContainsRule,
  RegexRule,
  LengthRule,
  StartsWithRule,
  EndsWithRule,
  CountRule,
  JsonRule,
  AllCapsRule,
  NoCapsRule,
]);

export type Rule = z.output<typeof RuleSchema>;
export type RuleKind = Rule['kind'];
export type RuleOf<K extends RuleKind> = Extract<Rule, { kind: K }>;

// ---- criteria and rubrics ----

interface CriterionBase {
  /** Unique in the rubric; [a-z0-9_-]. */
  id: string;
  text: string;
  /** Finite; negative = a pitfall (a behaviour to avoid: being met subtracts); 0 = tracked, not scored. */
  weight: number;
  tier: Tier;
  /**
   * A recall item (FORK's coverage, src/rubric/fork.ts): something the response must cover.
   * Only positive weights; absent = not one (stored only when true, so older rubrics keep their version).
   */
  recall?: true;
}
export interface RuleCriterion extends CriterionBase {
  rule: Rule;
}
export interface QuestionCriterion extends CriterionBase {
  judge_question: string;
  /** Ordinal answers, worst to best; answer i scores i / (n - 1). Default ["no", "yes"]. */
  choices: string[];
}
export type Criterion = RuleCriterion | QuestionCriterion;

export interface Rubric {
  name: string;
  /** A human label ("v2"); the content version is rubricVersion(). */
  version?: string;
  criteria: Criterion[];
}

export function isRuleCriterion(c: Criterion): c is RuleCriterion {
  return 'rule' in c;
}

const CriterionSchema = z
  .strictObject({
    id: nonEmpty(64).regex(/^[a-z0-9_-]+$/, 'must use only a-z, 0-9, "_" and "-"'),
    text: nonEmpty(2000),
    weight: z.number(),
    tier: z.enum(TIERS),
    rule: RuleSchema.optional(),
    judge_question: nonEmpty(2000).optional(),
    choices: z.array(nonEmpty(100)).min(2, 'needs at least 2 choices').max(10).optional(),
    recall: z.boolean().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.recall === true && !(c.weight > 0)) {
      ctx.addIssue({ code: 'custom', message: 'only a criterion with a positive weight can be a recall item (a pitfall is not something to cover)', path: ['recall'] });
    }
    if ((c.rule === undefined) === (c.judge_question === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'needs exactly one of "rule" or "judge_question"', path: [] });
    }
    if (c.choices && c.judge_question === undefined) {
      ctx.addIssue({ code: 'custom', message: 'applies only to a judge_question criterion', path: ['choices'] });
    }
    c.choices?.forEach((choice, i) => {
      if (c.choices!.indexOf(choice) !== i) ctx.addIssue({ code: 'custom', message: `duplicate choice "${choice}"`, path: ['choices', i] });
    });
  })
  .transform((c): Criterion => {
    const base = { id: c.id, text: c.text, weight: c.weight, tier: c.tier, ...(c.recall ? { recall: true as const } : {}) };
    if (c.rule) return { ...base, rule: c.rule };
    return { ...base, judge_question: c.judge_question!, choices: c.choices ?? [...DEFAULT_CHOICES] };
  });

const RubricSchema = z.strictObject({
  name: nonEmpty(200),
  version: nonEmpty(100).optional(),
  criteria: z.array(CriterionSchema).min(1, 'needs at least one criterion').max(MAX_CRITERIA),
});

// ---- parsing and error messages ----

/** zod's issue, rephrased for a rubric author (no zod wording; the path stays for placing it). */
function toIssue(issue: z.core.$ZodIssue, input: unknown): RubricIssue {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    return { path: formatPath([...path, issue.keys[0]]), message: `unknown field${issue.keys.length > 1 ? ` (also: ${issue.keys.slice(1).join(', ')})` : ''}` };
  }
  if (issue.code === 'invalid_union') {
    const { discriminator, options } = issue as unknown as { discriminator?: string; options?: unknown[] };
    if (discriminator && options) {
      const got = valueAt(input, path);
      const what = discriminator === 'kind' ? 'rule kind' : discriminator;
      const expected = options.map(String).join(', ');
      return {
        path: formatPath(path),
        message: got === undefined ? `missing (expected one of: ${expected})` : `unknown ${what} ${JSON.stringify(got)} (expected one of: ${expected})`,
      };
    }
  }
  return { path: formatPath(path), message: explainIssue(issue, input, fieldWord) };
}

/** Rubric-wide checks that need every criterion: unique ids, something to earn. */
function rubricIssues(rubric: Rubric): RubricIssue[] {
  const issues: RubricIssue[] = [];
  const first = new Map<string, number>();
  rubric.criteria.forEach((c, i) => {
    const j = first.get(c.id);
    if (j === undefined) first.set(c.id, i);
    else issues.push({ path: `criteria[${i}].id`, message: `duplicate id "${c.id}" (also used by criterion ${j + 1})` });
  });
  const positive = rubric.criteria.reduce((s, c) => s + Math.max(c.weight, 0), 0);
  if (!(positive > 0)) {
    issues.push({ path: 'criteria', message: 'total positive weight must be > 0 (negative weights are pitfalls; there is nothing to earn)' });
  } else if (!Number.isFinite(positive)) {
    issues.push({ path: 'criteria', message: 'total positive weight overflows' });
  }
  const work = regexWorkIssue(rubric);
  if (work) issues.push(work);
  return issues;
}

/** Worst-case regex work per response: every regex rule on a completion of its max_input_chars. */
export function rubricRegexWork(rubric: Rubric): { total: number; parts: { index: number; id: string; work: number }[] } {
  const parts: { index: number; id: string; work: number }[] = [];
  rubric.criteria.forEach((c, index) => {
    if (!isRuleCriterion(c) || c.rule.kind !== 'regex') return;
    parts.push({ index, id: c.id, work: regexWork(compileSafeRegex(c.rule.pattern, c.rule.flags), c.rule.max_input_chars) });
  });
  return { total: parts.reduce((s, p) => s + p.work, 0), parts };
}

/** A rubric whose regex rules could cost more than MAX_REGEX_WORK on one response is refused, naming the costliest. */
function regexWorkIssue(rubric: Rubric): RubricIssue | null {
  const { total, parts } = rubricRegexWork(rubric);
  if (total <= MAX_REGEX_WORK) return null;
  const costly = [...parts].sort((a, b) => b.work - a.work || a.index - b.index);
  const named = costly.slice(0, 3).map((p) => `criterion ${p.index + 1} ("${p.id}")`);
  const more = costly.length > 3 ? ` and ${costly.length - 3} more` : '';
  return {
    path: 'criteria',
    message:
      `the regex rules could cost ${total.toLocaleString('en-US')} units on one response ` +
      `(pattern size × max_input_chars, summed), above the limit of ${MAX_REGEX_WORK.toLocaleString('en-US')} (about a second per response). ` +
      `Costliest: ${named.join(', ')}${more}. Lower max_input_chars, simplify the patterns, or use fewer regex rules.`,
  };
}

/**
 * Validates a rubric (an object, or JSON text) and returns it typed, with defaults filled in.
 * Throws RubricError listing every problem as `path: message`.
 */
export function parseRubric(json: unknown): Rubric {
  let input = json;
  if (typeof json === 'string') {
    try {
      input = JSON.parse(json);
    } catch (e) {
      throw new RubricError([{ path: 'rubric', message: `not valid JSON: ${(e as Error).message}` }]);
    }
  }
  const parsed = RubricSchema.safeParse(input);
  if (!parsed.success) throw new RubricError(primaryIssues(parsed.error.issues).map((i) => toIssue(i, input)));
  const rubric: Rubric = parsed.data;
  const issues = rubricIssues(rubric);
  if (issues.length > 0) throw new RubricError(issues);
  return rubric;
}
