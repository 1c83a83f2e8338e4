// The experiment being edited: model id, prompts (as editor text), rubric draft, the judge
// choice and the settings that differ from the defaults. `experiment` is the plain JSON the
// trainer gets and `validation` checks it with the trainer's own parsers on every edit.
import type { Experiment } from '../../rl/experiment';
import { draftFromRubric, rubricJson, type RubricDraft } from './rubricDraft';
import { promptsToText, textToPrompts } from './promptImport';
import { validateExperiment } from './validate';

/** Experiment fields the builder does not edit but keeps (e.g. a lesson's held-out rubric). */
const EDITED = new Set(['model', 'prompts', 'rubric', 'judge', 'config']);

/** The default judge (rules only): left out of the experiment, so links stay short. */
export const RULES_JUDGE: Record<string, unknown> = { kind: 'rules' };

export class ExperimentDraft {
  model = $state('');
  promptsText = $state('');
  rubric = $state<RubricDraft>({ name: '', criteria: [] });
  config = $state<Record<string, unknown>>({});
  /** The judge choice as edited (may be incomplete while typed: validation says what is missing). */
  judge = $state<Record<string, unknown>>({ ...RULES_JUDGE });
  extra = $state.raw<Record<string, unknown>>({});

  readonly prompts = $derived(textToPrompts(this.promptsText));
  readonly experiment: Record<string, unknown> = $derived(
    $state.snapshot({
      model: this.model,
      prompts: this.prompts,
      rubric: rubricJson(this.rubric),
      ...this.extra,
      ...(this.judge.kind === 'rules' ? {} : { judge: this.judge }),
      config: this.config,
    }) as Record<string, unknown>,
  );
  readonly validation = $derived(validateExperiment(this.experiment));

  constructor(experiment: Experiment | Record<string, unknown>) {
    this.load(experiment);
  }

  load(experiment: Experiment | Record<string, unknown>): void {
    const e = experiment as Record<string, unknown>;
    this.model = typeof e.model === 'string' ? e.model : '';
    this.promptsText = promptsToText(Array.isArray(e.prompts) ? e.prompts.map(String) : []);
    this.rubric = draftFromRubric(e.rubric);
    this.config = e.config && typeof e.config === 'object' ? structuredClone(e.config as Record<string, unknown>) : {};
    this.judge = e.judge && typeof e.judge === 'object' ? structuredClone(e.judge as Record<string, unknown>) : { ...RULES_JUDGE };
    this.extra = Object.fromEntries(Object.entries(e).filter(([k]) => !EDITED.has(k)));
  }
}
