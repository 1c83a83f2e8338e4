// Rubric generation and refinement with a model (the rubric lab, issue 12). Pure: every function
// takes a `complete` callback (messages in, the model's text out), so any model can drive it —
// the engine's instruct model, or a remote OpenAI-compatible endpoint (RemoteJudge.complete).
//   - draftRubric: a rubric from the prompt alone (the default: criteria written before seeing
//     any response avoid response-induced bias, ReVeR #29, RubricBench #95);
//   - contrastiveRubric: criteria that separate good responses from bad ones (OpenRubrics' CRG
//     #22: hard rules and principles from preferred vs rejected responses);
//   - decomposeCriterion: split a compound criterion into atomic checks (RRD #97, #27);
//   - sampleRubrics + mergeRubrics (generateMerge.ts): self-consistency over sampled rubrics (#61).
// The model's reply is parsed strictly (generateParse.ts): malformed output is a GenerationError
// naming the problem, never a partial rubric.
import { defuseTags } from './judges/modelJudgePrompt';
import { GenerationError, parseGeneratedParts, parseGeneratedRubric } from './generateParse';
import { MAX_CRITERIA, type Criterion, type Rubric } from './schema';

export { GenerationError } from './generateParse';

export interface GenerationMessages {
  system: string;
  user: string;
}

/** The model: one chat exchange, its reply text. */
export type Complete = (messages: GenerationMessages, options?: { signal?: AbortSignal }) => Promise<string>;

export const GENERATION_SYSTEM_PROMPT =
  'You write grading rubrics for responses to a prompt. You reply with one JSON object and nothing else: no prose, no code fence.';

/** The criterion format every generation prompt asks for (the rubric schema's judge-question form). */
const FORMAT = [
  'Reply with a JSON object of this form:',
  '{"criteria": [{"id": "cites_source", "text": "Cites at least one source for its main claim", "weight": 2, "tier": "important", "judge_question": "Does the response cite a source for its main claim?"}]}',
  'Rules for each criterion:',
  '- "id": unique, lower case letters, digits, "_" or "-" only.',
  '- "text": one atomic check (never two checks joined by "and"/"or"), about something visible in the response.',
  '- "judge_question": a yes/no question a grader answers from the response alone; "yes" means the criterion is met.',
  '- "weight": a number; 3 for what matters most, 1 for details; a negative weight marks a pitfall (a behaviour to avoid, phrased as the bad behaviour, e.g. "States a false fact", weight -2).',
  '- "tier": "essential", "important" or "optional".',
].join('\n');

function block(tag: 'prompt' | 'response' | 'criterion', text: string): string {
  return `<${tag}>\n${defuseTags(text)}\n</${tag}>`;
}

function checkCount(maxCriteria: number): number {
  if (!(Number.isInteger(maxCriteria) && maxCriteria >= 1 && maxCriteria <= MAX_CRITERIA)) {
    throw new RangeError(`maxCriteria must be a whole number from 1 to ${MAX_CRITERIA}, got ${maxCriteria}`);
  }
  return maxCriteria;
}

export interface DraftOptions {
  /** At most this many criteria (asked of the model, and enforced). Default 6. */
  maxCriteria?: number;
  /** The rubric's name when the model gives none. */
  name?: string;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_GENERATED = 6;

/** The messages asking for a rubric from the prompt alone. */
export function draftMessages(prompt: string, maxCriteria = DEFAULT_MAX_GENERATED): GenerationMessages {
  checkCount(maxCriteria);
  return {
    system: GENERATION_SYSTEM_PROMPT,
    user: [
      `Write a rubric of at most ${maxCriteria} criteria for grading responses to this prompt. Base it on the prompt alone: what a complete, correct answer must contain, and the likely mistakes.`,
      block('prompt', prompt),
      FORMAT,
    ].join('\n\n'),
  };
}

/** The messages asking for criteria that separate the good responses from the bad ones. */
export function contrastiveMessages(prompt: string, good: readonly string[], bad: readonly string[], maxCriteria = DEFAULT_MAX_GENERATED): GenerationMessages {
  checkCount(maxCriteria);
  if (good.length === 0 || bad.length === 0) throw new RangeError('contrastive generation needs at least one good and one bad response');
  const list = (label: string, xs: readonly string[]) => xs.map((x, i) => `${label} ${i + 1}:\n${block('response', x)}`).join('\n\n');
  return {
    system: GENERATION_SYSTEM_PROMPT,
    user: [
      `Below are a prompt, responses judged good and responses judged bad. Write a rubric of at most ${maxCriteria} criteria that the good responses meet and the bad ones do not: explicit constraints (hard rules) and the qualities that make the difference (principles). Each criterion must be about the prompt's task, in general terms, so it can grade new responses: never mention "response 1" or quote a response.`,
      block('prompt', prompt),
      list('Good response', good),
      list('Bad response', bad),
      FORMAT,
    ].join('\n\n'),
  };
}

/** The messages asking to split one criterion into atomic checks. */
export function decomposeMessages(criterion: Criterion, prompt?: string): GenerationMessages {
  const question = 'judge_question' in criterion ? `\nIts question: ${criterion.judge_question}` : '';
  return {
    system: GENERATION_SYSTEM_PROMPT,
    user: [
      'This grading criterion checks more than one thing. Split it into 2 to 5 atomic criteria, each checking exactly one thing, that together check what it checks (nothing more).',
      block('criterion', `${criterion.text}${question}`),
      ...(prompt ? ['The prompt it grades responses to:', block('prompt', prompt)] : []),
      'Reply with a JSON object of this form:',
      '{"criteria": [{"id": "states_cause", "text": "States the cause", "judge_question": "Does the response state the cause?"}]}',
      'Each "id" unique (lower case letters, digits, "_" or "-"); each "judge_question" a yes/no question answered from the response alone. No weights: the parts share the criterion\'s weight.',
    ].join('\n\n'),
  };
}

async function ask(complete: Complete, messages: GenerationMessages, signal?: AbortSignal): Promise<string> {
  const text = await complete(messages, { signal });
  if (typeof text !== 'string') throw new GenerationError(['the model gave no text'], String(text));
  return text;
}

function capped(rubric: Rubric, maxCriteria: number, output: string): Rubric {
  if (rubric.criteria.length > maxCriteria) {
    throw new GenerationError([`the model wrote ${rubric.criteria.length} criteria, more than the ${maxCriteria} asked for`], output);
  }
  return rubric;
}

/** A rubric from the prompt alone. Throws GenerationError on malformed output. */
export async function draftRubric(complete: Complete, prompt: string, options: DraftOptions = {}): Promise<Rubric> {
  const max = options.maxCriteria ?? DEFAULT_MAX_GENERATED;
  const output = await ask(complete, draftMessages(prompt, max), options.signal);
  return capped(parseGeneratedRubric(output, options.name ?? 'drafted rubric'), max, output);
}

/** A rubric contrasting good and bad responses (user-picked, or a group's best and worst). */
export async function contrastiveRubric(complete: Complete, prompt: string, good: readonly string[], bad: readonly string[], options: DraftOptions = {}): Promise<Rubric> {
  const max = options.maxCriteria ?? DEFAULT_MAX_GENERATED;
  const output = await ask(complete, contrastiveMessages(prompt, good, bad, max), options.signal);
  return capped(parseGeneratedRubric(output, options.name ?? 'contrastive rubric'), max, output);
}

/**
 * Criterion `index` of `rubric` split into parts by the model: the rubric with the criterion
 * replaced by its parts (sharing its weight and tier), ids unique within the rubric (a part whose
 * id is taken gets a suffix). Throws GenerationError on malformed output.
 */
export async function decomposeCriterion(complete: Complete, rubric: Rubric, index: number, options: { prompt?: string; signal?: AbortSignal } = {}): Promise<Rubric> {
  const whole = rubric.criteria[index];
  if (!whole) throw new RangeError(`there is no criterion ${index + 1}`);
  const output = await ask(complete, decomposeMessages(whole, options.prompt), options.signal);
  const parts = parseGeneratedParts(output, whole);
  if (rubric.criteria.length - 1 + parts.length > MAX_CRITERIA) {
    throw new GenerationError([`the rubric would have more than ${MAX_CRITERIA} criteria`], output);
  }
  const used = new Set(rubric.criteria.filter((_, k) => k !== index).map((c) => c.id));
  const renamed = parts.map((p) => {
    let id = p.id;
    for (let n = 2; used.has(id); n++) id = `${p.id.slice(0, 60)}_${n}`;
    used.add(id);
    return { ...p, id };
  });
  return { ...rubric, criteria: [...rubric.criteria.slice(0, index), ...renamed, ...rubric.criteria.slice(index + 1)] };
}
