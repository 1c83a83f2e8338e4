// The EMA teacher (issue 11; seed 002 A117): the self teacher's weights are an exponential moving
// average of the policy, a slower, steadier teacher than the live policy and one that still
// follows training (the frozen teacher never does). A separate full copy of the weights, loaded
// frozen (no gradients, no moments) from the policy's own starting files, and after every applied
// step:  teacher ← decay · teacher + (1 − decay) · policy.
// The GPU side is TR-DPO's reference mix (refSync.ts mixIntoReference, with α = 1 − decay): a
// scale then an in-place accumulate per tensor, one tensor per submission. emaStepF32 below is
// its host twin (the same two float32 roundings); emaStep64 the float64 formula it is checked on.
import type { GpuRuntime } from '../../gpu/runtime';
import type { Transformer } from '../../model/transformer';
import type { GrpoConfig } from '../config';
import { mixIntoReference } from '../refSync';

type Distillation = Pick<GrpoConfig['distillation'], 'teacher' | 'teacher_weights'>;

/** The self teachers see the policy's own weights (self_rubric, criterion_injection). */
function selfTeacher(d: Distillation): boolean {
  return d.teacher === 'self_rubric' || d.teacher === 'criterion_injection';
}

/** Whether the run loads an EMA copy of the policy as its teacher. */
export function needsEmaTeacher(config: { distillation: Distillation }): boolean {
  return selfTeacher(config.distillation) && config.distillation.teacher_weights === 'ema';
}

/** The self teacher's weights: the live policy, the frozen starting model or the EMA copy; null when the needed one was not loaded. */
export function selfTeacherWeights(src: { model: Transformer; reference: Transformer | null; ema?: Transformer | null }, weights: GrpoConfig['distillation']['teacher_weights']): Transformer | null {
  if (weights === 'live') return src.model;
  if (weights === 'ema') {
    if (!src.ema) throw new Error('the ema teacher\'s weights were not loaded: start the run again');
    return src.ema;
  }
  return src.reference;
}

/** After an applied step: teacher ← decay · teacher + (1 − decay) · policy on every tensor (on the GPU). */
export async function updateEmaTeacher(rt: GpuRuntime, policy: Transformer, ema: Transformer, decay: number): Promise<void> {
  if (!(decay >= 0 && decay < 1)) throw new RangeError(`distillation.ema_decay must be in [0, 1), got ${decay}`);
  if (ema === policy || ema.params === policy.params) throw new Error('the ema teacher must be a separate copy of the weights, not the policy itself');
  await mixIntoReference(rt, policy, ema, 1 - decay);
}

/** The float64 update: decay · ema + (1 − decay) · policy. */
export function emaStep64(ema: ArrayLike<number>, policy: ArrayLike<number>, decay: number): Float64Array {
  if (ema.length !== policy.length) throw new RangeError(`${ema.length} teacher values for ${policy.length} policy values`);
  return Float64Array.from(ema, (e, i) => decay * e + (1 - decay) * policy[i]);
}

/**
 * The GPU's float32 steps (mixIntoReference with α = 1 − decay, its uniforms rounded to float32):
 * mixed = f32(ema · f32(1 − α)), then f32(mixed + f32(policy · f32(α))) (a GPU may fuse the last
 * two roundings into one).
 */
export function emaStepF32(ema: ArrayLike<number>, policy: ArrayLike<number>, decay: number): Float32Array {
  if (ema.length !== policy.length) throw new RangeError(`${ema.length} teacher values for ${policy.length} policy values`);
  const a = 1 - decay;
  const alpha = Math.fround(a);
  const keep = Math.fround(1 - a);
  return Float32Array.from(ema, (e, i) => Math.fround(Math.fround(e * keep) + Math.fround(policy[i] * alpha)));
}
