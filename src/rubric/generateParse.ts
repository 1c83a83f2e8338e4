// Strict parsing of a model's rubric output (rubric generation, src/rubric/generate.ts). The
// model is asked for one JSON object; what it writes is taken only when it is exactly that:
//   - a <think>…</think> block is dropped (reasoning models write one first);
//   - the JSON is the whole reply, the body of one ```json fence, or one object with prose
//     around it ("Here is the rubric: {…}"); two objects, an object that never closes
//     (truncated output) or invalid JSON is an error saying which;
//   - the object goes through the rubric schema (parseRubric): a missing field, a duplicate id, an
//     unknown rule kind… is an error listing every problem — never a partial rubric with the bad
//     criteria left out.
import { RubricError } from './errors';
import { parseRubric, type Criterion, type Rubric } from './schema';

/** A model's output that is not a valid rubric: `problems` says each thing wrong, in the page's words. */
export class GenerationError extends Error {
  readonly problems: readonly string[];
  /** The model's reply as received (shown as text, never HTML). */
  readonly output: string;
  constructor(problems: readonly string[], output: string) {
    super(`The model's rubric was not used: ${problems.join('; ')}`);
    this.name = 'GenerationError';
    this.problems = problems;
    this.output = output;
  }
}

const THINK = /<think>[\s\S]*?<\/think>/gi;
const FENCE = /```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```/g;

/**
 * The one JSON object (or array) starting at `start`: its end index (exclusive), or -1 when the
 * text ends before it closes. Brackets inside strings do not count.
 */
function closingIndex(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The JSON text of a reply: see the header. Throws GenerationError naming what is wrong. */
export function extractJson(output: string): string {
  const text = output.replace(THINK, '').trim();
  if (text === '') throw new GenerationError(['the model wrote nothing (an empty reply)'], output);
  if (/<think>/i.test(text)) throw new GenerationError(['the reply ends inside its <think> block: it was cut off before any rubric (allow more tokens)'], output);
  const fences = [...text.matchAll(FENCE)];
  if (fences.length > 1) throw new GenerationError([`the reply has ${fences.length} code blocks: expected one JSON object`], output);
  const body = fences.length === 1 ? fences[0][1].trim() : text;
  const start = body.search(/[{[]/);
  if (start < 0) throw new GenerationError(['the reply has no JSON object (expected {"criteria": [...]})'], output);
  const end = closingIndex(body, start);
  if (end < 0) throw new GenerationError(['the JSON is cut off before it closes (the reply was truncated: allow more tokens)'], output);
  if (/[{[]/.test(body.slice(end))) throw new GenerationError(['the reply has more than one JSON value: expected exactly one object'], output);
  return body.slice(start, end);
}

function parseJson(output: string): unknown {
  const json = extractJson(output);
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new GenerationError([`not valid JSON: ${(e as Error).message}`], output);
  }
}

function asRubricError(e: unknown, output: string): never {
  if (e instanceof RubricError) throw new GenerationError(e.issues.map((i) => `${i.path}: ${i.message}`), output);
  throw e;
}

/**
 * A whole rubric from a model's reply: {"criteria": [...]} (a "name" in it is kept, else `name`
 * is used). Throws GenerationError listing every problem.
 */
export function parseGeneratedRubric(output: string, name: string): Rubric {
  const value = parseJson(output);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GenerationError([`expected a JSON object with "criteria", got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'null' : `a ${typeof value}`}`], output);
  }
  const object = value as Record<string, unknown>;
  if (!('criteria' in object)) throw new GenerationError(['the object has no "criteria" list'], output);
  try {
    return parseRubric({ ...object, name: typeof object.name === 'string' && object.name.trim() !== '' ? object.name : name });
  } catch (e) {
    return asRubricError(e, output);
  }
}

/**
 * The parts of a decomposed criterion: {"criteria": [{id, text, judge_question | rule}, ...]}.
 * The parts share `whole`'s weight equally and take its tier (a weight or tier the model wrote is
 * replaced); each part is checked by the rubric schema, ids unique. At least 2 parts.
 */
export function parseGeneratedParts(output: string, whole: Criterion): Criterion[] {
  const value = parseJson(output);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('criteria' in value)) {
    throw new GenerationError(['expected a JSON object with a "criteria" list'], output);
  }
  const { criteria } = value as { criteria: unknown };
  if (!Array.isArray(criteria)) throw new GenerationError(['"criteria" is not a list'], output);
  if (criteria.length < 2) throw new GenerationError([`a decomposition needs at least 2 parts, got ${criteria.length}`], output);
  // A tracked-only whole (weight 0) gives tracked-only parts; the schema sees weight 1 each.
  const share = (whole.weight === 0 ? 1 : Math.abs(whole.weight)) / criteria.length;
  const filled = criteria.map((c) => (typeof c === 'object' && c !== null && !Array.isArray(c) ? { ...c, weight: share, tier: whole.tier } : c));
  try {
    // Parsed as a rubric (with positive weights) so every part and the ids' uniqueness are checked
    // the usual way; a pitfall's parts are pitfalls again.
    const sign = Math.sign(whole.weight);
    return parseRubric({ name: 'parts', criteria: filled }).criteria.map((c) => ({ ...c, weight: sign === 0 ? 0 : sign * c.weight }));
  } catch (e) {
    return asRubricError(e, output);
  }
}
