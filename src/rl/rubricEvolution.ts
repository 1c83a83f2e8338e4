// Online rubric evolution in a run (issue 12): the trainer's one call after each step. It keeps the
// recent verdicts (src/rubric/evolve.ts), and when rubric_evolution_every says so, asks the
// strategy for a proposal, guards it on the window's stored rollouts with the run's own judges,
// and on acceptance switches the context's rubric: the next step is judged with the new version.
// The step's metrics carry the version it used and the decision (stored with the run, written to
// run files, drawn as markers on the reward chart). The evolved rubric travels in checkpoints, so
// a resumed run goes on with it.
import type { CheckpointFiles } from '../model/checkpoint';
import { parseTrainerState } from '../model/checkpoint';
import { judgeRollouts, parseRubric, rubricVersion, scoresOf, type Rubric } from '../rubric';
import { evolutionDue, evolveRubric, newEvolutionHistory, recordEvolutionStep, type EvolutionRollout } from '../rubric/evolve';
import type { Complete } from '../rubric/generate';
import type { Judge } from '../rubric/judge';
import type { GrpoContext, StepResult } from './grpoStep';

/** Criteria a model may add in one proposal (rare's flaw checks, online_rubrics' elicited criteria). */
export const EVOLUTION_MAX_NEW = 2;

/**
 * After step `step`: records its verdicts and, when due, takes one evolution decision. Sets
 * metrics.rubric_version (every step) and metrics.rubric_evolution (a decision); an accepted
 * version becomes ctx.rubric / ctx.rubricVersion. Nothing when rubric_evolution is off.
 */
export async function evolveAfterStep(ctx: GrpoContext, step: number, result: StepResult, signal?: AbortSignal): Promise<void> {
  const cfg = ctx.config;
  if (cfg.rubric_evolution === 'off') return;
  result.metrics.rubric_version = ctx.rubricVersion;
  if (!ctx.evolution || ctx.evolution.version !== ctx.rubricVersion) ctx.evolution = newEvolutionHistory(ctx.rubric, ctx.rubricVersion);
  const history = ctx.evolution;
  // The step's own groups (guided extra rows come after them and answer no group of their own).
  const natural = result.rollouts.slice(0, cfg.generation_batch_size);
  recordEvolutionStep(
    history,
    step,
    natural.map((r): EvolutionRollout => ({ step, group: r.group, prompt: r.prompt, completion: r.completion, scores: r.scores })),
    cfg.rubric_evolution_window,
  );
  const options = {
    strategy: cfg.rubric_evolution,
    every: cfg.rubric_evolution_every,
    lookback: cfg.rubric_evolution_window,
    maxNew: EVOLUTION_MAX_NEW,
    threshold: cfg.reward_aggregation.pass_threshold ?? 0.5,
    writer: cfg.rubric_evolution_writer,
  };
  if (!evolutionDue(history, step, options)) return;
  const event = await evolveRubric({
    history,
    step,
    options,
    // The guarded check's judge: the run's own (rules here, judge questions by its model judge).
    scoreNew: async (criteria, rollouts) => {
      const results = await judgeRollouts(criteria, await rubricVersion(criteria), rollouts, { modelJudge: ctx.modelJudge, cache: ctx.judgeCache, signal });
      return results.map((r) => scoresOf(criteria, r));
    },
    complete: ctx.rubricGenerator ?? undefined,
    signal,
  });
  result.metrics.rubric_evolution = event;
  if (event.outcome === 'accepted' && event.rubric && event.version) {
    ctx.rubric = event.rubric;
    ctx.rubricVersion = event.version;
  }
}

/** The text endpoint of a judge that has one (a remote OpenAI-compatible judge), as a generation `Complete`. */
export function judgeGenerator(judge: Judge | undefined): Complete | null {
  const complete = (judge as { complete?: unknown } | undefined)?.complete;
  return typeof complete === 'function' ? (messages, options) => (complete as Complete).call(judge, messages, options) : null;
}

/** The trainer_state.json field a checkpoint adds with rubric_evolution on: the version in use (none when off). */
export function evolutionCheckpointFields(ctx: Pick<GrpoContext, 'config' | 'rubric' | 'rubricVersion'>): { evolved_rubric?: { version: string; rubric: Rubric } } {
  return ctx.config.rubric_evolution !== 'off' ? { evolved_rubric: { version: ctx.rubricVersion, rubric: ctx.rubric } } : {};
}

/**
 * The rubric a resumed run goes on with: the checkpoint's evolved version when it has one (its
 * content checked against its version), else null (the experiment's rubric).
 */
export async function resumedEvolvedRubric(resume: CheckpointFiles | undefined): Promise<{ version: string; rubric: Rubric } | null> {
  if (!resume) return null;
  const saved = (parseTrainerState(resume['trainer_state.json']) as { evolved_rubric?: { version?: unknown; rubric?: unknown } }).evolved_rubric;
  if (!saved) return null;
  const rubric = parseRubric(saved.rubric);
  const version = await rubricVersion(rubric);
  if (version !== saved.version) throw new Error(`the checkpoint's evolved rubric does not match its version ${String(saved.version).slice(0, 12)}…: the checkpoint was edited or damaged`);
  return { version, rubric };
}
