// TR-DPO reference sync (TRL's sync_ref_model, SyncRefModelCallback): after the optimizer step
// that brings TRL's global_step to a multiple of ref_model_sync_steps, every reference tensor
// becomes π_ref ← α π_θ + (1 − α) π_ref (α = ref_model_mixup_alpha), on the GPU. TRL computes
// it as ref.mul_(1 − α).add_(policy, alpha=α); the same two roundings here: a scale, then an
// in-place accumulate, then a copy back (one tensor per submission, so the extra memory is one
// tensor, not a second reference). A page step is num_iterations × steps_per_generation optimizer
// steps; the config makes ref_model_sync_steps a multiple of that, so TRL's sync points are page-step ends.
import { recordAccumulate, recordScale } from '../ops/elementwise';
import type { GpuRuntime } from '../gpu/runtime';
import type { Transformer } from '../model/transformer';

export interface RefSyncConfig {
  sync_ref_model: boolean;
  ref_model_mixup_alpha: number;
  ref_model_sync_steps: number;
  num_iterations: number;
  /** Absent in callers written before it existed: 1. */
  steps_per_generation?: number;
}

/** TRL's global_step (optimizer steps) after `pageSteps` page steps. */
export function optimizerSteps(cfg: Pick<RefSyncConfig, 'num_iterations' | 'steps_per_generation'>, pageSteps: number): number {
  return pageSteps * cfg.num_iterations * (cfg.steps_per_generation ?? 1);
}

/** Whether the step that brought the run to `pageSteps` ends on a TRL sync point. */
export function isSyncStep(cfg: RefSyncConfig, pageSteps: number): boolean {
  const g = optimizerSteps(cfg, pageSteps);
  return cfg.sync_ref_model && g > 0 && g % cfg.ref_model_sync_steps === 0;
}

/** Whether the reference has been mixed at least once by `pageSteps` (then checkpoints carry it). */
export function referenceDrifted(cfg: RefSyncConfig, pageSteps: number): boolean {
  return cfg.sync_ref_model && optimizerSteps(cfg, pageSteps) >= cfg.ref_model_sync_steps;
}

/** π_ref ← α π_θ + (1 − α) π_ref over every tensor of the reference (same names in both). */
export async function mixIntoReference(rt: GpuRuntime, policy: Transformer, reference: Transformer, alpha: number): Promise<void> {
  if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`ref_model_mixup_alpha must be in (0, 1], got ${alpha}`);
  if (reference.params === policy.params) throw new Error('sync_ref_model needs a reference that is a separate copy of the model, not a view of the policy (LoRA)');
  for (const ref of reference.params.list) {
    if (!policy.params.has(ref.name)) throw new Error(`sync_ref_model: the policy has no tensor ${ref.name} to mix into the reference`);
    const pol = policy.params.get(ref.name);
    if (pol.count !== ref.count) throw new Error(`sync_ref_model: ${ref.name} has ${pol.count} values in the policy, ${ref.count} in the reference`);
    const rec = rt.recorder('ref sync');
    const mixed = recordScale(rt, rec, ref.value, ref.count, 1 - alpha);
    recordAccumulate(rt, rec, mixed, pol.value, ref.count, alpha);
    rec.copy(mixed, ref.value.buffer, ref.count * 4, 0, ref.value.offset);
    rec.releaseAfterSubmit(mixed);
    await rec.submit();
  }
}

/** Called after each applied step: mixes the policy into the reference when `pageSteps` is a sync point. */
export async function syncReferenceModel(
  ctx: { rt: GpuRuntime; model: Transformer; reference: Transformer | null; config: RefSyncConfig },
  pageSteps: number,
): Promise<boolean> {
  if (!isSyncStep(ctx.config, pageSteps)) return false;
  if (!ctx.reference) throw new Error('sync_ref_model is on but the run has no reference model (it needs beta > 0)');
  await mixIntoReference(ctx.rt, ctx.model, ctx.reference, ctx.config.ref_model_mixup_alpha);
  return true;
}
