export type KillMethod = 'kill' | 'crash' | 'close';
export type KillMoment = 'load' | 'sampling' | 'updating' | 'checkpoint' | 'commit';
export const KILL_METHODS: KillMethod[];
export const KILL_MOMENTS: KillMoment[];
export const SOAK_SETTINGS: [string, string][];

export interface SoakCycle {
  method: KillMethod;
  moment: KillMoment;
  delayMs: number;
}
export function soakSchedule(seed: number, cycles: number): SoakCycle[];

export interface SoakDetail {
  cycle: number;
  run: { id: string; name: string; status: string; lastStep: number | null; lastCheckpointStep: number | null; rubricVersion: string } | null;
  steps?: number;
  duplicated?: number;
  problems: string[];
  kill?: { method: KillMethod; moment: KillMoment; reached: string };
}
export interface SoakTotals {
  cycles: number;
  stepsLost: number;
  stepsDuplicated: number;
  resumeErrors: number;
  /** Anything else the store checks found (status, banner, rollouts per step, checkpoint, rubric hash). */
  storeProblems: number;
  /** finalResume: a second tab's Resume of the run that was not refused while the first tab trained it. */
  twoTabErrors: number;
  /** Steps the resumes trained again (committed after the newest checkpoint). */
  stepsRedone: number;
  /** Steps committed when the soak ended. */
  committed: number;
  details: SoakDetail[];
}
/**
 * `finalResume` (default true): after the last check, resume once more and require one more
 * committed step; `secondTab` (default true): meanwhile a second tab's Resume must be refused.
 */
export function runSoak(options: { schedule: SoakCycle[]; log?: (line: string) => void; timeoutScale?: number; finalResume?: boolean; secondTab?: boolean }): Promise<SoakTotals>;
export function soakLine(totals: SoakTotals): string;
