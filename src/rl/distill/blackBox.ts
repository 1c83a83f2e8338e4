// The black-box teacher in a run (ROPD, seed 000 #15 / 002 A001): no logits, so it never enters
// the distill kernel. After a step, its answers to the step's prompts are contrasted with the
// student's own samples of that step; a judge model writes the criteria that separate them
// (src/rubric/induce.ts), appended to the experiment's rubric as a new version; from the next step
// on, that version scores the student in the normal rubric loop (judge → reward → GRPO). Due after
// a run's first step, then every induce_every steps when set (each time from the base rubric: the
// newest contrasts replace the older induced criteria). The step's metrics carry the event
// (version, provenance, the rubric itself so the run's store keeps it); a failure (a malformed
// reply, an endpoint that does not answer) is recorded there too and leaves the rubric as it was.
// As rubric_evolution's version does (src/rl/rubricEvolution.ts), the induced version travels in
// checkpoints with its provenance: a resumed run goes on judging with it, and induces again only
// when induce_every says so (a checkpoint without one, e.g. after a failed induction, induces
// after the first step it trains).
import type { Complete } from '../../rubric/generate';
import { induceTeacherRubric, type InductionProvenance } from '../../rubric/induce';
import { parseRubric, rubricVersion, type Rubric } from '../../rubric';
import { parseTrainerState, type CheckpointFiles } from '../../model/checkpoint';
import type { GrpoContext, StepResult } from '../grpoStep';
import type { OriginBoundKey } from '../../rubric/judges/remote';
import type { GrpoConfig } from '../config';
import { remoteTeacher, storedTeacher, type BlackBoxTeacher } from './blackBoxTeacher';

export interface BlackBoxState {
  teacher: BlackBoxTeacher;
  /** The experiment's rubric: every induction appends to it. */
  base: { rubric: Rubric; version: string };
  /** Whether the run has induced yet (a resumed run whose checkpoint holds an induced version has). */
  induced: boolean;
  /** The induced version judging now, with its provenance (null: the base rubric still judges). */
  current: InducedCheckpoint | null;
}

/** The induced version a checkpoint carries (trainer_state.json), with where it came from. */
export interface InducedCheckpoint {
  version: string;
  rubric: Rubric;
  provenance: InductionProvenance;
}

/** What the step's metrics carry about an induction after it (absent when none was due). */
export interface TeacherRubricEvent {
  /** The step whose samples were contrasted; the induced version judges from step + 1. */
  step: number;
  outcome: 'induced' | 'failed';
  /** The new version (induced), else null. */
  version: string | null;
  /** Which teacher and which prompts (induced); never a key. */
  provenance: InductionProvenance | null;
  /** Why it failed, in the page's words. */
  error?: string;
  /** The induced rubric itself, so the run's store keeps every version it trained on. */
  rubric?: Rubric;
}

/** Whether an induction is due after `step`. */
export function inductionDue(state: Pick<BlackBoxState, 'induced'>, step: number, every: number | null): boolean {
  return !state.induced || (every !== null && (step + 1) % every === 0);
}

/** The step's prompts with the teacher's answers and the student's samples (natural rollouts only), first-seen order. */
export async function teacherContrasts(teacher: BlackBoxTeacher, rollouts: readonly { prompt: string; completion: string }[], signal?: AbortSignal) {
  const byPrompt = new Map<string, string[]>();
  for (const r of rollouts) byPrompt.set(r.prompt, [...(byPrompt.get(r.prompt) ?? []), r.completion]);
  const out = [];
  for (const [prompt, student] of byPrompt) out.push({ prompt, student, teacher: await teacher.responses(prompt, signal) });
  return out;
}

/**
 * After step `step`: sets result.metrics.rubric_version (every step: the version that judged it,
 * base or induced, as rubric_evolution does, so labels and label agreement follow an induced
 * version), and when due, induces a rubric from the teacher-vs-student contrasts of the step's
 * rollouts and makes it the context's rubric (result.metrics.teacher_rubric). Nothing without a
 * black-box teacher. `generator` is the rubric writer (default: the context's).
 */
export async function induceAfterStep(ctx: GrpoContext, step: number, result: StepResult, signal?: AbortSignal, generator?: { complete: Complete; name: string } | null): Promise<void> {
  const state = ctx.blackBox;
  if (!state || ctx.config.distillation.teacher !== 'black_box') return;
  result.metrics.rubric_version = ctx.rubricVersion;
  if (!inductionDue(state, step, ctx.config.distillation.induce_every)) return;
  const writer = generator ?? (ctx.rubricGenerator ? { complete: ctx.rubricGenerator, name: ctx.modelJudge?.name ?? 'the judge' } : null);
  state.induced = true;
  const fail = (error: string) => (result.metrics.teacher_rubric = { step, outcome: 'failed', version: null, provenance: null, error });
  if (!writer) {
    fail('the black_box teacher needs a judge model that writes text to induce criteria (a remote judge, or an engine model judge): none is available, so the rubric was not changed');
    return;
  }
  try {
    const natural = result.rollouts.slice(0, ctx.config.generation_batch_size);
    const contrasts = await teacherContrasts(state.teacher, natural, signal);
    const induced = await induceTeacherRubric(writer.complete, state.base.rubric, state.base.version, contrasts, {
      teacher: state.teacher.name,
      judge: writer.name,
      maxCriteria: ctx.config.distillation.induce_max_criteria,
      step,
      signal,
    });
    ctx.rubric = induced.rubric;
    ctx.rubricVersion = induced.version;
    state.current = { version: induced.version, rubric: induced.rubric, provenance: induced.provenance };
    result.metrics.teacher_rubric = { step, outcome: 'induced', version: induced.version, provenance: induced.provenance, rubric: induced.rubric };
  } catch (e) {
    if (signal?.aborted) throw e;
    fail(`${(e as Error).message}; the rubric was not changed`);
  }
}

/**
 * The context's black-box state for `config` (null unless distillation.teacher is "black_box"):
 * the stored responses, or the remote teacher with a key bound to its site (never from the config).
 */
export function blackBoxState(config: GrpoConfig, base: { rubric: Rubric; version: string }, apiKey?: OriginBoundKey, resumed: InducedCheckpoint | null = null): BlackBoxState | null {
  const d = config.distillation;
  if (d.teacher !== 'black_box') return null;
  const teacher = d.teacher_responses ? storedTeacher(d.teacher_responses) : remoteTeacher({ url: d.teacher_endpoint!.url, model: d.teacher_endpoint!.model, apiKey });
  return { teacher, base, induced: resumed !== null, current: resumed };
}

/** The trainer_state.json field a checkpoint adds once the black-box teacher has induced: the version judging now, its rubric and provenance. */
export function inducedCheckpointFields(ctx: Pick<GrpoContext, 'blackBox'>): { induced_rubric?: InducedCheckpoint } {
  const current = ctx.blackBox?.current;
  return current ? { induced_rubric: current } : {};
}

/**
 * The induced version a resumed black-box run goes on with: the checkpoint's, its content checked
 * against its version and its lineage against the run's rubric (`base`: the version it must have
 * been induced from, holding the criteria it names); null when the checkpoint has none. Refused
 * (a clear Error) when anything does not match: the checkpoint was edited, damaged or is another run's.
 */
export async function resumedInducedRubric(resume: CheckpointFiles | undefined, base: { version: string }): Promise<InducedCheckpoint | null> {
  if (!resume) return null;
  const saved = (parseTrainerState(resume['trainer_state.json']) as { induced_rubric?: { version?: unknown; rubric?: unknown; provenance?: unknown } }).induced_rubric;
  if (saved === undefined) return null;
  const damaged = (why: string) => new Error(`the checkpoint's teacher-induced rubric ${why}: the checkpoint was edited or damaged`);
  let rubric: Rubric;
  try {
    rubric = parseRubric(saved.rubric);
  } catch (e) {
    throw damaged(`is not a valid rubric (${(e as Error).message})`);
  }
  const version = await rubricVersion(rubric);
  if (version !== saved.version) throw damaged(`does not match its version ${String(saved.version).slice(0, 12)}…`);
  const provenance = saved.provenance as InductionProvenance | undefined;
  if (!provenance || provenance.kind !== 'teacher_contrast' || !Array.isArray(provenance.criteria) || !Array.isArray(provenance.prompts)) throw damaged('has no provenance');
  if (provenance.base_version !== base.version) {
    throw new Error(`the checkpoint's teacher-induced rubric was induced from rubric version ${String(provenance.base_version).slice(0, 12)}…, but this run's rubric is version ${base.version.slice(0, 12)}…: the lineage is broken (the checkpoint belongs to another rubric)`);
  }
  const ids = new Set(rubric.criteria.map((c) => c.id));
  const missing = provenance.criteria.filter((id) => !ids.has(id));
  if (missing.length) throw damaged(`names induced criteria it does not hold (${missing.join(', ')})`);
  return { version, rubric, provenance };
}
