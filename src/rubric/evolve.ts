// Online rubric evolution during a run (the rubric lab, issue 12): every `every` steps a strategy
// looks at the verdicts of the last `lookback` steps and may propose a new rubric version; the
// proposal is applied only after a guarded check on those steps' stored rollouts (a frozen
// snapshot: their texts as sampled, never resampled). Every decision is an EvolutionEvent with
// the parent version, the proposed version, the outcome and a reason; accepted ones form the
// run's lineage. Pure: the model (`complete`) and the judge (`scoreNew`) are callbacks.
//
// Strategies (option rubric_evolution; TRL has none, the names are ours):
//   prune           remove criteria with zero within-group variance over the recent steps (#12): they
//                   add nothing to any advantage. Needs no model.
//   rare            replace a criterion every rollout of the recent steps already satisfies with flaw
//                   checks (pitfalls) a model proposes from those rollouts (RARE, #10), or, with
//                   the writer 'catalogue', the most discriminative rule-based check of a fixed
//                   catalogue (flawCatalogue.ts: no model, nothing model-written).
//   online_rubrics  add criteria a model elicits from comparing the current policy's rollouts
//                   with the starting policy's rollouts to the same prompt (OnlineRubrics, #30).
//                   The reference samples are the run's first step (sampled by the starting
//                   policy, which is also the KL reference's weights): no extra sampling and no
//                   second model in memory, and it works with beta = 0.
//
// Guarded acceptance (#14), the stated check on the snapshot:
//   - the proposed rubric is a valid rubric (the schema: e.g. some positive weight is left);
//   - each added criterion is discriminative on the snapshot: within-group variance > 0 and not
//     flagged saturated (measure.ts: met by every rollout in most groups);
//   - removals keep the ranking signal: every group where the parent's weighted-mean reward
//     varied still varies under the proposed rubric.
// A failed check records the proposal as 'rejected' with the reason; the rubric stays.
import { aggregateGroup } from './aggregations';
import { RubricError } from './errors';
import { GenerationError } from './generateParse';
import type { Complete } from './generate';
import { measureRubric, type CriterionFlag, type MeasuredRollout } from './measure';
import { parseRubric, type Rubric } from './schema';
import { rubricVersion } from './version';
import { onlineRubricsProposal, rareProposal, type EvolutionWriter } from './evolvePropose';

export const RUBRIC_EVOLUTION_STRATEGIES = ['off', 'prune', 'rare', 'online_rubrics'] as const;
export type RubricEvolutionStrategy = (typeof RUBRIC_EVOLUTION_STRATEGIES)[number];

/** A rollout as evolution keeps it: its text and its scores under the history's version. */
export interface EvolutionRollout {
  step: number;
  group: number;
  prompt: string;
  completion: string;
  /** Aligned with the history's rubric.criteria; null = not scored. */
  scores: readonly (number | null)[];
}

/** What evolution remembers between steps (in the run's context; rebuilt on resume). */
export interface EvolutionHistory {
  /** The version in use; the recent steps' scores are aligned with its criteria. */
  version: string;
  rubric: Rubric;
  /** The most recent steps under `version`, oldest first (at most `lookback` of them). */
  steps: { step: number; rollouts: EvolutionRollout[] }[];
  /** online_rubrics: the starting policy's completions per prompt (the first step this history saw, when it was step 0). */
  reference: Record<string, string[]> | null;
}

export interface GuardCheck {
  criterion: string;
  within_group_variance: number | null;
  met_rate: number | null;
  flag: CriterionFlag;
  passed: boolean;
}

export interface RubricEvolutionEvent {
  /** The step after which it was decided: an accepted version is used from step + 1. */
  step: number;
  strategy: Exclude<RubricEvolutionStrategy, 'off'>;
  /** accepted: now in use; rejected: proposed but failed the guarded check; unchanged: nothing was proposed (see reason). */
  outcome: 'accepted' | 'rejected' | 'unchanged';
  /** The version in use when it was decided (the lineage's parent). */
  parent: string;
  /** The proposed version (accepted or rejected); null when nothing was proposed. */
  version: string | null;
  reason: string;
  removed: string[];
  added: string[];
  /** The guarded check, per added criterion (and '(reward)' for a removal's ranking check). */
  checks?: GuardCheck[];
  /** The accepted rubric itself, so the run's store and files hold every version it trained on. */
  rubric?: Rubric;
}

export interface EvolutionOptions {
  strategy: RubricEvolutionStrategy;
  every: number;
  /** Steps of verdicts a decision looks at (the option rubric_evolution_window). */
  lookback: number;
  /** Criteria a model may add in one proposal. */
  maxNew: number;
  threshold: number;
  /** rare's writer: the model (default) or the rule catalogue (flawCatalogue.ts). */
  writer?: EvolutionWriter;
}

/** A fresh history for the version in use. */
export function newEvolutionHistory(rubric: Rubric, version: string): EvolutionHistory {
  return { version, rubric, steps: [], reference: null };
}

/** Adds a step's rollouts (natural ones: scores under history.version), keeping the last `lookback` steps. */
export function recordEvolutionStep(history: EvolutionHistory, step: number, rollouts: readonly EvolutionRollout[], lookback: number): void {
  const K = history.rubric.criteria.length;
  rollouts.forEach((r, i) => {
    if (r.scores.length !== K) throw new RangeError(`evolution: rollout ${i} has ${r.scores.length} scores for ${K} criteria`);
  });
  history.steps.push({ step, rollouts: [...rollouts] });
  while (history.steps.length > lookback) history.steps.shift();
  // The starting policy's samples: only step 0's are the starting policy's.
  if (step === 0 && history.reference === null) {
    const byPrompt: Record<string, string[]> = {};
    for (const r of rollouts) (byPrompt[r.prompt] ??= []).push(r.completion);
    history.reference = byPrompt;
  }
}

/** Whether a decision is due after `step` (0-based): every `every` steps, with `lookback` steps recorded. */
export function evolutionDue(history: EvolutionHistory, step: number, options: Pick<EvolutionOptions, 'strategy' | 'every' | 'lookback'>): boolean {
  return options.strategy !== 'off' && (step + 1) % options.every === 0 && history.steps.length >= options.lookback;
}

/** The recent steps' rollouts, oldest first: the frozen snapshot a proposal is checked on. */
export function snapshotOf(history: EvolutionHistory): EvolutionRollout[] {
  return history.steps.flatMap((s) => s.rollouts);
}

function measured(rollouts: readonly EvolutionRollout[]): MeasuredRollout[] {
  return rollouts.map((r) => ({ step: r.step, group: r.group, scores: r.scores }));
}

/** A proposal: the new rubric and what it changes. */
export interface Proposal {
  rubric: Rubric;
  removed: string[];
  added: string[];
  reason: string;
}

/** No proposal, and why. */
export interface NoProposal {
  none: string;
}

/** prune: drop every criterion with zero within-group variance over the recent steps (at least one varying criterion must remain). */
export function pruneProposal(rubric: Rubric, snapshot: readonly EvolutionRollout[], threshold: number): Proposal | NoProposal {
  const m = measureRubric(rubric, measured(snapshot), { threshold });
  const zero = rubric.criteria.filter((_, k) => m.criteria[k].withinGroupVariance === 0);
  if (zero.length === 0) return { none: 'every criterion varies within some group of the recent steps: nothing to prune' };
  if (zero.length === rubric.criteria.length) return { none: 'every criterion has zero within-group variance over the recent steps: pruning would leave no criterion (the groups give no learning signal at all)' };
  const ids = new Set(zero.map((c) => c.id));
  return {
    rubric: { ...rubric, criteria: rubric.criteria.filter((c) => !ids.has(c.id)) },
    removed: zero.map((c) => c.id),
    added: [],
    reason: `zero within-group variance over the last ${new Set(snapshot.map((r) => r.step)).size} step(s): ${zero.map((c) => c.id).join(', ')}`,
  };
}

/** Groups of a snapshot, by (step, group), as indices. */
function groupIndices(rollouts: readonly EvolutionRollout[]): number[][] {
  const map = new Map<string, number[]>();
  rollouts.forEach((r, i) => {
    const key = `${r.step}/${r.group}`;
    let g = map.get(key);
    if (!g) map.set(key, (g = []));
    g.push(i);
  });
  return [...map.values()];
}

function varies(rewards: readonly (number | null)[]): boolean {
  const xs = rewards.filter((x): x is number => x !== null);
  return xs.some((x) => Math.abs(x - xs[0]) > 1e-12);
}

/**
 * Guarded acceptance: `proposal` scored on `snapshot` (the parent's scores for the criteria it
 * keeps unchanged, `scoreNew` for the added ones), then the stated check (see the header).
 * Returns the checks and, when one fails, the reason.
 */
export async function guardProposal(
  parent: Rubric,
  proposal: Proposal,
  snapshot: readonly EvolutionRollout[],
  scoreNew: (criteria: Rubric, rollouts: readonly EvolutionRollout[]) => Promise<(number | null)[][]>,
  threshold: number,
): Promise<{ checks: GuardCheck[]; failure: string | null; rubric: Rubric | null }> {
  let rubric: Rubric;
  try {
    rubric = parseRubric(proposal.rubric);
  } catch (e) {
    const problems = e instanceof RubricError ? e.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : (e as Error).message;
    return { checks: [], failure: `the proposed rubric is not valid: ${problems}`, rubric: null };
  }
  const parentIndex = new Map(parent.criteria.map((c, k) => [c.id, k]));
  const added = rubric.criteria.filter((c) => proposal.added.includes(c.id));
  const newScores = added.length ? await scoreNew({ ...rubric, criteria: added }, snapshot) : snapshot.map(() => []);
  if (newScores.length !== snapshot.length) throw new RangeError(`evolution: ${newScores.length} scored rollouts for a snapshot of ${snapshot.length}`);
  const scores = snapshot.map((r, i) =>
    rubric.criteria.map((c) => {
      const a = added.indexOf(c);
      if (a >= 0) return newScores[i][a] ?? null;
      const k = parentIndex.get(c.id);
      return k === undefined ? null : r.scores[k];
    }),
  );
  const m = measureRubric(rubric, snapshot.map((r, i) => ({ step: r.step, group: r.group, scores: scores[i] })), { threshold });
  const checks: GuardCheck[] = [];
  const failures: string[] = [];
  for (const c of added) {
    const cm = m.criteria[rubric.criteria.indexOf(c)];
    const v = cm.withinGroupVariance;
    const passed = v !== null && v > 0 && cm.flag !== 'saturated';
    checks.push({ criterion: c.id, within_group_variance: v, met_rate: cm.metRate, flag: cm.flag, passed });
    if (!passed) {
      failures.push(
        v === null
          ? `"${c.id}" could not be scored on the snapshot (no group with two scored rollouts)`
          : v === 0
            ? `"${c.id}" is not discriminative on the snapshot (zero within-group variance, ${cm.flag})`
            : `"${c.id}" is saturated on the snapshot (met by every rollout in most groups)`,
      );
    }
  }
  if (proposal.removed.length) {
    // The ranking check: a group whose parent reward varied must still vary.
    const groups = groupIndices(snapshot);
    const reward = (r: Rubric, s: (readonly (number | null)[])[]) => aggregateGroup(r, s, { method: 'weighted_mean', pass_threshold: threshold }).rewards;
    let lost = 0;
    let varied = 0;
    for (const g of groups) {
      if (!varies(reward(parent, g.map((i) => snapshot[i].scores)))) continue;
      varied++;
      if (!varies(reward(rubric, g.map((i) => scores[i])))) lost++;
    }
    const passed = lost === 0;
    checks.push({ criterion: '(reward)', within_group_variance: null, met_rate: null, flag: 'discriminative', passed });
    if (!passed) failures.push(`removing ${proposal.removed.join(', ')} leaves no reward variance in ${lost} of the ${varied} group(s) that had it`);
  }
  return { checks, failure: failures.length ? failures.join('; ') : null, rubric };
}

export interface EvolveInput {
  history: EvolutionHistory;
  step: number;
  options: EvolutionOptions;
  /** Scores criteria on the snapshot's rollouts (the run's judges); aligned with `criteria.criteria`. */
  scoreNew: (criteria: Rubric, rollouts: readonly EvolutionRollout[]) => Promise<(number | null)[][]>;
  /** The model that proposes criteria (rare, online_rubrics); absent: those strategies say so and change nothing. */
  complete?: Complete;
  signal?: AbortSignal;
}

/**
 * One evolution decision after `step` (call when evolutionDue). On 'accepted' the history is
 * reset to the new version (its recent steps refill under the new criteria).
 */
export async function evolveRubric(input: EvolveInput): Promise<RubricEvolutionEvent> {
  const { history, step, options } = input;
  const strategy = options.strategy;
  if (strategy === 'off') throw new RangeError('evolveRubric: rubric_evolution is off');
  const parent = history.rubric;
  const snapshot = snapshotOf(history);
  const base = { step, strategy, parent: history.version, removed: [] as string[], added: [] as string[] };
  let proposal: Proposal | NoProposal;
  try {
    proposal =
      strategy === 'prune'
        ? pruneProposal(parent, snapshot, options.threshold)
        : strategy === 'rare'
          ? await rareProposal(parent, snapshot, { complete: input.complete, writer: options.writer, maxNew: options.maxNew, threshold: options.threshold, signal: input.signal })
          : await onlineRubricsProposal(parent, history.steps[history.steps.length - 1]?.rollouts ?? [], history.reference, { complete: input.complete, maxNew: options.maxNew, signal: input.signal });
  } catch (e) {
    if ((e as DOMException).name === 'AbortError') throw e;
    // Malformed model output (or a model that failed): no change, with the reason shown.
    const why = e instanceof GenerationError ? e.message : `the model could not propose criteria: ${(e as Error).message}`;
    return { ...base, outcome: 'unchanged', version: null, reason: why };
  }
  if ('none' in proposal) return { ...base, outcome: 'unchanged', version: null, reason: proposal.none };
  let guarded: Awaited<ReturnType<typeof guardProposal>>;
  try {
    guarded = await guardProposal(parent, proposal, snapshot, input.scoreNew, options.threshold);
  } catch (e) {
    if ((e as DOMException).name === 'AbortError') throw e;
    // A judge that fails on the snapshot cannot vouch for the proposal: it is not applied.
    const version = await rubricVersion(proposal.rubric).catch(() => null);
    return { ...base, removed: proposal.removed, added: proposal.added, outcome: 'rejected', version, reason: `${proposal.reason}; rejected: the guarded check could not score it: ${(e as Error).message}` };
  }
  const version = guarded.rubric ? await rubricVersion(guarded.rubric) : null;
  const changes = { removed: proposal.removed, added: proposal.added };
  if (guarded.failure !== null || !guarded.rubric || version === null) {
    return { ...base, ...changes, outcome: 'rejected', version, reason: `${proposal.reason}; rejected: ${guarded.failure}`, checks: guarded.checks };
  }
  if (version === history.version) return { ...base, outcome: 'unchanged', version: null, reason: `${proposal.reason}; the proposal is the rubric in use` };
  Object.assign(history, newEvolutionHistory(guarded.rubric, version), { reference: history.reference });
  return { ...base, ...changes, outcome: 'accepted', version, reason: proposal.reason, checks: guarded.checks, rubric: guarded.rubric };
}

/** One accepted version of a run's rubric: the lineage. */
export interface LineageEntry {
  version: string;
  /** null for the run's starting rubric. */
  parent: string | null;
  /** The first step trained with it. */
  first_step: number;
  strategy: Exclude<RubricEvolutionStrategy, 'off'> | null;
  reason: string | null;
}

/** The lineage of a run from its starting version and its steps' evolution events (accepted ones, in step order). */
export function rubricLineage(startVersion: string, events: readonly (RubricEvolutionEvent | undefined)[]): LineageEntry[] {
  const out: LineageEntry[] = [{ version: startVersion, parent: null, first_step: 0, strategy: null, reason: null }];
  for (const e of events) {
    if (e?.outcome === 'accepted' && e.version) out.push({ version: e.version, parent: e.parent, first_step: e.step + 1, strategy: e.strategy, reason: e.reason });
  }
  return out;
}
