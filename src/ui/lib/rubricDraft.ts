// The rubric as the editor holds it: every criterion keeps both a rule and a judge question
// (switching between them loses nothing) and a stable uid for keyed lists. rubricJson() turns
// the draft into the rubric JSON that parseRubric validates; nothing here validates on its own.
import { DEFAULT_CHOICES, TIERS, type Tier } from '../../rubric';

export const RULE_KINDS = [
  { kind: 'contains', label: 'contains', help: 'Met when the response contains any (or all) of the terms.' },
  { kind: 'not_contains', label: 'does not contain', help: 'Met when none (or not all) of the terms appear.' },
  { kind: 'regex', label: 'matches a regex', help: 'A regular expression (linear-time engine; no backreferences or lookaround).' },
  { kind: 'length', label: 'length', help: 'Counts words, characters or tokens, within min and max.' },
  { kind: 'count', label: 'count', help: 'Counts sentences, lines or bullet points, within min and max.' },
  { kind: 'starts_with', label: 'starts with', help: 'The response starts with this text.' },
  { kind: 'ends_with', label: 'ends with', help: 'The response ends with this text.' },
  { kind: 'json', label: 'is JSON', help: 'The response parses as JSON, optionally of a given shape.' },
  { kind: 'all_caps', label: 'all capitals', help: 'Every cased letter is uppercase.' },
  { kind: 'no_caps', label: 'no capitals', help: 'No uppercase letter.' },
] as const;

export type RuleKindName = (typeof RULE_KINDS)[number]['kind'];

/** A rule's fields as edited (the shape of the schema's rule objects, loosely typed). */
export type RuleDraft = { kind: RuleKindName } & Record<string, unknown>;

export interface CriterionDraft {
  uid: number;
  id: string;
  text: string;
  weight: number;
  tier: Tier;
  mode: 'rule' | 'question';
  rule: RuleDraft;
  judge_question: string;
  choices: string[];
  /** FORK's recall item (src/rubric/fork.ts); kept only when true. */
  recall?: boolean;
}

export interface RubricDraft {
  name: string;
  version?: string;
  criteria: CriterionDraft[];
}

/** The schema's defaults for a kind's optional fields: filled in so every control shows a value. */
const SCHEMA_DEFAULTS: Partial<Record<RuleKindName, Record<string, unknown>>> = {
  contains: { match: 'any', case_sensitive: false, whole_word: false },
  not_contains: { match: 'any', case_sensitive: false, whole_word: false },
  regex: { flags: '', expect: 'match' },
  starts_with: { trim: true, case_sensitive: false },
  ends_with: { trim: true, case_sensitive: false },
  json: { allow_code_fence: true },
};

let nextUid = 1;
export const newUid = (): number => nextUid++;

/** The fields a fresh rule of this kind starts with; terms or text carry over from `previous`. */
export function defaultRule(kind: RuleKindName, previous?: RuleDraft): RuleDraft {
  const terms = Array.isArray(previous?.terms) ? (previous.terms as string[]) : typeof previous?.text === 'string' && previous.text ? [previous.text] : ['example'];
  const text = typeof previous?.text === 'string' ? previous.text : Array.isArray(previous?.terms) && typeof previous.terms[0] === 'string' ? (previous.terms[0] as string) : 'example';
  switch (kind) {
    case 'contains':
    case 'not_contains':
      return { kind, terms: [...terms], match: 'any', case_sensitive: false, whole_word: false };
    case 'regex':
      return { kind, pattern: '\\d+', flags: '', expect: 'match' };
    case 'length':
      return { kind, unit: 'words', max: 50 };
    case 'count':
      return { kind, unit: 'sentences', max: 3 };
    case 'starts_with':
    case 'ends_with':
      return { kind, text, trim: true, case_sensitive: false };
    case 'json':
      return { kind, allow_code_fence: true };
    case 'all_caps':
    case 'no_caps':
      return { kind };
  }
}

function record(x: unknown): Record<string, unknown> {
  return x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

const isTier = (t: unknown): t is Tier => (TIERS as readonly unknown[]).includes(t);
const isKind = (k: unknown): k is RuleKindName => RULE_KINDS.some((r) => r.kind === k);

/** Editor state from rubric JSON (a preset or a link); unknown shapes get editable defaults. */
export function draftFromRubric(json: unknown): RubricDraft {
  const r = record(json);
  const criteria = Array.isArray(r.criteria) ? r.criteria : [];
  return {
    name: typeof r.name === 'string' ? r.name : 'My rubric',
    ...(typeof r.version === 'string' ? { version: r.version } : {}),
    criteria: criteria.map((raw) => {
      const c = record(raw);
      const rule = record(c.rule);
      const question = typeof c.judge_question === 'string';
      return {
        uid: newUid(),
        id: typeof c.id === 'string' ? c.id : '',
        text: typeof c.text === 'string' ? c.text : '',
        weight: typeof c.weight === 'number' ? c.weight : 1,
        tier: isTier(c.tier) ? c.tier : 'important',
        mode: question ? 'question' : 'rule',
        rule: isKind(rule.kind) ? ({ ...SCHEMA_DEFAULTS[rule.kind], ...structuredClone(rule) } as RuleDraft) : defaultRule('contains'),
        judge_question: question ? (c.judge_question as string) : '',
        choices: Array.isArray(c.choices) ? c.choices.map(String) : [...DEFAULT_CHOICES],
        ...(c.recall === true ? { recall: true } : {}),
      };
    }),
  };
}

/** A criterion as rubric JSON (only the chosen mode's fields). */
export function criterionJson(c: CriterionDraft): Record<string, unknown> {
  const base = { id: c.id, text: c.text, weight: c.weight, tier: c.tier, ...(c.recall ? { recall: true } : {}) };
  return c.mode === 'rule' ? { ...base, rule: { ...c.rule } } : { ...base, judge_question: c.judge_question, choices: [...c.choices] };
}

export function rubricJson(d: RubricDraft): Record<string, unknown> {
  return { name: d.name, ...(d.version ? { version: d.version } : {}), criteria: d.criteria.map(criterionJson) };
}

/** A new criterion with an id not yet used in the rubric. */
export function newCriterion(existing: readonly CriterionDraft[]): CriterionDraft {
  const used = new Set(existing.map((c) => c.id));
  let n = existing.length + 1;
  while (used.has(`criterion_${n}`)) n++;
  return {
    uid: newUid(),
    id: `criterion_${n}`,
    text: 'Describe what a good response does',
    weight: 1,
    tier: 'important',
    mode: 'rule',
    rule: defaultRule('contains'),
    judge_question: 'Does the response answer the question?',
    choices: [...DEFAULT_CHOICES],
  };
}

/** Moves item i by delta (−1 up, +1 down) within the list; returns a new list. */
export function moved<T>(list: readonly T[], i: number, delta: number): T[] {
  const j = i + delta;
  if (j < 0 || j >= list.length) return [...list];
  const out = [...list];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}
