// irt_ability across a resume: the checkpoint's trainer_state.json carries the item table
// (src/rubric/irtState.ts), and the resumed context starts from it, so the rewards after the
// resume are scored under the same table as if the run had never stopped.
import { parseTrainerState, type CheckpointFiles } from '../model/checkpoint';
import { irtStateFromJson, irtStateToJson, type RestoredIrtState } from '../rubric/irtState';
import type { IrtOnlineState } from '../rubric/irtOnline';
import type { GrpoConfig } from './config';

/** The trainer_state.json fields a checkpoint adds for the IRT table (none when there is no table yet). */
export function irtCheckpointFields(irt: IrtOnlineState | null | undefined, rubricVersion: string): { irt_state?: ReturnType<typeof irtStateToJson> } {
  return irt ? { irt_state: irtStateToJson(irt, rubricVersion) } : {};
}

/**
 * The item table a run resumed from `resume` starts with: null (and no note) when the run does
 * not use irt_ability or starts afresh; the saved table, or null with a note saying why not.
 * A checkpoint of step 0 (before any verdict) expects no table.
 */
export function resumedIrtState(config: Pick<GrpoConfig, 'reward_aggregation'>, criteria: number, rubricVersion: string, resume: CheckpointFiles | undefined): RestoredIrtState {
  if (!resume || config.reward_aggregation.method !== 'irt_ability') return { state: null, note: null };
  const saved = parseTrainerState(resume['trainer_state.json']);
  if (saved.irt_state === undefined && saved.global_step === 0) return { state: null, note: null };
  return irtStateFromJson(saved.irt_state, criteria, rubricVersion);
}
