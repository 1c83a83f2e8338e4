// The model-driven proposals of online rubric evolution (src/rubric/evolve.ts): RARE's flaw checks
// for a saturated criterion (#10) and OnlineRubrics' criteria elicited from current-vs-reference
// comparisons (#30). The model's reply goes through the same strict parser as rubric generation
// (generateParse.ts): malformed output throws GenerationError, which evolveRubric records as
// 'unchanged' with the reason; a partial set of criteria is never used.
import { defuseTags } from './judges/modelJudgePrompt';
import { GENERATION_SYSTEM_PROMPT, type Complete, type GenerationMessages } from './generate';
import { RubricError } from './errors';
import { GenerationError, extractJson } from './generateParse';
import { catalogueRareProposal } from './flawCatalogue';
import { measureRubric } from './measure';
import { MAX_CRITERIA, parseRubric, type Criterion, type Rubric } from './schema';
import type { EvolutionRollout, NoProposal, Proposal } from './evolve';

/** Responses shown to the model per proposal (a prompt's worth: enough to see a pattern, short enough for a small context). */
export const MAX_SHOWN_RESPONSES = 4;

const FORMAT = [
  'Reply with a JSON object of this form:',
  '{"criteria": [{"id": "repeats_question", "text": "Repeats the question instead of answering", "weight": -1, "tier": "important", "judge_question": "Does the response repeat the question instead of answering it?"}]}',
  'Each "id" unique, lower case letters, digits, "_" or "-"; each "text" one atomic check about something visible in the response; each "judge_question" a yes/no question answered from the response alone, "yes" meaning the criterion is met; "tier" one of "essential", "important", "optional".',
].join('\n');

function block(tag: 'prompt' | 'response' | 'criterion' | 'rubric', text: string): string {
  return `<${tag}>\n${defuseTags(text)}\n</${tag}>`;
}

/** Ids in `criteria` made unique against `taken` (a suffix _2, _3…), in order. */
export function uniqueIds(criteria: readonly Criterion[], taken: Iterable<string>): Criterion[] {
  const used = new Set(taken);
  return criteria.map((c) => {
    let id = c.id;
    for (let n = 2; used.has(id); n++) id = `${c.id.slice(0, 60)}_${n}`;
    used.add(id);
    return { ...c, id };
  });
}

/** The messages asking for flaw checks that responses meeting `criterion` may still fail. */
export function rareMessages(criterion: Criterion, prompt: string, responses: readonly string[], maxNew: number): GenerationMessages {
  return {
    system: GENERATION_SYSTEM_PROMPT,
    user: [
      `Every response below already meets this grading criterion, so it no longer tells better responses from worse ones. Write at most ${maxNew} flaw checks to replace it: flaws that some of these responses have and others do not, each phrased as the bad behaviour with a negative weight (e.g. "States a false fact", weight -2).`,
      block('criterion', criterion.text),
      block('prompt', prompt),
      responses.map((r, i) => `Response ${i + 1}:\n${block('response', r)}`).join('\n\n'),
      FORMAT,
    ].join('\n\n'),
  };
}

/** The messages asking for criteria from current-policy vs reference-policy responses to one prompt. */
export function onlineRubricsMessages(rubric: Rubric, prompt: string, current: readonly string[], reference: readonly string[], maxNew: number): GenerationMessages {
  const list = (label: string, xs: readonly string[]) => xs.map((x, i) => `${label} ${i + 1}:\n${block('response', x)}`).join('\n\n');
  return {
    system: GENERATION_SYSTEM_PROMPT,
    user: [
      `A model is being trained with the rubric below. Compare its current responses with the responses it gave at the start of training, to the same prompt. Write at most ${maxNew} new criteria the rubric is missing: qualities where the two sets differ and that matter for the task, or flaws that have appeared during training (repetition, padding, gaming the rubric's wording). A flaw gets a negative weight. Do not repeat a criterion the rubric already has; write criteria in general terms that grade new responses (never "response 1").`,
      block('rubric', rubric.criteria.map((c) => `- ${c.id} (weight ${c.weight}): ${c.text}`).join('\n')),
      block('prompt', prompt),
      list('Current response', current),
      list('Starting response', reference),
      FORMAT,
    ].join('\n\n'),
  };
}

async function ask(complete: Complete, messages: GenerationMessages, signal?: AbortSignal): Promise<string> {
  const text = await complete(messages, { signal });
  if (typeof text !== 'string') throw new GenerationError(['the model gave no text'], String(text));
  return text;
}

/**
 * The model's criteria, parsed strictly (generateParse's JSON extraction, the rubric schema) and
 * capped at maxNew (more is an error, as in generation). Flaw checks alone have no positive
 * weight, which the schema refuses for a whole rubric: the criteria are checked with |weight|
 * and get their signs back, as a decomposition's parts are (parseGeneratedParts).
 */
export function parseNewCriteria(output: string, maxNew: number): Criterion[] {
  const json = extractJson(output);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    throw new GenerationError([`not valid JSON: ${(e as Error).message}`], output);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('criteria' in value)) {
    throw new GenerationError(['expected a JSON object with a "criteria" list'], output);
  }
  const { criteria } = value as { criteria: unknown };
  if (!Array.isArray(criteria)) throw new GenerationError(['"criteria" is not a list'], output);
  if (criteria.length === 0) throw new GenerationError(['the "criteria" list is empty'], output);
  if (criteria.length > maxNew) throw new GenerationError([`the model wrote ${criteria.length} criteria, more than the ${maxNew} asked for`], output);
  const signs = criteria.map((c) => (typeof c === 'object' && c !== null && typeof (c as { weight?: unknown }).weight === 'number' ? Math.sign((c as { weight: number }).weight) : 1));
  const unsigned = criteria.map((c, i) => (signs[i] < 0 ? { ...(c as object), weight: -(c as { weight: number }).weight } : c));
  try {
    return parseRubric({ name: 'proposed criteria', criteria: unsigned }).criteria.map((c, i) => (signs[i] < 0 ? { ...c, weight: -c.weight } : c));
  } catch (e) {
    if (e instanceof RubricError) throw new GenerationError(e.issues.map((i) => `${i.path}: ${i.message}`), output);
    throw e;
  }
}

/** Who writes rare's flaw checks: the judge's model (`complete`), or the rule catalogue (flawCatalogue.ts, no model). */
export const EVOLUTION_WRITERS = ['judge', 'catalogue'] as const;
export type EvolutionWriter = (typeof EVOLUTION_WRITERS)[number];

export interface ProposeOptions {
  complete?: Complete;
  /** rare's writer (default 'judge'). */
  writer?: EvolutionWriter;
  maxNew: number;
  threshold?: number;
  signal?: AbortSignal;
}

const NO_MODEL = (what: string) => `${what} needs a judge that writes text to propose criteria (a remote endpoint, or self/model); this run has none (rules only), so the rubric stays`;

/**
 * RARE: the saturated criterion with the largest weight (met by every scored rollout of the
 * recent steps) is replaced by flaw checks: with writer 'catalogue', the rule catalogue's most
 * discriminative check on the window (flawCatalogue.ts, no model); otherwise the model's (pitfalls: negative weights; a positive one is
 * malformed output). The model sees the prompt of the latest group and up to
 * MAX_SHOWN_RESPONSES of its rollouts.
 */
export async function rareProposal(rubric: Rubric, snapshot: readonly EvolutionRollout[], options: ProposeOptions): Promise<Proposal | NoProposal> {
  const m = measureRubric(rubric, snapshot.map((r) => ({ step: r.step, group: r.group, scores: r.scores })), { threshold: options.threshold });
  const saturated = rubric.criteria
    .map((c, k) => ({ c, k }))
    .filter(({ c, k }) => c.weight > 0 && m.criteria[k].scored > 0 && m.criteria[k].metRate === 1)
    .sort((a, b) => b.c.weight - a.c.weight);
  if (saturated.length === 0) return { none: 'no criterion is met by every rollout of the recent steps: nothing to replace' };
  if (options.writer === 'catalogue') return catalogueRareProposal(rubric, saturated[0].c, snapshot, options.threshold);
  if (!options.complete) return { none: NO_MODEL('rare') };
  const { c: target } = saturated[0];
  const last = snapshot[snapshot.length - 1];
  const responses = snapshot.filter((r) => r.step === last.step && r.group === last.group).map((r) => r.completion).slice(0, MAX_SHOWN_RESPONSES);
  const output = await ask(options.complete, rareMessages(target, last.prompt, responses, options.maxNew), options.signal);
  const flaws = parseNewCriteria(output, options.maxNew);
  const positive = flaws.filter((c) => !(c.weight < 0));
  if (positive.length) throw new GenerationError(positive.map((c) => `"${c.id}" has weight ${c.weight}: a flaw check is a pitfall (negative weight)`), output);
  const kept = rubric.criteria.filter((c) => c.id !== target.id);
  const added = uniqueIds(flaws, kept.map((c) => c.id));
  return {
    rubric: { ...rubric, criteria: [...kept, ...added] },
    removed: [target.id],
    added: added.map((c) => c.id),
    reason: `"${target.id}" is met by every rollout of the recent steps: replaced by flaw checks ${added.map((c) => c.id).join(', ')}`,
  };
}

/**
 * OnlineRubrics: for the latest step's first prompt that the starting policy also answered (the
 * run's step 0), the model compares up to MAX_SHOWN_RESPONSES current and starting responses and
 * writes criteria the rubric lacks; they are added to it.
 */
export async function onlineRubricsProposal(
  rubric: Rubric,
  latest: readonly EvolutionRollout[],
  reference: Record<string, string[]> | null,
  options: ProposeOptions,
): Promise<Proposal | NoProposal> {
  if (!reference) return { none: "the starting policy's rollouts are not kept (the run resumed after step 0): online_rubrics has nothing to compare with" };
  const shared = latest.find((r) => Object.hasOwn(reference, r.prompt));
  if (!shared) return { none: 'no prompt of the latest step was answered at step 0: nothing to compare (online_rubrics compares responses to the same prompt)' };
  if (!options.complete) return { none: NO_MODEL('online_rubrics') };
  if (rubric.criteria.length >= MAX_CRITERIA) return { none: `the rubric has ${MAX_CRITERIA} criteria already, the most a rubric may have` };
  const maxNew = Math.min(options.maxNew, MAX_CRITERIA - rubric.criteria.length);
  const current = latest.filter((r) => r.prompt === shared.prompt).map((r) => r.completion).slice(0, MAX_SHOWN_RESPONSES);
  const output = await ask(options.complete, onlineRubricsMessages(rubric, shared.prompt, current, reference[shared.prompt].slice(0, MAX_SHOWN_RESPONSES), maxNew), options.signal);
  const added = uniqueIds(parseNewCriteria(output, maxNew), rubric.criteria.map((c) => c.id));
  return {
    rubric: { ...rubric, criteria: [...rubric.criteria, ...added] },
    removed: [],
    added: added.map((c) => c.id),
    reason: `elicited from current vs starting responses to one prompt: ${added.map((c) => c.id).join(', ')}`,
  };
}
