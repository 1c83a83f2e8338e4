// Where a rubric problem is, as the page shows it: "Criterion 3 (id "tone"), rule terms" rather
// than "criteria[2].rule.terms". Criteria are numbered from 1, as in the builder.

/** The builder's words for a criterion's and a rule's fields (their JSON names otherwise). */
const FIELD_WORDS: Record<string, string> = {
  id: 'id',
  text: 'text',
  weight: 'weight',
  tier: 'tier',
  rule: 'rule',
  judge_question: 'judge question',
  choices: 'answers',
  recall: 'recall item',
  kind: 'kind',
  terms: 'terms',
  match: 'match',
  case_sensitive: 'case sensitive',
  whole_word: 'whole words',
  pattern: 'pattern',
  flags: 'flags',
  expect: '"met when"',
  max_input_chars: 'longest input (max_input_chars)',
  unit: 'unit',
  min: 'min',
  max: 'max',
  trim: 'ignore surrounding spaces',
  allow_code_fence: 'code fence',
  schema: 'shape',
  name: 'name',
  version: 'version',
};

/** A JSON field name as the builder words it. */
export const fieldWord = (key: string): string => FIELD_WORDS[key] ?? key;

/** "criteria[2].rule.terms[1]" or "prompts.3" → ["criteria", 2, "rule", "terms", 1], ["prompts", 3]. */
export function parsePath(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) parts.push(m[2] !== undefined ? Number(m[2]) : /^\d+$/.test(m[1]) ? Number(m[1]) : m[1]);
  return parts;
}

/** Criterion n (1-based) with its id when the input has a usable one. */
export function criterionLabel(index: number, rubricInput: unknown): string {
  const criteria = (rubricInput as { criteria?: unknown } | null)?.criteria;
  const c = Array.isArray(criteria) ? (criteria[index] as { id?: unknown } | undefined) : undefined;
  const id = c && typeof c === 'object' && typeof c.id === 'string' && c.id !== '' && c.id.length <= 64 ? c.id : null;
  return `Criterion ${index + 1}${id === null ? '' : ` (id "${id}")`}`;
}

/**
 * A rubric path as the page labels it. `whole` names the rubric itself ("Rubric", "Held-out
 * rubric"); `rubricInput` supplies criterion ids.
 */
export function rubricPathLabel(path: string | readonly (string | number)[], rubricInput: unknown, whole = 'Rubric'): string {
  const parts = typeof path === 'string' ? (path === 'rubric' ? [] : parsePath(path)) : [...path];
  if (parts.length === 0) return whole;
  if (parts[0] !== 'criteria') return `${whole} ${parts.map((p) => (typeof p === 'number' ? `item ${p + 1}` : fieldWord(p))).join(', ')}`;
  if (typeof parts[1] !== 'number') return `${whole} criteria`;
  const head = criterionLabel(parts[1], rubricInput);
  const rest = parts.slice(2);
  if (rest.length === 0) return head;
  const words: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const p = rest[i];
    if (typeof p === 'number') words.push(`item ${p + 1}`);
    else if (p === 'rule' && typeof rest[i + 1] === 'string') words.push(`rule ${fieldWord(rest[++i] as string)}`);
    else if (p === 'properties' && typeof rest[i + 1] === 'string') words.push(`property "${rest[++i]}"`);
    else words.push(fieldWord(p));
  }
  return `${head}, ${words.join(', ')}`;
}
