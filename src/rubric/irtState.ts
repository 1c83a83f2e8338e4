// The irt_ability item table as it travels in a checkpoint's trainer_state.json (key "irt_state"),
// so a resumed run scores its rewards under the same table and stored verdicts it had when the
// checkpoint was saved, rather than starting a fresh one. A versioned JSON shape, checked with zod
// on the way back in: a missing, malformed or foreign table (another rubric version or criterion
// count) is never an error that stops the resume: the run starts a fresh table and says why.
import { z } from 'zod';
import { newIrtState, type IrtOnlineState } from './irtOnline';

export const IRT_STATE_FORMAT = 'rubric-playground-irt-state';
export const IRT_STATE_VERSION = 1;

export interface IrtStateJson {
  format: typeof IRT_STATE_FORMAT;
  version: typeof IRT_STATE_VERSION;
  /** The rubric version the table was fitted for (its criteria, in order). */
  rubric_version: string;
  criteria: number;
  steps: number;
  params: { a: number; c: number }[];
  patterns: [pattern: string, count: number][];
}

const finite = z.number().finite();
const schema = z
  .object({
    format: z.literal(IRT_STATE_FORMAT),
    version: z.literal(IRT_STATE_VERSION),
    rubric_version: z.string().min(1),
    criteria: z.number().int().min(1),
    steps: z.number().int().min(0),
    params: z.array(z.object({ a: finite, c: finite }).strict()),
    patterns: z.array(z.tuple([z.string().regex(/^[01-]+$/, 'a pattern is made of 1, 0 and -'), z.number().int().min(1)])),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.params.length !== s.criteria) ctx.addIssue({ code: 'custom', path: ['params'], message: `${s.params.length} items for ${s.criteria} criteria` });
    s.patterns.forEach(([p], i) => {
      if (p.length !== s.criteria) ctx.addIssue({ code: 'custom', path: ['patterns', i], message: `pattern of ${p.length} verdicts for ${s.criteria} criteria` });
      if (!/[01]/.test(p)) ctx.addIssue({ code: 'custom', path: ['patterns', i], message: 'a stored pattern has no scored criterion' });
    });
    const distinct = new Set(s.patterns.map(([p]) => p));
    if (distinct.size !== s.patterns.length) ctx.addIssue({ code: 'custom', path: ['patterns'], message: 'a pattern is stored twice' });
  });

/** The table as saved with a checkpoint (plain JSON: copies, never the live arrays). */
export function irtStateToJson(state: IrtOnlineState, rubricVersion: string): IrtStateJson {
  return {
    format: IRT_STATE_FORMAT,
    version: IRT_STATE_VERSION,
    rubric_version: rubricVersion,
    criteria: state.params.length,
    steps: state.steps,
    params: state.params.map((p) => ({ a: p.a, c: p.c })),
    patterns: state.patterns.map(([p, m]) => [p, m]),
  };
}

export interface RestoredIrtState {
  /** The saved table; null = start a fresh one (the first step after the resume builds it). */
  state: IrtOnlineState | null;
  /** Why the saved table was not used, in the page's words; null when it was (or when there was none to expect). */
  note: string | null;
}

/**
 * The table saved in a checkpoint for `rubricVersion` with `criteria` criteria. `saved` is
 * trainer_state.json's "irt_state" (undefined when the checkpoint has none: one saved before the
 * table was saved, or before the run's first step). Never throws.
 */
export function irtStateFromJson(saved: unknown, criteria: number, rubricVersion: string): RestoredIrtState {
  const fresh = (why: string): RestoredIrtState => ({ state: null, note: `irt_ability: ${why}; the run goes on with a fresh item table (every criterion at a = 1, b = 0, no stored verdicts)` });
  if (saved === undefined || saved === null) return fresh("the checkpoint has no IRT item table (trainer_state.json has no irt_state)");
  const parsed = schema.safeParse(saved);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first.path.length ? ` at irt_state.${first.path.join('.')}` : '';
    return fresh(`the checkpoint's IRT item table is not valid (${first.message}${where})`);
  }
  const s = parsed.data;
  if (s.rubric_version !== rubricVersion) return fresh(`the checkpoint's IRT item table was fitted for rubric version ${s.rubric_version}, this run's rubric is ${rubricVersion}`);
  if (s.criteria !== criteria) return fresh(`the checkpoint's IRT item table has ${s.criteria} criteria, the rubric ${criteria}`);
  const state: IrtOnlineState = { ...newIrtState(criteria), steps: s.steps, params: s.params.map((p) => ({ a: p.a, c: p.c })), patterns: s.patterns.map(([p, m]) => [p, m]) };
  return { state, note: null };
}

/** The step's view of the item table after its update (StepMetrics.irt: run files and CSV carry it). */
export interface IrtMetrics {
  /** Steps folded into the table (the run's, across resumes). */
  steps: number;
  /** Distinct verdict patterns stored so far. */
  patterns: number;
  /** By criterion id, in rubric order: discrimination a and difficulty b = −c / a (null when a = 0: no finite difficulty). */
  by_criterion: Record<string, { a: number; b: number | null }>;
}

export function irtMetrics(criterionIds: readonly string[], state: IrtOnlineState): IrtMetrics {
  if (criterionIds.length !== state.params.length) throw new RangeError(`the IRT state has ${state.params.length} criteria, the rubric ${criterionIds.length}`);
  const by_criterion: IrtMetrics['by_criterion'] = {};
  criterionIds.forEach((id, j) => {
    const { a, c } = state.params[j];
    const b = c === 0 ? 0 : -c / a; // c = 0 is b = 0, not −0 (run files compare equal after JSON)
    by_criterion[id] = { a, b: Number.isFinite(b) ? b : null };
  });
  return { steps: state.steps, patterns: state.patterns.length, by_criterion };
}
