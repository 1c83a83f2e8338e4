// Training modes of distillation (issue 11), all pure functions of (config, step):
// - the schedule's phase of a step: "distill then RL" (seed 000 #19: distill_steps of pure
//   on-policy distillation, then GRPO on the rubric with the teacher off) and RuFT (seed 000 #27:
//   sft_steps of rejection-sampling SFT on the rollouts whose rubric reward passes, then GRPO);
// - the distillation settings a step runs with (the phase turns the teacher off or makes it pure);
// - GKD's lmbda: whether a step's batch is the student's own samples or the teacher's, a seeded
//   draw per step (TRL GKDTrainer draws random.random() <= lmbda per training step);
// - RuFT's advantages: 1 on a kept rollout, 0 elsewhere. At ratio 1 (the first pass over the
//   batch) the policy loss's gradient is then −Σ ∇log π(kept tokens) under the loss type's
//   normaliser: the SFT (negative log-likelihood) gradient of the kept completions.
// The config's zod schema calls distillModeIssues, so this file imports no value from config.ts.
import { fnv1a32, mulberry32 } from '../../rubric/dropout';
import type { GrpoConfig } from '../config';

type Distillation = GrpoConfig['distillation'];
export type SchedulePhase = 'distill' | 'sft' | 'rl';

/** The phase of step `step` (0-based), or null when the run has no schedule. */
export function schedulePhase(d: Pick<Distillation, 'schedule'>, step: number): SchedulePhase | null {
  if (!Number.isInteger(step) || step < 0) throw new RangeError(`the step must be a non-negative integer, got ${step}`);
  const s = d.schedule;
  if (s.kind === 'distill_then_rl') return step < s.distill_steps ? 'distill' : 'rl';
  if (s.kind === 'ruft') return step < s.sft_steps ? 'sft' : 'rl';
  return null;
}

/**
 * The distillation settings step `step` runs with: in distill_then_rl's distill phase the
 * configured teacher, pure (nothing judged); in its RL phase and in RuFT's SFT phase the teacher is
 * off; RuFT's RL phase and runs without a schedule keep the settings as configured.
 */
export function stepDistillation(d: Distillation, step: number): Distillation {
  const phase = schedulePhase(d, step);
  if (phase === 'distill') return { ...d, mode: 'pure' };
  if (phase === 'sft' || (phase === 'rl' && d.schedule.kind === 'distill_then_rl')) return { ...d, teacher: 'off' };
  return d;
}

/** GKD's lmbda: true when step `step`'s batch is the student's own samples (seeded by (seed, step)). */
export function onPolicyBatch(seed: number, step: number, lmbda: number): boolean {
  if (!(lmbda >= 0 && lmbda <= 1)) throw new RangeError(`lmbda must be in [0, 1], got ${lmbda}`);
  if (lmbda === 1) return true;
  if (lmbda === 0) return false;
  return mulberry32(fnv1a32(`lmbda:${seed}:${step}`))() < lmbda;
}

/** What step `step` runs: its phase, its distillation settings and whether the student samples its batch. */
export function stepMode(cfg: Pick<GrpoConfig, 'distillation' | 'seed'>, step: number): { phase: SchedulePhase | null; distillation: Distillation; onPolicy: boolean } {
  const distillation = stepDistillation(cfg.distillation, step);
  // The teacher samples only a pure distillation batch (the config refuses lmbda < 1 otherwise).
  const teacherMaySample = distillation.teacher !== 'off' && distillation.mode === 'pure';
  return { phase: schedulePhase(cfg.distillation, step), distillation, onPolicy: !teacherMaySample || onPolicyBatch(cfg.seed, step, distillation.lmbda) };
}

/** The step's ScheduleMetrics, or undefined for a run with neither a teacher nor a schedule. */
export function scheduleMetrics(cfg: Pick<GrpoConfig, 'distillation'>, mode: ReturnType<typeof stepMode>, sftKept: number | null): ScheduleMetrics | undefined {
  if (cfg.distillation.teacher === 'off' && mode.phase === null) return undefined;
  return { phase: mode.phase, on_policy: mode.distillation.teacher === 'off' ? null : mode.onPolicy, sft_kept: sftKept };
}

/** RuFT's rejection sampling: 1 where a rollout's reward is at least minReward, else 0 (no reward: 0). */
export function ruftAdvantages(rewards: readonly (number | null)[], minReward: number): Float32Array {
  return Float32Array.from(rewards, (r) => (r !== null && Number.isFinite(r) && r >= minReward ? 1 : 0));
}

/** The advantages a step trains on: RuFT's 1/0 rejection in its SFT phase, the kernel's otherwise. */
export function phaseAdvantages(d: Pick<Distillation, 'schedule'>, phase: SchedulePhase | null, rewards: readonly (number | null)[], kernel: Float32Array): Float32Array {
  return phase === 'sft' && d.schedule.kind === 'ruft' ? ruftAdvantages(rewards, d.schedule.min_reward) : kernel;
}

/** What a step shows about its schedule and sampling (StepMetrics.schedule). */
export interface ScheduleMetrics {
  /** The schedule's phase of the step; null without a schedule. */
  phase: SchedulePhase | null;
  /** Whether the batch was the student's own samples (false: the teacher sampled it, lmbda < 1); null when no teacher ran. */
  on_policy: boolean | null;
  /** RuFT's SFT phase: rollouts kept by the rejection (reward ≥ min_reward); null in other phases. */
  sft_kept: number | null;
}

/** The config issues of the schedules, lmbda, the EMA teacher and the token selection (the zod schema adds them). */
export function distillModeIssues(c: Pick<GrpoConfig, 'distillation' | 'max_steps' | 'use_peft'>): { path: string[]; message: string }[] {
  const d = c.distillation;
  const issues: { path: string[]; message: string }[] = [];
  const at = (...path: string[]) => ['distillation', ...path];
  const s = d.schedule;
  if (s.kind === 'distill_then_rl') {
    if (d.teacher === 'off') issues.push({ path: at('schedule'), message: 'distill_then_rl needs a teacher: set distillation.teacher, or the schedule to "none"' });
    // Its distill phase is pure distillation, which criterion_injection and black_box cannot do (they need the judged rollouts).
    else if (d.teacher !== 'self_rubric' && d.teacher !== 'model') issues.push({ path: at('schedule'), message: `distill_then_rl starts with pure distillation, which the ${d.teacher} teacher cannot do (it needs judged rollouts): use the self_rubric or model teacher` });
    if (s.distill_steps >= c.max_steps) issues.push({ path: at('schedule', 'distill_steps'), message: `must be less than max_steps (${c.max_steps}), or the run never reaches its GRPO phase` });
  }
  if (s.kind === 'ruft') {
    if (d.teacher !== 'off' && d.mode === 'pure') issues.push({ path: at('schedule'), message: 'ruft warms GRPO up: with distillation mode "pure" there is no GRPO phase after it. Use mode "mixed", or turn the teacher off' });
    if (s.sft_steps >= c.max_steps) issues.push({ path: at('schedule', 'sft_steps'), message: `must be less than max_steps (${c.max_steps}), or the run never reaches its GRPO phase` });
  }
  if (d.lmbda < 1) {
    if (d.teacher !== 'self_rubric' && d.teacher !== 'model') {
      issues.push({ path: at('lmbda'), message: `below 1 the teacher samples some batches: only the self_rubric and model teachers can (teacher is "${d.teacher}")` });
    } else if (d.mode !== 'pure' && s.kind !== 'distill_then_rl') {
      issues.push({ path: at('lmbda'), message: 'below 1 needs distillation mode "pure" (or the distill_then_rl schedule, whose distill phase is pure): GRPO\'s policy gradient assumes the student sampled the batch it trains on' });
    }
  }
  if (d.teacher_weights === 'ema' && d.teacher === 'self_rubric' && c.use_peft) {
    issues.push({ path: at('teacher_weights'), message: 'the ema teacher is a separate full copy of the weights, averaged with the policy; under LoRA (use_peft) the policy is a frozen base plus adapters. Use "frozen" or "live", or turn use_peft off' });
  }
  if (d.mask_special_tokens && d.top_k === null) issues.push({ path: at('mask_special_tokens'), message: 'masks special tokens out of the teacher\'s top-K support: it needs distillation.top_k' });
  return issues;
}
