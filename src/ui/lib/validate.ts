// Checks the experiment being edited with the same parsers the trainer uses (parseRubric,
// parseGrpoConfig, parseExperiment), collecting every problem so the builder can show each next
// to its field and keep Train disabled while any remains.
import { GrpoConfigError, parseGrpoConfig, type GrpoConfig } from '../../rl/config';
import { ExperimentError, HeldOutRubricError, parseExperiment } from '../../rl/experiment';
import { experimentPathLabel } from '../../rl/issueLabels';
import { parseRubric, RubricError, type Rubric } from '../../rubric';
import { hubIdProblem } from './modelChoice';

export type IssueArea = 'model' | 'prompts' | 'rubric' | 'held_out_rubric' | 'judge' | 'config' | 'experiment';

export interface Issue {
  area: IssueArea;
  /** Inside the area: "criteria[1].rule.terms", "generation_batch_size", "" for the whole area. */
  path: string;
  message: string;
  /** Where, as the page labels it: "Criterion 2 (id "tone"), rule terms", "Setting top_k", "Prompt 4". */
  label?: string;
}

export interface Validation {
  issues: Issue[];
  rubric: Rubric | null;
  config: GrpoConfig | null;
  /** The experiment exactly as it will be sent to the trainer, when there are no issues. */
  experiment: Record<string, unknown> | null;
}

const AREAS: readonly IssueArea[] = ['model', 'prompts', 'rubric', 'held_out_rubric', 'judge', 'config'];

/** An ExperimentError issue (["prompts", 3]) in the builder's terms: area "prompts", path "3". */
function experimentIssue(path: (string | number)[], message: string): Issue {
  const [head, ...rest] = path;
  const area = typeof head === 'string' && (AREAS as readonly string[]).includes(head) ? (head as IssueArea) : 'experiment';
  const inner = area === 'experiment' ? path : rest;
  return { area, path: inner.map(String).join('.'), message };
}

/** The page's label for an issue (criteria by number and id, settings by name). */
function labelled(issue: Issue, experiment: Record<string, unknown>): Issue {
  const parts = issue.area === 'experiment' ? issue.path : issue.path ? `${issue.area}.${issue.path}` : issue.area;
  return { ...issue, label: experimentPathLabel(parts, experiment) };
}

export function validateExperiment(experiment: Record<string, unknown>): Validation {
  const issues: Issue[] = [];
  let rubric: Rubric | null = null;
  let config: GrpoConfig | null = null;
  try {
    rubric = parseRubric(experiment.rubric);
  } catch (e) {
    if (!(e instanceof RubricError)) throw e;
    issues.push(...e.issues.map((i) => ({ area: 'rubric' as const, path: i.path === 'rubric' ? '' : i.path, message: i.message })));
  }
  try {
    config = parseGrpoConfig(experiment.config);
  } catch (e) {
    if (!(e instanceof GrpoConfigError)) throw e;
    issues.push(...e.issues.map((i) => ({ area: 'config' as const, path: i.path === 'config' ? '' : i.path, message: i.message })));
  }
  // The whole experiment, as the trainer will check it: catches what the parts above cannot.
  try {
    parseExperiment(experiment);
  } catch (e) {
    if (e instanceof ExperimentError) issues.push(...e.issues.map((i) => experimentIssue(i.path, i.message)));
    else if (e instanceof HeldOutRubricError) {
      issues.push(...e.issues.map((i) => ({ area: 'held_out_rubric' as const, path: i.path === 'rubric' ? '' : i.path, message: i.message })));
    } else if (!(e instanceof RubricError) && !(e instanceof GrpoConfigError)) throw e;
  }
  // A malformed Hub id ("hf:gpt2", no owner) is named while typed, not when the download fails.
  const hubProblem = typeof experiment.model === 'string' ? hubIdProblem(experiment.model) : null;
  if (hubProblem && !issues.some((i) => i.area === 'model')) issues.push({ area: 'model', path: '', message: hubProblem });
  return { issues: issues.map((i) => labelled(i, experiment)), rubric, config, experiment: issues.length === 0 ? experiment : null };
}

const AREA_LABELS: Record<IssueArea, string> = {
  model: 'Model',
  prompts: 'Prompts',
  rubric: 'Rubric',
  held_out_rubric: 'Held-out rubric',
  judge: 'Judge',
  config: 'Settings',
  experiment: 'Experiment',
};

/** "Setting generation_batch_size: must be a multiple of …": the field as the page labels it, then the problem. */
export function describeIssue(issue: Issue): string {
  return `${issue.label ?? (issue.path ? `${AREA_LABELS[issue.area]} ${issue.path}` : AREA_LABELS[issue.area])}: ${issue.message}`;
}
