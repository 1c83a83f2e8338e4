// Where an experiment problem is, in the page's words: "Prompt 4", "Setting num_generations",
// "Criterion 3 (id "tone"), weight", "Judge model". Used by the builder's problem list and by a
// share link's refusal, so both say the same thing about the same field.
import { RubricError } from '../rubric';
import { fieldWord, parsePath, rubricPathLabel } from '../rubric/issueLabel';
import { GrpoConfigError } from './config';
import { ExperimentError, HeldOutRubricError } from './experiment';

const JUDGE_WORDS: Record<string, string> = {
  kind: 'kind',
  model: 'model',
  url: 'address',
  concurrency: 'concurrency',
  max_attempts: 'attempts',
  timeout_ms: 'timeout',
  temperature: 'temperature',
  max_tokens: 'max tokens',
};

/** A path inside an experiment ("prompts.3", ["config", "top_k"]) as the page labels it. */
export function experimentPathLabel(path: string | readonly (string | number)[], experiment: unknown): string {
  const parts = typeof path === 'string' ? parsePath(path) : [...path];
  const e = (experiment !== null && typeof experiment === 'object' ? experiment : {}) as Record<string, unknown>;
  const [head, ...rest] = parts;
  switch (head) {
    case undefined:
      return 'Experiment';
    case 'model':
      return 'Model';
    case 'prompts':
      return typeof rest[0] === 'number' ? `Prompt ${rest[0] + 1}` : 'Prompts';
    case 'rubric':
      return rubricPathLabel(rest, e.rubric, 'Rubric');
    case 'held_out_rubric':
      return rubricPathLabel(rest, e.held_out_rubric, 'Held-out rubric');
    case 'config':
      return rest.length ? `Setting ${rest.join('.')}` : 'Settings';
    case 'judge':
      return rest.length ? `Judge ${rest.map((p) => (typeof p === 'number' ? `item ${p + 1}` : (JUDGE_WORDS[p] ?? p))).join(', ')}` : 'Judge';
    case 'judge_bias':
      return rest.length ? `Judge bias ${rest.map((p) => (typeof p === 'number' ? `item ${p + 1}` : p.replace(/_/g, ' '))).join(', ')}` : 'Judge bias';
    default:
      return `Field "${typeof head === 'number' ? head : fieldWord(head)}"`;
  }
}

/**
 * What parseExperiment threw, one line per problem, each naming its field as the page does.
 * Returns null for an error that is not a validation error (a bug: let it surface).
 */
export function experimentProblems(e: unknown, experiment: unknown): string[] | null {
  const input = (experiment !== null && typeof experiment === 'object' ? experiment : {}) as Record<string, unknown>;
  if (e instanceof ExperimentError) return e.issues.map((i) => `${experimentPathLabel(i.path, input)}: ${i.message}`);
  if (e instanceof GrpoConfigError) return e.issues.map((i) => `${experimentPathLabel(i.path === 'config' ? ['config'] : ['config', ...i.path.split('.')], input)}: ${i.message}`);
  if (e instanceof RubricError) {
    const area = e instanceof HeldOutRubricError ? 'held_out_rubric' : 'rubric';
    return e.issues.map((i) => `${experimentPathLabel([area, ...(i.path === 'rubric' ? [] : parsePath(i.path))], input)}: ${i.message}`);
  }
  return null;
}
