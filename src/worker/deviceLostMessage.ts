// What the page says when the trainer's GPU device is lost: what happened, that nothing
// committed was lost, where Resume goes on from, and what to do. Pure, so it is unit-tested.
import { describeLoss } from '../gpu/deviceLoss';

export interface DeviceLostAt {
  /** The step in progress when the device was lost; null when none was (the run was open, not training). */
  step: number | null;
  /** The global step of the run's newest checkpoint (Resume starts there); null when it has none. */
  checkpointStep: number | null;
}

export function deviceLostMessage(loss: { reason: string; detail: string }, at: DeviceLostAt): string {
  const when = at.step === null ? 'while the run was open' : `during step ${at.step}`;
  // 'unknown' is what a driver reset, a removed GPU or running out of GPU memory report.
  const why = loss.reason === 'destroyed' ? '' : ' The GPU driver may have restarted, or the GPU ran out of memory (a smaller model, batch or max_completion_length needs less).';
  const where =
    at.checkpointStep === null
      ? 'Nothing committed was lost, but the run has no checkpoint yet: Resume starts it again from step 0.'
      : `Nothing committed was lost: the run can resume from its last checkpoint (step ${at.checkpointStep}).`;
  return `The GPU device was lost (${describeLoss(loss.reason, loss.detail)}) ${when}.${why} ${where} Reload the page or press Resume to continue on a new GPU device.`;
}
