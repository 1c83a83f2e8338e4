// Per-step judge-failure metrics: how many rollouts got no reward, how many criterion verdicts
// failed, and the first failure's reason. A judge that fails every call must not go unnoticed:
// its rollouts are unscorable (never scored 0), and this is what the run view warns with and what
// the trainer's on_unscorable rule reads. Reasons are stored and shown, so they are scrubbed of
// anything that looks like a credential (the remote judge already never quotes its key).
import type { CriterionResult } from '../rubric';

export interface JudgeFailureMetrics {
  /** Rollouts of the step. */
  rollouts: number;
  /** Rollouts with no reward (the aggregation had no score to use). */
  unscorable_rollouts: number;
  /** unscorable_rollouts / rollouts (0 for a step without rollouts). */
  unscorable_fraction: number;
  /** Criterion verdicts asked for (every kept criterion of every rollout). */
  verdicts: number;
  /** Verdicts that failed: unscorable (judge error, bad answer) or needing a model judge the run lacks. */
  failed_verdicts: number;
  /** 'criterion "id": reason' of the first failed verdict (rollout order, then rubric order); null when none failed. */
  first_reason: string | null;
  /** unscorable_fraction is above the run's max_unscorable_fraction. */
  over_threshold: boolean;
}

/** What the helper needs of a rollout: its per-criterion results and its reward. */
export interface JudgedRollout {
  results: readonly CriterionResult[];
  reward: number | null;
}

const REASON_CHARS = 300;

/**
 * A failure reason fit to store and show: one line, at most REASON_CHARS characters, with bearer
 * tokens, "sk-…"-style keys and key/token query parameters replaced by "[redacted]".
 */
export function sanitizeReason(reason: string): string {
  const flat = String(reason)
    .replace(/\bBearer\s+[^\s"',;]+/gi, 'Bearer [redacted]')
    .replace(/\b(?:sk|rk|pk)-[A-Za-z0-9_-]{6,}/g, '[redacted]')
    .replace(/\b((?:api[_-]?key|access[_-]?token|token|key)=)[^&\s"']+/gi, '$1[redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > REASON_CHARS ? `${flat.slice(0, REASON_CHARS)}…` : flat;
}

/** The step's judge-failure metrics; `maxUnscorableFraction` is the run's max_unscorable_fraction. */
export function judgeFailureMetrics(rollouts: readonly JudgedRollout[], maxUnscorableFraction: number): JudgeFailureMetrics {
  if (!(maxUnscorableFraction >= 0 && maxUnscorableFraction <= 1)) {
    throw new RangeError(`max_unscorable_fraction must be in [0, 1], got ${maxUnscorableFraction}`);
  }
  let unscorable = 0;
  let verdicts = 0;
  let failed = 0;
  let first: string | null = null;
  for (const r of rollouts) {
    if (r.reward === null) unscorable++;
    for (const v of r.results) {
      verdicts++;
      if (v.status === 'ok') continue;
      failed++;
      first ??= sanitizeReason(`criterion "${v.criterion_id}": ${v.reason}`);
    }
  }
  const fraction = rollouts.length ? unscorable / rollouts.length : 0;
  return {
    rollouts: rollouts.length,
    unscorable_rollouts: unscorable,
    unscorable_fraction: fraction,
    verdicts,
    failed_verdicts: failed,
    first_reason: first,
    over_threshold: fraction > maxUnscorableFraction,
  };
}

/** "12 of 16 rollouts had no reward at step 3 (14 of 16 verdicts failed): criterion "polite": HTTP 500 …". */
export function unscorableMessage(step: number, m: JudgeFailureMetrics): string {
  const verdicts = m.failed_verdicts ? ` (${m.failed_verdicts} of ${m.verdicts} criterion verdicts failed)` : '';
  const reason = m.first_reason ? `: ${m.first_reason}` : '';
  return `${m.unscorable_rollouts} of ${m.rollouts} rollouts had no reward at step ${step}${verdicts}${reason}`;
}
